//! Which units of a course a student's message is about, ranked.
//!
//! Students do not write like unit titles: "fracshuns", "I don't get
//! percantages", "2x+3=11", "what's 3/4 of 20". So a message is read three
//! ways, each from the course's own content:
//!
//! - **Problems** in it are recognised by shape (an equation in one
//!   unknown, a fraction of an amount, a percentage...) and count for the
//!   units whose `problem_shapes` list that shape.
//! - **Words** are matched against each unit's title and tags after
//!   folding case, plurals and word endings (a stemmer) and correcting
//!   misspellings against the course's vocabulary (edit distance, with a
//!   few sound-alike spellings such as "shun" for "tion"). A word several
//!   units share counts for each in proportion; a tag of several words
//!   counts more than a single word.
//! - **Everyday words** that also name maths ideas (order, share, money,
//!   temperature) count only in a message with numbers in it, so "can I
//!   order pizza?" is about nothing in the course.
//!
//! A message with no problem and no course word maps to no unit: off-topic
//! chatter is never mapped. The best unit's confidence says how far it
//! stands out from the runner-up; when the close contenders are a unit and
//! units that build on it ("help with equations"), the student is placed at
//! the start, on the unit the others build on.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};
use serde::Serialize;

use crate::content::Course;
use crate::content::course::ProblemShape;
use crate::engine::interpret::student_math;
use crate::model::{ClientEvent, MappedUnit};

/// Confidence given to a message that clearly names one unit. Below 1
/// because words alone never prove what a student means.
const CLEAR_MATCH: f64 = 0.9;
/// Contenders within this share of the best score are close to it.
const CLOSE_SHARE: f64 = 0.8;
/// A problem of a unit's shape.
const SHAPE_WEIGHT: f64 = 3.0;
/// Most other words a phrase's words may have among them and still count.
const NEAR_GAP: usize = 2;
/// What a phrase with words among it counts for, against its words in a row.
const NEAR_SHARE: f64 = 0.8;
/// A tag of several words, matched word for word.
const PHRASE_WEIGHT: f64 = 2.5;
/// A one-word tag.
const TAG_WEIGHT: f64 = 1.5;
/// A word of the unit's title.
const TITLE_WEIGHT: f64 = 1.0;
/// A one-word tag or title word that is also an everyday word.
const EVERYDAY_WEIGHT: f64 = 0.5;

/// [`STOPWORDS`] as a set: every word of every message is looked up.
static STOPWORD_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOPWORDS.iter().copied().collect());

fn is_stopword(word: &str) -> bool {
    STOPWORD_SET.contains(word)
}

/// Words that say nothing about which unit is meant.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "another",
    "answer",
    "answers",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "can",
    "could",
    "did",
    "different",
    "do",
    "does",
    "doing",
    "don't",
    "dont",
    "done",
    "example",
    "examples",
    "explain",
    "find",
    "for",
    "from",
    "get",
    "go",
    "got",
    "had",
    "has",
    "have",
    "help",
    "here",
    "how",
    "i",
    "i'm",
    "idea",
    "ideas",
    "if",
    "im",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "know",
    "learn",
    "lesson",
    "let",
    "let's",
    "lets",
    "like",
    "make",
    "math",
    "maths",
    "mathematics",
    "may",
    "me",
    "mean",
    "means",
    "meaning",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "need",
    "no",
    "not",
    "now",
    "number",
    "numbers",
    "of",
    "ok",
    "okay",
    "on",
    "one",
    "ones",
    "or",
    "other",
    "our",
    "out",
    "please",
    "pls",
    "plz",
    "practice",
    "practise",
    "problem",
    "problems",
    "question",
    "questions",
    "really",
    "same",
    "should",
    "show",
    "so",
    "some",
    "start",
    "stuff",
    "such",
    "teach",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "thing",
    "things",
    "this",
    "those",
    "to",
    "too",
    "topic",
    "try",
    "u",
    "understand",
    "up",
    "ur",
    "us",
    "use",
    "using",
    "very",
    "wanna",
    "want",
    "was",
    "way",
    "ways",
    "we",
    "were",
    "what",
    "what's",
    "whats",
    "when",
    "where",
    "which",
    "who",
    "why",
    "will",
    "with",
    "work",
    "working",
    "works",
    "would",
    "yes",
    "you",
    "your",
];

