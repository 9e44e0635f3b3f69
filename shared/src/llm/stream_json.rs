//! Reads one string field of a JSON object while the object is still being
//! written: a streamed reply's student-facing text is shown as it arrives,
//! long before the whole object can be parsed. Chunks may end anywhere — in
//! an escape, between the halves of a surrogate pair — and the text comes
//! out decoded. Only a string at the top level of the object counts; a key
//! of the same name inside a nested object, or in a string, does not.

/// Where an escape sequence inside a string stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    /// `\u` and the hex digits read so far.
    Unicode {
        digits: u8,
        value: u32,
    },
}

/// What the string being read is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// A key of the top-level object: kept, to know which value follows.
    TopKey,
    /// The wanted field's value: handed out.
    Wanted,
    /// Anything else: skipped.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Container {
    Object { expects_key: bool },
    Array,
}

/// An incremental reader of the top-level string field `field`.
#[derive(Debug, Clone)]
pub struct FieldReader {
    field: String,
    stack: Vec<Container>,
    string: Option<Reading>,
    escape: Escape,
    /// A `\uD800`–`\uDBFF` half waiting for its low half.
    high_surrogate: Option<u32>,
    key: String,
    last_top_key: String,
    finished: bool,
}

impl FieldReader {
    pub fn new(field: &str) -> Self {
        FieldReader {
            field: field.to_owned(),
            stack: Vec::new(),
            string: None,
            escape: Escape::None,
            high_surrogate: None,
            key: String::new(),
            last_top_key: String::new(),
            finished: false,
        }
    }

    /// Whether the field's closing quote has been read.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Reads `chunk` and returns the field's text that it completes (empty
    /// when it has none).
    pub fn push(&mut self, chunk: &str) -> String {
        let mut out = String::new();
        for c in chunk.chars() {
            match self.string {
                Some(reading) => self.in_string(reading, c, &mut out),
                None => self.structure(c),
            }
        }
        out
    }

    fn structure(&mut self, c: char) {
        match c {
            '{' => self.stack.push(Container::Object { expects_key: true }),
            '[' => self.stack.push(Container::Array),
            '}' | ']' => {
                self.stack.pop();
            }
            ':' => self.set_expects_key(false),
            ',' => self.set_expects_key(true),
            '"' => {
                let top_level = self.stack.len() == 1;
                self.string = Some(match self.stack.last() {
                    Some(Container::Object { expects_key: true }) if top_level => {
                        self.key.clear();
                        Reading::TopKey
                    }
                    Some(Container::Object { expects_key: false })
                        if top_level && self.last_top_key == self.field =>
                    {
                        Reading::Wanted
                    }
                    _ => Reading::Other,
                });
            }
            // Whitespace, numbers, true, false, null.
            _ => {}
        }
    }

    fn set_expects_key(&mut self, expects: bool) {
        if let Some(Container::Object { expects_key }) = self.stack.last_mut() {
            *expects_key = expects;
        }
    }

    fn in_string(&mut self, reading: Reading, c: char, out: &mut String) {
        match self.escape {
            Escape::None => match c {
                '"' => {
                    self.end_string(reading, out);
                }
                '\\' => self.escape = Escape::Backslash,
                c => self.emit(reading, c, out),
            },
            Escape::Backslash => {
                self.escape = Escape::None;
                let decoded = match c {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'u' => {
                        self.escape = Escape::Unicode {
                            digits: 0,
                            value: 0,
                        };
                        return;
                    }
                    // `\"`, `\\`, `\/`; anything else is invalid JSON, which
                    // the whole reply's parse will refuse.
                    c => c,
                };
                self.emit(reading, decoded, out);
            }
            Escape::Unicode { digits, value } => {
                let Some(digit) = c.to_digit(16) else {
                    self.escape = Escape::None;
                    return;
                };
                let value = value * 16 + digit;
                if digits < 3 {
                    self.escape = Escape::Unicode {
                        digits: digits + 1,
                        value,
                    };
                    return;
                }
                self.escape = Escape::None;
                self.code_unit(reading, value, out);
            }
        }
    }

