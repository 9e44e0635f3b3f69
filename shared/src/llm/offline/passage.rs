//! What in a unit's content answers the student's question. A unit's
//! first key idea and its worked example answer "what is a ratio?", but not
//! "how do I divide fractions?" in a unit that also multiplies them, nor
//! "why is a negative times a negative positive?" with an example that
//! subtracts. So the question is read for its topic words (stemmed, with
//! the words students use for operations folded together: "times" is
//! multiplying) and the operation it asks about; key ideas and lesson
//! sentences are ranked by the topic words they share (a lesson's section
//! title counts double, a "why" question prefers a sentence that gives a
//! reason), and the worked example is used only when it does the asked
//! operation.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;
use rust_stemmers::{Algorithm, Stemmer};

use crate::engine::interpret::classify;
use crate::engine::reply::answer_guard;
use crate::model::{ContentChunk, ExampleBrief};

/// Sentences of a lesson passage quoted after the key idea, at most.
const EXPLANATION_SENTENCES: usize = 2;

/// Words that say nothing about what is asked.
const STOPWORDS: &[&str] = &[
    "about", "also", "and", "answer", "any", "are", "because", "but", "can", "could", "did",
    "does", "doing", "dont", "don't", "each", "example", "explain", "for", "from", "get", "give",
    "have", "help", "here", "how", "into", "its", "just", "know", "like", "make", "mean", "means",
    "meaning", "more", "much", "need", "not", "number", "numbers", "one", "out", "please",
    "really", "show", "some", "still", "tell", "than", "that", "the", "their", "them", "then",
    "there", "these", "thing", "this", "what", "whats", "what's", "when", "where", "which", "why",
    "will", "with", "work", "would", "you", "your",
];

/// An operation a question or an example is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
    Simplify,
    Convert,
    Compare,
    Round,
    Solve,
}

/// Stems that name an operation, after folding.
const OPERATION_STEMS: &[(&str, Operation)] = &[
    ("add", Operation::Add),
    ("subtract", Operation::Subtract),
    ("multipli", Operation::Multiply),
    ("divid", Operation::Divide),
    ("simplifi", Operation::Simplify),
    ("simplest", Operation::Simplify),
    ("convert", Operation::Convert),
    ("compar", Operation::Compare),
    ("bigger", Operation::Compare),
    ("smaller", Operation::Compare),
    ("round", Operation::Round),
    ("solv", Operation::Solve),
];

/// Everyday words for an operation, as the operation's own stem.
fn folded(stem: &str) -> &str {
    match stem {
        "time" | "product" | "multipl" => "multipli",
        // The stemmer undoubles "adding" to "ad".
        "ad" | "addit" => "add",
        "divis" => "divid",
        "simplif" => "simplifi",
        "convers" => "convert",
        "plus" | "sum" => "add",
        "minus" | "takeaway" => "subtract",
        "quotient" | "share" => "divid",
        "percent" => "percentag",
        other => other,
    }
}

/// The question, read for what it is about.
#[derive(Debug, Clone)]
pub struct Asked {
    topic: BTreeSet<String>,
    operations: BTreeSet<Operation>,
    /// "Why ...?": a sentence that gives a reason answers it best.
    why: bool,
    /// "What is ...?" / "explain ...": a sentence that says what the idea
    /// means answers it best.
    what: bool,
    /// "How do I ...?": a sentence that says what to do answers it best.
    how: bool,
    /// The topic words of the term whose meaning is asked ("what does
    /// reciprocal mean?"); empty when the question asks no meaning.
    term: BTreeSet<String>,
}

