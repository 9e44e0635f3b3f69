//! Surveys (`workflows/surveys/*.yaml`): questionnaires asked in order,
//! with skip logic, never scored. A question is a choice, a scale or free
//! text; a rule `if_answer: X, go_to: K` jumps ahead to question K (or to
//! `end`) when the answer is X.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::yaml_index::YamlPath;
use crate::model::SurveyQuestionKind;

/// The `go_to` target that finishes the survey.
pub const END: &str = "end";

/// Longest free-text answer kept, in characters.
pub const MAX_FREE_TEXT_CHARS: usize = 1000;

/// The longest time limit a survey may set, in minutes (a school day).
pub const MAX_TIME_LIMIT_MINUTES: u32 = 480;

/// A survey as written in `workflows/surveys/<id>.yaml`: its questions,
/// and what is said around them (the survey mode asks it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Questionnaire {
    pub id: String,
    pub title: String,
    /// Said after the welcome, before the first question.
    #[serde(default)]
    pub intro: String,
    /// Said when the survey is finished.
    #[serde(default)]
    pub outro: String,
    /// Units this survey is the check-in for: a survey thread created for
    /// one of them without naming a survey answers this one.
    #[serde(default)]
    pub units: Vec<String>,
    /// Minutes the survey takes answers for, from when it is started;
    /// after that it ends with what was answered. No limit when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_minutes: Option<u32>,
    pub questions: Vec<SurveyQuestion>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveyQuestion {
    pub id: String,
    pub kind: SurveyQuestionKind,
    pub prompt: String,
    #[serde(default = "required_by_default")]
    pub required: bool,
    /// A choice question's options, in the order shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SurveyOption>,
    /// A scale question's range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip: Vec<SkipRule>,
}

