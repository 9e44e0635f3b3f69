//! The offline safety gate measured on the corpus in `tests/data/safety/`:
//! unsafe messages labelled with their category (many phrasings, evasions
//! and misspellings) and ordinary student messages (including maths and
//! school talk with risky words). Prints recall per category and the
//! false-positive rate, and fails below 95 % recall in any category or on
//! any false positive:
//!
//! ```sh
//! cargo test -p tutorflow --test engine safety_corpus:: -- --nocapture
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use tutorflow::content::{Bundle, ContentSource, FsSource, Workflow};
use tutorflow::engine::safety::SafetyGate;

/// The least share of each category's messages the gate must catch.
const MIN_RECALL: f64 = 0.95;

fn default_workflow() -> Workflow {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let files = runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle");
    let bundle = Bundle::load(&files).unwrap_or_else(|d| panic!("{d}"));
    bundle.workflows["default"].clone()
}

/// Non-empty lines that are not comments, with their line numbers.
fn lines(file: &str) -> Vec<(usize, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/safety")
        .join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect()
}

#[derive(Default)]
struct Tally {
    total: usize,
    caught: usize,
    /// Flagged, but under another category.
    elsewhere: usize,
}

#[test]
fn recall_per_category_and_no_false_positives() {
    let workflow = default_workflow();
    let gate = SafetyGate::new(&workflow);
    let categories: Vec<&str> = workflow
        .safety
        .categories
        .iter()
        .map(|c| c.id.as_str())
        .collect();

    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    for (line, row) in lines("unsafe.tsv") {
        let (category, message) = row
            .split_once('\t')
            .unwrap_or_else(|| panic!("unsafe.tsv:{line}: expected `category<TAB>message`"));
        assert!(
            categories.contains(&category),
            "unsafe.tsv:{line}: `{category}` is not a category of the default workflow"
        );
        let tally = tallies.entry(category.to_owned()).or_default();
        tally.total += 1;
        match gate.classify(message) {
            Some(hit) if hit.category == category => tally.caught += 1,
            Some(hit) => {
                tally.elsewhere += 1;
                misses.push(format!(
                    "unsafe.tsv:{line}: {category} flagged as {} ({}): {message}",
                    hit.category, hit.rule_id
                ));
            }
            None => misses.push(format!("unsafe.tsv:{line}: {category} missed: {message}")),
        }
    }
    let ordinary = lines("ordinary.txt");
    let mut false_positives = Vec::new();
    for (line, message) in &ordinary {
        if let Some(hit) = gate.classify(message) {
            false_positives.push(format!(
                "ordinary.txt:{line}: flagged as {} ({}): {message}",
                hit.category, hit.rule_id
            ));
        }
    }

    println!("safety gate, offline, on tests/data/safety:");
    println!(
        "{:<18} {:>9} {:>8} {:>10}",
        "category", "messages", "recall", "elsewhere"
    );
    let mut low = Vec::new();
    for category in &categories {
        let Some(t) = tallies.get(*category) else {
            low.push(format!("{category}: no messages in unsafe.tsv"));
            continue;
        };
        let recall = t.caught as f64 / t.total as f64;
        println!(
            "{category:<18} {:>9} {:>7.1}% {:>10}",
            t.total,
            recall * 100.0,
            t.elsewhere
        );
        if recall < MIN_RECALL {
            low.push(format!("{category}: recall {:.1}%", recall * 100.0));
        }
    }
    let unsafe_total: usize = tallies.values().map(|t| t.total).sum();
    let caught: usize = tallies.values().map(|t| t.caught).sum();
    println!(
        "{:<18} {:>9} {:>7.1}%",
        "all unsafe",
        unsafe_total,
        caught as f64 / unsafe_total as f64 * 100.0
    );
    println!(
        "false positives: {} of {} ordinary messages ({:.1}%)",
        false_positives.len(),
        ordinary.len(),
        false_positives.len() as f64 / ordinary.len() as f64 * 100.0
    );
    for m in misses.iter().chain(&false_positives) {
        println!("  {m}");
    }
    assert!(
        unsafe_total >= 200,
        "the corpus needs at least 200 unsafe messages"
    );
    assert!(
        ordinary.len() >= 300,
        "the corpus needs at least 300 ordinary messages"
    );
    assert!(low.is_empty(), "recall below {MIN_RECALL}: {low:?}");
    assert!(
        false_positives.is_empty(),
        "{} false positives",
        false_positives.len()
    );
}
