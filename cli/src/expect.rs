//! Expectations of workflow tests: `expect: {category: stuck, ...}` on a
//! step, each checked against one field of the step's output line, so what
//! `tutorflow simulate` prints is exactly what a test can assert.

use std::collections::BTreeSet;

use serde_json::Value;
use tutorflow::content::yaml_index::Position;
use tutorflow::content::{Bundle, Course};

use Compare::{Contains, Equals, Excludes, Includes, Lacks};

/// The endpoint a step calls, which decides the fields of its output line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Turn,
    DrillGrade,
    ExamSubmit,
    SupportViewed,
    Wait,
    /// `pause`, `resume` or `end`.
    Lifecycle,
}

/// How an expected value is compared with the line's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    Equals,
    /// Every expected action is in the list.
    Includes,
    /// No expected action is in the list.
    Excludes,
    /// The text contains the expected words, ignoring case.
    Contains,
    /// The text does not contain the words, ignoring case.
    Lacks,
}

/// What an expected value may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Domain {
    Bool,
    Count,
    Text,
    /// One of a fixed set of words.
    OneOf(&'static [&'static str]),
    /// One of the course's ids; `none` (for an absent value) when allowed.
    Id {
        of: Ids,
        none_allowed: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ids {
    Units,
    Categories,
    MistakeTags,
    Questions,
}

impl Ids {
    fn noun(self) -> &'static str {
        match self {
            Ids::Units => "unit",
            Ids::Categories => "category",
            Ids::MistakeTags => "mistake tag",
            Ids::Questions => "exam question",
        }
    }
}

const ACTIONS: &[&str] = &[
    "SOCRATIC_QUESTION",
    "CONCEPT_CARD",
    "DRILL_CARD",
    "EXAM_BLOCK",
];
const CARDS: &[&str] = &["CONCEPT", "DRILL", "EXAM", "none"];
const EXAM_TIERS: &[&str] = &["bronze", "silver", "gold"];
const MASTERY_TIERS: &[&str] = &["none", "bronze", "silver", "gold"];
const GRADES: &[&str] = &["correct", "close", "wrong", "unverifiable"];
const VERDICTS: &[&str] = &["valid", "fallback"];
const PACING: &[&str] = &[
    "turn_one",
    "accelerate",
    "extend",
    "simplify",
    "consolidate",
    "steady",
];
const PHASES: &[&str] = &["asked", "probe", "hint", "explain", "strategy_change"];
const STEP_KINDS: &[&str] = &["explain", "check", "practice", "none"];
const STATUSES: &[&str] = &["active", "paused", "completed"];
const PROGRESSIONS: &[&str] = &["ADVANCE", "CONTINUE", "INTERVENE", "SKIP"];
const SIGNALS: &[&str] = &["mastered", "learned", "struggling", "stuck", "none"];
const SESSION_ENDS: &[&str] = &["completed", "abandoned", "none"];

/// One key a test may expect, and where its value is in the output line.
#[derive(Debug)]
struct Key {
    name: &'static str,
    /// JSON pointer into the step's output line.
    pointer: &'static str,
    compare: Compare,
    domain: Domain,
    /// The lines that carry the value.
    lines: &'static [LineKind],
}

const TURN: &[LineKind] = &[LineKind::Turn];
/// Lines that say the thread's status and what the tutor said.
const THREAD: &[LineKind] = &[LineKind::Turn, LineKind::Lifecycle];
const GRADED: &[LineKind] = &[LineKind::Turn, LineKind::DrillGrade, LineKind::ExamSubmit];
const DRILL_ANSWERS: &[LineKind] = &[LineKind::Turn, LineKind::DrillGrade];
const EXAM: &[LineKind] = &[LineKind::ExamSubmit];
const EXAM_EVENTS: &[LineKind] = &[LineKind::ExamSubmit, LineKind::SupportViewed];
const WITH_SNAPSHOT: &[LineKind] = &[
    LineKind::Turn,
    LineKind::DrillGrade,
    LineKind::ExamSubmit,
    LineKind::SupportViewed,
];

const fn key(
    name: &'static str,
    pointer: &'static str,
    compare: Compare,
    domain: Domain,
    lines: &'static [LineKind],
) -> Key {
    Key {
        name,
        pointer,
        compare,
        domain,
        lines,
    }
}

const fn ids(of: Ids, none_allowed: bool) -> Domain {
    Domain::Id { of, none_allowed }
}

