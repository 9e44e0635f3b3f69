//! The gate's learned layer: a multinomial naive Bayes classifier over
//! normalised messages ([`super::normalize`], which has already undone
//! leetspeak, spacing and common misspellings), trained from the
//! workflow's labelled examples (`safety.classifier.examples`). It reads
//! what the rules did not match, so it has to generalise from phrasings to
//! ideas; its features are the message's words and pairs of neighbouring
//! words.
//!
//! Training is one pass of counting: the same examples in the same order
//! always give the same model. Features are hashed (FNV-1a, not the
//! standard library's seeded hasher) and kept in a sorted table.
//!
//! Naive Bayes treats the overlapping words and pairs of a message as
//! independent evidence, which drives its posteriors to 0 or 1; the
//! log-likelihoods are divided by the square root of the number of known
//! features before the prior is added, which keeps the probabilities
//! graded enough to put a threshold on. The smoothing, this damping and
//! the choice of features (character n-grams were tried and flagged more
//! ordinary messages for each one more caught) were chosen by
//! cross-validation on the shipped examples ([`cross_validate`],
//! `tutorflow safety --cross-validate`).

/// Additive smoothing of feature counts (Lidstone).
const SMOOTHING: f64 = 0.1;
/// Log-likelihoods are divided by the number of known features to this power.
const DAMPING: f64 = 0.5;

/// Which kind of feature a hash is of, so a word and a pair of words stay
/// different features whatever their letters.
#[derive(Clone, Copy)]
enum Kind {
    Word = 1,
    Bigram = 2,
}

/// A trained classifier: each label's prior and each known feature's
/// log-probability under every label.
#[derive(Debug, Clone, PartialEq)]
pub struct Classifier {
    labels: Vec<String>,
    log_prior: Vec<f64>,
    /// Feature hashes, sorted; row `i` of `log_likelihood` is feature `i`'s.
    features: Vec<u64>,
    /// `features.len() × labels.len()`, row by row.
    log_likelihood: Vec<f32>,
}

impl Classifier {
    /// A classifier trained on `examples`, each a label and a normalised
    /// message ([`super::normalize`]). Labels are numbered in order of
    /// first appearance.
    pub fn train<'a>(examples: impl IntoIterator<Item = (&'a str, &'a str)>) -> Classifier {
        let mut labels: Vec<String> = Vec::new();
        let mut documents = Vec::new();
        // (feature, label), one per feature present in an example.
        let mut occurrences: Vec<(u64, u32)> = Vec::new();
        for (label, text) in examples {
            let index = match labels.iter().position(|l| l == label) {
                Some(i) => i,
                None => {
                    labels.push(label.to_owned());
                    documents.push(0usize);
                    labels.len() - 1
                }
            };
            documents[index] += 1;
            occurrences.extend(features(text).into_iter().map(|f| (f, index as u32)));
        }
        occurrences.sort_unstable();
        let width = labels.len();
        let mut features = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        for (feature, label) in occurrences {
            if features.last() != Some(&feature) {
                features.push(feature);
                counts.extend(std::iter::repeat_n(0, width));
            }
            let row = counts.len() - width;
            counts[row + label as usize] += 1;
        }
        let mut totals = vec![0u64; width];
        for row in counts.chunks(width.max(1)) {
            for (total, count) in totals.iter_mut().zip(row) {
                *total += u64::from(*count);
            }
        }
        let vocabulary = features.len() as f64;
        let log_denominator: Vec<f64> = totals
            .iter()
            .map(|&t| (t as f64 + SMOOTHING * vocabulary).ln())
            .collect();
        let log_likelihood = counts
            .chunks(width.max(1))
            .flat_map(|row| {
                row.iter()
                    .zip(&log_denominator)
                    .map(|(&c, d)| ((f64::from(c) + SMOOTHING).ln() - d) as f32)
                    .collect::<Vec<_>>()
            })
            .collect();
        let examples: usize = documents.iter().sum();
        let log_prior = documents
            .iter()
            .map(|&d| (d as f64 / examples as f64).ln())
            .collect();
        Classifier {
            labels,
            log_prior,
            features,
            log_likelihood,
        }
    }

    /// The labels, in the order [`Classifier::probabilities`] gives them.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// How likely each label is for the normalised message `text`. A
    /// message with no feature the examples had gets the priors.
    pub fn probabilities(&self, text: &str) -> Vec<f64> {
        let width = self.labels.len();
        let mut scores = vec![0.0f64; width];
        let mut known = 0usize;
        for feature in features(text) {
            let Ok(row) = self.features.binary_search(&feature) else {
                continue;
            };
            known += 1;
            let row = &self.log_likelihood[row * width..(row + 1) * width];
            for (score, l) in scores.iter_mut().zip(row) {
                *score += f64::from(*l);
            }
        }
        let damping = (known.max(1) as f64).powf(DAMPING);
        for (score, prior) in scores.iter_mut().zip(&self.log_prior) {
            *score = *score / damping + prior;
        }
        softmax(&mut scores);
        scores
    }
}

