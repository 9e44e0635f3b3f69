//! Shared fixtures of the LLM tests (`shared/tests/llm/`): the shipped
//! content bundle, the sample course's units plus synthetic ones, and turn
//! inputs built from them.
// Each test file uses its own part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use tutorflow::content::course::{
    AuthoredExample, Chunk, ChunkKind, CourseFile, Misconception, Unit,
};
use tutorflow::content::{Bundle, ContentFiles, ContentSource, FsSource};
use tutorflow::model::{
    CategoryCue, ClientEvent, CodeReading, ContentChunk, CourseBrief, ExamAvailability,
    ExamCandidate, ExamTier, Mode, PacingDirective, Personalization, PolicyConstraints,
    QuestionPhase, SnapshotLiteForLlm, StudentInput, StudentIntent, StudentStyle, TutorAction,
    TutorContext, TutorPolicy, TutorTurnInput, UnitAnchor,
};

pub const COURSE: &str = "prealgebra";

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shipped bundle. While some units of the course are still being
/// written, the course is cut to the units that have files (a no-op once
/// they all exist), so these tests always run against the real content.
pub fn bundle() -> Arc<Bundle> {
    static BUNDLE: OnceLock<Arc<Bundle>> = OnceLock::new();
    BUNDLE.get_or_init(load_bundle).clone()
}

fn load_bundle() -> Arc<Bundle> {
    Arc::new(
        Bundle::load(&content_files()).unwrap_or_else(|d| panic!("the bundle is invalid:\n{d}")),
    )
}

/// The shipped bundle's files, the course cut as [`bundle`] describes.
pub fn content_files() -> ContentFiles {
    // Its own thread, so async tests can call this too.
    let fetched = std::thread::spawn(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(FsSource::new(repo_root()).fetch())
    })
    .join()
    .expect("the loader thread");
    let mut files = fetched.expect("the repository holds a bundle");
    let course_path = format!("workflows/courses/{COURSE}/course.yaml");
    let mut course: CourseFile =
        serde_yaml::from_str(&files.files[&course_path]).expect("course.yaml parses");
    let has_file = |id: &str| {
        files
            .files
            .contains_key(&format!("workflows/courses/{COURSE}/units/{id}.yaml"))
    };
    course.units.retain(|u| has_file(&u.id));
    let present: Vec<String> = course.units.iter().map(|u| u.id.clone()).collect();
    for unit in &mut course.units {
        unit.requires.retain(|r| present.contains(r));
    }
    if !present.contains(&course.entry_unit) {
        course.entry_unit = course
            .units
            .iter()
            .find(|u| u.requires.is_empty())
            .map(|u| u.id.clone())
            .expect("a unit without prerequisites");
    }
    for set in &mut course.problem_sets {
        set.problems.retain(|p| present.contains(&p.unit));
    }
    course.problem_sets.retain(|s| !s.problems.is_empty());
    files
        .files
        .insert(course_path, serde_yaml::to_string(&course).unwrap());
    files
}

/// The course's units and synthetic ones that stress the edges: no worked
/// example, a worked example that is also a typical question, one key idea,
/// long lesson text.
pub fn sample_units(bundle: &Bundle) -> Vec<Unit> {
    let mut units: Vec<Unit> = bundle.courses[COURSE].units.values().cloned().collect();
    units.push(synthetic(
        "synthetic-ratios-1",
        "Sharing in a ratio",
        &[
            "A ratio compares two amounts.",
            "Add the parts to find how many shares there are.",
        ],
        None,
    ));
    units.push(synthetic(
        "synthetic-percent-2",
        "Percentages of amounts",
        &["Per cent means out of a hundred."],
        Some((
            "Find 10% of 250.",
            &["10% is one tenth.", "250 ÷ 10 = 25"],
            "25",
        )),
    ));
    let mut long = synthetic(
        "synthetic-decimals-3",
        "Adding decimals",
        &[
            "Line up the decimal points.",
            "Fill empty places with zeros.",
            "Add as with whole numbers, then place the point.",
        ],
        Some(("Add 2.5 + 0.75.", &["2.50 + 0.75", "= 3.25"], "3.25")),
    );
    long.chunks[0].text = "When you add decimals, the places must match. ".repeat(40);
    units.push(long);
    units
}

