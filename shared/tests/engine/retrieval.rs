//! Lexical mapping and chunk ranking over the shipped course read messages
//! the way a teacher would.

use std::path::PathBuf;

use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::interpret::retrieve::CourseIndex;

fn bundle() -> Bundle {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(FsSource::new(root).fetch())
        .unwrap();
    Bundle::load(&files).unwrap()
}

fn top(index: &CourseIndex, message: &str) -> Option<(String, f64)> {
    index
        .map_message(message, 3)
        .first()
        .map(|m| (m.unit_id.clone(), m.confidence))
}

#[test]
fn clear_messages_map_to_their_unit_above_the_target_threshold() {
    let bundle = bundle();
    let index = CourseIndex::build(bundle.course("prealgebra").unwrap());
    for (message, unit) in [
        (
            "how do I add fractions with different denominators?",
            "fraction-addition",
        ),
        ("what is 15% of 80", "percentages"),
        ("I need help with two-step equations", "two-step-equations"),
        (
            "can you explain the order of operations",
            "order-of-operations",
        ),
        ("share 60 sweets in the ratio 2:3", "ratios"),
        (
            "I don't get negative numbers on the number line",
            "integers",
        ),
    ] {
        let (found, confidence) =
            top(&index, message).unwrap_or_else(|| panic!("{message}: nothing"));
        assert_eq!(found, unit, "{message}");
        assert!(confidence >= 0.55, "{message}: {confidence}");
    }
}

#[test]
fn small_talk_maps_to_nothing_and_confidences_stay_in_range() {
    let bundle = bundle();
    let index = CourseIndex::build(bundle.course("prealgebra").unwrap());
    assert!(index.map_message("hi there!", 3).is_empty());
    assert!(index.map_message("", 3).is_empty());
    let mapped = index.map_message("fractions decimals percentages ratios", 5);
    assert!(mapped.len() >= 3);
    for m in &mapped {
        assert!((0.0..=1.0).contains(&m.confidence), "{m:?}");
    }
    // Naming several units' titles is not naming one of them.
    assert!(mapped[0].confidence < 0.9, "{mapped:?}");
}

#[test]
fn chunks_come_only_from_scoped_units_and_never_run_dry() {
    let bundle = bundle();
    let course = bundle.course("prealgebra").unwrap();
    let index = CourseIndex::build(course);
    let scope = vec!["fraction-addition".to_owned(), "fractions".to_owned()];
    let ranked = index.chunks_for("common denominator lowest common multiple", &scope, 4);
    assert!(!ranked.is_empty() && ranked.len() <= 4);
    assert!(ranked.iter().all(|c| scope.contains(&c.unit_id)));
    assert_eq!(ranked[0].unit_id, "fraction-addition");
    let fallback = index.chunks_for("zzz qqq", &scope, 3);
    assert_eq!(fallback.len(), 3, "material even when nothing matches");
    for c in fallback {
        assert!(course.unit(&c.unit_id).unwrap().chunks.len() > c.chunk);
    }
}