/// Everyday words that also name maths ideas: they count only in a
/// message with numbers in it.
const EVERYDAY: &[&str] = &[
    "balance",
    "below",
    "big",
    "bigger",
    "cancel",
    "compare",
    "decrease",
    "discount",
    "first",
    "flip",
    "increase",
    "left",
    "letter",
    "letters",
    "line",
    "mix",
    "money",
    "opposite",
    "order",
    "part",
    "parts",
    "place",
    "point",
    "power",
    "powers",
    "recipe",
    "reverse",
    "sale",
    "share",
    "small",
    "smaller",
    "split",
    "temperature",
    "tip",
    "undo",
    "value",
    "whole",
    "zero",
];

/// Words of arithmetic itself: a message with one is about maths, even
/// when it names no unit ("why do you do times before plus?").
const ARITHMETIC: &[&str] = &[
    "add",
    "adding",
    "added",
    "plus",
    "subtract",
    "subtracting",
    "minus",
    "multiply",
    "multiplying",
    "multiplied",
    "times",
    "divide",
    "dividing",
    "divided",
    "division",
    "equals",
    "equal",
    "sum",
    "product",
    "calculate",
    "calculation",
    "formula",
    "maths",
    "math",
    "mathematics",
    "solve",
    "number",
    "numbers",
    "digit",
    "digits",
    "answer",
];

/// Greetings, thanks and short replies: a message of only these (and
/// stopwords) is part of the conversation, not chatter about something else.
const SMALL_TALK: &[&str] = &[
    "aha",
    "alright",
    "awesome",
    // Ready to begin: "ok ready", "let's go", "let's start".
    "begin",
    "go",
    "let's",
    "lets",
    "ready",
    "start",
    "bye",
    "cheers",
    "clear",
    "clearer",
    "cool",
    "fine",
    "good",
    "got",
    "gotcha",
    "great",
    "hello",
    "helped",
    "helps",
    "hey",
    "hi",
    "hiya",
    "k",
    "make",
    "makes",
    "morning",
    "nah",
    "nice",
    "nope",
    "ok",
    "okay",
    "perfect",
    "right",
    "see",
    "sense",
    "sure",
    "thank",
    "thanks",
    "thx",
    "ty",
    "understand",
    "understood",
    "wait",
    "yeah",
    "yep",
    "yo",
    "yup",
];

/// Words that start a greeting, one of which a greeting must have.
const GREETINGS: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "hiya",
    "heya",
    "howdy",
    "yo",
    "sup",
    "morning",
    "afternoon",
    "evening",
    "greetings",
    "hola",
];

/// What else a greeting may say: "hello there", "good morning, sir",
/// "hey, how are you?", "hi again".
const GREETING_WORDS: &[&str] = &[
    "there", "everyone", "all", "again", "good", "tutor", "sir", "miss", "teacher", "how", "are",
    "is", "it", "going", "you", "u", "r", "ya", "doing", "today", "whats", "what's", "how's",
    "what", "up",
];

/// A reply that asks for nothing: "ok", "yeah thanks", "i will", "not
/// really", "idk". "ready" and "let's go" are not here: they ask to start.
const ACKNOWLEDGEMENTS: &[&str] = &[
    "ok", "okay", "okey", "oki", "k", "kk", "yes", "yeah", "yea", "ya", "yep", "yup", "sure",
    "fine", "alright", "thanks", "thank", "you", "thx", "ty", "cheers", "no", "nah", "nope", "not",
    "really", "maybe", "idk", "dunno", "i", "guess", "will", "ill", "i'll", "try", "cool", "right",
    "whatever", "so", "and", "just", "well", "mhm",
];

/// Words that make a topic's name a question about it, not a request for it.
const ASKS_ABOUT: &[&str] = &[
    "why",
    "explain",
    "mean",
    "means",
    "meaning",
    "understand",
    "help",
    "how",
];

/// The most words a request for a topic by its name runs to ("ok can we
/// do ratios now").
const TOPIC_REQUEST_WORDS: usize = 6;