fn softmax(scores: &mut [f64]) {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut total = 0.0;
    for s in scores.iter_mut() {
        *s = (*s - max).exp();
        total += *s;
    }
    for s in scores.iter_mut() {
        *s /= total;
    }
}

/// The features of a normalised message, each once, sorted.
fn features(text: &str) -> Vec<u64> {
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    let mut out = Vec::new();
    for word in &words {
        out.push(hash(Kind::Word, &[word.as_bytes()]));
    }
    for pair in words.windows(2) {
        out.push(hash(
            Kind::Bigram,
            &[pair[0].as_bytes(), b" ", pair[1].as_bytes()],
        ));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// FNV-1a over `parts`, started from the feature's kind.
fn hash(kind: Kind, parts: &[&[u8]]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h = OFFSET ^ kind as u64;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

/// Each example's probabilities from a classifier that did not see it:
/// the examples are dealt into `folds` folds label by label (the `i`th
/// example of a label into fold `i mod folds`), and each fold is scored by
/// a classifier trained on the others. Returns the labels (numbered as a
/// classifier trained on all of `examples` numbers them) and one
/// probability row per example, in that order.
pub fn cross_validate(examples: &[(&str, &str)], folds: usize) -> (Vec<String>, Vec<Vec<f64>>) {
    let everything = Classifier::train(examples.iter().copied());
    let labels = everything.labels().to_vec();
    let folds = folds.max(2);
    let mut dealt = vec![0usize; labels.len()];
    let fold_of: Vec<usize> = examples
        .iter()
        .map(|(label, _)| {
            let l = labels.iter().position(|x| x == label).unwrap_or(0);
            dealt[l] += 1;
            (dealt[l] - 1) % folds
        })
        .collect();
    let mut rows = vec![Vec::new(); examples.len()];
    for fold in 0..folds {
        let trained = Classifier::train(
            examples
                .iter()
                .zip(&fold_of)
                .filter(|(_, f)| **f != fold)
                .map(|(e, _)| *e),
        );
        // The fold's classifier may have met the labels in another order.
        let order: Vec<Option<usize>> = labels
            .iter()
            .map(|l| trained.labels().iter().position(|x| x == l))
            .collect();
        for (i, example) in examples.iter().enumerate() {
            if fold_of[i] != fold {
                continue;
            }
            let p = trained.probabilities(example.1);
            rows[i] = order.iter().map(|o| o.map_or(0.0, |j| p[j])).collect();
        }
    }
    (labels, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLES: &[(&str, &str)] = &[
        ("self_harm", "i want to kill myself"),
        ("self_harm", "i keep cutting my arms"),
        ("self_harm", "i dont want to be alive anymore"),
        ("self_harm", "thinking about ending it all tonight"),
        ("abuse", "my dad hits me when he is drunk"),
        ("abuse", "my stepdad hurts me and says not to tell"),
        ("ordinary", "how do i simplify 3 4 of 12"),
        ("ordinary", "this question is killing me"),
        (
            "ordinary",
            "a train leaves at 3pm going 60 mph when does it arrive",
        ),
        ("ordinary", "can you help me with fractions"),
        ("ordinary", "i cut the cake into 8 slices how much is left"),
        ("ordinary", "whats the area of a triangle"),
    ];

    fn label_of(c: &Classifier, text: &str) -> String {
        let p = c.probabilities(text);
        let best = (0..p.len()).max_by(|a, b| p[*a].total_cmp(&p[*b])).unwrap();
        c.labels()[best].clone()
    }

    #[test]
    fn the_same_examples_give_the_same_model() {
        let a = Classifier::train(EXAMPLES.iter().copied());
        let b = Classifier::train(EXAMPLES.iter().copied());
        assert_eq!(a, b);
        assert_eq!(a.labels(), ["self_harm", "abuse", "ordinary"]);
        let message = "i want to hurt myself";
        assert_eq!(a.probabilities(message), b.probabilities(message));
    }

    #[test]
    fn probabilities_are_a_distribution() {
        let c = Classifier::train(EXAMPLES.iter().copied());
        for text in ["i want to kill myself", "", "zzzz qqqq"] {
            let p = c.probabilities(text);
            assert_eq!(p.len(), 3);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{text}: {p:?}");
            assert!(p.iter().all(|x| (0.0..=1.0).contains(x)), "{text}: {p:?}");
        }
    }

    #[test]
    fn a_message_like_the_examples_is_caught_and_a_word_problem_is_not() {
        let c = Classifier::train(EXAMPLES.iter().copied());
        // Unseen wording: the words it shares with the examples carry it.
        assert_eq!(label_of(&c, "i want to kill myself tonight"), "self_harm");
        assert_eq!(label_of(&c, "my stepdad hits me"), "abuse");
        assert_eq!(
            label_of(&c, "a cake is cut into 12 slices how much is left"),
            "ordinary"
        );
        assert_eq!(label_of(&c, "help me simplify this fraction"), "ordinary");
    }

    #[test]
    fn features_are_words_and_pairs_of_neighbours() {
        let f = features("kill this question");
        let expected = [
            hash(Kind::Word, &[b"kill"]),
            hash(Kind::Word, &[b"this"]),
            hash(Kind::Word, &[b"question"]),
            hash(Kind::Bigram, &[b"kill", b" ", b"this"]),
            hash(Kind::Bigram, &[b"this", b" ", b"question"]),
        ];
        assert_eq!(f.len(), expected.len(), "{f:?}");
        assert!(expected.iter().all(|e| f.contains(e)));
        // No pair across a word: "kill question" is not a feature.
        assert!(!f.contains(&hash(Kind::Bigram, &[b"kill", b" ", b"question"])));
        // A word and a pair of the same letters differ.
        assert_ne!(
            hash(Kind::Word, &[b"a b"]),
            hash(Kind::Bigram, &[b"a", b" ", b"b"])
        );
        // Repeats and extra spaces count once; the table is sorted.
        assert_eq!(
            features("  kill  kill "),
            vec![hash(Kind::Word, &[b"kill"])]
                .into_iter()
                .chain([hash(Kind::Bigram, &[b"kill", b" ", b"kill"])])
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
        assert!(f.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
        assert!(features("").is_empty());
    }

    #[test]
    fn cross_validation_scores_every_example_unseen() {
        let (labels, rows) = cross_validate(EXAMPLES, 3);
        assert_eq!(labels, ["self_harm", "abuse", "ordinary"]);
        assert_eq!(rows.len(), EXAMPLES.len());
        assert!(rows.iter().all(|r| r.len() == 3));
        // Scored by a classifier that never saw it, an example is less
        // certain than when it was trained on.
        let all = Classifier::train(EXAMPLES.iter().copied());
        let seen = all.probabilities(EXAMPLES[0].1)[0];
        assert!(rows[0][0] < seen, "{} < {seen}", rows[0][0]);
    }
}
