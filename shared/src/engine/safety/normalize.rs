//! The form of a message the safety patterns read: lower-case ASCII words
//! separated by single spaces, with the usual ways of disguising a word
//! undone — look-alike Unicode, accents, fancy fonts and emoji (folded to
//! ASCII by `deunicode`: "ｋｙｓ", "𝓀𝓎𝓈", "kíll", "🔫" → "gun"),
//! apostrophes ("i'm" → "im"), text-speak written with digits ("no1",
//! "2nite" → "no one", "tonight"), leetspeak inside words ("k1ll" →
//! "kill"), and letters spaced out ("k y s", "s.u.i.c.i.d.e" → "kys",
//! "suicide").
//! Repeated letters ("pleeease") are left alone here: patterns are
//! compiled to accept them (see `pattern`).

/// Characters that stand for letters inside a word.
fn leet(c: char) -> Option<char> {
    Some(match c {
        '0' => 'o',
        '1' | '!' => 'i',
        '3' => 'e',
        '4' | '@' => 'a',
        '5' | '$' => 's',
        '7' | '+' => 't',
        '8' => 'b',
        '|' => 'l',
        _ => return None,
    })
}

/// Text-speak whose digits stand for sounds, not letters: read as leetspeak
/// "no1" would be "noi" and "gr8" "grb".
const DIGIT_SHORTHAND: &[(&str, &str)] = &[
    ("no1", "no one"),
    ("any1", "anyone"),
    ("ne1", "anyone"),
    ("some1", "someone"),
    ("sum1", "someone"),
    ("every1", "everyone"),
    ("evry1", "everyone"),
    ("2day", "today"),
    ("2nite", "tonight"),
    ("2night", "tonight"),
    ("2moro", "tomorrow"),
    ("2morro", "tomorrow"),
    ("2morrow", "tomorrow"),
    ("2mrw", "tomorrow"),
    ("2mro", "tomorrow"),
    ("b4", "before"),
    ("h8", "hate"),
    ("h8s", "hates"),
    ("h8d", "hated"),
    ("m8", "mate"),
    ("m8s", "mates"),
    ("gr8", "great"),
    ("l8r", "later"),
    ("w8", "wait"),
    ("4ever", "forever"),
    ("4get", "forget"),
    ("str8", "straight"),
];

/// What follows a number to make it a measure or an ordinal ("8kg",
/// "30mph", "3rd"): such a run is kept, not read as leetspeak ("bkg").
const UNITS: &[&str] = &[
    "mg", "g", "kg", "kgs", "kilo", "kilos", "lb", "lbs", "st", "ml", "l", "mm", "cm", "m", "km",
    "ft", "in", "mph", "kmh", "s", "sec", "secs", "min", "mins", "h", "hr", "hrs", "am", "pm",
    "yr", "yrs", "yo", "nd", "rd", "th", "p", "k",
];

/// Marks a self-censored letter ("f*ck"); kept so such words can be
/// matched against a category's terms.
pub const MASK: char = '*';

/// At least this many single letters in a row are read as one spaced-out
/// word: "k y s" is, "x y" (two variables) is not.
const SPACED_OUT_MIN: usize = 3;

/// `text` in the form the patterns read.
pub fn normalize(text: &str) -> String {
    let ascii = deunicode::deunicode(text).to_lowercase();
    let mut words = Vec::new();
    for chunk in ascii.split_whitespace() {
        let pieces: Vec<String> = chunk
            .split(|c: char| !is_word_char(c))
            .flat_map(decode_word)
            .collect();
        // Letters joined by dots or dashes are one word: "k.y.s", "k-i-l-l".
        if pieces.len() >= 2 && pieces.iter().all(|p| is_letter(p)) {
            words.push(pieces.concat());
        } else {
            words.extend(pieces);
        }
    }
    join_spaced_letters(words).join(" ")
}