/// A sound of thinking, however it is spelt: "hmm", "hmmmm", "umm", "uh",
/// "erm", "ah", "oh". A student saying it is thinking, not changing topic.
fn is_filler(word: &str) -> bool {
    let mut sounds: Vec<char> = word.chars().collect();
    sounds.dedup();
    matches!(
        sounds.as_slice(),
        ['h', 'm']
            | ['m']
            | ['u', 'm']
            | ['u', 'h']
            | ['e', 'r']
            | ['e', 'r', 'm']
            | ['a', 'h']
            | ['o', 'h']
    )
}

/// One way a message can name a unit: a run of word stems.
#[derive(Debug, Clone)]
struct Term {
    stems: Vec<String>,
    weight: f64,
    everyday: bool,
    /// The numbers the phrase names, each of which the message must
    /// write too: "divide by 0" is not "divide by 10".
    numbers: Vec<String>,
}

/// Terms by their first stem, as (group, term) positions: a message can
/// only hold a term whose first stem is one of its own, so a lookup per
/// word of the message replaces a scan of every term.
#[derive(Debug, Clone, Default)]
struct TermIndex(HashMap<String, Vec<(usize, usize)>>);

impl TermIndex {
    fn new<'t>(groups: impl IntoIterator<Item = &'t [Term]>) -> Self {
        let mut index: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
        for (g, terms) in groups.into_iter().enumerate() {
            for (t, term) in terms.iter().enumerate() {
                if let Some(lead) = term.stems.first() {
                    index.entry(lead.clone()).or_default().push((g, t));
                }
            }
        }
        TermIndex(index)
    }

    /// The positions of the terms that start with one of `stems`, in order.
    fn candidates(&self, stems: &[&str]) -> Vec<(usize, usize)> {
        let mut found: Vec<(usize, usize)> = stems
            .iter()
            .filter_map(|s| self.0.get(*s))
            .flatten()
            .copied()
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// A message as the mapper reads it, once for every question asked of it.
#[derive(Debug, Clone)]
pub struct ReadMessage<'m> {
    text: &'m str,
    /// Its words in order, lower case, each number as [`NUMBER_WORD`].
    words: Vec<String>,
    /// Each word's stem after spelling correction; a number stays
    /// [`NUMBER_WORD`].
    stems: Vec<String>,
}

impl ReadMessage<'_> {
    /// The words without the numbers.
    fn words(&self) -> impl Iterator<Item = &str> {
        self.words
            .iter()
            .map(String::as_str)
            .filter(|w| *w != NUMBER_WORD)
    }

    /// The stems of the words that pass `keep` (numbers never do).
    fn stems_where(&self, keep: impl Fn(&str) -> bool) -> Vec<&str> {
        self.words
            .iter()
            .zip(&self.stems)
            .filter(|(w, _)| *w != NUMBER_WORD && keep(w))
            .map(|(_, s)| s.as_str())
            .collect()
    }
}

#[derive(Debug, Clone)]
struct UnitProfile {
    unit_id: String,
    terms: Vec<Term>,
    shapes: Vec<ProblemShape>,
    /// Units this one depends on, directly or not.
    below: BTreeSet<String>,
}

/// A unit the message may be about, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitMatch {
    pub unit_id: String,
    pub score: f64,
    /// What matched: `shape two_step_equation`, `tag "add fractions"`.
    pub because: Vec<String>,
}

impl UnitMatch {
    /// Whether only the form of the maths matched, no word of the unit's.
    pub fn by_shape_only(&self) -> bool {
        self.because.iter().all(|b| b.starts_with("shape "))
    }
}

/// The mapping of one course, built once per content version.
pub struct UnitMapper {
    units: Vec<UnitProfile>,
    /// The units' terms by their first stem.
    unit_terms: TermIndex,
    /// Maths topics outside the course (the workflow's `beyond_course`
    /// entries, in order), each as the phrases that ask about it.
    outside: Vec<Vec<Term>>,
    /// The outside topics' terms by their first stem.
    outside_terms: TermIndex,
    /// Every word of every term, as written, for spelling correction.
    vocabulary: BTreeSet<String>,
    /// Their stems: a word with one of these needs no correction.
    vocabulary_stems: BTreeSet<String>,
    /// How many units each problem shape belongs to.
    shape_units: BTreeMap<ProblemShape, usize>,
    stemmer: Stemmer,
}

