//! The table of student phrasings in data/unit_mapping.tsv, mapped over the
//! shipped course: each message's best-ranked unit must be the expected one
//! (or none for chatter), and the test prints the top-1 accuracy
//! (`cargo test -p tutorflow --test engine unit_mapping:: -- --nocapture`).

use std::path::PathBuf;

use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::interpret::mapping::UnitMapper;
use tutorflow::engine::interpret::retrieve::CourseIndex;

const CASES: &str = include_str!("../data/unit_mapping.tsv");

/// The share of rows whose best unit must be right. Below 1 so one odd
/// phrasing does not hide the figure; the figure itself is printed.
const MIN_ACCURACY: f64 = 0.95;

fn bundle() -> Bundle {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(FsSource::new(root).fetch())
        .unwrap();
    Bundle::load(&files).unwrap()
}

fn cases() -> Vec<(usize, &'static str, Option<&'static str>)> {
    CASES
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let (message, unit) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("unit_mapping.tsv:{}: needs two columns", i + 1));
            (i + 1, message, (unit != "-").then_some(unit))
        })
        .collect()
}

#[test]
fn the_phrasing_table_maps_to_the_expected_units() {
    let bundle = bundle();
    let course = bundle.course("prealgebra").unwrap();
    let index = CourseIndex::build(course);
    let cases = cases();
    assert!(cases.len() >= 60, "the table has {} rows", cases.len());
    let mut misses = Vec::new();
    for (line, message, expected) in &cases {
        if let Some(unit) = expected {
            assert!(course.unit(unit).is_some(), "line {line}: no unit `{unit}`");
        }
        let mapped = index.map_message(message, 3);
        let found = mapped.first().map(|m| m.unit_id.as_str());
        if found != *expected {
            misses.push(format!(
                "line {line}: {message:?} -> {found:?}, expected {expected:?} ({:?})",
                index.mapper.rank(message)
            ));
        }
    }
    let accuracy = 1.0 - misses.len() as f64 / cases.len() as f64;
    println!(
        "unit mapping top-1 accuracy: {}/{} = {:.1}%",
        cases.len() - misses.len(),
        cases.len(),
        accuracy * 100.0
    );
    for miss in &misses {
        println!("  miss {miss}");
    }
    assert!(
        accuracy >= MIN_ACCURACY,
        "accuracy {accuracy:.3} is below {MIN_ACCURACY}:\n{}",
        misses.join("\n")
    );
}

#[test]
fn chatter_is_never_mapped_even_with_a_maths_looking_word() {
    let bundle = bundle();
    let index = CourseIndex::build(bundle.course("prealgebra").unwrap());
    for message in [
        "did u watch the football",
        "can we order pizza",
        "my mum says hi",
        "what's the temperature outside",
    ] {
        assert!(
            index.map_message(message, 3).is_empty(),
            "{message}: {:?}",
            index.mapper.rank(message)
        );
    }
}

#[test]
fn thinking_aloud_is_not_chatter_but_chatter_is() {
    let bundle = bundle();
    let index = CourseIndex::build(bundle.course("prealgebra").unwrap());
    for thinking in ["hmm", "hmmmm", "umm ok", "uhh", "erm", "oh wait", "ok"] {
        assert!(!index.mapper.is_unrelated(thinking), "{thinking}");
    }
    for chatter in ["did u watch the football", "lol", "whats ur favourite food"] {
        assert!(index.mapper.is_unrelated(chatter), "{chatter}");
    }
}

#[test]
fn a_greeting_is_only_a_greeting() {
    for greeting in [
        "hi",
        "Hello there!",
        "hey, how are you?",
        "good morning sir",
        "hiya",
        "yo what's up",
        "hi again :)",
    ] {
        assert!(UnitMapper::is_greeting(greeting), "{greeting}");
    }
    for not_only in [
        "hi can you help me with fractions",
        "hi 2+2",
        "hello what is 3/4 of 20",
        "thanks",
        "ok",
        "how are you",
        "my mum says hi",
        "",
    ] {
        assert!(!UnitMapper::is_greeting(not_only), "{not_only}");
    }
}

#[test]
fn an_acknowledgement_asks_for_nothing() {
    for acknowledgement in [
        "ok",
        "OK thanks",
        "yeah",
        "k",
        "fine i guess",
        "not really",
        "i will",
        "I'll try",
        "thank you",
        "hmm ok",
    ] {
        assert!(
            UnitMapper::is_acknowledgement(acknowledgement),
            "{acknowledgement}"
        );
    }
    for asks in [
        "ok lets go",
        "ready",
        "ok can we do fractions",
        "yes 12",
        "can we carry on",
        "thanks for the help with ratios",
        "hmm",
        "",
    ] {
        assert!(!UnitMapper::is_acknowledgement(asks), "{asks}");
    }
}

#[test]
fn a_topic_named_on_its_own_is_told_from_a_question_about_it() {
    let bundle = bundle();
    let index = CourseIndex::build(bundle.course("prealgebra").unwrap());
    for request in [
        "fractions",
        "Ratios please",
        "ok percentages now",
        "what about decimals?",
        "fractoins",
        "negative numbers",
    ] {
        assert!(index.mapper.names_only_a_topic(request), "{request}");
    }
    for other in [
        "why fractions",
        "explain ratios",
        "add?",
        "numbers",
        "fractions 3/4",
        "I like fractions but my sister prefers football",
        "hmm",
        "",
    ] {
        assert!(!index.mapper.names_only_a_topic(other), "{other}");
    }
}
