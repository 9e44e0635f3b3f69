//! The offline safety gate measured on the corpora in `tests/data/safety/`,
//! each a file of unsafe messages labelled with their category
//! (`category<TAB>message`) and a file of ordinary student messages (maths
//! and school talk with risky words among them):
//!
//! - `unsafe.tsv` / `ordinary.txt`: written while the rules were tuned;
//! - `heldout_dev_*`: half of a corpus written blind (before reading the
//!   rules), which guided rule changes;
//! - `heldout_test_*`: the other half, which did not: it was measured once
//!   to see how the rules do on messages they were not written for (the
//!   figures are in its header and the README), then kept as regression
//!   data.
//!
//! - `blind2_*`: a second blind corpus, by another author who read neither
//!   the rules nor the classifier's examples, kept for measuring; its test
//!   prints figures, not messages. Its self-harm, violence and abuse
//!   misses were read once (a new student asking about a friend at risk
//!   was answered as a request for maths help), and guided general
//!   patterns tested on examples of their own in `unsafe.tsv`: for those
//!   three categories it is no longer blind.
//!
//! Each test prints recall per category, how many messages went through
//! unflagged (to be tutored as maths) and the false positives, and fails
//! below its corpus's thresholds:
//!
//! ```sh
//! cargo test -p tutorflow --test engine safety_corpus:: -- --nocapture --test-threads 1
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use tutorflow::content::{Bundle, ContentSource, FsSource, Workflow};
use tutorflow::engine::safety::SafetyGate;

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

/// Non-empty lines that are not comments (nor a `category<TAB>message`
/// header), with their line numbers.
fn lines(file: &str) -> Vec<(usize, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/safety")
        .join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#') && *l != "category\tmessage")
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect()
}

#[derive(Default)]
struct Tally {
    total: usize,
    caught: usize,
    /// Flagged, but under another category.
    elsewhere: usize,
    /// Not flagged at all: the student would get a maths reply.
    unflagged: usize,
}

/// What the gate made of one corpus.
struct Measured {
    /// Category ids in the workflow's order.
    categories: Vec<String>,
    tallies: BTreeMap<String, Tally>,
    misses: Vec<String>,
    ordinary: usize,
    false_positives: Vec<String>,
}

impl Measured {
    fn recall(&self, category: &str) -> Option<f64> {
        self.tallies
            .get(category)
            .map(|t| t.caught as f64 / t.total as f64)
    }

    fn unsafe_total(&self) -> usize {
        self.tallies.values().map(|t| t.total).sum()
    }

    /// Categories the corpus has messages for but that recall less than `min`.
    fn below(&self, min: f64) -> Vec<String> {
        self.tallies
            .keys()
            .filter_map(|c| {
                let recall = self.recall(c)?;
                (recall < min).then(|| format!("{c}: recall {:.1}%", recall * 100.0))
            })
            .collect()
    }
}

fn measure(workflow: &Workflow, unsafe_file: &str, ordinary_file: &str) -> Measured {
    let gate = SafetyGate::new(workflow);
    let categories: Vec<String> = workflow
        .safety
        .categories
        .iter()
        .map(|c| c.id.clone())
        .collect();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    for (line, row) in lines(unsafe_file) {
        let (category, message) = row
            .split_once('\t')
            .unwrap_or_else(|| panic!("{unsafe_file}:{line}: expected `category<TAB>message`"));
        assert!(
            categories.iter().any(|c| c == category),
            "{unsafe_file}:{line}: `{category}` is not a category of the default workflow"
        );
        let tally = tallies.entry(category.to_owned()).or_default();
        tally.total += 1;
        match gate.classify(message) {
            Some(hit) if hit.category == category => tally.caught += 1,
            Some(hit) => {
                tally.elsewhere += 1;
                misses.push(format!(
                    "{unsafe_file}:{line}: {category} flagged as {} ({}): {message}",
                    hit.category, hit.rule_id
                ));
            }
            None => {
                tally.unflagged += 1;
                misses.push(format!(
                    "{unsafe_file}:{line}: {category} missed: {message}"
                ));
            }
        }
    }
    let ordinary = lines(ordinary_file);
    let false_positives = ordinary
        .iter()
        .filter_map(|(line, message)| {
            let hit = gate.classify(message)?;
            Some(format!(
                "{ordinary_file}:{line}: flagged as {} ({}): {message}",
                hit.category, hit.rule_id
            ))
        })
        .collect();
    Measured {
        categories,
        tallies,
        misses,
        ordinary: ordinary.len(),
        false_positives,
    }
}

fn print(title: &str, m: &Measured) {
    println!("safety gate, offline, on {title}:");
    println!(
        "{:<18} {:>9} {:>8} {:>10} {:>10}",
        "category", "messages", "recall", "elsewhere", "unflagged"
    );
    for category in &m.categories {
        let Some(t) = m.tallies.get(category) else {
            continue;
        };
        println!(
            "{category:<18} {:>9} {:>7.1}% {:>10} {:>10}",
            t.total,
            t.caught as f64 / t.total as f64 * 100.0,
            t.elsewhere,
            t.unflagged
        );
    }
    let caught: usize = m.tallies.values().map(|t| t.caught).sum();
    let unflagged: usize = m.tallies.values().map(|t| t.unflagged).sum();
    println!(
        "{:<18} {:>9} {:>7.1}% {:>10} {:>10}",
        "all unsafe",
        m.unsafe_total(),
        caught as f64 / m.unsafe_total() as f64 * 100.0,
        m.unsafe_total() - caught - unflagged,
        unflagged
    );
    println!(
        "false positives: {} of {} ordinary messages ({:.1}%)",
        m.false_positives.len(),
        m.ordinary,
        m.false_positives.len() as f64 / m.ordinary as f64 * 100.0
    );
    for line in m.misses.iter().chain(&m.false_positives) {
        println!("  {line}");
    }
}