/// Every expectation key; the README's table lists the same.
#[rustfmt::skip] // One key per line reads as the table it is.
const KEYS: &[Key] = &[
    key("category",         "/category",                            Equals,   ids(Ids::Categories, false),  TURN),
    key("action",           "/action",                              Equals,   Domain::OneOf(ACTIONS),       TURN),
    key("card",             "/card/type",                           Equals,   Domain::OneOf(CARDS),         TURN),
    key("focus",            "/policy/focus",                        Equals,   ids(Ids::Units, false),       TURN),
    key("blocker",          "/policy/blocker",                      Equals,   ids(Ids::Units, true),        TURN),
    key("tier",             "/policy/tier",                         Equals,   Domain::OneOf(EXAM_TIERS),    TURN),
    key("allowed_includes", "/policy/allowedActions",               Includes, Domain::OneOf(ACTIONS),       TURN),
    key("allowed_excludes", "/policy/allowedActions",               Excludes, Domain::OneOf(ACTIONS),       TURN),
    key("stuck",            "/policy/stuck",                        Equals,   Domain::Bool,                 TURN),
    key("exam_ready",       "/policy/examReady",                    Equals,   Domain::Bool,                 TURN),
    key("validation",       "/validation/outcome",                  Equals,   Domain::OneOf(VERDICTS),      TURN),
    key("fallback_rule",    "/validation/rule",                     Equals,   Domain::Text,                 TURN),
    key("pending",          "/pending",                             Equals,   Domain::Bool,                 TURN),
    key("phase",            "/phase",                               Equals,   Domain::OneOf(PHASES),        TURN),
    key("wrong_attempts",   "/wrongAttempts",                       Equals,   Domain::Count,                TURN),
    key("scaffolding",      "/scaffolding",                         Equals,   Domain::Bool,                 TURN),
    key("teach_back",       "/teachBack",                           Equals,   Domain::Bool,                 TURN),
    key("says",             "/tutorText",                           Contains, Domain::Text,                 THREAD),
    key("not_says",         "/tutorText",                           Lacks,    Domain::Text,                 THREAD),
    key("refused",          "/refused/status",                      Equals,   Domain::Count,                TURN),
    key("pacing",           "/pacing",                              Equals,   Domain::OneOf(PACING),        TURN),
    key("plan_step",        "/plan/step",                           Equals,   Domain::OneOf(STEP_KINDS),    TURN),
    key("plan_completed",   "/plan/stepsCompleted",                 Equals,   Domain::Count,                TURN),
    key("plan_blocked",     "/plan/blocked",                        Equals,   Domain::Count,                TURN),
    key("plan_replans",     "/plan/replans",                        Equals,   Domain::Count,                TURN),
    key("plan_complete",    "/plan/complete",                       Equals,   Domain::Bool,                 TURN),
    key("extension_turns",  "/plan/extensionTurns",                 Equals,   Domain::Count,                TURN),
    key("status",           "/status",                              Equals,   Domain::OneOf(STATUSES),      THREAD),
    key("concepts",         "/concepts",                            Equals,   Domain::Count,                TURN),
    key("progression",      "/problemSet/action",                   Equals,   Domain::OneOf(PROGRESSIONS),  TURN),
    key("signal",           "/problemSet/signal",                   Equals,   Domain::OneOf(SIGNALS),       TURN),
    key("problem",          "/problemSet/problem",                  Equals,   Domain::Count,                TURN),
    key("problems_done",    "/problemSet/completed",                Equals,   Domain::Count,                THREAD),
    key("set_ended",        "/problemSet/ended",                    Equals,   Domain::OneOf(SESSION_ENDS),  THREAD),
    key("result",           "/result",                              Equals,   Domain::OneOf(GRADES),        GRADED),
    key("counted",          "/counted",                             Equals,   Domain::Bool,                 DRILL_ANSWERS),
    key("mistake_tag",      "/mistakeTag",                          Equals,   ids(Ids::MistakeTags, true),  DRILL_ANSWERS),
    key("unit_tier",        "/unitTier",                            Equals,   Domain::OneOf(MASTERY_TIERS), EXAM),
    key("locked",           "/locked",                              Equals,   Domain::Bool,                 EXAM_EVENTS),
    key("focus_tier",       "/snapshotLite/focus/masteryTier",      Equals,   Domain::OneOf(MASTERY_TIERS), WITH_SNAPSHOT),
    key("revisit",          "/snapshotLite/revisit/lockedCount",    Equals,   Domain::Count,                WITH_SNAPSHOT),
    key("next_revisit",     "/snapshotLite/revisit/nextQuestionId", Equals,   ids(Ids::Questions, true),    WITH_SNAPSHOT),
    key("prereq_nudge",     "/snapshotLite/prereqNudge/unitId",     Equals,   ids(Ids::Units, true),        WITH_SNAPSHOT),
    key("bronze_units",     "/snapshotLite/progress/bronze",        Equals,   Domain::Count,                WITH_SNAPSHOT),
];

