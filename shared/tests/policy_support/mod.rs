//! Synthetic courses, workflows and snapshots for the policy tests and the
//! policy benchmark, built in code so they do not depend on the shipped course.
#![allow(dead_code)] // each test target uses a different part of it

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;
use tutorflow::content::course::ExamItem;
use tutorflow::content::workflow::BktOverride;
use tutorflow::content::{Course, Unit, Workflow};
use tutorflow::model::{
    DrillCounters, ExamCounters, ExamTier, MappedUnit, MasteryTier, RevisitEntry, RevisitReason,
    StudentSnapshot, TierCounts, UnitProgress, UnitStatus,
};

/// A fixed "now" for every test.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap()
}

pub fn hours_ago(hours: i64) -> DateTime<Utc> {
    now() - Duration::hours(hours)
}

/// A workflow with every setting at its default (the reference numbers).
pub fn workflow() -> Workflow {
    workflow_with("")
}

/// The default workflow with `policy_yaml` (a `policy:` or `mastery:`
/// block, top-level YAML) appended.
pub fn workflow_with(extra_yaml: &str) -> Workflow {
    let yaml = format!(
        "id: test\n\
         title: Test\n\
         categories: []\n\
         default_category: general\n\
         prompts: {{tutor_system: s, tutor_policy: p, tutor_context: c, tutor_input: i, \
         drill_grading: d, exam_evaluation: e, planner: l, summary: m, safety: f}}\n\
         {extra_yaml}\n"
    );
    serde_yaml::from_str(&yaml).expect("test workflow YAML")
}

/// A unit whose title is its id in capitals, with one mistake tag `slip`.
pub fn unit(id: &str) -> Unit {
    serde_yaml::from_str(&format!(
        "id: {id}\n\
         title: {}\n\
         anchor: about {id}\n\
         key_ideas: [one idea]\n\
         mistake_tags: [{{id: slip, description: a slip}}]\n\
         chunks: [{{id: c, section: s, text: t}}]\n",
        id.to_uppercase()
    ))
    .expect("test unit YAML")
}

pub fn exam_item(id: &str, tier: ExamTier) -> ExamItem {
    ExamItem {
        id: id.to_owned(),
        tier,
        stem: format!("question {id}"),
        options: vec!["yes".into(), "no".into()],
        answer: "A".into(),
        memo: "because".into(),
        video_url: None,
        tags: Vec::new(),
        steps: Vec::new(),
        format: tutorflow::content::ExamItemFormat::Choice,
        rubric: Vec::new(),
    }
}

/// A course from `(unit, requires)` pairs in teaching order; the first unit
/// is the entry. Every unit has a unit file (see [`unit`]).
pub fn course(edges: &[(&str, &[&str])]) -> Course {
    Course {
        id: "test-course".into(),
        title: "Test course".into(),
        description: String::new(),
        audience: String::new(),
        workflow: "test".into(),
        entry_unit: edges
            .first()
            .map(|(u, _)| (*u).to_owned())
            .unwrap_or_default(),
        order: edges.iter().map(|(u, _)| (*u).to_owned()).collect(),
        units: edges
            .iter()
            .map(|(u, _)| ((*u).to_owned(), unit(u)))
            .collect(),
        requires: edges
            .iter()
            .map(|(u, r)| ((*u).to_owned(), r.iter().map(|p| (*p).to_owned()).collect()))
            .collect(),
        problem_sets: Vec::new(),
    }
}

/// Adds exam questions to a unit's bank.
pub fn with_exam(mut course: Course, unit_id: &str, items: &[(&str, ExamTier)]) -> Course {
    let unit = course.units.get_mut(unit_id).expect("unit of the course");
    unit.exam
        .extend(items.iter().map(|(id, tier)| exam_item(id, *tier)));
    course
}

pub fn snapshot(focus: &str) -> StudentSnapshot {
    StudentSnapshot::new("student", "test-course", focus)
}