    /// One UTF-16 code unit from a `\uXXXX` escape.
    fn code_unit(&mut self, reading: Reading, unit: u32, out: &mut String) {
        match (self.high_surrogate.take(), unit) {
            (Some(high), 0xDC00..=0xDFFF) => {
                let c = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00);
                self.emit_decoded(reading, char::from_u32(c), out);
            }
            (high, 0xD800..=0xDBFF) => {
                if high.is_some() {
                    self.emit_decoded(reading, None, out);
                }
                self.high_surrogate = Some(unit);
            }
            (high, unit) => {
                if high.is_some() {
                    self.emit_decoded(reading, None, out);
                }
                self.emit_decoded(reading, char::from_u32(unit), out);
            }
        }
    }

    /// A decoded character; `None` for a lone surrogate, shown as U+FFFD
    /// as serde_json's lossless reading would refuse it anyway.
    fn emit_decoded(&mut self, reading: Reading, c: Option<char>, out: &mut String) {
        self.emit(reading, c.unwrap_or(char::REPLACEMENT_CHARACTER), out);
    }

    fn emit(&mut self, reading: Reading, c: char, out: &mut String) {
        if let Some(_high) = self.high_surrogate.take() {
            self.push_char(reading, char::REPLACEMENT_CHARACTER, out);
        }
        self.push_char(reading, c, out);
    }

    fn push_char(&mut self, reading: Reading, c: char, out: &mut String) {
        match reading {
            Reading::TopKey => self.key.push(c),
            Reading::Wanted => out.push(c),
            Reading::Other => {}
        }
    }

    fn end_string(&mut self, reading: Reading, out: &mut String) {
        if self.high_surrogate.take().is_some() {
            self.push_char(reading, char::REPLACEMENT_CHARACTER, out);
        }
        self.string = None;
        match reading {
            Reading::TopKey => self.last_top_key = std::mem::take(&mut self.key),
            Reading::Wanted => self.finished = true,
            Reading::Other => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// `text` cut at the given char positions.
    fn split(text: &str, cuts: &[usize]) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
        points.push(0);
        points.push(chars.len());
        points.sort_unstable();
        points.dedup();
        points
            .windows(2)
            .map(|w| chars[w[0]..w[1]].iter().collect())
            .collect()
    }

    fn read(field: &str, chunks: &[String]) -> (String, bool) {
        let mut reader = FieldReader::new(field);
        let text: String = chunks.iter().map(|c| reader.push(c)).collect();
        (text, reader.finished())
    }

    /// serde_json's output with every non-ASCII character as `\uXXXX`
    /// escapes (surrogate pairs above the BMP), as some servers send it.
    fn ascii_json(value: &Value) -> String {
        let mut out = String::new();
        for c in serde_json::to_string(value).unwrap().chars() {
            if c.is_ascii() {
                out.push(c);
            } else {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
        out
    }

    fn reply(text: &str, decoy: &str) -> Value {
        json!({
            "mapped_units": [{"unit_id": "tutor_text", "confidence": 0.5}],
            "action": "socratic_question",
            "note": decoy,
            "nested": {"tutor_text": decoy, "list": [decoy, {"tutor_text": decoy}]},
            "tutor_text": text,
            "turn_analysis": {"tutor_text": decoy, "answer_text": null},
        })
    }

    #[test]
    fn reads_the_top_level_field_only() {
        let value = reply("Hi \"there\"\n\\ 🙂 é", "\"tutor_text\": \"not this\"");
        let json = serde_json::to_string(&value).unwrap();
        let (text, finished) = read("tutor_text", &split(&json, &[]));
        assert_eq!(text, "Hi \"there\"\n\\ 🙂 é");
        assert!(finished);
    }

    #[test]
    fn an_unfinished_field_yields_what_has_arrived() {
        let mut reader = FieldReader::new("tutor_text");
        assert_eq!(
            reader.push(r#"{"action": "x", "tutor_text": "Half"#),
            "Half"
        );
        assert_eq!(reader.push(r#" a th\u00e9"#), " a thé");
        assert!(!reader.finished());
        assert_eq!(reader.push(r#"\ud83d"#), "");
        assert_eq!(reader.push(r#"\ude00!", "b": "no"}"#), "😀!");
        assert!(reader.finished());
    }

    #[test]
    fn a_lone_surrogate_becomes_the_replacement_character() {
        let (text, _) = read(
            "m",
            &[r#"{"m": "a\ud83d b\ude00 c\ud83d\u0041"}"#.to_owned()],
        );
        assert_eq!(text, "a\u{fffd} b\u{fffd} c\u{fffd}A");
    }

    proptest! {
        #[test]
        fn any_chunking_yields_the_field(
            text in "\\PC{0,40}|[\"\\\\/\\n\\t\\r\u{8}\u{c}\u{1}a-z🙂é]{0,40}",
            decoy in "\\PC{0,20}",
            cuts in proptest::collection::vec(0usize..400, 0..40),
            escaped in any::<bool>(),
        ) {
            let value = reply(&text, &decoy);
            let json = if escaped { ascii_json(&value) } else { serde_json::to_string(&value).unwrap() };
            let (read_text, finished) = read("tutor_text", &split(&json, &cuts));
            prop_assert_eq!(read_text, text);
            prop_assert!(finished);
        }

        #[test]
        fn a_prefix_yields_a_prefix(
            text in "\\PC{0,40}",
            cut in 0usize..400,
        ) {
            let json = ascii_json(&reply(&text, "x"));
            let prefix: String = json.chars().take(cut).collect();
            let (read_text, _) = read("tutor_text", &[prefix]);
            prop_assert!(text.starts_with(&read_text), "{read_text:?} is not a prefix of {text:?}");
        }
    }
}
