//! compute_policy on a 500-unit course with a 200-unit snapshot (goal: well
//! under 100 µs), plus the SnapshotLite built for every response.

#[path = "../tests/policy_support/mod.rs"]
mod policy_support;

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use policy_support::{busy_snapshot, layered_course, mapped, now, workflow, workflow_with};
use tutorflow::engine::exam::lockout::LockoutStatus;
use tutorflow::engine::policy::{PolicyInput, StudentRequest, compute_policy};
use tutorflow::engine::snapshot_lite::build_snapshot_lite;

fn bench_policy(c: &mut Criterion) {
    let course = layered_course(500, 3);
    let snapshot = busy_snapshot(&course, 200);
    assert_eq!(snapshot.unit_progress.len(), 200);
    let target = course.order[480].clone();
    let mapped_units = mapped(&[
        (target.as_str(), 0.91),
        (course.order[300].as_str(), 0.5),
        (course.order[120].as_str(), 0.3),
        ("not-a-unit", 0.8),
    ]);
    let lockouts: BTreeMap<String, LockoutStatus> = course
        .order
        .iter()
        .step_by(3)
        .map(|u| {
            (
                format!("{u}-bronze-0"),
                LockoutStatus::Locked {
                    until: now() + chrono::Duration::hours(3),
                },
            )
        })
        .collect();
    for (name, workflow) in [
        // The strict blocker rule: every untouched prerequisite blocks, so
        // the chain walk is exercised in full.
        (
            "first_missing",
            workflow_with("policy: {blocker_evidence: any_missing}"),
        ),
        (
            "highest_priority",
            workflow_with("policy: {blocker: highest_priority, blocker_evidence: any_missing}"),
        ),
    ] {
        let input = PolicyInput {
            snapshot: &snapshot,
            course: &course,
            workflow: &workflow,
            mapped_units: &mapped_units,
            now: now(),
            turn_id: "bench-turn",
            request: StudentRequest::None,
        };
        let outcome = compute_policy(&input, &lockouts).expect("policy");
        assert!(!outcome.candidates.is_empty());
        // The scenario exercises the prerequisite chain, not just a lookup.
        assert!(!outcome.trace.blocker_chain.is_empty());
        c.bench_function(
            &format!("compute_policy/500_units/200_touched/{name}"),
            |b| b.iter(|| compute_policy(black_box(&input), black_box(&lockouts))),
        );
    }
    let workflow = workflow();
    c.bench_function("build_snapshot_lite/500_units/200_touched", |b| {
        b.iter(|| {
            build_snapshot_lite(
                black_box(&snapshot),
                black_box(&course),
                &workflow,
                &lockouts,
                now(),
            )
        })
    });
}

criterion_group!(benches, bench_policy);
criterion_main!(benches);