impl Asked {
    pub fn new(question: &str) -> Self {
        // "(-3) x (-5)" and "4*7" multiply, as "×" does.
        static TIMES: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r"([\d)])\s*[xX*]\s*([\d(-])").expect("a valid pattern"));
        let question = TIMES.replace_all(question, "$1 × $2");
        let question = question.as_ref();
        let opening = question.trim_start().to_lowercase();
        let topic = stems(question).as_ref().clone();
        let mut operations = operations_in(&topic);
        // A problem asked as a question does what its signs do: "What is
        // -3 + 5?" adds, "72 - 38" subtracts (a minus sign alone is a
        // negative number, not a subtraction).
        static SIGNED: LazyLock<[(Regex, Operation); 2]> = LazyLock::new(|| {
            [
                (
                    Regex::new(r"[\d)]\s*\+\s*[\d(-]").expect("a valid pattern"),
                    Operation::Add,
                ),
                (
                    Regex::new(r"[\d)]\s+-\s+[\d(-]").expect("a valid pattern"),
                    Operation::Subtract,
                ),
            ]
        });
        for (sign, operation) in SIGNED.iter() {
            if sign.is_match(question) {
                operations.insert(*operation);
            }
        }
        if question.contains('×') {
            operations.insert(Operation::Multiply);
        }
        // "3/4 as a decimal", "write 0.2 as a fraction".
        if [
            " as a ",
            " into a ",
            " to a ",
            " in decimal",
            " as decimal",
            " as percent",
        ]
        .iter()
        .any(|cue| format!(" {opening} ").contains(cue))
            && ["decimal", "percent", "fraction"]
                .iter()
                .any(|w| opening.contains(w))
        {
            operations.insert(Operation::Convert);
        }
        let term = classify::term_asked_about(question)
            .map(|term| stems(&term).as_ref().clone())
            .unwrap_or_default();
        Asked {
            topic,
            operations,
            why: opening.starts_with("why") || opening.contains(" why "),
            what: !term.is_empty()
                || [
                    "what is",
                    "what's",
                    "whats",
                    "what are",
                    "what does",
                    "explain",
                    "can you explain",
                    "tell me about",
                ]
                .iter()
                .any(|w| opening.starts_with(w)),
            how: ["how do", "how can", "how should", "how would", "how to"]
                .iter()
                .any(|w| opening.starts_with(w)),
            term,
        }
    }

    /// The question with the words of `lead` added to its topic: what
    /// explains a key idea best is what shares most with the question and
    /// the idea together.
    pub fn and(&self, lead: &str) -> Asked {
        let mut more = self.clone();
        more.topic.extend(stems(lead).iter().cloned());
        more
    }

    /// How many of the question's topic words `text` shares.
    fn shared(&self, text: &str) -> usize {
        stems(text).intersection(&self.topic).count()
    }

    /// How well `sentence` answers the question: the topic words it
    /// shares, more when it gives the reason a "why" asks for, says what
    /// the idea means when that is asked, or the steps a "how" asks for.
    /// Zero when it shares none.
    fn score(&self, sentence: &str) -> usize {
        let shared = self.shared(sentence);
        if shared == 0 {
            return 0;
        }
        let lower = sentence.to_lowercase().replace("and so on", "");
        // Saying why outright answers a "why" best; "because" and "so" too.
        let reason = if ["why", "pattern", "reason"]
            .iter()
            .any(|w| lower.contains(w))
        {
            4
        } else if ["because", " so "].iter().any(|w| lower.contains(w)) {
            2
        } else {
            0
        };
        let defines = [" means ", " is called ", " stands for ", " is a ", " are "]
            .iter()
            .any(|w| lower.contains(w));
        // A step, then the next: "rewrite ..., then add the numerators".
        let method = lower.contains(", then ");
        2 * shared
            + if self.why { reason } else { 0 }
            + usize::from(self.what && defines) * 2
            + usize::from(self.how && method)
    }
}

/// A key idea is the unit's own summary of an idea: a lesson sentence
/// must answer clearly better to be preferred to it.
const KEY_IDEA_BONUS: usize = 2;

