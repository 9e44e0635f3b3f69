//! Token counting for the prompt budget, by estimate.
//!
//! The exact OpenAI encodings (tiktoken's o200k_base and cl100k_base) are
//! not linked: measured with the release profile, o200k alone adds 3.9 MB to
//! a stripped binary, about 130 ms of first-use initialisation and 49 MB of
//! resident memory — the Lambda targets are 8 MB, 20 ms and 40 MB. The other
//! providers' tokenizers are not public at all.
//!
//! The estimate splits text the way those encodings pre-tokenize it (words
//! with their leading space, digit groups of three, punctuation runs,
//! whitespace runs) and charges each piece a conservative number of tokens.
//! `shared/tests/llm/tokens.rs` measures it against tiktoken on the shipped
//! prompts, content, fixtures, golden schemas and rendered tutor prompts:
//! it never under-counts o200k there (and stays within 5% of cl100k; 15%
//! for the Spanish phrasebook, which cl100k splits finer), and
//! over-counts by 0–29% (rendered prompts: 8–18%), so a prompt the estimate
//! fits in the budget fits by the real count too. Anthropic's and Gemini's
//! tokenizers cannot be measured offline; for them the same estimate is an
//! approximation, and the budget is our own ceiling, far below any model's
//! context window, so a few percent either way changes nothing that matters.

/// The documented upper bound of estimate / o200k count on the shipped corpus.
pub const MAX_OVERESTIMATE: f64 = 1.35;

/// Estimated tokens of `text`.
pub fn estimate(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut tokens = 0u32;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        let (c, len) = char_at(text, at).unwrap_or_default();
        if c.is_alphabetic() {
            // A word is counted in pieces split where a lower-case letter
            // meets an upper-case one; rendered prompts are mostly ASCII, so
            // letters are taken as bytes and only the rest is decoded.
            let mut piece = Piece::default();
            piece.push(c);
            at += len;
            while let Some(&b) = bytes.get(at) {
                if b.is_ascii_lowercase() {
                    piece.ascii += 1;
                    piece.last_lower = true;
                    at += 1;
                } else if b.is_ascii_uppercase() {
                    if piece.last_lower {
                        tokens += piece.tokens();
                        piece = Piece::default();
                    }
                    piece.ascii += 1;
                    piece.upper += 1;
                    at += 1;
                } else if b.is_ascii() {
                    break;
                } else {
                    let (next, len) = char_at(text, at).unwrap_or_default();
                    if !next.is_alphabetic() {
                        break;
                    }
                    if next.is_uppercase() && piece.last_lower {
                        tokens += piece.tokens();
                        piece = Piece::default();
                    }
                    piece.push(next);
                    at += len;
                }
            }
            tokens += piece.tokens();
        } else if b.is_ascii_digit() {
            let digits = 1 + run(&bytes[at + 1..], |b| b.is_ascii_digit());
            at += digits;
            tokens += (digits as u32).div_ceil(3);
        } else if b == b' ' {
            // One space joins the word or punctuation after it, not a number;
            // a longer run is a token of its own.
            let spaces = 1 + run(&bytes[at + 1..], |b| b == b' ');
            at += spaces;
            if spaces > 1 || bytes.get(at).is_some_and(u8::is_ascii_digit) {
                tokens += 1;
            }
        } else if c.is_whitespace() {
            at += len;
            while let Some((next, len)) = char_at(text, at) {
                if !next.is_whitespace() || next == ' ' {
                    break;
                }
                at += len;
            }
            tokens += 1;
        } else {
            let mut symbols = Symbols::new(c);
            at += len;
            while let Some((next, len)) = char_at(text, at) {
                if next.is_alphanumeric() || next.is_whitespace() {
                    break;
                }
                symbols.push(next);
                at += len;
            }
            tokens += symbols.finish();
        }
    }
    tokens
}

/// The character that starts at byte `at` of `text`, and its length;
/// ASCII without decoding.
fn char_at(text: &str, at: usize) -> Option<(char, usize)> {
    match *text.as_bytes().get(at)? {
        b if b.is_ascii() => Some((char::from(b), 1)),
        _ => text[at..].chars().next().map(|c| (c, c.len_utf8())),
    }
}

/// How many leading bytes satisfy `keep`.
fn run(bytes: &[u8], keep: impl Fn(u8) -> bool) -> usize {
    bytes.iter().take_while(|&&b| keep(b)).count()
}

/// A run of letters up to where a lower-case letter meets an upper-case
/// one (`bronzeOk` is two pieces, as the encodings split it).
#[derive(Clone, Copy, Default)]
struct Piece {
    ascii: u32,
    upper: u32,
    other: u32,
    last_lower: bool,
}

impl Piece {
    fn push(&mut self, c: char) {
        if c.is_ascii() {
            self.ascii += 1;
            self.upper += u32::from(c.is_ascii_uppercase());
        } else {
            self.other += 1;
        }
        self.last_lower = c.is_lowercase();
    }

    fn tokens(self) -> u32 {
        (if self.upper >= 2 && self.upper == self.ascii {
            // Capitals split into short pieces.
            self.ascii.div_ceil(3)
        } else if self.upper >= 2 {
            // Mixed case inside one piece (`YWxn`) is not a word: encoded
            // data, which splits into pieces of about two letters.
            self.ascii.div_ceil(2)
        } else {
            word_tokens(self.ascii)
        }) + self.other
    }
}

/// Common words of up to eight letters are one token; longer ones split
/// into pieces of about four letters.
fn word_tokens(letters: u32) -> u32 {
    match letters {
        0 => 0,
        1..=8 => 1,
        n => 1 + (n - 8).div_ceil(4),
    }
}

/// A run of punctuation and symbols: mixed runs cost about one token per
/// two characters, a repeated character (`-----`, `════`) less.
struct Symbols {
    first: char,
    len: u32,
    repeated: bool,
    non_ascii: u32,
}

impl Symbols {
    fn new(c: char) -> Self {
        Symbols {
            first: c,
            len: 1,
            repeated: true,
            non_ascii: u32::from(!c.is_ascii()),
        }
    }

    fn push(&mut self, c: char) {
        self.len += 1;
        self.repeated &= c == self.first;
        self.non_ascii += u32::from(!c.is_ascii());
    }

    fn finish(self) -> u32 {
        if self.repeated && self.len > 1 {
            if self.non_ascii > 0 {
                self.len.div_ceil(2)
            } else {
                self.len.div_ceil(4)
            }
        } else {
            (self.len - self.non_ascii).div_ceil(2) + self.non_ascii
        }
    }
}

/// Estimated tokens of a chat message: its text plus the few tokens each
/// message costs for its role and separators.
pub fn message_tokens(text: &str) -> u32 {
    estimate(text) + 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_pieces_the_way_the_encodings_split_them() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("hello"), 1);
        assert_eq!(estimate("hello world"), 2);
        // Digits in groups of three; a space before a number is its own token.
        assert_eq!(estimate("1234567"), 3);
        assert_eq!(estimate("x = 1"), 4);
        assert_eq!(estimate("a\n\nb"), 3);
        assert_eq!(estimate("internationalisation"), 4);
        assert_eq!(estimate("bronzeOk"), 2);
        assert_eq!(estimate("SOCRATIC"), 3);
        assert_eq!(estimate("3 × 7"), 4);
        assert_eq!(estimate("-----"), 2);
        assert_eq!(estimate("{\"a\":"), 3);
        // Letters beyond ASCII cost a token each, and split pieces too.
        assert_eq!(estimate("caféÉtoile"), 4);
        assert_eq!(estimate("½ – x²"), 4);
    }
}
