//! Scripted students: the YAML format `tutorflow simulate` plays and
//! `tutorflow test` checks, parsed and checked against the content bundle.
//! Every problem is reported as `path:line:column: message`, like the rest
//! of the content tooling.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use tutorflow::content::yaml_index::{Position, YamlIndex, YamlPath};
use tutorflow::content::{Bundle, Diagnostic};
use tutorflow::model::{ExamFeedbackMode, Mode};

use crate::expect::{self, Expectation, LineKind};

/// Seed of ids and turn randomness when a script names none.
const DEFAULT_SEED: u64 = 1;

/// The clock's start when a script names none: a fixed Monday morning, so
/// runs are reproducible.
pub fn default_start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 6, 9, 0, 0)
        .single()
        .unwrap_or_default()
}

/// A checked script, ready to play.
#[derive(Debug, Clone)]
pub struct Script {
    /// The file, as named on the command line.
    pub path: String,
    /// `name:`, or the file name.
    pub name: String,
    pub course: String,
    /// Where `mode` (or else `course`) is written: problems creating the
    /// thread point here.
    pub thread_at: Position,
    pub mode: Mode,
    /// The unit a lesson (teach_me) is about, if named.
    pub unit: Option<String>,
    /// The course problem set a problem_set thread works through, if named.
    pub problem_set: Option<String>,
    /// The survey a survey thread answers.
    pub survey: Option<String>,
    pub seed: u64,
    pub start: DateTime<Utc>,
    /// An exam's size, feedback and time limit, if the script sets them.
    pub question_count: Option<u32>,
    pub feedback: Option<ExamFeedbackMode>,
    pub time_limit_minutes: Option<u32>,
    /// Who the scripted student says they are (`student` of `POST /threads`).
    pub student: Option<tutorflow::model::StudentProfile>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone)]
pub struct Step {
    /// 1-based.
    pub number: usize,
    /// Where the step's action key is written.
    pub at: Position,
    pub action: Action,
    pub expect: Vec<Expectation>,
}

impl Step {
    /// The step's key, as written in the script (`say`, `answer_drill`, ...).
    pub fn name(&self) -> &'static str {
        self.action.name()
    }
}

/// What the scripted student does in one step.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Say(String),
    Event {
        event: EventName,
        unit: Option<String>,
    },
    /// The "I'm stuck" button.
    Stuck {
        unit: Option<String>,
    },
    /// Answers the last drill card through the drill-grade endpoint.
    AnswerDrill(Answer),
    /// Types the answer to the last drill card as a chat message.
    AnswerInChat(Answer),
    /// Answers the last exam card through mcq-submit.
    Exam(ExamChoice),
    /// Opens the last exam card's memo (support-viewed).
    ViewMemo,
    /// "Next" on the last drill or exam card.
    Continue {
        with: ContinueWith,
        unit: Option<String>,
    },
    /// Lets time pass (lockouts end, drill tokens expire).
    Wait(Duration),
    /// Pauses, resumes or ends the thread (`POST /threads/{id}/pause`, ...).
    Lifecycle(LifecycleStep),
}

/// A session lifecycle request, as its step key names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleStep {
    Pause,
    Resume,
    End,
}

impl LifecycleStep {
    pub fn key(self) -> &'static str {
        match self {
            LifecycleStep::Pause => "pause",
            LifecycleStep::Resume => "resume",
            LifecycleStep::End => "end",
        }
    }
}

