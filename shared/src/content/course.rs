//! A course (`workflows/courses/<courseId>/`): the unit DAG in `course.yaml`
//! and one file per unit in `units/<unitId>.yaml`.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::workflow::BktOverride;
use crate::model::{AuthoredStep, ContentChunk, ExamCandidate, ExamTier, ExampleBrief, UnitAnchor};

/// `course.yaml` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CourseFile {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Who the course is for, e.g. "ages 12-15".
    #[serde(default)]
    pub audience: String,
    /// Workflow used by this course's threads.
    #[serde(default = "default_workflow")]
    pub workflow: String,
    /// Where a new student starts.
    pub entry_unit: String,
    /// The DAG: every unit and the units it requires, in teaching order.
    pub units: Vec<UnitNode>,
    /// Sequences of problems for `problem_set` threads.
    #[serde(default)]
    pub problem_sets: Vec<CourseProblemSet>,
}

fn default_workflow() -> String {
    "default".to_owned()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitNode {
    pub id: String,
    #[serde(default)]
    pub requires: Vec<String>,
}

/// A sequence of problems the course lists for `problem_set` threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CourseProblemSet {
    pub id: String,
    pub title: String,
    pub problems: Vec<CourseProblem>,
}

/// One problem of a course's problem set, as the course file writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CourseProblem {
    pub id: String,
    pub unit: String,
    pub text: String,
    /// Checked by code: a number, fraction, expression or equation.
    pub answer: String,
    /// The worked solution up to the answer, for hints (never stating the answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
}

/// `units/<unitId>.yaml`: what the tutor knows about one unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unit {
    pub id: String,
    pub title: String,
    /// Short canonical description used to map messages to the unit.
    pub anchor: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// The few ideas a concept card is built from.
    pub key_ideas: Vec<String>,
    #[serde(default)]
    pub worked_example: Option<AuthoredExample>,
    #[serde(default)]
    pub misconceptions: Vec<Misconception>,
    /// The fixed list a drill's wrong answer is tagged from.
    #[serde(default)]
    pub mistake_tags: Vec<MistakeTag>,
    /// Explanatory text the tutor retrieves from.
    pub chunks: Vec<Chunk>,
    /// Skill blueprints that generate this unit's drills.
    #[serde(default)]
    pub blueprints: Vec<String>,
    #[serde(default)]
    pub study_plan: Option<Vec<AuthoredStep>>,
    /// The unit's exam bank.
    #[serde(default)]
    pub exam: Vec<ExamItem>,
    /// BKT parameters of this unit, over the workflow's `mastery.bkt`.
    #[serde(default)]
    pub bkt: Option<BktOverride>,
    /// The kinds of problem this unit teaches: a message containing such a
    /// problem ("2x + 3 = 11", "3/4 of 20") is about this unit.
    #[serde(default)]
    pub problem_shapes: Vec<ProblemShape>,
    /// Mistake tags that point to a prerequisite: a drill answer with one
    /// of these mistakes earns a quick check on that prerequisite (any unit
    /// this one depends on, however far down).
    #[serde(default)]
    pub prerequisite_checks: BTreeMap<String, String>,
}