fn steps_with(kind: LineKind) -> &'static str {
    match kind {
        LineKind::Turn => "say, event, stuck, answer_in_chat and continue steps",
        LineKind::DrillGrade => "answer_drill steps",
        LineKind::ExamSubmit => "exam steps",
        LineKind::SupportViewed => "view_memo steps",
        LineKind::Wait => "wait steps",
        LineKind::Lifecycle => "pause, resume and end steps",
    }
}

/// The ids of a course that expectations may name.
pub struct Known {
    units: BTreeSet<String>,
    categories: BTreeSet<String>,
    mistake_tags: BTreeSet<String>,
    questions: BTreeSet<String>,
}

impl Known {
    pub fn of(bundle: &Bundle, course: &Course) -> Known {
        let units = course.units.values();
        Known {
            units: course.units.keys().cloned().collect(),
            categories: bundle
                .workflow_for(course)
                .map(|w| w.categories.iter().map(|c| c.id.clone()).collect())
                .unwrap_or_default(),
            mistake_tags: units
                .clone()
                .flat_map(|u| u.mistake_tags.iter().map(|t| t.id.clone()))
                .collect(),
            questions: units
                .flat_map(|u| u.exam.iter().map(|q| q.id.clone()))
                .collect(),
        }
    }

    fn ids(&self, of: Ids) -> &BTreeSet<String> {
        match of {
            Ids::Units => &self.units,
            Ids::Categories => &self.categories,
            Ids::MistakeTags => &self.mistake_tags,
            Ids::Questions => &self.questions,
        }
    }

    pub fn has_unit(&self, unit: &str) -> bool {
        self.units.contains(unit)
    }

    pub fn unknown_unit(&self, unit: &str) -> String {
        unknown(&self.units, Ids::Units.noun(), unit)
    }
}

/// "`x` is not in this course", with the first few ids that are.
fn unknown(known: &BTreeSet<String>, noun: &str, value: &str) -> String {
    const SHOWN: usize = 12;
    let listed: Vec<&str> = known.iter().take(SHOWN).map(String::as_str).collect();
    let more = known.len().saturating_sub(SHOWN);
    let tail = if more > 0 {
        format!(", and {more} more")
    } else {
        String::new()
    };
    format!(
        "{noun} `{value}` is not in this course (known: {}{tail})",
        listed.join(", ")
    )
}

/// Why an expectation could not be read: its key or its value is wrong.
#[derive(Debug, PartialEq)]
pub enum ParseError {
    Key(String),
    Value(String),
}

/// One checked expectation of a step.
#[derive(Debug, Clone)]
pub struct Expectation {
    key: &'static Key,
    /// In the line's terms: `null` for `none`, lists for action sets.
    want: Value,
    pub at: Position,
}

impl Expectation {
    /// The step expects the API to refuse it (`refused:`): the refusal is
    /// its line rather than the end of the run.
    pub fn expects_refusal(&self) -> bool {
        self.key.name == "refused"
    }

    /// Reads `name: value` for a step whose line is of `kind`; ids are
    /// checked against `known` (absent when the course itself is unknown).
    pub fn parse(
        name: &str,
        value: &serde_yaml::Value,
        kind: LineKind,
        known: Option<&Known>,
        at: Position,
    ) -> Result<Expectation, ParseError> {
        let key = KEYS.iter().find(|k| k.name == name).ok_or_else(|| {
            let names: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
            ParseError::Key(format!(
                "unknown expectation `{name}`; expected one of: {}",
                names.join(", ")
            ))
        })?;
        if !key.lines.contains(&kind) {
            let checked: Vec<&str> = key.lines.iter().map(|k| steps_with(*k)).collect();
            return Err(ParseError::Key(format!(
                "`{name}` is not known after {}; it is checked on {}",
                steps_with(kind),
                checked.join(" and ")
            )));
        }
        let want = match key.compare {
            Compare::Includes | Compare::Excludes => match value {
                serde_yaml::Value::Sequence(items) => Value::Array(
                    items
                        .iter()
                        .map(|v| expected_value(name, v, key.domain, known))
                        .collect::<Result<_, _>>()?,
                ),
                single => Value::Array(vec![expected_value(name, single, key.domain, known)?]),
            },
            Compare::Equals | Compare::Contains | Compare::Lacks => {
                expected_value(name, value, key.domain, known)?
            }
        };
        Ok(Expectation { key, want, at })
    }