impl std::fmt::Debug for UnitMapper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnitMapper")
            .field("units", &self.units.len())
            .field("vocabulary", &self.vocabulary.len())
            .finish()
    }
}

impl UnitMapper {
    pub fn build(course: &Course) -> Self {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut vocabulary = BTreeSet::new();
        let mut units: Vec<UnitProfile> = Vec::new();
        for unit_id in &course.order {
            let Some(unit) = course.unit(unit_id) else {
                continue;
            };
            let mut terms: Vec<Term> = Vec::new();
            let mut add = |words: Vec<String>, weight: f64| {
                let kept: Vec<String> = words.into_iter().filter(|w| !is_stopword(w)).collect();
                if kept.is_empty() {
                    return;
                }
                vocabulary.extend(kept.iter().cloned());
                let everyday = kept.len() == 1 && EVERYDAY.contains(&kept[0].as_str());
                let stems: Vec<String> = kept.iter().map(|w| stem(&stemmer, w)).collect();
                let weight = if everyday {
                    EVERYDAY_WEIGHT
                } else if stems.len() > 1 {
                    PHRASE_WEIGHT
                } else {
                    weight
                };
                if !terms.iter().any(|t| t.stems == stems) {
                    terms.push(Term {
                        stems,
                        weight,
                        everyday,
                        numbers: Vec::new(),
                    });
                }
            };
            for tag in &unit.tags {
                add(words(tag), TAG_WEIGHT);
            }
            for word in words(&unit.title) {
                add(vec![word], TITLE_WEIGHT);
            }
            units.push(UnitProfile {
                unit_id: unit.id.clone(),
                terms,
                shapes: unit.problem_shapes.clone(),
                below: course.ancestors(&unit.id),
            });
        }
        // A term several units share counts for each in proportion.
        let mut sharing: BTreeMap<Vec<String>, usize> = BTreeMap::new();
        for unit in &units {
            for term in &unit.terms {
                *sharing.entry(term.stems.clone()).or_default() += 1;
            }
        }
        for unit in &mut units {
            for term in &mut unit.terms {
                term.weight /= sharing.get(&term.stems).copied().unwrap_or(1) as f64;
            }
        }
        let vocabulary_stems = vocabulary.iter().map(|w| stem(&stemmer, w)).collect();
        let mut shape_units: BTreeMap<ProblemShape, usize> = BTreeMap::new();
        for unit in &units {
            for shape in &unit.shapes {
                *shape_units.entry(*shape).or_default() += 1;
            }
        }
        UnitMapper {
            shape_units,
            unit_terms: TermIndex::new(units.iter().map(|u| u.terms.as_slice())),
            units,
            outside: Vec::new(),
            outside_terms: TermIndex::default(),
            vocabulary,
            vocabulary_stems,
            stemmer,
        }
    }