fn required_by_default() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveyOption {
    pub id: String,
    pub label: String,
    /// Words and phrases that also pick this option when a student types
    /// them ("scared" for "A bit worried"); the longest match wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<String>,
    /// Said back when this option is chosen, instead of a plain thanks
    /// (a word of reassurance for "A bit worried").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reply: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scale {
    pub min: u32,
    pub max: u32,
    pub min_label: String,
    pub max_label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkipRule {
    /// An option id (choice) or a number on the scale.
    pub if_answer: String,
    /// A later question's id, or `end`.
    pub go_to: String,
}

impl Questionnaire {
    pub fn question(&self, id: &str) -> Option<(usize, &SurveyQuestion)> {
        self.questions.iter().enumerate().find(|(_, q)| q.id == id)
    }

    /// The question after `id` once it was answered `value` (`None` for
    /// a skipped question): the target of the first rule that matches,
    /// else the next one in order. `None` when the survey is finished.
    pub fn next_after(&self, id: &str, value: Option<&str>) -> Option<&SurveyQuestion> {
        let (index, question) = self.question(id)?;
        let jump = value.and_then(|v| question.skip.iter().find(|r| r.if_answer == v));
        match jump {
            Some(rule) if rule.go_to == END => None,
            Some(rule) => self.question(&rule.go_to).map(|(_, q)| q),
            None => self.questions.get(index + 1),
        }
    }

    /// Content problems, each at the YAML node it is about: duplicate
    /// ids, kinds without what they need (or with what they cannot use),
    /// skip rules on unknown answers or targets, and cycles.
    pub fn problems(&self) -> Vec<(YamlPath, String)> {
        let mut out = Vec::new();
        let root = YamlPath::root();
        if self.questions.is_empty() {
            out.push((
                root.key("questions"),
                "a survey needs at least one question".into(),
            ));
        }
        if let Some(m) = self.time_limit_minutes
            && !(1..=MAX_TIME_LIMIT_MINUTES).contains(&m)
        {
            out.push((
                root.key("time_limit_minutes"),
                format!(
                    "a time limit is 1 to {MAX_TIME_LIMIT_MINUTES} minutes, not {m}; leave it out for none"
                ),
            ));
        }
        let mut seen = BTreeSet::new();
        for (i, q) in self.questions.iter().enumerate() {
            let at = root.key("questions").index(i);
            if q.id == END {
                out.push((at.key("id"), format!("`{END}` is reserved for `go_to`")));
            }
            if !seen.insert(q.id.as_str()) {
                out.push((
                    at.key("id"),
                    format!("question id `{}` is used twice", q.id),
                ));
            }
            if q.prompt.trim().is_empty() {
                out.push((at.key("prompt"), "the prompt is empty".into()));
            }
            out.extend(kind_problems(q, &at));
            for (r, rule) in q.skip.iter().enumerate() {
                let at = at.key("skip").index(r);
                if let Some(problem) = answer_problem(q, &rule.if_answer) {
                    out.push((at.key("if_answer"), problem));
                }
                if rule.go_to != END && self.question(&rule.go_to).is_none() {
                    out.push((
                        at.key("go_to"),
                        format!(
                            "unknown target `{}`: name a question of this survey or `{END}`",
                            rule.go_to
                        ),
                    ));
                }
            }
        }
        if let Some((i, r, cycle)) = self.first_cycle() {
            out.push((
                root.key("questions")
                    .index(i)
                    .key("skip")
                    .index(r)
                    .key("go_to"),
                format!(
                    "skip logic makes a cycle: {} (a survey only moves forward)",
                    cycle.join(" → ")
                ),
            ));
        }
        out
    }

    /// A rule whose jump closes a loop, with the loop it closes. Questions
    /// follow one another in order, so a jump to the same or an earlier
    /// question always can loop.
    fn first_cycle(&self) -> Option<(usize, usize, Vec<String>)> {
        let positions: BTreeMap<&str, usize> = self
            .questions
            .iter()
            .enumerate()
            .map(|(i, q)| (q.id.as_str(), i))
            .collect();
        for (i, q) in self.questions.iter().enumerate() {
            for (r, rule) in q.skip.iter().enumerate() {
                let Some(&target) = positions.get(rule.go_to.as_str()) else {
                    continue;
                };
                if target <= i {
                    let mut cycle: Vec<String> = self.questions[target..=i]
                        .iter()
                        .map(|q| q.id.clone())
                        .collect();
                    cycle.push(rule.go_to.clone());
                    return Some((i, r, cycle));
                }
            }
        }
        None
    }
}

fn kind_problems(q: &SurveyQuestion, at: &YamlPath) -> Vec<(YamlPath, String)> {
    let mut out = Vec::new();
    match q.kind {
        SurveyQuestionKind::Choice => {
            if q.options.len() < 2 {
                out.push((
                    at.key("options"),
                    "a choice question needs at least two options".into(),
                ));
            }
            let mut ids = BTreeSet::new();
            for (o, option) in q.options.iter().enumerate() {
                if !ids.insert(option.id.as_str()) {
                    out.push((
                        at.key("options").index(o).key("id"),
                        format!("option id `{}` is used twice", option.id),
                    ));
                }
            }
        }
        SurveyQuestionKind::Scale => match &q.scale {
            None => out.push((
                at.key("kind"),
                "a scale question needs `scale: {min, max, min_label, max_label}`".into(),
            )),
            Some(s) if s.min >= s.max || s.max - s.min > 10 => out.push((
                at.key("scale"),
                format!(
                    "a scale runs from `min` up to at most 10 steps above it, not {}–{}",
                    s.min, s.max
                ),
            )),
            Some(_) => {}
        },
        SurveyQuestionKind::FreeText => {
            if !q.skip.is_empty() {
                out.push((at.key("skip"), "free-text answers cannot be matched: skip rules need a choice or scale question".into()));
            }
        }
    }
    if q.kind != SurveyQuestionKind::Choice && !q.options.is_empty() {
        out.push((
            at.key("options"),
            "`options` are for choice questions only".into(),
        ));
    }
    if q.kind != SurveyQuestionKind::Scale && q.scale.is_some() {
        out.push((
            at.key("scale"),
            "`scale` is for scale questions only".into(),
        ));
    }
    out
}

/// Why `answer` is not something question `q` can be answered, if it is not.
fn answer_problem(q: &SurveyQuestion, answer: &str) -> Option<String> {
    match q.kind {
        SurveyQuestionKind::Choice => (!q.options.iter().any(|o| o.id == answer)).then(|| {
            format!(
                "`{answer}` is not an option of `{}` (options: {})",
                q.id,
                q.options
                    .iter()
                    .map(|o| o.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }),
        SurveyQuestionKind::Scale => {
            let s = q.scale.as_ref()?;
            match answer.parse::<u32>() {
                Ok(n) if (s.min..=s.max).contains(&n) => None,
                _ => Some(format!(
                    "`{answer}` is not on the scale {}–{}",
                    s.min, s.max
                )),
            }
        }
        SurveyQuestionKind::FreeText => None,
    }
}

/// What a student's words mean as an answer to `q`: the value stored, or
/// why they are not an answer (said back to the student).
pub fn read_answer(q: &SurveyQuestion, said: &str) -> Result<String, String> {
    let said = said.trim();
    match q.kind {
        SurveyQuestionKind::Choice => {
            let wanted = normalise(said);
            let by_number = said
                .trim_end_matches([')', '.'])
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| q.options.get(i));
            by_number
                .or_else(|| {
                    q.options
                        .iter()
                        .find(|o| normalise(&o.id) == wanted || normalise(&o.label) == wanted)
                })
                .or_else(|| by_phrase(q, &wanted))
                .map(|o| o.id.clone())
                .ok_or_else(|| {
                    let numbers: Vec<String> =
                        (1..=q.options.len()).map(|n| n.to_string()).collect();
                    let (last, rest) = numbers.split_last().unwrap_or((&numbers[0], &[]));
                    let pick = format!("Could you pick {} or {last}?", rest.join(", "));
                    match said.trim_end_matches([')', '.']).parse::<usize>() {
                        Ok(n) => format!("There's no option {n} here. {pick}"),
                        Err(_) => format!("I'm not sure which one you mean. {pick}"),
                    }
                })
        }
        SurveyQuestionKind::Scale => {
            let Some(s) = &q.scale else {
                return Err("This question has no scale.".into());
            };
            match said.parse::<u32>() {
                Ok(n) if (s.min..=s.max).contains(&n) => Ok(n.to_string()),
                _ => Err(format!(
                    "Please answer with a whole number from {} ({}) to {} ({}).",
                    s.min, s.min_label, s.max, s.max_label
                )),
            }
        }
        SurveyQuestionKind::FreeText => {
            if said.is_empty() {
                Err("Write a few words, or type \"skip\" if you'd rather not answer.".into())
            } else if said.chars().count() > MAX_FREE_TEXT_CHARS {
                Err(format!(
                    "That's a bit long: please keep it under {MAX_FREE_TEXT_CHARS} characters."
                ))
            } else {
                Ok(said.to_owned())
            }
        }
    }
}

/// The option whose label or `matches` phrase appears in `wanted` (as
/// whole words), the longest phrase winning; none when two options tie.
fn by_phrase<'q>(q: &'q SurveyQuestion, wanted: &str) -> Option<&'q SurveyOption> {
    let padded = format!(" {wanted} ");
    let mut best: Option<(usize, &SurveyOption)> = None;
    let mut tied = false;
    for option in &q.options {
        let longest = std::iter::once(&option.label)
            .chain(&option.matches)
            .map(|p| normalise(p))
            .filter(|p| !p.is_empty() && padded.contains(&format!(" {p} ")))
            .map(|p| p.split(' ').count())
            .max();
        let Some(words) = longest else { continue };
        match best {
            Some((b, other)) if b == words && other.id != option.id => tied = true,
            Some((b, _)) if b >= words => {}
            _ => {
                best = Some((words, option));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, o)| o)
}

/// A stored answer as the student would read it back.
pub fn describe(q: &SurveyQuestion, value: &str) -> String {
    match q.kind {
        SurveyQuestionKind::Choice => q
            .options
            .iter()
            .find(|o| o.id == value)
            .map_or_else(|| value.to_owned(), |o| o.label.clone()),
        SurveyQuestionKind::Scale => match &q.scale {
            Some(s) => format!(
                "{value} (from {} = {} to {} = {})",
                s.min, s.min_label, s.max, s.max_label
            ),
            None => value.to_owned(),
        },
        SurveyQuestionKind::FreeText => value.to_owned(),
    }
}

fn normalise(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn survey(yaml: &str) -> Questionnaire {
        serde_yaml::from_str(yaml).unwrap()
    }

    const GOOD: &str = r#"
id: s
title: T
questions:
  - id: a
    kind: choice
    prompt: A?
    options:
      - {id: often, label: Often, matches: [a lot, good]}
      - {id: never, label: Never, matches: [not good, not at all]}
    skip: [{if_answer: never, go_to: c}]
  - id: b
    kind: scale
    prompt: B?
    scale: {min: 1, max: 5, min_label: low, max_label: high}
    skip: [{if_answer: "5", go_to: end}]
  - id: c
    kind: free_text
    prompt: C?
    required: false
"#;

    #[test]
    fn skip_rules_jump_ahead_or_end() {
        let s = survey(GOOD);
        assert!(s.problems().is_empty(), "{:?}", s.problems());
        assert_eq!(s.next_after("a", Some("never")).unwrap().id, "c");
        assert_eq!(s.next_after("a", Some("often")).unwrap().id, "b");
        assert!(s.next_after("b", Some("5")).is_none());
        assert_eq!(s.next_after("b", Some("4")).unwrap().id, "c");
        assert!(s.next_after("c", None).is_none());
    }

    #[test]
    fn answers_are_read_by_number_id_or_label() {
        let s = survey(GOOD);
        let a = &s.questions[0];
        assert_eq!(read_answer(a, "2").as_deref(), Ok("never"));
        assert_eq!(read_answer(a, " NEVER ").as_deref(), Ok("never"));
        assert_eq!(read_answer(a, "Often.").as_deref(), Ok("often"));
        assert_eq!(read_answer(a, "quite a lot really").as_deref(), Ok("often"));
        assert_eq!(
            read_answer(a, "it's not good").as_deref(),
            Ok("never"),
            "the longer phrase wins"
        );
        assert!(read_answer(a, "sometimes").is_err());
        assert!(
            read_answer(a, "often or never").is_err(),
            "two options at once"
        );
        assert!(read_answer(a, "3").is_err());
        let b = &s.questions[1];
        assert_eq!(read_answer(b, "4").as_deref(), Ok("4"));
        assert!(
            read_answer(b, "6")
                .unwrap_err()
                .contains("from 1 (low) to 5 (high)")
        );
        assert!(read_answer(&s.questions[2], "  ").is_err());
    }

    #[test]
    fn bad_targets_answers_kinds_and_cycles_are_reported_where_they_are() {
        let s = survey(
            r#"
id: s
title: T
questions:
  - id: a
    kind: choice
    prompt: A?
    options: [{id: x, label: X}, {id: y, label: Y}]
    skip: [{if_answer: z, go_to: nowhere}]
  - id: b
    kind: scale
    prompt: B?
    scale: {min: 1, max: 5, min_label: l, max_label: h}
    skip: [{if_answer: "3", go_to: a}]
  - id: c
    kind: free_text
    prompt: C?
    options: [{id: x, label: X}]
"#,
        );
        let found: Vec<String> = s.problems().into_iter().map(|(_, m)| m).collect();
        let has = |needle: &str| found.iter().any(|m| m.contains(needle));
        assert!(has("`z` is not an option of `a`"), "{found:?}");
        assert!(has("unknown target `nowhere`"), "{found:?}");
        assert!(has("cycle: a → b → a"), "{found:?}");
        assert!(has("`options` are for choice questions only"), "{found:?}");
    }

    #[test]
    fn a_time_limit_is_a_positive_number_of_minutes_up_to_a_school_day() {
        let limited = |m: i64| {
            survey(&GOOD.replace("title: T", &format!("title: T\ntime_limit_minutes: {m}")))
        };
        assert!(limited(1).problems().is_empty());
        assert_eq!(limited(30).time_limit_minutes, Some(30));
        assert!(limited(480).problems().is_empty());
        for m in [0, 481] {
            let found = limited(m).problems();
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].0, YamlPath::root().key("time_limit_minutes"));
            assert!(found[0].1.contains("1 to 480 minutes"), "{found:?}");
        }
        assert!(
            serde_yaml::from_str::<Questionnaire>(
                &GOOD.replace("title: T", "title: T\ntime_limit_minutes: -5")
            )
            .is_err(),
            "a negative limit is not a number of minutes"
        );
    }
}