/// The key idea that answers the question best, and how well; none when
/// no idea shares a topic word with it.
pub fn key_idea<'a>(asked: &Asked, ideas: &[&'a String]) -> Option<(&'a String, usize)> {
    let mut best: Option<(&'a String, usize)> = None;
    for idea in ideas.iter().filter(|i| !hides_a_number(i)) {
        let score = match asked.score(idea) {
            0 => 0,
            score => score + KEY_IDEA_BONUS,
        };
        if score > 0 && best.is_none_or(|(_, top)| score > top) {
            best = Some((idea, score));
        }
    }
    best
}

/// From the lesson passages, the sentence that answers the question best
/// and the sentence after it (which usually shows it at work), with how
/// well the sentence answers (its section's title only breaks ties between
/// sentences, so the score compares with a key idea's); none when no
/// sentence shares a topic word. A sentence that leans on the one before
/// it ("Instead, ...") does not open an answer.
pub fn lesson_sentences(asked: &Asked, chunks: &[&ContentChunk]) -> Option<(String, usize)> {
    let mut best: Option<(Vec<&str>, usize, usize, usize)> = None;
    for chunk in chunks {
        let section = asked.shared(&chunk.section);
        let sentences = sentences(&chunk.text);
        for (i, sentence) in sentences.iter().enumerate() {
            let score = asked.score(sentence);
            if score == 0 || leans_on_before(sentence) || hides_a_number(sentence) {
                continue;
            }
            let better = best.as_ref().is_none_or(|(_, _, top, top_section)| {
                (score + 2 * section, score) > (top + 2 * top_section, *top)
            });
            if better {
                best = Some((sentences.clone(), i, score, section));
            }
        }
    }
    let (sentences, at, score, _) = best?;
    let mut quoted: Vec<&str> = sentences
        .iter()
        .skip(at)
        .take(EXPLANATION_SENTENCES)
        .take_while(|s| !hides_a_number(s))
        .copied()
        .collect();
    // "Take 36/48." without the working it introduces reads as cut off.
    let more_follows = at + quoted.len() < sentences.len();
    if quoted.len() > 1 && more_follows && quoted.last().is_some_and(|s| sets_up_next(s)) {
        quoted.pop();
    }
    Some((quoted.join(" "), score))
}

/// Whether `sentence` only introduces what comes after it: an example to
/// take, or a colon.
pub(super) fn sets_up_next(sentence: &str) -> bool {
    const OPENINGS: &[&str] = &[
        "take ",
        "consider ",
        "look at ",
        "suppose ",
        "for example",
        "here is ",
        "here's ",
        "try ",
        "work out ",
        "find ",
        "solve ",
        "calculate ",
        "evaluate ",
    ];
    let sentence = sentence.trim().to_lowercase();
    sentence.ends_with(':') || OPENINGS.iter().any(|o| sentence.starts_with(o))
}

/// Whether a number of `text` is hidden (an answer still pending is
/// masked in the content the tutor gets): quoted, it would read broken.
fn hides_a_number(text: &str) -> bool {
    text.contains(answer_guard::MASK)
}

/// Whether `sentence` only makes sense after the one before it: it opens
/// with a word that points back ("Instead", "So", "This", "Second").
fn leans_on_before(sentence: &str) -> bool {
    const POINTING_BACK: &[&str] = &[
        "instead",
        "so",
        "then",
        "but",
        "also",
        "however",
        "this",
        "that",
        "these",
        "those",
        "it",
        "they",
        "here",
        "now",
        "and",
        "or",
        "next",
        "finally",
        "first",
        "second",
        "third",
        "otherwise",
        "likewise",
        "similarly",
        "which",
        "take",
        "thus",
        "hence",
    ];
    let first = sentence
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or_default()
        .to_lowercase();
    POINTING_BACK.contains(&first.as_str())
}

/// Whether the worked example shows what was asked: it uses the word
/// whose meaning is asked (a definition wants an example of that very
/// idea, not of another in its unit), and it does the asked operation, or
/// the question names none. What an example does is what its
/// problem asks for; its steps are read only when the problem names no
/// operation, because steps do other operations on the way ("simplify by
/// dividing the top and bottom by 6" in a multiplication, "check by adding
/// back" in a subtraction), and a division question shown a multiplication
/// learns the wrong method.
pub fn example_fits(asked: &Asked, example: &ExampleBrief) -> bool {
    if !asked.term.is_empty()
        && stems(&format!("{} {}", example.problem, example.steps.join(" ")))
            .is_disjoint(&asked.term)
    {
        return false;
    }
    if asked.operations.is_empty() {
        return true;
    }
    let mut done = operations_done(&example.problem);
    if done.is_empty() {
        done = operations_done(&example.steps.join(" "));
    }
    !asked.operations.is_disjoint(&done)
}

/// The operations `text` names in words or does with a sign.
fn operations_done(text: &str) -> BTreeSet<Operation> {
    let mut done = operations_in(&stems(text));
    for (symbol, operation) in [
        ('×', Operation::Multiply),
        ('÷', Operation::Divide),
        ('+', Operation::Add),
    ] {
        if text.contains(symbol) {
            done.insert(operation);
        }
    }
    if text.contains(" - ") {
        done.insert(Operation::Subtract);
    }
    done
}

/// Whether `sentence` says again what `said` already says: it defines the
/// same thing ("Per cent means "out of a hundred"" after "Per cent means
/// "out of 100""), or one of its clauses is made of the words of `said`
/// ("When you add decimals, the decimal points must line up" after "line
/// up the decimal points"). A student told the same idea twice in one
/// reply reads it as padding, or wonders what the difference is.
pub fn repeats(sentence: &str, said: &str) -> bool {
    let defined = |text: &str| -> Vec<String> {
        sentences(text)
            .iter()
            .filter_map(|s| {
                let lower = s.to_lowercase();
                let (subject, _) = lower.split_once(" means ")?;
                let subject = subject.trim();
                (!subject.is_empty() && subject.split_whitespace().count() <= 4)
                    .then(|| subject.to_owned())
            })
            .collect()
    };
    let again = defined(sentence);
    if !again.is_empty() && defined(said).iter().any(|s| again.contains(s)) {
        return true;
    }
    let known = stems(said);
    sentence
        .split([',', ':', ';'])
        .chain(std::iter::once(sentence))
        .any(|clause| {
            let words = stems(clause);
            let shared = words.intersection(&known).count();
            words.len() >= 3 && shared * 4 >= words.len() * 3
        })
}

/// `sentence` without a last ", and ..." that works maths `said` already
/// worked: "5 - 8 = 5 + (-8) = -3, and 7 - (-2) = 7 + 2 = 9." after
/// "so 7 - (-2) = 7 + 2 = 9" keeps only its new instance.
pub(super) fn without_said_maths(sentence: &str, said: &str) -> String {
    let bare = |text: &str| -> String { text.chars().filter(|c| !c.is_whitespace()).collect() };
    if let Some((before, last)) = sentence.rsplit_once(", and ") {
        let last = last.trim_end_matches(['.', '!']);
        if last.chars().any(|c| c.is_ascii_digit())
            && last.contains('=')
            && bare(said).contains(&bare(last))
        {
            return format!("{before}.");
        }
    }
    sentence.to_owned()
}

/// Sentences of a worked instance quoted at most: a problem set up, its
/// working and its result.
const INSTANCE_SENTENCES: usize = 5;

/// An instance from the lesson passages of the operation asked about, as
/// (problem, working), for a question whose worked example does another
/// operation: "how do I divide fractions?" in a unit whose example
/// multiplies is shown the lesson's "3/4 ÷ 1/2 = 3/4 × 2/1 = 6/4 = 1 1/2".
/// A problem the lesson sets up ("Work out 5/6 - 1/4.") comes with its
/// working up to the line that does the operation; else a single line that
/// does it with numbers. The line sharing most with `about` (the question
/// and the idea quoted) is chosen. None when the question names no
/// operation or no sentence does it.
pub fn instance(
    asked: &Asked,
    about: &Asked,
    chunks: &[&ContentChunk],
) -> Option<(String, String)> {
    if asked.operations.is_empty() {
        return None;
    }
    let does_it = |sentence: &str| {
        sentence.chars().any(|c| c.is_ascii_digit())
            && !hides_a_number(sentence)
            && !asked.operations.is_disjoint(&operations_done(sentence))
    };
    // (worked from a set-up problem, shared words) ranks the candidates.
    let mut best: Option<((bool, usize), String, String)> = None;
    for chunk in chunks {
        let sentences = sentences(&chunk.text);
        for (i, sentence) in sentences.iter().enumerate() {
            if !does_it(sentence) {
                continue;
            }
            let found = if sets_up_next(sentence) {
                let end = sentences
                    .iter()
                    .enumerate()
                    .skip(i + 1)
                    .take(INSTANCE_SENTENCES - 1)
                    .find(|(_, s)| s.contains('=') && does_it(s))
                    .map(|(end, _)| end);
                let Some(end) = end else { continue };
                let working = &sentences[i + 1..=end];
                if working.iter().any(|s| hides_a_number(s)) {
                    continue;
                }
                let shared = about.shared(&sentences[i..=end].join(" "));
                ((true, shared), (*sentence).to_owned(), working.join(" "))
            } else if sentence.contains('=') {
                // "So 3/4 ÷ 1/2 = ..." stands alone once the "So" goes.
                let Some(line) = standing_alone(sentence) else {
                    continue;
                };
                ((false, about.shared(sentence)), line, String::new())
            } else {
                continue;
            };
            if best.as_ref().is_none_or(|(rank, _, _)| found.0 > *rank) {
                best = Some(found);
            }
        }
    }
    best.map(|(_, problem, working)| (problem, working))
}

/// `sentence` as it reads on its own: a leading "So" dropped; none when
/// it leans on the sentence before in another way ("This gives 7/12.").
pub(super) fn standing_alone(sentence: &str) -> Option<String> {
    let rest = ["So ", "so "]
        .iter()
        .find_map(|so| sentence.strip_prefix(so))
        .unwrap_or(sentence)
        .trim_start();
    if leans_on_before(rest) {
        return None;
    }
    let mut chars = rest.chars();
    let first = chars.next()?;
    Some(first.to_uppercase().chain(chars).collect())
}

fn operations_in(stems: &BTreeSet<String>) -> BTreeSet<Operation> {
    OPERATION_STEMS
        .iter()
        .filter(|(stem, _)| stems.contains(*stem))
        .map(|(_, operation)| *operation)
        .collect()
}

/// Texts whose stems each worker thread keeps: the course's passages are
/// read again every turn, and stemming them was a tenth of a served turn.
const STEMS_KEPT: usize = 4_096;

/// [`stemmed`] of `text`, kept per thread (bounded: cleared when full).
fn stems(text: &str) -> Rc<BTreeSet<String>> {
    thread_local! {
        static KEPT: RefCell<HashMap<String, Rc<BTreeSet<String>>>> = RefCell::new(HashMap::new());
    }
    KEPT.with_borrow_mut(|kept| {
        if let Some(found) = kept.get(text) {
            return Rc::clone(found);
        }
        if kept.len() >= STEMS_KEPT {
            kept.clear();
        }
        let read = Rc::new(stemmed(text));
        kept.insert(text.to_owned(), Rc::clone(&read));
        read
    })
}

/// The topic words of `text`: lower-cased, stemmed, stopwords dropped,
/// everyday words and signs for an operation folded into the operation
/// (`×` is multiplying, `-3` a negative number).
fn stemmed(text: &str) -> BTreeSet<String> {
    static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));
    static NEGATIVE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(^|[\s(=,:])[-−]\d").expect("a valid pattern"));
    let lower = text
        .to_lowercase()
        .replace("take away", "takeaway")
        .replace("per cent", "percent")
        .replace('%', " percent ")
        .replace('×', " multiply ")
        .replace('÷', " divide ");
    let lower = NEGATIVE.replace_all(&lower, "$1 negative ");
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !STOPWORDS.contains(w))
        .map(|w| folded(&STEMMER.stem(w)).to_owned())
        .collect()
}