    /// The message's words and their stems, read once for [`Self::rank_read`],
    /// [`Self::outside_topics_read`] and the other readings.
    pub fn read<'m>(&self, message: &'m str) -> ReadMessage<'m> {
        let words = words_and_numbers(message);
        let stems = words
            .iter()
            .map(|w| {
                if w == NUMBER_WORD {
                    w.clone()
                } else {
                    stem(&self.stemmer, &self.corrected(w.clone()))
                }
            })
            .collect();
        ReadMessage {
            text: message,
            words,
            stems,
        }
    }

    /// Every unit the message names, best first (ties by unit id), with
    /// what matched. Empty when nothing in the message belongs to the course.
    pub fn rank(&self, message: &str) -> Vec<UnitMatch> {
        self.rank_read(&self.read(message))
    }

    /// [`Self::rank`] of a message already read.
    pub fn rank_read(&self, read: &ReadMessage<'_>) -> Vec<UnitMatch> {
        let shapes = student_math::shapes(read.text);
        let has_numbers = read.text.chars().any(|c| c.is_ascii_digit());
        // Stopwords go on both sides, so "order of operations" meets the
        // tag "order of operations" word for word.
        let stems = read.stems_where(|w| !is_stopword(w));
        let candidates = self.unit_terms.candidates(&stems);
        let mut candidates = candidates.iter().peekable();
        let mut ranked: Vec<UnitMatch> = Vec::new();
        for (u, unit) in self.units.iter().enumerate() {
            let mut score = 0.0;
            let mut because = Vec::new();
            let mut specific = false;
            for shape in shapes.iter().filter(|s| unit.shapes.contains(s)) {
                score += SHAPE_WEIGHT / self.shape_units.get(shape).copied().unwrap_or(1) as f64;
                because.push(format!("shape {}", shape_name(*shape)));
                specific = true;
            }
            while let Some(&(_, t)) = candidates.next_if(|(of, _)| *of == u) {
                let term = &unit.terms[t];
                if term.everyday && !has_numbers {
                    continue;
                }
                let share = if contains_run(&stems, &term.stems) {
                    1.0
                } else if contains_near(&stems, &term.stems) {
                    NEAR_SHARE
                } else {
                    continue;
                };
                score += term.weight * share;
                because.push(format!("words \"{}\"", term.stems.join(" ")));
                specific |= !term.everyday;
            }
            if specific && score > 0.0 {
                ranked.push(UnitMatch {
                    unit_id: unit.unit_id.clone(),
                    score: (score * 1000.0).round() / 1000.0,
                    because,
                });
            }
        }
        ranked.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.unit_id.cmp(&b.unit_id))
        });
        ranked
    }

    /// The units the message is about with a confidence in \[0, 1\], best
    /// first, at most `limit`.
    ///
    /// The best unit alone maps with `CLEAR_MATCH` (0.9), less the more
    /// closely a runner-up follows it (tied: half, below the policy's
    /// target threshold, so the tutor asks which is meant). When every
    /// close contender builds on one of them, that one is the clear match:
    /// the student starts at the beginning of the topic. Other units get
    /// confidence in proportion to their score.
    pub fn map(&self, message: &str, limit: usize) -> Vec<MappedUnit> {
        self.map_ranked(self.rank(message), limit)
    }

    /// [`Self::map`] from the message's [`Self::rank`], for a caller that
    /// has it already.
    pub fn map_ranked(&self, ranked: Vec<UnitMatch>, limit: usize) -> Vec<MappedUnit> {
        let mut ranked = ranked;
        let Some(best) = ranked.first().map(|m| m.score) else {
            return Vec::new();
        };
        let close: Vec<usize> = (0..ranked.len())
            .filter(|&i| ranked[i].score >= best * CLOSE_SHARE)
            .collect();
        let foundation = close.iter().copied().find(|&i| {
            close.iter().all(|&j| {
                j == i
                    || self
                        .profile(&ranked[j].unit_id)
                        .is_some_and(|p| p.below.contains(&ranked[i].unit_id))
            })
        });
        if let Some(i) = foundation.filter(|_| close.len() > 1) {
            let first = ranked.remove(i);
            ranked.insert(0, first);
        }
        let lead = ranked[0].score;
        let runner_up = ranked.get(1).map_or(0.0, |r| r.score / lead).min(1.0);
        let top_confidence = if foundation.is_some() && close.len() > 1 {
            CLEAR_MATCH
        } else {
            CLEAR_MATCH * (1.0 - runner_up / 2.0)
        };
        ranked
            .iter()
            .take(limit)
            .enumerate()
            .map(|(i, m)| MappedUnit {
                unit_id: m.unit_id.clone(),
                confidence: {
                    let c = if i == 0 {
                        top_confidence
                    } else {
                        (CLEAR_MATCH * m.score / lead / 2.0).min(top_confidence)
                    };
                    (c * 1000.0).round() / 1000.0
                },
            })
            .collect()
    }

    /// Whether the message is chatter about something else: no maths in
    /// it (no problem, number or word of arithmetic), no unit of the course
    /// or outside topic named, and some word beyond greetings, thanks and
    /// stopwords ("did u watch the football", "lol").
    pub fn is_unrelated(&self, message: &str) -> bool {
        let read = self.read(message);
        self.is_unrelated_read(&read, &self.rank_read(&read))
    }

    /// [`Self::is_unrelated`] of a message already read and ranked.
    pub fn is_unrelated_read(&self, read: &ReadMessage<'_>, ranked: &[UnitMatch]) -> bool {
        ranked.is_empty()
            && !read.text.chars().any(|c| c.is_ascii_digit())
            && !read.words().any(|w| ARITHMETIC.contains(&w))
            && student_math::math_runs(read.text).is_empty()
            && self.outside_named(read).is_empty()
            && read
                .words()
                .any(|w| !is_stopword(w) && !SMALL_TALK.contains(&w) && !is_filler(w))
    }

    /// Whether the message is nothing but the name of a topic of the course
    /// ("fractions", "ratios please", "what about decimals?"): said while a
    /// problem is pending, it asks for that topic rather than answering.
    /// A word that asks about the topic ("why", "explain"), an operation
    /// ("add?": how to go on) or a number makes it something else.
    pub fn names_only_a_topic(&self, message: &str) -> bool {
        self.names_only_a_topic_read(&self.read(message))
    }

    /// [`Self::names_only_a_topic`] of a message already read.
    pub fn names_only_a_topic_read(&self, read: &ReadMessage<'_>) -> bool {
        let words = read.words().count();
        if read.text.chars().any(|c| c.is_ascii_digit())
            || words == 0
            || words > TOPIC_REQUEST_WORDS
            || read
                .words()
                // "negative numbers" names a topic; "add" or "sum" asks a sum.
                .any(|w| {
                    ASKS_ABOUT.contains(&w)
                        || (ARITHMETIC.contains(&w) && !matches!(w, "number" | "numbers"))
                })
        {
            return false;
        }
        // "whats bodmas" asks what the topic is, not to switch to it
        // ("what about ratios" does ask for it).
        let mut opening = read.words();
        if matches!(
            opening.next(),
            Some("what" | "what's" | "whats" | "wats" | "wot")
        ) && !matches!(opening.next(), Some("about" | "if"))
        {
            return false;
        }
        let named =
            read.stems_where(|w| !is_stopword(w) && !SMALL_TALK.contains(&w) && !is_filler(w));
        !named.is_empty()
            && self
                .units
                .iter()
                .flat_map(|u| &u.terms)
                .any(|t| !t.everyday && t.stems.iter().eq(&named))
    }

    /// Whether the message is nothing but a greeting: a greeting word, and
    /// no word beyond greetings and fillers.
    pub fn is_greeting(message: &str) -> bool {
        let read = words(message);
        !message.chars().any(|c| c.is_ascii_digit())
            && read.iter().any(|w| GREETINGS.contains(&w.as_str()))
            && read.iter().all(|w| {
                GREETINGS.contains(&w.as_str())
                    || GREETING_WORDS.contains(&w.as_str())
                    || is_filler(w)
            })
    }

    /// Whether the message is nothing but an acknowledgement or a short
    /// yes or no: it asks for nothing.
    pub fn is_acknowledgement(message: &str) -> bool {
        let read = words(message);
        !message.chars().any(|c| c.is_ascii_digit())
            && read.iter().any(|w| !is_filler(w))
            && read
                .iter()
                .all(|w| ACKNOWLEDGEMENTS.contains(&w.as_str()) || is_filler(w))
    }

    /// Adds maths topics the course does not teach, each named by phrases
    /// (`asks`). They are read like units' tags, but every word of a
    /// phrase counts ("the mean of" is not "what does it mean"), and
    /// between topics a longer phrase names its topic more specifically.
    pub fn add_outside_topics<'a>(&mut self, topics: impl IntoIterator<Item = &'a [String]>) {
        for asks in topics {
            let mut terms: Vec<Term> = Vec::new();
            for ask in asks {
                let read = words_and_numbers(ask);
                if read.is_empty() {
                    continue;
                }
                self.vocabulary.extend(
                    read.iter()
                        .filter(|w| !is_stopword(w) && *w != NUMBER_WORD)
                        .cloned(),
                );
                let stems: Vec<String> = read
                    .iter()
                    .map(|w| {
                        if w == NUMBER_WORD {
                            w.clone()
                        } else {
                            stem(&self.stemmer, w)
                        }
                    })
                    .collect();
                let weight = if stems.len() > 1 {
                    PHRASE_WEIGHT
                } else {
                    TAG_WEIGHT
                };
                let numbers = numbers_in(ask);
                if !terms
                    .iter()
                    .any(|t| t.stems == stems && t.numbers == numbers)
                {
                    terms.push(Term {
                        stems,
                        weight,
                        everyday: false,
                        numbers,
                    });
                }
            }
            self.outside.push(terms);
        }
        self.outside_terms = TermIndex::new(self.outside.iter().map(Vec::as_slice));
        self.vocabulary_stems = self
            .vocabulary
            .iter()
            .map(|w| stem(&self.stemmer, w))
            .collect();
    }

    /// The outside topic (its index among those added) `message` is
    /// about: the one it names most specifically, when it names it more
    /// strongly than any unit of the course ("round 3.46 to one decimal
    /// place" is about rounding, not decimals; "simplify with common
    /// factors" stays with the course).
    pub fn outside_topic(&self, message: &str) -> Option<usize> {
        self.outside_topics(message).first().copied()
    }

    /// [`Self::outside_topic`], and a second outside topic when the message
    /// sets two side by side ("the difference between area and perimeter"):
    /// the question is about both.
    pub fn outside_topics(&self, message: &str) -> Vec<usize> {
        let read = self.read(message);
        self.outside_topics_read(&read, &self.rank_read(&read))
    }

    /// [`Self::outside_topics`] of a message already read and ranked.
    pub fn outside_topics_read(&self, read: &ReadMessage<'_>, ranked: &[UnitMatch]) -> Vec<usize> {
        let named = self.outside_named(read);
        let Some(&(topic, _, score)) = named.first() else {
            return Vec::new();
        };
        let course = ranked.first().map_or(0.0, |m| m.score);
        if score <= course {
            return Vec::new();
        }
        let lower = read.text.to_lowercase();
        let sets_side_by_side = [" and ", " vs ", " versus ", "between", "compare"]
            .iter()
            .any(|w| lower.contains(w));
        let second = named
            .iter()
            .skip(1)
            .find(|(other, _, _)| *other != topic)
            .filter(|_| sets_side_by_side)
            .map(|(other, _, _)| *other);
        std::iter::once(topic).chain(second).collect()
    }

    /// Every outside topic the message names, the most specifically named
    /// first (the topic of the longest phrase, the first among equals),
    /// with its phrase's length and weight. A topic named only inside a
    /// longer phrase of another ("area" in "area of a circle") is left out.
    /// A number stays in place as a word of its own, so "the 7 mean" is
    /// not "the mean".
    fn outside_named(&self, read: &ReadMessage<'_>) -> Vec<(usize, usize, f64)> {
        let stems: Vec<&str> = read.stems.iter().map(String::as_str).collect();
        let written = numbers_in(read.text);
        let candidates = self.outside_terms.candidates(&stems);
        let mut named: Vec<(usize, &Term)> = candidates
            .chunk_by(|a, b| a.0 == b.0)
            .filter_map(|group| {
                let topic = group[0].0;
                group
                    .iter()
                    .map(|&(_, t)| &self.outside[topic][t])
                    .filter(|t| {
                        contains_run(&stems, &t.stems)
                            && t.numbers.iter().all(|n| written.contains(n))
                    })
                    .max_by_key(|t| t.stems.len())
                    .map(|t| (topic, t))
            })
            .collect();
        // Stable: the first topic stays first among phrases as long.
        named.sort_by_key(|(_, t)| std::cmp::Reverse(t.stems.len()));
        let mut kept: Vec<(usize, &Term)> = Vec::new();
        for (i, term) in named {
            if !kept
                .iter()
                .any(|(_, k)| contains_run(&k.stems, &term.stems))
            {
                kept.push((i, term));
            }
        }
        kept.into_iter()
            .map(|(i, t)| (i, t.stems.len(), t.weight))
            .collect()
    }

    fn profile(&self, unit_id: &str) -> Option<&UnitProfile> {
        self.units.iter().find(|u| u.unit_id == unit_id)
    }

    /// `word`, or the course word it is a misspelling of.
    fn corrected(&self, word: String) -> String {
        if word.chars().count() < 5 || self.vocabulary.contains(&word) || is_stopword(&word) {
            return word;
        }
        let heard = sounded_out(&word);
        if self.vocabulary.contains(&heard) {
            return heard;
        }
        if self.vocabulary_stems.contains(&stem(&self.stemmer, &word)) {
            return word;
        }
        let length = heard.chars().count();
        let allowed = if length >= 8 { 2 } else { 1 };
        let Some(first) = heard.chars().next() else {
            return word;
        };
        let mut best: Option<(usize, &String)> = None;
        let mut tied = false;
        // Only words with the same first letter, which sort together; an
        // edit distance is at least the difference in length.
        let mut initial = [0u8; 4];
        let initial: &str = first.encode_utf8(&mut initial);
        let same_initial = self
            .vocabulary
            .range::<str, _>((
                std::ops::Bound::Included(initial),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|known| known.starts_with(first));
        for known in same_initial {
            let known_length = known.chars().count();
            if known_length < 4 || known_length.abs_diff(length) > allowed {
                continue;
            }
            let distance = strsim::damerau_levenshtein(&heard, known);
            if distance > allowed {
                continue;
            }
            match best {
                Some((d, _)) if distance > d => {}
                Some((d, _)) if distance == d => tied = true,
                _ => {
                    best = Some((distance, known));
                    tied = false;
                }
            }
        }
        match best {
            Some((_, known)) if !tied => known.clone(),
            _ => word,
        }
    }
}