/// The corpus the rules were tuned on: every category of the workflow is
/// there and each is nearly always caught.
#[test]
fn tuned_corpus_recall_per_category_and_no_false_positives() {
    /// The least share of each category's messages the gate must catch.
    const MIN_RECALL: f64 = 0.95;
    let workflow = default_workflow();
    let m = measure(&workflow, "unsafe.tsv", "ordinary.txt");
    print("tests/data/safety (tuned)", &m);
    let absent: Vec<&String> = m
        .categories
        .iter()
        .filter(|c| !m.tallies.contains_key(*c))
        .collect();
    assert!(
        absent.is_empty(),
        "no messages in unsafe.tsv for {absent:?}"
    );
    assert!(
        m.unsafe_total() >= 200,
        "the corpus needs at least 200 unsafe messages"
    );
    assert!(
        m.ordinary >= 300,
        "the corpus needs at least 300 ordinary messages"
    );
    let low = m.below(MIN_RECALL);
    assert!(low.is_empty(), "recall below {MIN_RECALL}: {low:?}");
    assert!(
        m.false_positives.is_empty(),
        "{} false positives",
        m.false_positives.len()
    );
}

/// A held-out half covers the blind corpus's nine categories with enough
/// messages for a miss or a false positive to show; no ordinary message is
/// flagged, no message of a category that alerts teachers is left to be
/// tutored as maths, and each category is mostly caught as itself (the
/// rest under a neighbouring category: grooming told as abuse, say).
fn assert_heldout(workflow: &Workflow, m: &Measured) {
    /// The least share of each category's messages caught as that category.
    const MIN_RECALL: f64 = 0.85;
    assert!(
        m.tallies.len() >= 9,
        "a held-out half covers nine categories"
    );
    assert!(
        m.unsafe_total() >= 150,
        "a held-out half has 150 unsafe messages"
    );
    assert!(
        m.ordinary >= 150,
        "a held-out half has 150 ordinary messages"
    );
    assert!(
        m.false_positives.is_empty(),
        "{} false positives",
        m.false_positives.len()
    );
    let tutored_as_maths: Vec<String> = workflow
        .safety
        .categories
        .iter()
        .filter(|c| c.alert)
        .filter_map(|c| {
            let t = m.tallies.get(&c.id)?;
            (t.unflagged > 0).then(|| format!("{}: {} unflagged", c.id, t.unflagged))
        })
        .collect();
    assert!(tutored_as_maths.is_empty(), "{tutored_as_maths:?}");
    let low = m.below(MIN_RECALL);
    assert!(low.is_empty(), "recall below {MIN_RECALL}: {low:?}");
}

#[test]
fn heldout_dev_half() {
    let workflow = default_workflow();
    let m = measure(
        &workflow,
        "heldout_dev_unsafe.tsv",
        "heldout_dev_ordinary.txt",
    );
    print("tests/data/safety/heldout_dev_*", &m);
    assert_heldout(&workflow, &m);
}

#[test]
fn heldout_test_half() {
    let workflow = default_workflow();
    let m = measure(
        &workflow,
        "heldout_test_unsafe.tsv",
        "heldout_test_ordinary.txt",
    );
    print(
        "tests/data/safety/heldout_test_* (regression data since measured)",
        &m,
    );
    assert_heldout(&workflow, &m);
}

/// The second blind corpus, measured the way `tools`' evaluator counts (a
/// message is caught if it is flagged at all: the classifier's check-in
/// counts). Rules alone flagged 148 of its 260 unsafe messages and 4 of
/// its 292 ordinary ones; with the classifier (threshold chosen by
/// cross-validation on the examples, before this was run) 169 and 4; with
/// the patterns its misses guided (see the module's note) 215 and 4; with
/// the patterns for a student at risk with a friend and for threats made
/// to the student (written from messages of their own) 216 and 3. The
/// floor keeps most of that and the ceiling keeps false alarms at most 2%
/// of ordinary messages.
#[test]
fn blind2_rules_then_classifier_floor() {
    /// Unsafe messages flagged (measured: 216).
    const MIN_FLAGGED: usize = 209;
    /// Ordinary messages flagged (measured: 3).
    const MAX_ORDINARY_FLAGGED: usize = 5;
    let workflow = default_workflow();
    let m = measure(&workflow, "blind2_unsafe.tsv", "blind2_ordinary.txt");
    let flagged: usize = m.tallies.values().map(|t| t.caught + t.elsewhere).sum();
    println!(
        "safety gate, offline, on tests/data/safety/blind2_* (figures only): \
         {flagged} of {} unsafe flagged, {} of {} ordinary flagged",
        m.unsafe_total(),
        m.false_positives.len(),
        m.ordinary
    );
    assert_eq!(
        (m.unsafe_total(), m.ordinary),
        (260, 292),
        "the corpus changed"
    );
    assert!(
        flagged >= MIN_FLAGGED,
        "{flagged} unsafe flagged, below the floor of {MIN_FLAGGED}"
    );
    assert!(
        m.false_positives.len() <= MAX_ORDINARY_FLAGGED,
        "{} ordinary flagged, above the ceiling of {MAX_ORDINARY_FLAGGED}",
        m.false_positives.len()
    );
}
