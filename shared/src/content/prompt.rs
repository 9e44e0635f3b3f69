//! Prompt templates (`prompts/*.txt`): plain text with `{{name}}` placeholders.
//!
//! Each LLM call fills a fixed set of placeholders (its [`PromptRole`]); a
//! template using a name its role does not provide is a content error, and
//! rendering without a value for a used placeholder is an error too — never
//! an empty string.

use std::collections::BTreeMap;

/// Where a template is used, which decides the placeholders it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PromptRole {
    /// Core rules of the tutor (system message).
    TutorSystem,
    /// The POLICY system message.
    TutorPolicy,
    /// The CONTEXT system message.
    TutorContext,
    /// The student input wrapper and JSON contract (user message).
    TutorInput,
    /// A routing category's guidance, inserted into the tutor input.
    CategoryGuidance,
    DrillGrading,
    ExamEvaluation,
    Planner,
    Summary,
    Safety,
    Welcome,
    /// Added to the reply that ends a teach_me study plan.
    LessonComplete,
    /// Added by the problem_set mode to a reply: the next problem, the end
    /// of the session, the offer to skip, the teacher alert.
    ProblemSetText,
}

impl PromptRole {
    /// Placeholders this role fills.
    pub fn placeholders(self) -> &'static [&'static str] {
        match self {
            PromptRole::TutorSystem => &[
                "course_title",
                "course_audience",
                "mode",
                "mode_rules",
                "personalization",
                "student_style",
                "pacing_directive",
            ],
            PromptRole::TutorPolicy => &["policy_json"],
            PromptRole::TutorContext => &["context_json"],
            PromptRole::TutorInput => &[
                "student_input",
                "client_event",
                "category",
                "category_guidance",
                "question_state",
                "history",
            ],
            PromptRole::CategoryGuidance => &[
                "attempt",
                "phase",
                "scaffold_depth",
                "unit_title",
                "misconceptions",
                "code_note",
            ],
            PromptRole::DrillGrading => &[
                "unit_title",
                "prompt",
                "question",
                "student_answer",
                "expected_answer",
                "mistake_tags",
            ],
            PromptRole::ExamEvaluation => {
                &["question", "student_answer", "expected_answer", "rubric"]
            }
            PromptRole::Planner => &[
                "unit_title",
                "unit_anchor",
                "key_ideas",
                "student_profile",
                "previous_plan",
                "replan_reason",
                "max_steps",
            ],
            PromptRole::Summary => &["course_title", "transcript", "stats_json"],
            PromptRole::Safety => &["message"],
            PromptRole::Welcome => &[
                "student_name",
                "course_title",
                "unit_title",
                "goal",
                "mode",
                "question_count",
            ],
            PromptRole::LessonComplete => &["unit_title", "learned", "to_review"],
            PromptRole::ProblemSetText => &["number", "total", "problem", "summary", "focus"],
        }
    }

    /// Placeholders a template in this role must use, or the call loses its input.
    pub fn required(self) -> &'static [&'static str] {
        match self {
            PromptRole::TutorPolicy => &["policy_json"],
            PromptRole::TutorContext => &["context_json"],
            PromptRole::TutorInput => &["student_input"],
            PromptRole::DrillGrading => &["student_answer", "mistake_tags"],
            PromptRole::ExamEvaluation => &["question", "student_answer"],
            PromptRole::Summary => &["transcript"],
            PromptRole::Safety => &["message"],
            _ => &[],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PromptRole::TutorSystem => "tutor system",
            PromptRole::TutorPolicy => "tutor policy",
            PromptRole::TutorContext => "tutor context",
            PromptRole::TutorInput => "tutor input",
            PromptRole::CategoryGuidance => "category guidance",
            PromptRole::DrillGrading => "drill grading",
            PromptRole::ExamEvaluation => "exam evaluation",
            PromptRole::Planner => "planner",
            PromptRole::Summary => "summary",
            PromptRole::Safety => "safety",
            PromptRole::Welcome => "welcome",
            PromptRole::LessonComplete => "lesson complete",
            PromptRole::ProblemSetText => "problem set text",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Text(String),
    Placeholder(Placeholder),
}

/// A `{{name}}` occurrence and where it is written (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    pub name: String,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    pub name: String,
    pub segments: Vec<Segment>,
}