pub fn synthetic(
    id: &str,
    title: &str,
    ideas: &[&str],
    example: Option<(&str, &[&str], &str)>,
) -> Unit {
    Unit {
        id: id.into(),
        title: title.into(),
        anchor: format!("{title}: what it means and how to work with it."),
        tags: vec![],
        key_ideas: ideas.iter().map(|s| (*s).to_owned()).collect(),
        worked_example: example.map(|(problem, steps, answer)| AuthoredExample {
            problem: problem.into(),
            steps: steps.iter().map(|s| (*s).to_owned()).collect(),
            answer: answer.into(),
        }),
        misconceptions: vec![Misconception {
            id: "mix_up".into(),
            description: format!("Mixes up the steps of {title}."),
            remedy: String::new(),
        }],
        mistake_tags: vec![],
        chunks: vec![
            Chunk {
                id: "intro".into(),
                section: "Introduction".into(),
                kind: ChunkKind::Lesson,
                text: format!(
                    "{title} is about careful steps. Each step keeps things equal. Check your work."
                ),
            },
            Chunk {
                id: "more".into(),
                section: "More".into(),
                kind: ChunkKind::Example,
                text: format!("Here is another look at {title}. Practice makes it easier."),
            },
        ],
        blueprints: vec![],
        study_plan: None,
        exam: vec![],
        bkt: None,
        problem_shapes: vec![],
        prerequisite_checks: Default::default(),
    }
}

/// A plain turn on `units[0]`: every action allowed, nothing pending.
pub fn turn_input(units: &[Unit]) -> TutorTurnInput {
    let focus = &units[0];
    let scoped: Vec<String> = units.iter().map(|u| u.id.clone()).collect();
    TutorTurnInput {
        course: CourseBrief {
            title: "Pre-algebra foundations".into(),
            audience: "ages 12-15".into(),
        },
        mode: Mode::Guided,
        policy: TutorPolicy {
            turn_id: "turn-1".into(),
            focus_unit_id: focus.id.clone(),
            primary_target_unit_id: focus.id.clone(),
            prereq_blocking_unit_id: None,
            scoped_unit_ids: scoped,
            allowed_actions: vec![TutorAction::SocraticQuestion, TutorAction::DrillCard],
            stuck: false,
            exam_ready: false,
            desired_exam_tier: ExamTier::Bronze,
            exam_availability: ExamAvailability::Available,
            exam_next_eligible_at: None,
            constraints: PolicyConstraints {
                max_concept_words: 170,
                max_worked_examples: 1,
                drill_max_steps: 2,
            },
        },
        context: TutorContext {
            unit_anchors: units.iter().map(UnitAnchor::from).collect(),
            unit_content_chunks: units
                .iter()
                .flat_map(|u| {
                    u.chunks
                        .iter()
                        .map(|c| ContentChunk::from_unit_chunk(&u.id, c))
                })
                .collect(),
            exam_candidates: units
                .iter()
                .flat_map(|u| u.exam.iter().map(|q| ExamCandidate::from_item(&u.id, q)))
                .collect(),
            snapshot_lite: SnapshotLiteForLlm {
                focus_unit_id: focus.id.clone(),
                ..SnapshotLiteForLlm::default()
            },
            client_event: ClientEvent::None,
            practice_item: None,
        },
        category: CategoryCue {
            id: "general".into(),
            attempt: 1,
            phase: QuestionPhase::Asked,
            scaffold_depth: 0,
            unit_title: focus.title.clone(),
            misconceptions: focus
                .misconceptions
                .iter()
                .map(|m| m.description.clone())
                .collect(),
            code_note: String::new(),
            own_problem: String::new(),
            own_problem_step: String::new(),
        },
        question: None,
        pacing: PacingDirective::Steady,
        style: StudentStyle::default(),
        personalization: Personalization::default(),
        history: vec![],
        student: StudentInput {
            message_text: Some("Can you help me with this?".into()),
            ..StudentInput::default()
        },
        reading: CodeReading {
            mapped_units: vec![],
            intent: StudentIntent::Unknown,
        },
        seed: 7,
        lesson: None,
        clarify: None,
        problem: None,
    }
}

/// Unit ids by title, to check text never names a unit by its id.
pub fn unit_ids(units: &[Unit]) -> BTreeMap<String, String> {
    units
        .iter()
        .map(|u| (u.id.clone(), u.title.clone()))
        .collect()
}
