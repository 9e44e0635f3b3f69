//! Free text from students and integrations is refused when it carries
//! characters no reader should receive: control characters (which break
//! logs, terminals and LMS views) and bidirectional overrides (which make
//! text display in another order than it is stored, a spoofing trick).
//! Refusing rather than stripping keeps what is stored exactly what was
//! sent, and tells the client which character to fix.
//!
//! Allowed: tab, line feed and carriage return (line breaks from any
//! platform). Refused: every other C0 control (U+0000–U+001F), DEL
//! (U+007F), the C1 controls (U+0080–U+009F), the bidi embeddings and
//! overrides U+202A–U+202E and the isolates U+2066–U+2069.

use super::error::ServiceError;

/// The first character of `text` that is not accepted, with its position
/// (in characters, from 1) and its name.
pub fn refused_char(text: &str) -> Option<(usize, char, &'static str)> {
    text.chars()
        .enumerate()
        .find_map(|(i, c)| refused_name(c).map(|name| (i + 1, c, name)))
}

fn refused_name(c: char) -> Option<&'static str> {
    match c {
        '\t' | '\n' | '\r' => None,
        '\0' => Some("NUL"),
        '\u{1b}' => Some("ESCAPE"),
        '\u{0}'..='\u{1f}' | '\u{7f}' => Some("a control character"),
        '\u{80}'..='\u{9f}' => Some("a C1 control character"),
        '\u{202a}' => Some("LEFT-TO-RIGHT EMBEDDING"),
        '\u{202b}' => Some("RIGHT-TO-LEFT EMBEDDING"),
        '\u{202c}' => Some("POP DIRECTIONAL FORMATTING"),
        '\u{202d}' => Some("LEFT-TO-RIGHT OVERRIDE"),
        '\u{202e}' => Some("RIGHT-TO-LEFT OVERRIDE"),
        '\u{2066}' => Some("LEFT-TO-RIGHT ISOLATE"),
        '\u{2067}' => Some("RIGHT-TO-LEFT ISOLATE"),
        '\u{2068}' => Some("FIRST STRONG ISOLATE"),
        '\u{2069}' => Some("POP DIRECTIONAL ISOLATE"),
        _ => None,
    }
}

/// A refusal naming `field` and the character, when `text` has one
/// that is not accepted.
pub fn check(field: &str, text: &str) -> Result<(), ServiceError> {
    match refused_char(text) {
        None => Ok(()),
        Some((at, c, name)) => Err(ServiceError::invalid_field(
            field,
            format!(
                "{field} contains U+{:04X} ({name}) at character {at}; control characters \
                 (other than tab and line breaks) and bidirectional override characters are not accepted",
                c as u32
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_issue_example_is_refused_at_the_nul() {
        assert_eq!(
            refused_char("a\u{0}b \u{202e} rtl"),
            Some((2, '\u{0}', "NUL"))
        );
        assert_eq!(
            refused_char("ab \u{202e} rtl"),
            Some((4, '\u{202e}', "RIGHT-TO-LEFT OVERRIDE"))
        );
        // A refused field, which the api answers with 400 (see api::failure).
        let ServiceError::InvalidField { field, detail } =
            check("messageText", "x\u{2066}y").unwrap_err()
        else {
            panic!("a refused field")
        };
        assert_eq!(field, "messageText");
        assert!(
            detail.contains("U+2066 (LEFT-TO-RIGHT ISOLATE)"),
            "{detail}"
        );
    }

    #[test]
    fn ordinary_text_passes() {
        for text in [
            "what is 3/4 + 1/8?",
            "line one\nline two\r\n\tindented",
            "¿Qué es una razón? 2:3 — ½ × 4",
            "مرحبا שלום 你好",
            "emoji 🙂 and math ≤ ≥ π",
        ] {
            assert_eq!(refused_char(text), None, "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn refused_exactly_when_a_listed_character_is_present(text in "\\PC{0,40}", bad in prop::sample::select(vec!['\u{0}', '\u{7}', '\u{1b}', '\u{7f}', '\u{85}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}']), at in 0usize..40) {
            prop_assert_eq!(refused_char(&text), None);
            let mut chars: Vec<char> = text.chars().collect();
            let at = at.min(chars.len());
            chars.insert(at, bad);
            let spoiled: String = chars.into_iter().collect();
            prop_assert_eq!(refused_char(&spoiled), Some((at + 1, bad, refused_name(bad).unwrap())));
        }
    }
}
