//! `tutorflow safety --cross-validate`: how the safety classifier does on
//! its own examples when each is scored by a classifier that did not see
//! it: per category, the precision and recall of its likeliest label; then
//! what its check-in flags, alone and after the rules, at the workflow's
//! threshold and across others (the figures the threshold is chosen from).

use std::collections::BTreeMap;
use std::time::Instant;

use tutorflow::content::Workflow;
use tutorflow::content::workflow::ORDINARY_LABEL;
use tutorflow::engine::safety::classifier::{Classifier, cross_validate};
use tutorflow::engine::safety::{EscalationRule, SafetyGate, normalize};

/// Thresholds tried for the check-in.
const GRID: &[f64] = &[
    0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9999,
];

/// One example scored out of fold.
struct Scored<'a> {
    label: &'a str,
    message: &'a str,
    /// Its likeliest label.
    predicted: &'a str,
    /// The summed probability of the escalating categories.
    score: f64,
    escalating: bool,
    /// Whether the rules flag it.
    by_rules: bool,
}

/// The report, or why there is none.
pub fn report(workflow: &Workflow, folds: usize) -> Result<String, String> {
    let settings = &workflow.safety;
    let classifier = settings
        .classifier
        .as_ref()
        .ok_or("this workflow's safety section has no classifier")?;
    // What loading the content adds: the gate does the same.
    let started = Instant::now();
    let normal: Vec<String> = classifier
        .labelled
        .iter()
        .map(|e| normalize(&e.message))
        .collect();
    let examples: Vec<(&str, &str)> = classifier
        .labelled
        .iter()
        .zip(&normal)
        .map(|(e, n)| (e.label.as_str(), n.as_str()))
        .collect();
    let trained = Classifier::train(examples.iter().copied());
    let training = started.elapsed();
    let (labels, rows) = cross_validate(&examples, folds);
    let decision = EscalationRule::new(&labels, settings)
        .ok_or("the classifier's check-in category is not a safety category")?;
    let gate = SafetyGate::new(workflow);
    let escalates = |label: &str| {
        settings
            .categories
            .iter()
            .any(|c| c.escalates && c.id == label)
    };
    let scored: Vec<Scored> = classifier
        .labelled
        .iter()
        .zip(&rows)
        .map(|(e, p)| {
            let best = (0..p.len())
                .max_by(|&a, &b| p[a].total_cmp(&p[b]))
                .unwrap_or(0);
            Scored {
                label: &e.label,
                message: &e.message,
                predicted: labels.get(best).map_or(ORDINARY_LABEL, String::as_str),
                score: decision.score(p),
                escalating: escalates(&e.label),
                by_rules: gate.classify_by_rules(&e.message).is_some(),
            }
        })
        .collect();
    let mut out = format!(
        "{folds}-fold cross-validation over {} examples from workflows/{}:\n\
         each scored by a classifier trained on the other folds.\n\
         Training on all of them ({} labels) took {:.1} ms in this build.\n\n",
        scored.len(),
        classifier.examples,
        trained.labels().len(),
        training.as_secs_f64() * 1000.0
    );
    out.push_str(&per_category(workflow, &scored));
    out.push_str(&format!(
        "\nThe check-in (escalating categories' summed probability ≥ {}):\n",
        classifier.at
    ));
    out.push_str(&flagged_by_label(workflow, &scored, classifier.at));
    out.push_str(&threshold_grid(&scored));
    Ok(out)
}

/// Precision and recall of the likeliest label, one category against the rest.
fn per_category(workflow: &Workflow, scored: &[Scored]) -> String {
    let mut out = format!(
        "Likeliest label:\n{:<18} {:>8} {:>10} {:>7}\n",
        "label", "examples", "precision", "recall"
    );
    for label in order(workflow) {
        let examples = scored.iter().filter(|s| s.label == label).count();
        if examples == 0 {
            continue;
        }
        let predicted = scored.iter().filter(|s| s.predicted == label).count();
        let right = scored
            .iter()
            .filter(|s| s.label == label && s.predicted == label)
            .count();
        out.push_str(&format!(
            "{label:<18} {examples:>8} {:>10} {:>7}\n",
            share(right, predicted),
            share(right, examples)
        ));
    }
    out
}

/// Per label: how many examples the rules flag, the check-in alone, and
/// either (what a student would meet).
fn flagged_by_label(workflow: &Workflow, scored: &[Scored], at: f64) -> String {
    let mut tallies: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for s in scored {
        let t = tallies.entry(s.label).or_default();
        let by_classifier = s.score >= at;
        t[0] += 1;
        t[1] += usize::from(s.by_rules);
        t[2] += usize::from(by_classifier);
        t[3] += usize::from(s.by_rules || by_classifier);
    }
    let mut out = format!(
        "{:<18} {:>8} {:>7} {:>11} {:>9}\n",
        "label", "examples", "rules", "classifier", "either"
    );
    for label in order(workflow) {
        if let Some([n, rules, classifier, either]) = tallies.get(label) {
            out.push_str(&format!(
                "{label:<18} {n:>8} {rules:>7} {classifier:>11} {either:>9}\n"
            ));
        }
    }
    let flagged = scored.iter().filter(|s| s.score >= at);
    let (right, all) = flagged.fold((0, 0), |(r, a), s| (r + usize::from(s.escalating), a + 1));
    out.push_str(&format!(
        "precision of the check-in: {} of {all} flagged are escalating ({})\n",
        right,
        share(right, all)
    ));
    for s in scored {
        if s.score >= at && !s.escalating && !s.by_rules {
            out.push_str(&format!("  flagged {}: {}\n", s.label, s.message));
        }
    }
    out
}

/// Escalating examples caught, and ordinary ones flagged, at each threshold
/// of [`GRID`]: by the check-in alone, and after the rules (the ones only
/// the classifier flags).
fn threshold_grid(scored: &[Scored]) -> String {
    let escalating = scored.iter().filter(|s| s.escalating).count();
    let missed_by_rules = scored
        .iter()
        .filter(|s| s.escalating && !s.by_rules)
        .count();
    let ordinary = scored.iter().filter(|s| s.label == ORDINARY_LABEL).count();
    let mut out = format!(
        "\nBy threshold ({escalating} escalating examples, {missed_by_rules} of them missed by the \
         rules; {ordinary} ordinary):\n{:>9} {:>17} {:>19} {:>17} {:>19}\n",
        "threshold",
        "escalating alone",
        "added to the rules",
        "ordinary alone",
        "ordinary the rules",
    );
    out.push_str(&format!(
        "{:>9} {:>17} {:>19} {:>17} {:>19}\n",
        "", "", "", "", "let through"
    ));
    for &at in GRID {
        let count = |keep: &dyn Fn(&Scored) -> bool| {
            scored.iter().filter(|s| s.score >= at && keep(s)).count()
        };
        out.push_str(&format!(
            "{at:>9} {:>17} {:>19} {:>17} {:>19}\n",
            count(&|s| s.escalating),
            count(&|s| s.escalating && !s.by_rules),
            count(&|s| s.label == ORDINARY_LABEL),
            count(&|s| s.label == ORDINARY_LABEL && !s.by_rules),
        ));
    }
    out
}

/// The workflow's categories, then `ordinary`.
fn order(workflow: &Workflow) -> impl Iterator<Item = &str> {
    workflow
        .safety
        .categories
        .iter()
        .map(|c| c.id.as_str())
        .chain([ORDINARY_LABEL])
}

fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.0}%", part as f64 / whole as f64 * 100.0)
}