    /// Checks the step's output line; the error says what differs.
    pub fn check(&self, line: &Value) -> Result<(), String> {
        let actual = line.pointer(self.key.pointer).unwrap_or(&Value::Null);
        let listed = |v: &Value| match v {
            Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(", "),
            other => shown(other),
        };
        let actual_items = actual.as_array().cloned().unwrap_or_default();
        let wanted_items = self.want.as_array().cloned().unwrap_or_default();
        match self.key.compare {
            Compare::Equals if *actual == self.want => Ok(()),
            Compare::Equals => Err(format!(
                "expected {} `{}`, got `{}`",
                self.key.name,
                shown(&self.want),
                shown(actual)
            )),
            Compare::Includes => {
                let missing: Vec<Value> = wanted_items
                    .into_iter()
                    .filter(|w| !actual_items.contains(w))
                    .collect();
                if missing.is_empty() {
                    return Ok(());
                }
                Err(format!(
                    "expected the allowed actions to include {}; they are {}",
                    listed(&Value::Array(missing)),
                    listed(actual)
                ))
            }
            Compare::Excludes => {
                let present: Vec<Value> = wanted_items
                    .into_iter()
                    .filter(|w| actual_items.contains(w))
                    .collect();
                if present.is_empty() {
                    return Ok(());
                }
                Err(format!(
                    "expected the allowed actions not to include {}; they are {}",
                    listed(&Value::Array(present)),
                    listed(actual)
                ))
            }
            Compare::Contains => {
                let said = actual.as_str().unwrap_or_default();
                let wanted = self.want.as_str().unwrap_or_default();
                if said.to_lowercase().contains(&wanted.to_lowercase()) {
                    Ok(())
                } else {
                    Err(format!(
                        "expected the tutor to say \"{wanted}\"; it said \"{said}\""
                    ))
                }
            }
            Compare::Lacks => {
                let said = actual.as_str().unwrap_or_default();
                let unwanted = self.want.as_str().unwrap_or_default();
                if said.to_lowercase().contains(&unwanted.to_lowercase()) {
                    Err(format!(
                        "expected the tutor not to say \"{unwanted}\"; it said \"{said}\""
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// A value as a test author wrote it: `none` for an absent one.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "none".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn expected_value(
    name: &str,
    value: &serde_yaml::Value,
    domain: Domain,
    known: Option<&Known>,
) -> Result<Value, ParseError> {
    use serde_yaml::Value as Yaml;
    let invalid = |what: &str| ParseError::Value(format!("`{name}` expects {what}"));
    match domain {
        Domain::Bool => match value {
            Yaml::Bool(b) => Ok(Value::Bool(*b)),
            _ => Err(invalid("true or false")),
        },
        Domain::Count => value
            .as_u64()
            .map(Value::from)
            .ok_or_else(|| invalid("a whole number")),
        Domain::Text => match value {
            Yaml::String(s) if !s.trim().is_empty() => Ok(Value::String(s.clone())),
            _ => Err(invalid("some text")),
        },
        Domain::OneOf(choices) => match value.as_str() {
            // `none` stands for an absent card; a tier called none is a word.
            Some("none") if choices == CARDS => Ok(Value::Null),
            Some(word) if choices.contains(&word) => Ok(Value::String(word.to_owned())),
            _ => Err(invalid(&format!("one of: {}", choices.join(", ")))),
        },
        Domain::Id { of, none_allowed } => {
            let noun = of.noun();
            let text = value.as_str().ok_or_else(|| {
                invalid(&if none_allowed {
                    format!("a {noun} id or none")
                } else {
                    format!("a {noun} id")
                })
            })?;
            if none_allowed && text == "none" {
                return Ok(Value::Null);
            }
            match known {
                Some(known) if !known.ids(of).contains(text) => {
                    Err(ParseError::Value(unknown(known.ids(of), noun, text)))
                }
                _ => Ok(Value::String(text.to_owned())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::script::tests::bundle;
    use crate::simulator::{Setup, Simulation};

    const AT: Position = Position { line: 3, column: 7 };

    fn known() -> Known {
        let bundle = bundle();
        Known::of(
            bundle,
            bundle.course("prealgebra").expect("the sample course"),
        )
    }

    fn parse(name: &str, yaml: &str, kind: LineKind) -> Result<Expectation, ParseError> {
        let value: serde_yaml::Value = serde_yaml::from_str(yaml).expect("yaml");
        Expectation::parse(name, &value, kind, Some(&known()), AT)
    }

    fn check(name: &str, yaml: &str, line: Value) -> Result<(), String> {
        parse(name, yaml, LineKind::Turn)
            .expect("a valid expectation")
            .check(&line)
    }

    #[test]
    fn equal_values_pass_and_different_ones_say_both() {
        let line = json!({"category": "stuck", "card": null, "policy": {"blocker": null}});
        assert_eq!(check("category", "stuck", line.clone()), Ok(()));
        assert_eq!(
            check("category", "correct", line.clone()),
            Err("expected category `correct`, got `stuck`".to_owned())
        );
        assert_eq!(check("card", "none", line.clone()), Ok(()));
        assert_eq!(
            check("card", "DRILL", line.clone()),
            Err("expected card `DRILL`, got `none`".to_owned())
        );
        assert_eq!(check("blocker", "none", line.clone()), Ok(()));
        assert_eq!(
            check("blocker", "fractions", line),
            Err("expected blocker `fractions`, got `none`".to_owned())
        );
    }

    #[test]
    fn action_sets_and_tutor_text_are_matched_loosely() {
        let line = json!({
            "policy": {"allowedActions": ["SOCRATIC_QUESTION", "DRILL_CARD"]},
            "tutorText": "Let's get back to Fractions though."
        });
        assert_eq!(
            check("allowed_includes", "DRILL_CARD", line.clone()),
            Ok(())
        );
        assert_eq!(
            check("allowed_includes", "[DRILL_CARD, EXAM_BLOCK]", line.clone()),
            Err(
                "expected the allowed actions to include EXAM_BLOCK; they are \
                 SOCRATIC_QUESTION, DRILL_CARD"
                    .to_owned()
            )
        );
        assert_eq!(
            check("allowed_excludes", "[EXAM_BLOCK]", line.clone()),
            Ok(())
        );
        assert_eq!(
            check("allowed_excludes", "DRILL_CARD", line.clone()),
            Err(
                "expected the allowed actions not to include DRILL_CARD; they are \
                 SOCRATIC_QUESTION, DRILL_CARD"
                    .to_owned()
            )
        );
        assert_eq!(check("says", "get back to fractions", line.clone()), Ok(()));
        assert_eq!(check("not_says", "skip", line.clone()), Ok(()));
        assert_eq!(
            check("not_says", "FRACTIONS", line.clone()),
            Err(
                "expected the tutor not to say \"FRACTIONS\"; it said \"Let's get back to \
                 Fractions though.\""
                    .to_owned()
            )
        );
        assert_eq!(
            check("says", "well done", line),
            Err(
                "expected the tutor to say \"well done\"; it said \"Let's get back to \
                 Fractions though.\""
                    .to_owned()
            )
        );
    }

    #[test]
    fn unknown_keys_values_and_ids_are_refused() {
        let Err(ParseError::Key(message)) = parse("catgory", "stuck", LineKind::Turn) else {
            panic!("an unknown key is refused");
        };
        assert!(
            message
                .starts_with("unknown expectation `catgory`; expected one of: category, action,"),
            "{message}"
        );
        assert_eq!(
            parse("unit_tier", "bronze", LineKind::Turn).err(),
            Some(ParseError::Key(
                "`unit_tier` is not known after say, event, stuck, answer_in_chat and continue \
                 steps; it is checked on exam steps"
                    .to_owned()
            ))
        );
        assert_eq!(
            parse("action", "EXAM", LineKind::Turn).err(),
            Some(ParseError::Value(
                "`action` expects one of: SOCRATIC_QUESTION, CONCEPT_CARD, DRILL_CARD, EXAM_BLOCK"
                    .to_owned()
            ))
        );
        assert_eq!(
            parse("counted", "yes please", LineKind::DrillGrade).err(),
            Some(ParseError::Value(
                "`counted` expects true or false".to_owned()
            ))
        );
        let Err(ParseError::Value(message)) = parse("category", "stuk", LineKind::Turn) else {
            panic!("an unknown category is refused");
        };
        assert!(
            message.starts_with("category `stuk` is not in this course (known: "),
            "{message}"
        );
        let Err(ParseError::Value(message)) =
            parse("next_revisit", "EX-NOPE", LineKind::SupportViewed)
        else {
            panic!("an unknown question is refused");
        };
        assert!(message.starts_with("exam question `EX-NOPE` is not in this course"));
        assert!(parse("next_revisit", "none", LineKind::SupportViewed).is_ok());
        assert!(parse("result", "correct", LineKind::ExamSubmit).is_ok());
        assert!(parse("revisit", "1", LineKind::ExamSubmit).is_ok());
    }

    /// Whether `pointer` names a field the line has: every step exists,
    /// or the value on the way is null (an absent card, no blocker).
    fn resolves(line: &Value, pointer: &str) -> bool {
        let mut at = line;
        for name in pointer.split('/').skip(1) {
            match at {
                Value::Null => return true,
                Value::Object(fields) => match fields.get(name) {
                    Some(next) => at = next,
                    None => return false,
                },
                _ => return false,
            }
        }
        true
    }

    #[tokio::test]
    async fn every_key_reads_a_field_of_the_lines_it_applies_to() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let setup = Setup::load(None, Some(std::path::Path::new(root)))
            .await
            .expect("the repository's content loads");
        let script = crate::script::parse(
            "every-kind.yaml",
            "\
course: prealgebra
steps:
  - event: REQUEST_DRILL
  - answer_drill: correct
  - continue: drill
  - answer_in_chat: correct
  - continue: drill
  - exam: fail
  - continue: exam
  - view_memo: true
  - wait: 1h
  - pause: true
  - say: still there?
    expect: {refused: 409}
  - resume: true
  - end: true
",
            &setup.bundle(),
        )
        .expect("a valid script");
        let mut simulation = Simulation::start(&setup, &script)
            .await
            .expect("the simulation starts");
        let mut lines = Vec::new();
        let mut refused = None;
        for step in &script.steps {
            let line = simulation.step(step).await.expect("the step plays");
            if step.expect.iter().any(Expectation::expects_refusal) {
                refused = Some(line.to_value());
            } else {
                lines.push((step.action.line_kind(), line.to_value()));
            }
        }
        let refused = refused.expect("the paused thread refused a turn");
        // A lesson's turn lines carry its study plan.
        let lesson = crate::script::parse(
            "lesson.yaml",
            "course: prealgebra\nmode: teach_me\nunit: ratios\nsteps:\n  - say: ready\n",
            &setup.bundle(),
        )
        .expect("a valid script");
        let mut simulation = Simulation::start(&setup, &lesson)
            .await
            .expect("the lesson starts");
        let lesson_turn = simulation
            .step(&lesson.steps[0])
            .await
            .expect("the step plays")
            .to_value();
        // And a problem set's, where it is.
        let set = crate::script::parse(
            "set.yaml",
            "course: prealgebra\nmode: problem_set\nsteps:\n  - say: I don't know\n",
            &setup.bundle(),
        )
        .expect("a valid script");
        let mut simulation = Simulation::start(&setup, &set)
            .await
            .expect("the problem set starts");
        let set_turn = simulation
            .step(&set.steps[0])
            .await
            .expect("the step plays")
            .to_value();
        for key in KEYS {
            for kind in key.lines {
                let (_, line) = lines
                    .iter()
                    .find(|(k, _)| k == kind)
                    .unwrap_or_else(|| panic!("the script has a {kind:?} step"));
                let line = if key.pointer.starts_with("/refused/") {
                    &refused
                } else if key.pointer.starts_with("/plan/") {
                    &lesson_turn
                } else if key.pointer.starts_with("/problemSet/") {
                    &set_turn
                } else {
                    line
                };
                assert!(
                    resolves(line, key.pointer),
                    "`{}` reads {} but a {kind:?} line is {line}",
                    key.name,
                    key.pointer
                );
            }
        }
    }
}