/// Lower-case words of `text` (letters and apostrophes), curly quotes straightened.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace(['’', '‘', '`'], "'")
        .split(|c: char| !(c.is_alphabetic() || c == '\''))
        .map(|w| w.trim_matches('\'').to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The whole numbers written in `text`, in order.
fn numbers_in(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What a number reads as among [`words_and_numbers`].
const NUMBER_WORD: &str = "#";

/// The words of `text` as [`words`] reads them, each number in its place
/// as [`NUMBER_WORD`].
fn words_and_numbers(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                spaced.push_str(" 0 ");
            }
            in_number = true;
        } else {
            in_number = false;
            spaced.push(c);
        }
    }
    spaced
        .split(' ')
        .flat_map(|part| {
            if part == "0" {
                vec![NUMBER_WORD.to_owned()]
            } else {
                words(part)
            }
        })
        .collect()
}

/// The word's stem; "adding" and "add" share one (the stemmer would undouble it).
fn stem(stemmer: &Stemmer, word: &str) -> String {
    let s = stemmer.stem(word).into_owned();
    if s == "ad" { "add".to_owned() } else { s }
}

/// Sound-alike spellings students use, written the usual way.
fn sounded_out(word: &str) -> String {
    word.replace("shun", "tion")
        .replace("ph", "f")
        .replace("kw", "qu")
}