/// Sets a unit's tier and drill counters.
pub fn progress(
    snapshot: &mut StudentSnapshot,
    unit_id: &str,
    tier: MasteryTier,
    attempts: u32,
    streak: u32,
) {
    let p = snapshot
        .unit_progress
        .entry(unit_id.to_owned())
        .or_default();
    p.mastery_tier = tier;
    p.status = if tier == MasteryTier::Gold {
        UnitStatus::Mastered
    } else {
        UnitStatus::InProgress
    };
    p.drill = DrillCounters {
        attempts,
        correct: streak.min(attempts),
        streak_correct: streak.min(attempts),
    };
}

pub fn mapped(pairs: &[(&str, f64)]) -> Vec<MappedUnit> {
    pairs
        .iter()
        .map(|(u, c)| MappedUnit {
            unit_id: (*u).to_owned(),
            confidence: *c,
        })
        .collect()
}

/// A layered DAG of `units` units, each requiring up to `fan_in` units of
/// earlier layers, chosen by a fixed arithmetic pattern (no randomness).
pub fn layered_course(units: usize, fan_in: usize) -> Course {
    let ids: Vec<String> = (0..units).map(|i| format!("u{i:03}")).collect();
    let mut requires: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, id) in ids.iter().enumerate() {
        let reqs = (1..=fan_in.min(i))
            .map(|k| ids[(i * 7 + k * 13) % i].clone())
            .fold(Vec::new(), |mut acc: Vec<String>, r| {
                if !acc.contains(&r) {
                    acc.push(r);
                }
                acc
            });
        requires.insert(id.clone(), reqs);
    }
    let mut units_map = BTreeMap::new();
    for (i, id) in ids.iter().enumerate() {
        let mut u = unit(id);
        u.exam = ExamTier::ALL
            .iter()
            .flat_map(|t| (0..3).map(move |k| exam_item(&format!("{id}-{}-{k}", t.as_str()), *t)))
            .collect();
        if i % 50 == 0 {
            u.bkt = Some(BktOverride {
                prior: Some(0.3),
                ..BktOverride::default()
            });
        }
        units_map.insert(id.clone(), u);
    }
    Course {
        id: "big".into(),
        title: "Big".into(),
        description: String::new(),
        audience: String::new(),
        workflow: "test".into(),
        entry_unit: ids[0].clone(),
        order: ids,
        units: units_map,
        requires,
        problem_sets: Vec::new(),
    }
}

/// A snapshot touching `touched` units of `course` spread over the graph,
/// with evidence of every kind, focused deep in the graph.
pub fn busy_snapshot(course: &Course, touched: usize) -> StudentSnapshot {
    let n = course.order.len();
    let mut s = snapshot(&course.order[n - 1]);
    for k in 0..touched.min(n) {
        let id = &course.order[(k * 3) % n];
        let tier = [
            MasteryTier::None,
            MasteryTier::Bronze,
            MasteryTier::Silver,
            MasteryTier::Gold,
        ][k % 4];
        let p = s.unit_progress.entry(id.clone()).or_default();
        *p = UnitProgress {
            status: UnitStatus::InProgress,
            mastery_tier: tier,
            last_touched_at: Some(hours_ago((k % 100) as i64)),
            drill: DrillCounters {
                attempts: (k % 7) as u32,
                correct: (k % 5) as u32,
                streak_correct: (k % 3) as u32,
            },
            exam: ExamCounters {
                passed_by_tier: TierCounts {
                    bronze: 1,
                    silver: 0,
                    gold: 0,
                },
            },
            confusion_tags: BTreeMap::new(),
            mastery_probability: Some(0.1 + (k % 9) as f64 / 10.0),
            ability: None,
        };
        s.exam_touched.insert(format!("{id}-bronze-0"), true);
    }
    s.units_in_progress = (0..5)
        .map(|k| course.order[(n - 1 - k * 3) % n].clone())
        .collect();
    s
}

// ---------------------------------------------------------------------------
// proptest strategies
// ---------------------------------------------------------------------------