/// The step keys, in the order the README lists them.
pub const ACTION_KEYS: [&str; 12] = [
    "say",
    "event",
    "stuck",
    "answer_drill",
    "answer_in_chat",
    "exam",
    "view_memo",
    "continue",
    "wait",
    "pause",
    "resume",
    "end",
];

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Say(_) => "say",
            Action::Event { .. } => "event",
            Action::Stuck { .. } => "stuck",
            Action::AnswerDrill(_) => "answer_drill",
            Action::AnswerInChat(_) => "answer_in_chat",
            Action::Exam(_) => "exam",
            Action::ViewMemo => "view_memo",
            Action::Continue { .. } => "continue",
            Action::Wait(_) => "wait",
            Action::Lifecycle(change) => change.key(),
        }
    }

    /// Which kind of output line the step produces.
    pub fn line_kind(&self) -> LineKind {
        match self {
            Action::Say(_)
            | Action::Event { .. }
            | Action::Stuck { .. }
            | Action::AnswerInChat(_)
            | Action::Continue { .. } => LineKind::Turn,
            Action::AnswerDrill(_) => LineKind::DrillGrade,
            Action::Exam(_) => LineKind::ExamSubmit,
            Action::ViewMemo => LineKind::SupportViewed,
            Action::Wait(_) => LineKind::Wait,
            Action::Lifecycle(_) => LineKind::Lifecycle,
        }
    }
}

/// Client events, spelled as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventName {
    RequestDrill,
    IAmStuck,
    DrillContinue,
    ExamContinue,
}

/// What the student answers a drill with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The drill's right answer, looked up from its token.
    Correct,
    /// One of the drill's typical wrong answers (so a mistake tag shows).
    Wrong,
    /// A number near the right one that grades as close.
    Close,
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExamChoice {
    Pass,
    Fail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContinueWith {
    Drill,
    Exam,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    #[serde(default)]
    name: Option<String>,
    course: String,
    #[serde(default)]
    mode: Option<Mode>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    problem_set: Option<String>,
    #[serde(default)]
    survey: Option<String>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    now: Option<DateTime<Utc>>,
    /// Exam mode: how many questions, and when they are marked.
    #[serde(default)]
    question_count: Option<u32>,
    #[serde(default)]
    feedback: Option<ExamFeedbackMode>,
    #[serde(default)]
    time_limit_minutes: Option<u32>,
    #[serde(default)]
    student: Option<tutorflow::model::StudentProfile>,
    steps: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default)]
    say: Option<Text>,
    #[serde(default)]
    event: Option<EventName>,
    #[serde(default)]
    stuck: Option<bool>,
    #[serde(default)]
    answer_drill: Option<Text>,
    #[serde(default)]
    answer_in_chat: Option<Text>,
    #[serde(default)]
    exam: Option<ExamChoice>,
    #[serde(default)]
    view_memo: Option<bool>,
    #[serde(default, rename = "continue")]
    continue_with: Option<ContinueWith>,
    #[serde(default)]
    wait: Option<Text>,
    #[serde(default)]
    pause: Option<bool>,
    #[serde(default)]
    resume: Option<bool>,
    #[serde(default)]
    end: Option<bool>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    expect: Option<BTreeMap<String, serde_yaml::Value>>,
}

/// Any scalar, as text: authors write `answer_drill: 12` as readily as
/// `answer_drill: "3/4"`.
#[derive(Debug, Clone, PartialEq)]
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl Visitor<'_> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("text or a number")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