fn contains_run(haystack: &[impl AsRef<str>], needle: &[String]) -> bool {
    !needle.is_empty()
        && haystack.windows(needle.len()).any(|w| {
            w.iter()
                .map(AsRef::as_ref)
                .eq(needle.iter().map(String::as_str))
        })
}

/// Whether the words of a phrase of several words come in order with at
/// most `NEAR_GAP` other words among them ("add the tops and bottoms of
/// fractions" holds "add fractions").
fn contains_near(haystack: &[&str], needle: &[String]) -> bool {
    if needle.len() < 2 {
        return false;
    }
    let span = needle.len() + NEAR_GAP;
    (0..haystack.len()).any(|start| {
        let window = &haystack[start..haystack.len().min(start + span)];
        let mut at = 0;
        for word in window {
            if at < needle.len() && *word == needle[at] {
                at += 1;
            }
        }
        at == needle.len() && haystack[start] == needle[0]
    })
}

fn shape_name(shape: ProblemShape) -> String {
    serde_json::to_value(shape)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The unit a card's button names, if it names one ("Try a drill" on a
/// unit's card).
pub(crate) fn event_unit(event: &ClientEvent) -> Option<&str> {
    match event {
        ClientEvent::None
        | ClientEvent::ExamAnswer { .. }
        | ClientEvent::ExamSkip { .. }
        | ClientEvent::ExamEnd
        | ClientEvent::SurveyAnswer { .. }
        | ClientEvent::SurveySkip { .. } => None,
        ClientEvent::RequestDrill { unit_id }
        | ClientEvent::DrillContinue { unit_id, .. }
        | ClientEvent::ExamContinue { unit_id, .. }
        | ClientEvent::IAmStuck { unit_id } => unit_id.as_deref(),
    }
}