fn is_letter(word: &str) -> bool {
    word.len() == 1 && word.as_bytes()[0].is_ascii_alphabetic()
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '\'' || c == MASK || leet(c).is_some()
}

/// One run of word characters as the words it stands for: leetspeak
/// decoded when the run is mostly letters ("k1ll", "$uicide"), left as
/// numbers otherwise ("45", "2x", "3/4"); self-censored words kept with
/// their masks; other symbols split it.
fn decode_word(run: &str) -> Vec<String> {
    // Most words are plain lower-case letters already.
    if !run.is_empty() && run.bytes().all(|b| b.is_ascii_lowercase()) {
        return vec![run.to_owned()];
    }
    let run: String = run.chars().filter(|&c| c != '\'').collect();
    // Sentence punctuation around a word is not part of it ("die!").
    let run = run.trim_matches(|c: char| matches!(c, '!' | '|' | '+'));
    if run.is_empty() {
        return Vec::new();
    }
    if let Some((_, words)) = DIGIT_SHORTHAND.iter().find(|(short, _)| *short == run) {
        return words.split(' ').map(str::to_owned).collect();
    }
    let unit = run.trim_start_matches(|c: char| c.is_ascii_digit());
    if unit.len() < run.len() && UNITS.contains(&unit) {
        return vec![run.to_owned()];
    }
    let letters = run.chars().filter(char::is_ascii_alphabetic).count();
    let masked = run.contains(MASK) && letters >= 2;
    if letters >= 2 {
        let decoded: String = run
            .chars()
            .map(|c| leet(c).unwrap_or(c))
            .filter(|&c| c.is_ascii_alphanumeric() || (masked && c == MASK))
            .collect();
        return vec![decoded];
    }
    run.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Runs of single letters joined into one word ("k y s" → "kys").
fn join_spaced_letters(words: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut run: Vec<String> = Vec::new();
    let flush = |run: &mut Vec<String>, out: &mut Vec<String>| {
        if run.len() >= SPACED_OUT_MIN {
            out.push(run.concat());
        } else {
            out.append(run);
        }
        run.clear();
    };
    for word in words {
        if is_letter(&word) {
            run.push(word);
        } else {
            flush(&mut run, &mut out);
            out.push(word);
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disguises_are_undone() {
        for (text, expected) in [
            ("I wanna DIE!!!", "i wanna die"),
            ("Ｉ ｗａｎｎａ ｄｉｅ", "i wanna die"),
            ("𝓀𝓎𝓈", "kys"),
            ("k y s", "kys"),
            ("s.u.i.c.i.d.e", "suicide"),
            ("k-i-l-l m-y-s-e-l-f", "kill myself"),
            ("k1ll mys3lf", "kill myself"),
            ("$uicide", "suicide"),
            ("d!e", "die"),
            ("I'm dying", "im dying"),
            ("I’m sad", "im sad"),
            ("suicíde", "suicide"),
            ("кill", "kill"),
            ("🔫", "gun"),
            ("f*ck this", "f*ck this"),
            ("no1 would care", "no one would care"),
            ("im doing it 2nite!", "im doing it tonight"),
            ("every1 h8s me", "everyone hates me"),
        ] {
            assert_eq!(normalize(text), expected, "{text}");
        }
    }

    #[test]
    fn maths_keeps_its_numbers_and_variables() {
        for (text, expected) in [
            ("What is 3/4 of 12?", "what is 3 4 of 12"),
            ("2x + 5 = 11", "2x 5 11"),
            ("x y", "x y"),
            ("3 * 4", "3 4"),
            ("Is 53x right?", "is 53x right"),
            ("$5 for 2", "5 for 2"),
            (
                "I lost 8kg at 30mph on the 3rd",
                "i lost 8kg at 30mph on the 3rd",
            ),
            ("5uicide", "suicide"),
        ] {
            assert_eq!(normalize(text), expected, "{text}");
        }
    }
}
