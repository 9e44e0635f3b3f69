//! Safety patterns as a safeguarding lead writes them, compiled into the
//! regular expressions the gate runs on normalised messages:
//! - `{name}` stands for the workflow vocabulary list `name`, and `{gap}`
//!   for up to three words ("i {gap} want to die");
//! - each plain letter also matches itself repeated ("die" matches
//!   "diiie"; "kill" matches "killll"), so stretched words need no
//!   pattern of their own;
//! - a word ending in "ing" after a syllable also matches it without the
//!   "g" ("thinking" matches "thinkin"; "thing" does not match "thin");
//! - apostrophes are dropped, as they are from messages ("i'm" = "im");
//! - the whole pattern matches whole words only.

use std::collections::BTreeMap;

use regex_syntax::ast::{self, Ast};

/// Up to three words of anything, then a space.
const GAP: &str = "(?:[a-z0-9*]+ ){0,3}";
/// Vocabulary lists may use other lists this deep.
const MAX_NESTING: usize = 4;

/// Why a pattern cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pub message: String,
    /// Byte offset in the pattern as written, when known.
    pub offset: Option<usize>,
}

impl PatternError {
    fn at(offset: usize, message: impl Into<String>) -> Self {
        PatternError {
            message: message.into(),
            offset: Some(offset),
        }
    }
}

/// The regular expression `pattern` stands for.
pub fn compile(
    pattern: &str,
    vocabulary: &BTreeMap<String, Vec<String>>,
) -> Result<String, PatternError> {
    let expanded = expand(pattern, vocabulary, 0)?;
    let tolerant = stretch_letters(&expanded)?;
    Ok(format!(r"\b(?:{tolerant})\b"))
}

/// The regular expression a literal term stands for.
pub fn compile_term(term: &str) -> Result<String, PatternError> {
    let escaped = regex::escape(term.trim());
    if escaped.is_empty() {
        return Err(PatternError {
            message: "an empty term matches nothing".into(),
            offset: None,
        });
    }
    Ok(format!(r"\b(?:{})\b", stretch_letters(&escaped)?))
}