/// A random DAG: unit `i` may require any units before it, so it is acyclic
/// (a unit's requirements may repeat an id or be listed in any order).
pub fn arb_course(max_units: usize) -> impl Strategy<Value = Course> {
    (2..=max_units)
        .prop_flat_map(|n| {
            let reqs = (0..n)
                .map(|i| prop::collection::vec(0..i.max(1), 0..=3.min(i)))
                .collect::<Vec<_>>();
            let exams = prop::collection::vec(
                prop::collection::vec(prop::sample::select(ExamTier::ALL.to_vec()), 0..4),
                n,
            );
            (Just(n), reqs, exams)
        })
        .prop_map(|(n, reqs, exams)| {
            let ids: Vec<String> = (0..n).map(|i| format!("u{i}")).collect();
            let mut c = course(&[]);
            c.entry_unit = ids[0].clone();
            c.order = ids.clone();
            for (i, id) in ids.iter().enumerate() {
                let mut r: Vec<String> = Vec::new();
                if i > 0 {
                    for &p in &reqs[i] {
                        if !r.contains(&ids[p]) {
                            r.push(ids[p].clone());
                        }
                    }
                }
                c.requires.insert(id.clone(), r);
                let mut u = unit(id);
                u.exam = exams[i]
                    .iter()
                    .enumerate()
                    .map(|(k, t)| exam_item(&format!("{id}-q{k}"), *t))
                    .collect();
                c.units.insert(id.clone(), u);
            }
            c
        })
}

/// A unit id of a course of up to `n` units, or one that is not in it.
pub fn arb_unit_id(n: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (0..n).prop_map(|i| format!("u{i}")),
        1 => Just("ENTRY-00".to_owned()),
    ]
}

pub fn arb_tier() -> impl Strategy<Value = MasteryTier> {
    prop::sample::select(vec![
        MasteryTier::None,
        MasteryTier::Bronze,
        MasteryTier::Silver,
        MasteryTier::Gold,
    ])
}

fn arb_progress() -> impl Strategy<Value = UnitProgress> {
    (
        arb_tier(),
        0u32..6,
        0u32..6,
        0u32..6,
        prop::option::of(-10i64..200),
        prop::option::of(0.0f64..=1.0),
        0u32..3,
    )
        .prop_map(
            |(tier, attempts, correct, streak, touched, probability, passed)| UnitProgress {
                status: UnitStatus::InProgress,
                mastery_tier: tier,
                last_touched_at: touched.map(hours_ago),
                drill: DrillCounters {
                    attempts,
                    correct: correct.min(attempts),
                    streak_correct: streak.min(attempts),
                },
                exam: ExamCounters {
                    passed_by_tier: TierCounts {
                        bronze: passed,
                        silver: passed / 2,
                        gold: 0,
                    },
                },
                confusion_tags: BTreeMap::new(),
                mastery_probability: probability,
                ability: None,
            },
        )
}

/// A random snapshot over units `u0..u{n}` (and a few outside the course).
pub fn arb_snapshot(n: usize) -> impl Strategy<Value = StudentSnapshot> {
    (
        arb_unit_id(n),
        prop::collection::vec(arb_unit_id(n), 0..6),
        prop::collection::btree_map(arb_unit_id(n), arb_progress(), 0..n + 2),
        prop::collection::btree_map(
            (0..n, 0usize..4).prop_map(|(u, k)| format!("u{u}-q{k}")),
            (prop::sample::select(ExamTier::ALL.to_vec()), 0i64..48),
            0..4,
        ),
    )
        .prop_map(|(focus, in_progress, progress, revisit)| {
            let mut s = snapshot(&focus);
            s.units_in_progress = in_progress;
            s.unit_progress = progress;
            s.revisit_queue = revisit
                .into_iter()
                .map(|(q, (tier, age))| {
                    let unit_id = q.split('-').next().unwrap_or("u0").to_owned();
                    (
                        q,
                        RevisitEntry {
                            unit_id,
                            tier,
                            reason: Some(RevisitReason::Failed),
                            added_at: Some(hours_ago(age)),
                        },
                    )
                })
                .collect();
            s
        })
}

/// Mapped units of a course of up to `n` units, confidences slightly outside
/// [0,1] included (a careless mapper), in any order.
pub fn arb_mapped(n: usize) -> impl Strategy<Value = Vec<MappedUnit>> {
    prop::collection::vec(
        (
            arb_unit_id(n),
            prop_oneof![8 => 0.0f64..=1.0, 1 => -0.5f64..1.5],
        ),
        0..5,
    )
    .prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(unit_id, confidence)| MappedUnit {
                unit_id,
                confidence,
            })
            .collect()
    })
}