/// Parses `text` (the file `path`) and checks it against `bundle`: the
/// course, units, categories, mistake tags and exam questions it names
/// must exist. Returns every problem found.
pub fn parse(path: &str, text: &str, bundle: &Bundle) -> Result<Script, Vec<Diagnostic>> {
    let raw: RawScript = serde_yaml::from_str(text).map_err(|e| {
        let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
        vec![Diagnostic::new(
            path,
            line,
            column,
            without_mark(&e.to_string()),
        )]
    })?;
    let mut checker = Checker {
        path,
        index: YamlIndex::build(text),
        problems: Vec::new(),
    };
    let root = YamlPath::root();
    let course = bundle.course(&raw.course);
    if course.is_none() {
        let available: Vec<&str> = bundle.courses.keys().map(String::as_str).collect();
        checker.at(
            &root.key("course"),
            format!(
                "course `{}` is not in the content bundle (available: {})",
                raw.course,
                available.join(", ")
            ),
        );
    }
    if let (Some(course), Some(unit)) = (course, &raw.unit)
        && course.unit(unit).is_none()
    {
        checker.at(
            &root.key("unit"),
            format!("unit `{unit}` is not in course `{}`", course.id),
        );
    }
    if let (Some(course), Some(set)) = (course, &raw.problem_set)
        && !course.problem_sets.iter().any(|s| &s.id == set)
    {
        checker.at(
            &root.key("problem_set"),
            format!("problem set `{set}` is not in course `{}`", course.id),
        );
    }
    if let Some(survey) = &raw.survey
        && !bundle.surveys.contains_key(survey)
    {
        checker.at(
            &root.key("survey"),
            format!("there is no survey `{survey}` in workflows/surveys/"),
        );
    }
    let known = course.map(|c| expect::Known::of(bundle, c));
    if raw.steps.is_empty() {
        checker.at(
            &root.key("steps"),
            "a script needs at least one step".to_owned(),
        );
    }
    let mut steps = Vec::new();
    for (i, raw_step) in raw.steps.into_iter().enumerate() {
        let at = root.key("steps").index(i);
        if let Some(step) = checker.step(i + 1, &at, raw_step, known.as_ref()) {
            steps.push(step);
        }
    }
    if !checker.problems.is_empty() {
        checker.problems.sort();
        return Err(checker.problems);
    }
    Ok(Script {
        path: path.to_owned(),
        name: raw.name.unwrap_or_else(|| file_name(path)),
        course: raw.course,
        thread_at: checker.index.locate(&root.key(if raw.mode.is_some() {
            "mode"
        } else {
            "course"
        })),
        mode: raw.mode.unwrap_or_default(),
        unit: raw.unit,
        problem_set: raw.problem_set,
        survey: raw.survey,
        seed: raw.seed.unwrap_or(DEFAULT_SEED),
        start: raw.now.unwrap_or_else(default_start),
        question_count: raw.question_count,
        feedback: raw.feedback,
        time_limit_minutes: raw.time_limit_minutes,
        student: raw.student,
        steps,
    })
}

/// serde's own " at line L column C" marks: the position is given in front.
fn without_mark(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" at line ") {
        let after = &rest[i + " at line ".len()..];
        let line_digits = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        let tail = &after[line_digits..];
        let marked = line_digits > 0
            && tail
                .strip_prefix(" column ")
                .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit()));
        if !marked {
            out.push_str(&rest[..i + " at line ".len()]);
            rest = after;
            continue;
        }
        let column = &tail[" column ".len()..];
        let column_digits = column
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(column.len());
        out.push_str(&rest[..i]);
        rest = &column[column_digits..];
    }
    out.push_str(rest);
    out
}

fn file_name(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or(name)
        .to_owned()
}

