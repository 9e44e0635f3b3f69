//! The file of labelled messages the safety classifier learns from
//! (`safety.classifier.examples`): one `label<TAB>message` a line, the
//! label a category id of the workflow's safety section or `ordinary`.
//! Blank lines and lines starting with `#` are skipped. Reading it here
//! only splits lines; whether the labels exist is for the workflow's
//! checks (`check::safety`).

use super::workflow::SafetyExample;

/// An example and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleLine {
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters: where the message starts.
    pub message_column: usize,
    pub example: SafetyExample,
}

/// A line that is not an example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The folder of the bundle example files live in.
pub const FOLDER: &str = "workflows";

/// The bundle path of the file a workflow names as `name`.
pub fn bundle_path(name: &str) -> String {
    format!("{FOLDER}/{name}")
}

/// Whether `name` can name an example file: a `.tsv` file directly in
/// `workflows/`.
pub fn is_file_name(name: &str) -> bool {
    name.len() > ".tsv".len()
        && name.ends_with(".tsv")
        && !name.contains(['/', '\\'])
        && !name.starts_with('.')
}

/// The examples of `text`, and every line that is not one.
pub fn parse(text: &str) -> (Vec<ExampleLine>, Vec<LineProblem>) {
    let mut examples = Vec::new();
    let mut problems = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let Some((label, message)) = raw.split_once('\t') else {
            problems.push(LineProblem {
                line,
                column: 1,
                message: "expected `label<TAB>message` (no tab on this line)".into(),
            });
            continue;
        };
        let message_column = label.chars().count() + 2;
        if label.trim().is_empty() || label.trim() != label {
            problems.push(LineProblem {
                line,
                column: 1,
                message: "the label (a category id or `ordinary`) comes first, without spaces"
                    .into(),
            });
            continue;
        }
        if message.trim().is_empty() {
            problems.push(LineProblem {
                line,
                column: message_column,
                message: format!("an example labelled `{label}` needs a message"),
            });
            continue;
        }
        examples.push(ExampleLine {
            line,
            message_column,
            example: SafetyExample {
                label: label.to_owned(),
                message: message.trim().to_owned(),
            },
        });
    }
    (examples, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_comments_and_blank_lines() {
        let (examples, problems) =
            parse("# a comment\n\nself_harm\ti want to die\nordinary\t what is 3 x 4 \n");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(examples.len(), 2);
        assert_eq!(examples[0].line, 3);
        assert_eq!(examples[0].example.label, "self_harm");
        assert_eq!(examples[1].example.message, "what is 3 x 4");
        assert_eq!(examples[1].message_column, 10);
    }

    #[test]
    fn lines_that_are_not_examples_say_where() {
        let (examples, problems) = parse("ordinary\tfine\nno tab here\n\tno label\nabuse\t  \n");
        assert_eq!(examples.len(), 1);
        let at: Vec<(usize, usize)> = problems.iter().map(|p| (p.line, p.column)).collect();
        assert_eq!(at, [(2, 1), (3, 1), (4, 7)]);
        assert!(problems[0].message.contains("no tab"), "{problems:?}");
        assert!(problems[2].message.contains("`abuse` needs a message"));
    }

    #[test]
    fn file_names() {
        assert!(is_file_name("safety_examples.tsv"));
        for bad in [
            "examples.txt",
            ".tsv",
            "../x.tsv",
            "sub/x.tsv",
            ".hidden.tsv",
        ] {
            assert!(!is_file_name(bad), "{bad}");
        }
        assert_eq!(bundle_path("x.tsv"), "workflows/x.tsv");
    }
}