/// The sentences of a passage, decimals kept whole ("0.35" is not a stop).
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, (i, c)) in chars.iter().enumerate() {
        let ends = matches!(c, '.' | '!' | '?')
            && chars
                .get(k + 1)
                .is_none_or(|(_, next)| next.is_whitespace());
        if ends {
            let sentence = text[start..i + c.len_utf8()].trim();
            if !sentence.is_empty() {
                out.push(sentence);
            }
            start = i + c.len_utf8();
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_how_question_is_answered_with_the_steps_and_a_why_with_the_reason() {
        let same_size = "You can only add fractions whose pieces are the same size, so the denominators must match.".to_owned();
        let steps =
            "Rewrite each fraction over a common denominator, then add the numerators only."
                .to_owned();
        let ideas = [&same_size, &steps];
        let how = Asked::new("how do I add fractions with different denominators?");
        assert_eq!(key_idea(&how, &ideas).map(|(i, _)| i), Some(&steps));
        let why = Asked::new("why do fractions need the same denominator to add?");
        assert_eq!(key_idea(&why, &ideas).map(|(i, _)| i), Some(&same_size));
    }

    fn chunk(section: &str, text: &str) -> ContentChunk {
        ContentChunk {
            unit_id: "u".into(),
            chunk_id: "c".into(),
            section: section.into(),
            text: text.into(),
            worked_example: false,
        }
    }

    fn example(problem: &str, steps: &[&str]) -> ExampleBrief {
        ExampleBrief {
            problem: problem.into(),
            steps: steps.iter().map(|s| (*s).to_owned()).collect(),
            answer: String::new(),
        }
    }

    #[test]
    fn the_example_must_do_the_operation_asked_about() {
        let subtracts = example("Work out -4 - (-9).", &["-4 - (-9) = -4 + 9"]);
        let multiplies = example("Work out 2/3 × 9/10.", &["Multiply the numerators."]);
        assert!(!example_fits(
            &Asked::new("why is a negative times a negative positive"),
            &subtracts
        ));
        assert!(!example_fits(
            &Asked::new("how do i divide fractions"),
            &multiplies
        ));
        assert!(example_fits(
            &Asked::new("how do you multiply fractions"),
            &multiplies
        ));
        let shares = example("Share 20 in the ratio 2:3.", &["2 + 3 = 5 parts."]);
        assert!(example_fits(&Asked::new("what is a ratio"), &shares));
        assert!(!example_fits(
            &Asked::new("what is 3/4 as a decimal"),
            &example("Simplify 18/24.", &["Divide the top and bottom by 6."])
        ));
    }

    #[test]
    fn a_word_is_shown_only_by_an_example_that_uses_it() {
        let simplifies = example(
            "Simplify 18/24.",
            &["Divide the top and bottom by 6: 18 ÷ 6 = 3 and 24 ÷ 6 = 4."],
        );
        for asked in [
            "what does denominator mean",
            "idk what a denominator is",
            "what does reciprocal mean",
        ] {
            assert!(!example_fits(&Asked::new(asked), &simplifies), "{asked}");
        }
        let flips = example(
            "Work out 3/4 ÷ 1/2.",
            &["Multiply by the reciprocal of 1/2, 2/1."],
        );
        assert!(example_fits(
            &Asked::new("what does reciprocal mean"),
            &flips
        ));
    }

    #[test]
    fn an_example_does_what_its_problem_asks_not_what_a_step_does_on_the_way() {
        let multiplies = example(
            "Work out 2/3 × 9/10 and simplify.",
            &["Simplify 18/30 by dividing the top and bottom by 6: 3/5."],
        );
        assert!(!example_fits(
            &Asked::new("how do you divide fractions"),
            &multiplies
        ));
        let subtracts = example(
            "Work out 503 - 278.",
            &["Check by adding back: 225 + 278 = 503"],
        );
        assert!(!example_fits(&Asked::new("how do you add"), &subtracts));
        // A problem that names no operation is read through its steps.
        let percent = example("Find 15% of 80.", &["10% of 80 is 80 ÷ 10 = 8."]);
        assert!(example_fits(&Asked::new("how do i divide"), &percent));
    }

    #[test]
    fn a_lesson_instance_of_the_asked_operation_is_found() {
        let dividing = chunk(
            "Dividing by a fraction",
            "Dividing by a half is the same as multiplying by 2. Keep, change, flip. So 3/4 ÷ 1/2 = 3/4 × 2/1 = 6/4 = 1 1/2. That makes sense.",
        );
        let asked = Asked::new("how do you divide fractions");
        let (problem, working) = instance(&asked, &asked, &[&dividing]).unwrap();
        assert_eq!(problem, "3/4 ÷ 1/2 = 3/4 × 2/1 = 6/4 = 1 1/2.");
        assert!(working.is_empty());
        let subtracting = chunk(
            "Subtracting fractions, worked example",
            "Subtraction follows the same steps. Work out 5/6 - 1/4. The common denominator is 12. Change each fraction: 5/6 = 10/12 and 1/4 = 3/12. Now subtract the numerators: 10/12 - 3/12 = 7/12. Finally check it.",
        );
        let asked = Asked::new("how do you subtract fractions");
        let (problem, working) = instance(&asked, &asked, &[&subtracting]).unwrap();
        assert_eq!(problem, "Work out 5/6 - 1/4.");
        assert!(working.ends_with("10/12 - 3/12 = 7/12."), "{working}");
        assert!(!working.contains("Finally"), "{working}");
        assert!(instance(&Asked::new("what is a fraction"), &asked, &[&subtracting]).is_none());
    }

    #[test]
    fn an_idea_said_again_in_other_words_is_a_repeat() {
        let percent = "Per cent means \"out of 100\", so 35% is 35/100.";
        assert!(repeats("Per cent means \"out of a hundred\".", percent));
        assert!(!repeats(
            "Picture a 10 by 10 grid of 100 squares: 35% means 35 are shaded.",
            percent
        ));
        let line_up = "To add or subtract decimals, line up the decimal points so that digits with the same value are in the same column.";
        assert!(repeats(
            "When you add decimals, the decimal points must line up, so that tenths are added to tenths.",
            line_up
        ));
        assert!(!repeats(
            "For 3.4 + 2.75, write 3.4 as 3.40 so both numbers have two decimal places.",
            line_up
        ));
        assert_eq!(
            without_said_maths(
                "So 5 - 8 = 5 + (-8) = -3, and 7 - (-2) = 7 + 2 = 9.",
                "so 7 - (-2) = 7 + 2 = 9."
            ),
            "So 5 - 8 = 5 + (-8) = -3."
        );
        assert_eq!(
            standing_alone("So 3/4 ÷ 1/2 = 1 1/2.").as_deref(),
            Some("3/4 ÷ 1/2 = 1 1/2.")
        );
        assert_eq!(standing_alone("This gives 7/12."), None);
    }

    #[test]
    fn the_section_about_the_question_is_quoted() {
        let multiplying = chunk(
            "What multiplying fractions means",
            "Multiplying by a fraction takes a part of an amount. So 1/2 × 6 = 3.",
        );
        let dividing = chunk(
            "Dividing by a fraction",
            "To divide by a fraction, multiply by its reciprocal: turn the second fraction upside down. So 3/4 ÷ 1/2 = 3/4 × 2/1 = 3/2. It asks how many halves fit.",
        );
        let (said, _) = lesson_sentences(
            &Asked::new("how do i divide fractions"),
            &[&multiplying, &dividing],
        )
        .unwrap();
        assert!(said.starts_with("To divide by a fraction"), "{said}");
        assert!(said.contains("3/4 ÷ 1/2"), "{said}");
        assert!(!said.contains("halves"), "two sentences at most: {said}");
    }

    #[test]
    fn a_why_question_prefers_the_reason() {
        let signs = chunk(
            "Multiplying and dividing with signs",
            "Same signs give a positive answer and different signs give a negative answer. A pattern shows why: -3 × 1 = -3, -3 × 0 = 0, so -3 × (-1) = 3.",
        );
        let (said, _) = lesson_sentences(
            &Asked::new("why is a negative times a negative positive"),
            &[&signs],
        )
        .unwrap();
        assert!(said.starts_with("A pattern shows why"), "{said}");
    }

    #[test]
    fn key_ideas_are_chosen_by_what_they_share_with_the_question() {
        let same =
            "When you multiply or divide two numbers with the same sign, the answer is positive."
                .to_owned();
        let line = "On a number line, adding a positive number moves you right.".to_owned();
        let ideas = [&line, &same];
        let (idea, _) =
            key_idea(&Asked::new("how do you multiply negative numbers"), &ideas).unwrap();
        assert_eq!(idea, &same);
        assert!(key_idea(&Asked::new("what's for lunch"), &ideas).is_none());
    }

    #[test]
    fn decimals_are_not_sentence_ends() {
        assert_eq!(
            sentences("So 35% is 0.35. Then 0.5 is a half!"),
            vec!["So 35% is 0.35.", "Then 0.5 is a half!"]
        );
    }

    #[test]
    fn a_sentence_that_sets_up_an_example_is_not_quoted_without_it() {
        assert!(sets_up_next("Work out 5/6 - 1/4."));
        assert!(sets_up_next("Take 36/48."));
        assert!(sets_up_next("Here is how:"));
        assert!(!sets_up_next("Subtraction follows the same steps."));
    }
}
