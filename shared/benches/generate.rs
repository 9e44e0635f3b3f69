//! Item generation per shipped blueprint, grading a typed drill answer
//! against the regenerated item and all its mistakes, drill tokens, and
//! bundle loading (`load` tries each blueprint scenario once; `validate`
//! tries 16 seeds).
//!
//! `cargo bench -p tutorflow --bench generate`

use std::hint::black_box;
use std::path::PathBuf;

use chrono::{Duration, TimeZone, Utc};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tutorflow::content::check::blueprint::check;
use tutorflow::content::{Bundle, ContentFiles, ContentSource, FsSource};
use tutorflow::engine::content_check::{Probe, Trials};
use tutorflow::engine::practice::drill::Expected;
use tutorflow::engine::practice::drill_grade::grade_drill;
use tutorflow::engine::practice::drill_token::{self, DrillClaims, DrillSource, TokenKeys};
use tutorflow::engine::practice::generate::generate;

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn shipped() -> (ContentFiles, Bundle) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let files = runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle");
    let bundle = Bundle::load(&files).unwrap_or_else(|d| panic!("{d}"));
    (files, bundle)
}

fn generation(c: &mut Criterion) {
    let (_, bundle) = shipped();
    for target in [0.2, 0.8] {
        let mut group = c.benchmark_group(format!("generate/{target}"));
        for (id, bp) in &bundle.blueprints {
            group.bench_with_input(BenchmarkId::from_parameter(id), bp, |b, bp| {
                let mut seed = 0u64;
                b.iter(|| {
                    seed += 1;
                    black_box(generate(bp, target, seed).expect("valid blueprint"))
                });
            });
        }
        group.finish();
    }
}

/// What drill-grade does with a typed answer once the token is verified:
/// regenerate the item, then grade by value and against every mistake. The
/// answer typed is the item's last computed mistake (the most comparisons).
fn typed_answers(c: &mut Criterion) {
    let (_, bundle) = shipped();
    let settings = &bundle.workflows["default"].grading;
    let mut group = c.benchmark_group("drill_grade/typed_mistake");
    for id in [
        "MATH.ARITH.SUB.BORROW",
        "MATH.FRAC.ADD.UNLIKE",
        "MATH.ALG.EQ.TWOSTEP",
    ] {
        let bp = &bundle.blueprints[id];
        let item = generate(bp, 0.8, 7).expect("valid blueprint");
        let typed = item.mistakes.last().expect("mistakes").text.clone();
        group.bench_function(BenchmarkId::from_parameter(id), |b| {
            b.iter(|| {
                let item = generate(bp, 0.8, 7).expect("valid blueprint");
                black_box(grade_drill(
                    &Expected::Generated(Box::new(item)),
                    &typed,
                    settings,
                ))
            })
        });
    }
    group.finish();
}

fn tokens(c: &mut Criterion) {
    let now = Utc.with_ymd_and_hms(2026, 3, 14, 15, 9, 26).unwrap();
    let claims = DrillClaims {
        unit_id: "two-step-equations".into(),
        thread_id: "3f1c9a2e-7b4d-4e8f-9a61-0c2d5e7f8a9b".into(),
        issued_at: now,
        source: DrillSource::Blueprint {
            blueprint_id: "MATH.ALG.EQ.TWOSTEP".into(),
            fingerprint: [7; 8],
            seed: 42,
            target_difficulty: 0.6,
            theme: Some("sports".into()),
        },
    };
    let keys = TokenKeys::single(KEY).unwrap();
    let token = drill_token::issue(&claims, &keys).unwrap();
    c.bench_function("drill_token/issue", |b| {
        b.iter(|| black_box(drill_token::issue(black_box(&claims), &keys).unwrap()))
    });
    c.bench_function("drill_token/verify", |b| {
        b.iter(|| {
            black_box(
                drill_token::verify(
                    black_box(&token),
                    &keys,
                    &claims.thread_id,
                    now,
                    Duration::hours(24),
                )
                .unwrap(),
            )
        })
    });
    let (_, bundle) = shipped();
    let bp = &bundle.blueprints["MATH.ALG.EQ.TWOSTEP"];
    c.bench_function("blueprint/fingerprint", |b| {
        b.iter(|| black_box(bp.fingerprint()))
    });
}

fn loading(c: &mut Criterion) {
    let (files, bundle) = shipped();
    for (name, probe) in [("quick", Probe::Quick), ("thorough", Probe::Thorough)] {
        c.bench_function(&format!("blueprint/check_all_{name}"), |b| {
            b.iter(|| {
                for bp in bundle.blueprints.values() {
                    black_box(check(bp, &Trials { probe }));
                }
            })
        });
    }
    let mut group = c.benchmark_group("bundle");
    group.sample_size(20);
    group.bench_function("load", |b| {
        b.iter(|| black_box(Bundle::load(&files).is_ok()))
    });
    group.bench_function("validate", |b| {
        b.iter(|| black_box(Bundle::validate(&files).is_ok()))
    });
    group.finish();
}

criterion_group!(benches, generation, typed_answers, tokens, loading);
criterion_main!(benches);