/// `{name}` references replaced by their lists, as alternations.
fn expand(
    pattern: &str,
    vocabulary: &BTreeMap<String, Vec<String>>,
    depth: usize,
) -> Result<String, PatternError> {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    let mut offset = 0;
    while let Some(open) = rest.find('{') {
        let escaped = rest[..open].ends_with('\\');
        let name_end = rest[open + 1..].find('}').map(|e| open + 1 + e);
        let name = name_end.map(|e| &rest[open + 1..e]);
        match name {
            Some(name) if !escaped && is_name(name) => {
                out.push_str(&rest[..open]);
                let close = open + 1 + name.len();
                if name == "gap" {
                    out.push_str(GAP);
                } else {
                    let words = vocabulary.get(name).ok_or_else(|| {
                        PatternError::at(offset + open, format!("unknown word list {{{name}}}"))
                    })?;
                    if depth >= MAX_NESTING {
                        return Err(PatternError::at(
                            offset + open,
                            format!("word list {{{name}}} nests more than {MAX_NESTING} deep"),
                        ));
                    }
                    let mut alternatives = Vec::with_capacity(words.len());
                    for word in words {
                        alternatives.push(expand(word, vocabulary, depth + 1).map_err(|e| {
                            PatternError::at(
                                offset + open,
                                format!("in word list {{{name}}}: {}", e.message),
                            )
                        })?);
                    }
                    out.push_str("(?:");
                    out.push_str(&alternatives.join("|"));
                    out.push(')');
                }
                offset += close + 1;
                rest = &rest[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                offset += open + 1;
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Every plain letter that has no quantifier of its own becomes "one or
/// more of it"; plain apostrophes go.
fn stretch_letters(pattern: &str) -> Result<String, PatternError> {
    let ast = ast::parse::Parser::new()
        .parse(pattern)
        .map_err(|e| PatternError {
            message: format!("invalid regular expression: {}", e.kind()),
            offset: None,
        })?;
    let mut plain = Vec::new();
    plain_literals(&ast, false, &mut plain);
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut next = plain.iter().peekable();
    for (at, c) in pattern.char_indices() {
        if next.peek().is_some_and(|&&p| p == at) {
            next.next();
            if c.is_ascii_alphabetic() {
                out.push(c.to_ascii_lowercase());
                out.push(if g_may_drop(pattern, at) { '*' } else { '+' });
            } else if c != '\'' && c != '\u{2019}' {
                out.push(c);
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// Whether the letter at `at` is the "g" of a word's "-ing" suffix, which
/// students often drop ("thinkin", "jumpin"): the word goes on no further,
/// and what comes before "in" holds a vowel, so "thing", "bring" and
/// "sing" (no suffix) keep their "g".
fn g_may_drop(pattern: &str, at: usize) -> bool {
    let (before, after) = pattern.split_at(at);
    let Some(stem) = before
        .strip_suffix("in")
        .filter(|_| after.starts_with(['g', 'G']))
    else {
        return false;
    };
    let word_ends = !after[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '\'');
    let stem: String = stem
        .chars()
        .rev()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    word_ends
        && stem
            .chars()
            .any(|c| "aeiouy".contains(c.to_ascii_lowercase()))
}

/// Offsets of literal characters written as themselves and not directly
/// quantified (`s` in "kills?" keeps its `?`).
fn plain_literals(ast: &Ast, quantified: bool, out: &mut Vec<usize>) {
    match ast {
        Ast::Literal(lit) if !quantified && lit.kind == ast::LiteralKind::Verbatim => {
            out.push(lit.span.start.offset);
        }
        Ast::Concat(concat) => concat
            .asts
            .iter()
            .for_each(|a| plain_literals(a, false, out)),
        Ast::Alternation(alt) => alt.asts.iter().for_each(|a| plain_literals(a, false, out)),
        Ast::Group(group) => plain_literals(&group.ast, false, out),
        Ast::Repetition(rep) => plain_literals(&rep.ast, true, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    fn vocab() -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([
            (
                "person".to_owned(),
                vec!["him".to_owned(), "my teacher".to_owned()],
            ),
            (
                "violent".to_owned(),
                vec!["kill".to_owned(), "stab".to_owned()],
            ),
            ("threat".to_owned(), vec!["{violent} {person}".to_owned()]),
            ("loop".to_owned(), vec!["{loop}".to_owned()]),
        ])
    }

    fn matches(pattern: &str, text: &str) -> bool {
        Regex::new(&compile(pattern, &vocab()).unwrap())
            .unwrap()
            .is_match(text)
    }

    #[test]
    fn letters_may_repeat_and_words_stay_whole() {
        assert!(matches("want to die", "i want to die"));
        assert!(matches("want to die", "i waaant to diiiie now"));
        assert!(matches("kill myself", "killllll myself"));
        assert!(!matches("kill myself", "kil myself"));
        assert!(!matches("die", "diet"));
        assert!(!matches("ass", "class"));
        assert!(!matches("ass", "as"));
        // A letter's own quantifier is kept.
        assert!(matches("kills?", "kill"));
        assert!(matches("kills?", "kills"));
        assert!(!matches("kills?", "killsss"));
    }

    #[test]
    fn a_dropped_g_is_forgiven_after_a_syllable() {
        assert!(matches("thinking about jumping", "thinkin about jumpin"));
        assert!(matches("(cutting|hurting) {person}", "hurtin him"));
        assert!(matches("dying", "dyin"));
        assert!(matches("dying", "dying"));
        assert!(!matches("thing", "thin"));
        assert!(!matches("bring", "brin"));
        assert!(!matches("kings", "kins"));
    }

    #[test]
    fn apostrophes_and_capitals_are_forgiven() {
        assert!(matches("I'm going to", "im going to"));
        assert!(matches("don’t want to live", "dont want to live"));
    }

    #[test]
    fn word_lists_and_gaps_expand() {
        assert!(matches("{violent} {person}", "im going to stab my teacher"));
        assert!(matches("{threat}", "kill him"));
        assert!(!matches("{threat}", "kill two birds"));
        assert!(matches("i {gap}want to die", "i really really want to die"));
        assert!(matches("i {gap}want to die", "i want to die"));
        assert!(!matches(
            "i {gap}want to die",
            "i do my homework and then want to die"
        ));
        // Counted repetitions and escaped braces are not list names.
        assert!(matches("a{2}h", "aah"));
        assert!(compile(r"x\{y\}", &vocab()).unwrap().contains(r"\{y+\}"));
    }

    #[test]
    fn problems_say_where() {
        let e = compile("kill {persn}", &vocab()).unwrap_err();
        assert_eq!(e.offset, Some(5));
        assert!(e.message.contains("{persn}"), "{}", e.message);
        let e = compile("{loop}", &vocab()).unwrap_err();
        assert!(e.message.contains("nests"), "{}", e.message);
        let e = compile("kill (him", &vocab()).unwrap_err();
        assert!(
            e.message.contains("invalid regular expression"),
            "{}",
            e.message
        );
        assert_eq!(compile_term("  ").unwrap_err().offset, None);
    }

    #[test]
    fn terms_are_literal() {
        let term = Regex::new(&compile_term("f.u").unwrap()).unwrap();
        assert!(term.is_match("f.u"));
        assert!(!term.is_match("fxu"));
        let t = Regex::new(&compile_term("self harm").unwrap()).unwrap();
        assert!(t.is_match("i self harm sometimes"));
        assert!(t.is_match("seelf haaarm"));
    }
}