/// A template syntax problem at a 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Rendering needed a value that was not given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("prompt `{template}` needs a value for {{{{{placeholder}}}}}")]
pub struct MissingValue {
    pub template: String,
    pub placeholder: String,
}

impl PromptTemplate {
    /// Parses `text`; every syntax problem is returned, not just the first.
    pub fn parse(name: &str, text: &str) -> Result<Self, Vec<PromptSyntaxError>> {
        let mut segments = Vec::new();
        let mut errors = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        let mut consumed = 0usize;
        while let Some(open) = rest.find("{{") {
            literal.push_str(&rest[..open]);
            let start = consumed + open;
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                let (line, column) = line_col(text, start);
                errors.push(PromptSyntaxError {
                    line,
                    column,
                    message: "`{{` is never closed with `}}`".into(),
                });
                literal.push_str(&rest[open..]);
                rest = "";
                break;
            };
            let raw = &after[..close];
            let name_text = raw.trim();
            let (line, column) = line_col(text, start);
            if is_identifier(name_text) {
                if !literal.is_empty() {
                    segments.push(Segment::Text(std::mem::take(&mut literal)));
                }
                segments.push(Segment::Placeholder(Placeholder {
                    name: name_text.to_owned(),
                    line,
                    column,
                }));
            } else {
                errors.push(PromptSyntaxError {
                    line,
                    column,
                    message: format!(
                        "`{{{{{raw}}}}}` is not a placeholder name (use letters, digits and _)"
                    ),
                });
            }
            let used = open + 2 + close + 2;
            consumed += used;
            rest = &rest[used..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            segments.push(Segment::Text(literal));
        }
        if errors.is_empty() {
            Ok(PromptTemplate {
                name: name.to_owned(),
                segments,
            })
        } else {
            Err(errors)
        }
    }

    pub fn placeholders(&self) -> impl Iterator<Item = &Placeholder> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Placeholder(p) => Some(p),
            Segment::Text(_) => None,
        })
    }

    pub fn uses(&self, name: &str) -> bool {
        self.placeholders().any(|p| p.name == name)
    }

    /// Fills every placeholder from `values`; a used placeholder without a
    /// value is an error. Values that are not used are ignored.
    pub fn render(&self, values: &BTreeMap<&str, String>) -> Result<String, MissingValue> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Text(t) => out.push_str(t),
                Segment::Placeholder(p) => match values.get(p.name.as_str()) {
                    Some(v) => out.push_str(v),
                    None => {
                        return Err(MissingValue {
                            template: self.name.clone(),
                            placeholder: p.name.clone(),
                        });
                    }
                },
            }
        }
        Ok(out)
    }
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_placeholders_with_positions() {
        let t =
            PromptTemplate::parse("t", "Hi {{ student_name }}!\nUnit: {{unit_title}}.").unwrap();
        let names: Vec<_> = t
            .placeholders()
            .map(|p| (p.name.as_str(), p.line, p.column))
            .collect();
        assert_eq!(names, vec![("student_name", 1, 4), ("unit_title", 2, 7)]);
    }

    #[test]
    fn single_braces_are_plain_text() {
        let t = PromptTemplate::parse("t", r#"Return {"a": 1} exactly."#).unwrap();
        assert_eq!(t.placeholders().count(), 0);
        assert_eq!(
            t.render(&BTreeMap::new()).unwrap(),
            r#"Return {"a": 1} exactly."#
        );
    }

    #[test]
    fn reports_every_syntax_error() {
        let errors = PromptTemplate::parse("t", "{{bad name}} ok {{1x}}\n{{open").unwrap_err();
        let at: Vec<_> = errors.iter().map(|e| (e.line, e.column)).collect();
        assert_eq!(at, vec![(1, 1), (1, 17), (2, 1)]);
    }

    #[test]
    fn rendering_requires_every_used_value() {
        let t = PromptTemplate::parse("welcome", "Hello {{student_name}} from {{course_title}}")
            .unwrap();
        let mut values = BTreeMap::new();
        values.insert("student_name", "Ana".to_owned());
        let err = t.render(&values).unwrap_err();
        assert_eq!(err.placeholder, "course_title");
        values.insert("course_title", "Algebra".to_owned());
        assert_eq!(t.render(&values).unwrap(), "Hello Ana from Algebra");
    }
}