struct Checker<'a> {
    path: &'a str,
    index: YamlIndex,
    problems: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn at(&mut self, at: &YamlPath, message: String) {
        let pos = self.index.locate(at);
        self.problems
            .push(Diagnostic::new(self.path, pos.line, pos.column, message));
    }

    fn at_key(&mut self, at: &YamlPath, message: String) {
        let pos = self.index.locate_key(at);
        self.problems
            .push(Diagnostic::new(self.path, pos.line, pos.column, message));
    }

    fn step(
        &mut self,
        number: usize,
        at: &YamlPath,
        raw: RawStep,
        known: Option<&expect::Known>,
    ) -> Option<Step> {
        let present: Vec<&'static str> = [
            raw.say.is_some(),
            raw.event.is_some(),
            raw.stuck.is_some(),
            raw.answer_drill.is_some(),
            raw.answer_in_chat.is_some(),
            raw.exam.is_some(),
            raw.view_memo.is_some(),
            raw.continue_with.is_some(),
            raw.wait.is_some(),
            raw.pause.is_some(),
            raw.resume.is_some(),
            raw.end.is_some(),
        ]
        .into_iter()
        .zip(ACTION_KEYS)
        .filter_map(|(set, key)| set.then_some(key))
        .collect();
        let key = match present.as_slice() {
            [key] => *key,
            [] => {
                self.at(
                    at,
                    format!(
                        "a step needs one of: {} (the README's \"Simulating a student\" explains each)",
                        ACTION_KEYS.join(", ")
                    ),
                );
                return None;
            }
            [first, second, ..] => {
                self.at_key(
                    &at.key(second),
                    format!(
                        "a step does one thing, but this one has `{first}` and `{second}`; split it into two steps"
                    ),
                );
                return None;
            }
        };
        let key_at = at.key(key);
        if let Some(unit) = &raw.unit {
            let takes_unit = matches!(key, "event" | "stuck" | "continue");
            if !takes_unit {
                self.at_key(
                    &at.key("unit"),
                    format!("`unit` goes with event, stuck or continue, not with {key}"),
                );
            } else if let Some(known) = known
                && !known.has_unit(unit)
            {
                self.at(&at.key("unit"), known.unknown_unit(unit));
            }
        }
        let action = match key {
            "say" => {
                let text = raw.say.map(|t| t.0).unwrap_or_default();
                if text.trim().is_empty() {
                    self.at(&key_at, "`say` needs something to say".to_owned());
                }
                Action::Say(text)
            }
            "event" => Action::Event {
                event: raw.event?,
                unit: raw.unit,
            },
            "stuck" => {
                if raw.stuck == Some(false) {
                    self.at(
                        &key_at,
                        "`stuck: false` does nothing; write `stuck: true` or remove the step"
                            .to_owned(),
                    );
                }
                Action::Stuck { unit: raw.unit }
            }
            "answer_drill" => Action::AnswerDrill(answer(raw.answer_drill?)),
            "answer_in_chat" => Action::AnswerInChat(answer(raw.answer_in_chat?)),
            "exam" => Action::Exam(raw.exam?),
            "view_memo" => {
                if raw.view_memo == Some(false) {
                    self.at(
                        &key_at,
                        "`view_memo: false` does nothing; write `view_memo: true` or remove the step"
                            .to_owned(),
                    );
                }
                Action::ViewMemo
            }
            "continue" => Action::Continue {
                with: raw.continue_with?,
                unit: raw.unit,
            },
            "pause" | "resume" | "end" => {
                let (change, set) = match key {
                    "pause" => (LifecycleStep::Pause, raw.pause),
                    "resume" => (LifecycleStep::Resume, raw.resume),
                    _ => (LifecycleStep::End, raw.end),
                };
                if set == Some(false) {
                    self.at(
                        &key_at,
                        format!(
                            "`{key}: false` does nothing; write `{key}: true` or remove the step"
                        ),
                    );
                }
                Action::Lifecycle(change)
            }
            _ => {
                let text = raw.wait.map(|t| t.0).unwrap_or_default();
                match parse_wait(&text) {
                    Ok(duration) => Action::Wait(duration),
                    Err(message) => {
                        self.at(&key_at, message);
                        return None;
                    }
                }
            }
        };
        let mut expectations = Vec::new();
        for (name, value) in raw.expect.unwrap_or_default() {
            let key_path = at.key("expect").key(&name);
            let position = self.index.locate_key(&key_path);
            match Expectation::parse(&name, &value, action.line_kind(), known, position) {
                Ok(e) => expectations.push(e),
                Err(expect::ParseError::Key(message)) => self.at_key(&key_path, message),
                Err(expect::ParseError::Value(message)) => self.at(&key_path, message),
            }
        }
        // Failures are then reported in the order the file lists them.
        expectations.sort_by_key(|e| (e.at.line, e.at.column));
        Some(Step {
            number,
            at: self.index.locate_key(&key_at),
            action,
            expect: expectations,
        })
    }
}

fn answer(text: Text) -> Answer {
    match text.0.trim() {
        "correct" => Answer::Correct,
        "wrong" => Answer::Wrong,
        "close" => Answer::Close,
        _ => Answer::Text(text.0),
    }
}