/// A kind of problem code can recognise in a message, whatever the words
/// around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemShape {
    /// Whole numbers added or subtracted: 47 + 38, 72 - 38.
    WholeAddSub,
    /// Whole numbers multiplied or divided: 12 × 3, 144 ÷ 12.
    WholeMulDiv,
    /// Negative numbers without arithmetic: which is bigger, -3 or -5?
    NegativeNumbers,
    /// Arithmetic with a negative number: -3 + 5, (-3) × (-5).
    IntegerArithmetic,
    /// Different operations, brackets or powers together: 2 + 3 × 4.
    MixedOperations,
    /// One fraction on its own: simplify 12/18.
    SingleFraction,
    /// Fractions added or subtracted: 1/2 + 1/3.
    FractionAddSub,
    /// Fractions multiplied or divided: 2/3 × 3/4.
    FractionMulDiv,
    /// A fraction of an amount: 3/4 of 20.
    FractionOfAmount,
    /// Decimals: 0.3 + 0.45.
    DecimalArithmetic,
    /// A percentage: 25% of 80.
    Percentage,
    /// A ratio: 3:5.
    Ratio,
    /// A fraction written another way: 3/4 as a decimal, 2/5 as a percentage.
    Conversion,
    /// Letters and numbers without an equals sign: 3x + 2x.
    Expression,
    /// An equation solved in one step: x + 7 = 12, 4x = 28.
    OneStepEquation,
    /// An equation solved in two steps or more: 2x + 3 = 11.
    TwoStepEquation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthoredExample {
    pub problem: String,
    pub steps: Vec<String>,
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Misconception {
    pub id: String,
    pub description: String,
    /// How a tutor helps the student past it.
    #[serde(default)]
    pub remedy: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MistakeTag {
    pub id: String,
    /// What the mistake is, for teachers and reports.
    pub description: String,
    /// What the tutor tells a student who made it: why it goes wrong and
    /// what to do instead, in a sentence or two.
    #[serde(default)]
    pub explain: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkKind {
    #[default]
    Lesson,
    Transcript,
    Pdf,
    Example,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chunk {
    pub id: String,
    pub section: String,
    #[serde(default)]
    pub kind: ChunkKind,
    pub text: String,
}

/// An authored exam question: graded by the server, never by the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExamItem {
    pub id: String,
    pub tier: ExamTier,
    /// How it is answered: by picking an option (the default), or in the
    /// student's own words.
    #[serde(default)]
    pub format: ExamItemFormat,
    pub stem: String,
    /// Choices in display order; their ids are `A`, `B`, `C`, ...
    /// (none for a written question).
    #[serde(default)]
    pub options: Vec<String>,
    /// The correct option's id; for a written question, a model answer.
    pub answer: String,
    /// How a written answer is marked: the points it must make. Only a
    /// written question has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rubric: Vec<RubricPoint>,
    /// Worked solution shown by "View memo" (locks the question).
    pub memo: String,
    #[serde(default)]
    pub video_url: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// The worked solution up to the answer, for hints (never stating the
    /// answer: the memo does that once the question is over).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
}

/// How an exam question is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExamItemFormat {
    /// One of the options, marked by code.
    #[default]
    Choice,
    /// An explanation or a word answer that code cannot mark: asked only
    /// in exam sessions, judged against its rubric.
    Written,
}

pub use crate::model::RubricPoint;

impl ExamItem {
    /// Whether the question is answered in words (see [`ExamItemFormat`]).
    pub fn is_written(&self) -> bool {
        self.format == ExamItemFormat::Written
    }

    /// The id of the option at `index` (`A` for 0).
    pub fn option_id(index: usize) -> String {
        char::from(b'A' + (index % 26) as u8).to_string()
    }

    /// The index of option `id`, if it exists.
    pub fn option_index(&self, id: &str) -> Option<usize> {
        let id = id.trim();
        (0..self.options.len()).find(|&i| Self::option_id(i).eq_ignore_ascii_case(id))
    }
}

/// A loaded course: its units by id and the prerequisite graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Course {
    pub id: String,
    pub title: String,
    pub description: String,
    pub audience: String,
    pub workflow: String,
    pub entry_unit: String,
    /// Unit ids in the order `course.yaml` lists them.
    pub order: Vec<String>,
    pub units: BTreeMap<String, Unit>,
    /// unit → the units it requires, in listed order.
    pub requires: BTreeMap<String, Vec<String>>,
    pub problem_sets: Vec<CourseProblemSet>,
}

impl Course {
    pub fn unit(&self, id: &str) -> Option<&Unit> {
        self.units.get(id)
    }

    /// Direct prerequisites of `unit_id` (empty for unknown units).
    pub fn prereqs(&self, unit_id: &str) -> &[String] {
        self.requires.get(unit_id).map_or(&[], Vec::as_slice)
    }

    /// Units that list `unit_id` as a prerequisite.
    pub fn dependents(&self, unit_id: &str) -> Vec<&str> {
        self.order
            .iter()
            .filter(|u| self.prereqs(u).iter().any(|p| p == unit_id))
            .map(String::as_str)
            .collect()
    }

    /// Every unit `unit_id` depends on, directly or not.
    pub fn ancestors(&self, unit_id: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = vec![unit_id];
        while let Some(u) = stack.pop() {
            for p in self.prereqs(u) {
                if seen.insert(p.clone()) {
                    stack.push(p);
                }
            }
        }
        seen
    }

    /// The exam item `question_id` and the unit holding it.
    pub fn exam_item(&self, question_id: &str) -> Option<(&Unit, &ExamItem)> {
        self.order.iter().find_map(|u| {
            let unit = self.units.get(u)?;
            unit.exam
                .iter()
                .find(|q| q.id == question_id)
                .map(|q| (unit, q))
        })
    }
}

// What the tutor's prompt is given of a unit, a chunk and an exam question:
// built here, where both sides are known (the model knows nothing of
// content).

impl From<&Unit> for UnitAnchor {
    fn from(unit: &Unit) -> Self {
        UnitAnchor {
            unit_id: unit.id.clone(),
            title: unit.title.clone(),
            anchor_text: unit.anchor.trim().to_owned(),
            key_ideas: unit.key_ideas.clone(),
            worked_example: unit.worked_example.as_ref().map(|e| ExampleBrief {
                problem: e.problem.clone(),
                steps: e.steps.clone(),
                answer: e.answer.clone(),
            }),
        }
    }
}

impl ContentChunk {
    pub fn from_unit_chunk(unit_id: &str, chunk: &Chunk) -> Self {
        ContentChunk {
            unit_id: unit_id.to_owned(),
            chunk_id: chunk.id.clone(),
            section: chunk.section.clone(),
            text: chunk.text.trim().to_owned(),
            worked_example: chunk.kind == ChunkKind::Example,
        }
    }
}

impl ExamCandidate {
    pub fn from_item(unit_id: &str, item: &ExamItem) -> Self {
        ExamCandidate {
            question_id: item.id.clone(),
            unit_ids: vec![unit_id.to_owned()],
            difficulty_tier: item.tier,
            tags: item.tags.clone(),
        }
    }
}