/// `90s`, `15m`, `25h` or `2d`.
fn parse_wait(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let problem = || {
        format!(
            "`wait: {text}` is not a duration; write a whole number with s, m, h or d, like 90s, 15m, 25h or 2d"
        )
    };
    let unit_at = text.len().saturating_sub(1);
    let (amount, unit) = (text.get(..unit_at), text.get(unit_at..));
    let amount: i64 = amount
        .and_then(|a| a.parse().ok())
        .filter(|a| *a > 0)
        .ok_or_else(problem)?;
    let seconds_per = match unit {
        Some("s") => 1,
        Some("m") => 60,
        Some("h") => 3600,
        Some("d") => 86_400,
        _ => return Err(problem()),
    };
    // A century is more than any lockout or token lives; it keeps time in range.
    const CENTURY_SECONDS: i64 = 100 * 365 * 86_400;
    amount
        .checked_mul(seconds_per)
        .filter(|s| *s <= CENTURY_SECONDS)
        .map(Duration::seconds)
        .ok_or_else(|| format!("`wait: {text}` is longer than a century"))
}

#[cfg(test)]
pub(crate) mod tests {
    use tutorflow::content::{ContentSource, FsSource};

    use super::*;

    /// The repository's content bundle, loaded once for all tests.
    pub(crate) fn bundle() -> &'static Bundle {
        static BUNDLE: std::sync::LazyLock<Bundle> = std::sync::LazyLock::new(|| {
            let source = FsSource::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
            let files = tokio::runtime::Runtime::new()
                .expect("a runtime")
                .block_on(source.fetch())
                .expect("the repository's content is readable");
            Bundle::load(&files).expect("the repository's content is valid")
        });
        &BUNDLE
    }

    fn problems(text: &str) -> Vec<String> {
        match parse("t.yaml", text, bundle()) {
            Ok(_) => Vec::new(),
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn a_valid_script_parses_into_steps() {
        let script = parse(
            "dir/first-drill.yaml",
            "\
course: prealgebra
seed: 7
now: 2026-03-02T08:00:00Z
steps:
  - say: I need help with whole numbers
    expect: {category: general, focus: whole-numbers}
  - event: REQUEST_DRILL
    unit: whole-numbers
  - answer_drill: 12
  - answer_in_chat: wrong
  - stuck: true
  - exam: pass
  - view_memo: true
  - continue: drill
  - wait: 25h
  - pause: true
  - say: still there?
    expect: {refused: 409}
  - resume: true
  - end: true
",
            bundle(),
        )
        .expect("valid");
        assert_eq!(script.name, "first-drill");
        assert_eq!(script.seed, 7);
        assert_eq!(script.start.to_rfc3339(), "2026-03-02T08:00:00+00:00");
        let actions: Vec<Action> = script.steps.iter().map(|s| s.action.clone()).collect();
        assert_eq!(
            actions,
            vec![
                Action::Say("I need help with whole numbers".into()),
                Action::Event {
                    event: EventName::RequestDrill,
                    unit: Some("whole-numbers".into())
                },
                Action::AnswerDrill(Answer::Text("12".into())),
                Action::AnswerInChat(Answer::Wrong),
                Action::Stuck { unit: None },
                Action::Exam(ExamChoice::Pass),
                Action::ViewMemo,
                Action::Continue {
                    with: ContinueWith::Drill,
                    unit: None
                },
                Action::Wait(Duration::hours(25)),
                Action::Lifecycle(LifecycleStep::Pause),
                Action::Say("still there?".into()),
                Action::Lifecycle(LifecycleStep::Resume),
                Action::Lifecycle(LifecycleStep::End),
            ]
        );
        assert_eq!(script.steps[0].at, Position { line: 5, column: 5 });
        assert_eq!(script.steps[0].expect.len(), 2);
        assert_eq!(script.steps[8].number, 9);
    }

    #[test]
    fn syntax_and_shape_errors_point_at_the_offending_line() {
        assert_eq!(
            problems("course: prealgebra\nsteps:\n  - sya: hello\n"),
            vec![
                "t.yaml:3:5: steps[0]: unknown field `sya`, expected one of `say`, `event`, \
                 `stuck`, `answer_drill`, `answer_in_chat`, `exam`, `view_memo`, `continue`, \
                 `wait`, `pause`, `resume`, `end`, `unit`, `expect`"
            ]
        );
        assert_eq!(
            problems("course: prealgebra\nsteps:\n  - event: PLEASE_HELP\n"),
            vec![
                "t.yaml:3:12: steps[0].event: unknown variant `PLEASE_HELP`, expected one of \
                 `REQUEST_DRILL`, `I_AM_STUCK`, `DRILL_CONTINUE`, `EXAM_CONTINUE`"
            ]
        );
        assert_eq!(
            problems("course: prealgebra\nsteps:\n  - say: [hello, there]\n"),
            vec!["t.yaml:3:10: steps[0].say: invalid type: sequence, expected text or a number"]
        );
        let unterminated = problems("course: prealgebra\nsteps:\n  - say: \"hello\n  - say: bye\n");
        assert_eq!(
            unterminated,
            vec!["t.yaml:5:1: found unexpected end of stream, while scanning a quoted scalar"]
        );
    }

    #[test]
    fn position_marks_inside_messages_are_dropped() {
        assert_eq!(
            without_mark("found x at line 5 column 1, while y at line 2 column 30"),
            "found x, while y"
        );
        assert_eq!(
            without_mark("a value at line twelve at line 3"),
            "a value at line twelve at line 3"
        );
    }

    #[test]
    fn step_problems_are_all_reported_with_their_positions() {
        let found = problems(
            "\
course: prealgebra
steps:
  - say: hello
    event: REQUEST_DRILL
  - event: REQUEST_DRILL
    unit: fractoins
  - answer_drill: correct
    unit: fractions
  - wait: soon
  - {}
  - stuck: false
  - end: false
",
        );
        assert_eq!(
            found,
            vec![
                "t.yaml:4:5: a step does one thing, but this one has `say` and `event`; split \
                 it into two steps",
                "t.yaml:6:11: unit `fractoins` is not in this course (known: decimals, \
                 expressions, fraction-addition, fraction-multiplication, fractions, \
                 integer-operations, integers, inverse-operations, multiplication-division, \
                 one-step-equations, order-of-operations, percentages, and 3 more)",
                "t.yaml:8:5: `unit` goes with event, stuck or continue, not with answer_drill",
                "t.yaml:9:11: `wait: soon` is not a duration; write a whole number with s, m, \
                 h or d, like 90s, 15m, 25h or 2d",
                "t.yaml:10:5: a step needs one of: say, event, stuck, answer_drill, \
                 answer_in_chat, exam, view_memo, continue, wait, pause, resume, end (the \
                 README's \"Simulating a student\" explains each)",
                "t.yaml:11:12: `stuck: false` does nothing; write `stuck: true` or remove the step",
                "t.yaml:12:10: `end: false` does nothing; write `end: true` or remove the step",
            ]
        );
    }

    #[test]
    fn an_unknown_course_is_reported_at_its_key() {
        assert_eq!(
            problems("course: algebra\nsteps:\n  - say: hi\n"),
            vec![
                "t.yaml:1:9: course `algebra` is not in the content bundle (available: prealgebra)"
            ]
        );
        assert_eq!(
            problems("course: prealgebra\nsteps: []\n"),
            vec!["t.yaml:2:8: a script needs at least one step"]
        );
    }

    #[test]
    fn waits_are_whole_amounts_of_a_unit() {
        assert_eq!(parse_wait("90s"), Ok(Duration::seconds(90)));
        assert_eq!(parse_wait("15m"), Ok(Duration::minutes(15)));
        assert_eq!(parse_wait(" 2d "), Ok(Duration::days(2)));
        for bad in ["", "h", "0h", "-1h", "1.5h", "3 weeks", "12"] {
            assert!(parse_wait(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_wait("9999999999999d"),
            Err("`wait: 9999999999999d` is longer than a century".to_owned())
        );
    }
}
