//! The safety gate that runs before anything else (docs/architecture.md,
//! "The turn", step 3), and the sanitizer that removes leaked internal
//! language from tutor text.
//!
//! The gate sorts a message into one of the workflow's safety categories
//! (self-harm, abuse, violence, sexual content, bullying and hate,
//! academic dishonesty, prompt injection, personal details, profanity, …)
//! or lets it through. Offline it reads the normalised message
//! ([`normalize`]): ordinary talk that reuses risky words is set aside
//! first ("this problem is killing me"), then each category's terms and
//! patterns ([`pattern`]) are tried in the workflow's order of precedence.
//! When no rule matches, a classifier trained on the workflow's labelled
//! examples ([`classifier`]) may still find the message likely enough to
//! be about harm or distress to ask for a check-in ([`EscalationRule`]); it never
//! names a category of its own.
//! An online check (a moderation provider or the safety LLM call) names
//! categories of its own, which the workflow maps onto these. The
//! category decides the reply: its response (per mode), the region's help
//! resources, whether tutoring pauses, a teacher alert, and the session's
//! "talk to a trusted adult" escalation after repeated flags.
//!
//! Everything is compiled once per content version; matching is pure.

pub mod classifier;
mod normalize;
mod sanitize;
mod stream_guard;

use std::borrow::Cow;

use regex::{NoExpand, Regex, RegexSet};
use serde::Serialize;

pub use classifier::Classifier;
pub use normalize::normalize;
pub use sanitize::{Sanitized, Sanitizer};
pub use stream_guard::{HOLD_BACK_CHARS, StreamGuard};

use crate::content::Workflow;
use crate::content::workflow::{DEFAULT_REGION, OTHER_CATEGORY, SafetySettings, SafetyTutoring};
use crate::model::{HelpResource, Mode, SafetyCategory, SafetyMark, SessionState, StudentSnapshot};
use crate::text::pattern;

/// Where a verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagSource {
    /// The workflow's terms and patterns.
    Rules,
    /// The classifier trained on the workflow's examples.
    Classifier,
    /// The moderation provider.
    Moderation,
    /// The safety LLM call.
    Judge,
}

/// A message the gate does not let through as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafetyHit {
    /// The workflow's category id.
    pub category: String,
    /// What decided, for the log (never the message): `self_harm/patterns[3]`,
    /// `moderation:self-harm/intent`.
    pub rule_id: String,
    pub source: FlagSource,
    /// The category's response in the default mode.
    pub response: String,
    pub tutoring: SafetyTutoring,
    /// Alert the student's teachers.
    pub notify_teacher: bool,
    /// Counts towards the session's escalation.
    pub escalates: bool,
    pub help_resources: bool,
    /// Position in the workflow's order of precedence (lower wins).
    rank: usize,
}

impl SafetyHit {
    /// The more serious of two verdicts (the first on a tie).
    pub fn most_serious(a: Option<SafetyHit>, b: Option<SafetyHit>) -> Option<SafetyHit> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.rank < a.rank { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    pub fn pauses_tutoring(&self) -> bool {
        self.tutoring == SafetyTutoring::Pause
    }
}

/// What a reply depends on besides the verdict.
#[derive(Debug, Clone, Copy)]
pub struct ReplyContext<'a> {
    pub mode: Mode,
    /// The deployment's region for help resources.
    pub region: &'a str,
}

/// The tutor's words for a flagged message and how it is marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafetyReply {
    pub text: String,
    pub mark: SafetyMark,
}

struct CompiledCategory {
    id: String,
    /// Terms first, then patterns, as in the workflow.
    rules: RuleSets,
    rule_names: Vec<String>,
    /// One-word terms, for self-censored words ("f*ck").
    words: Vec<String>,
    /// For a category about someone else: what its rules match, set aside
    /// for the categories listed above it.
    set_aside: Vec<Aside>,
    hit: SafetyHit,
}

/// A category's rules, compiled as consecutive sets of bounded size.
///
/// While the regex crate compiles a set it holds every pattern's syntax
/// tree and intermediate form at once, about five times the size of the
/// compiled set: one set for the largest category (its vocabulary expanded
/// and every letter stretched) took 13 MB of heap for a moment, the peak of
/// a cold start. Sets of a few thousand characters of pattern keep that
/// moment small; what stays compiled is the same.
struct RuleSets {
    /// Each set with the index of its first rule.
    sets: Vec<(usize, RegexSet)>,
}

impl RuleSets {
    /// Characters of compiled pattern per set.
    const MAX_SET_CHARS: usize = 16 * 1024;

    /// A set that fails to compile matches nothing; the patterns were
    /// validated when the bundle was loaded.
    fn new(rules: &[String]) -> Self {
        let mut sets = Vec::new();
        let mut first = 0;
        while first < rules.len() {
            let mut end = first + 1;
            let mut chars = rules[first].len();
            while end < rules.len() && chars + rules[end].len() <= Self::MAX_SET_CHARS {
                chars += rules[end].len();
                end += 1;
            }
            let set = RegexSet::new(&rules[first..end]).unwrap_or_else(|_| RegexSet::empty());
            sets.push((first, set));
            first = end;
        }
        RuleSets { sets }
    }

    /// The first rule that matches `text`. Almost every message matches
    /// none: asking only whether one does stops early and skips the
    /// overlapping search.
    fn first_match(&self, text: &str) -> Option<usize> {
        self.sets.iter().find_map(|(first, set)| {
            set.is_match(text)
                .then(|| set.matches(text).iter().next())
                .flatten()
                .map(|i| first + i)
        })
    }
}

/// Some of a someone-else category's rules as one expression, and the word
/// the categories above it read where they matched: the category's id, or
/// its id and the kind of risk (`someone_at_risk_abuse`).
struct Aside {
    matches: Regex,
    reads_as: String,
}

impl Aside {
    fn new(rules: &[String], reads_as: String) -> Option<Aside> {
        if rules.is_empty() {
            return None;
        }
        Some(Aside {
            matches: Regex::new(&rules.join("|")).ok()?,
            reads_as,
        })
    }
}

/// The workflow's safety settings, compiled.
pub struct SafetyGate {
    ordinary: Option<Regex>,
    categories: Vec<CompiledCategory>,
    model: Option<Model>,
    settings: SafetySettings,
}

/// The classifier with what its verdicts mean, by its label numbers.
struct Model {
    classifier: Classifier,
    decision: EscalationRule,
}

/// How the classifier's probabilities become a verdict: the escalating
/// categories' probabilities are summed into one score, so a message the
/// classifier cannot place between, say, self-harm and distress still
/// counts, and a score at or above the threshold gets the check-in.
#[derive(Debug, Clone, PartialEq)]
pub struct EscalationRule {
    /// By label: whether it is an escalating category.
    escalating: Vec<bool>,
    /// The check-in category (an index in the workflow's order).
    check_in: usize,
    /// The least score that flags a message.
    at: f64,
}

impl EscalationRule {
    /// For a classifier with `labels`, the workflow's classifier settings
    /// (`None` when it has none, or its check-in category is unknown).
    pub fn new(labels: &[String], settings: &SafetySettings) -> Option<EscalationRule> {
        let classifier = settings.classifier.as_ref()?;
        let check_in = settings
            .categories
            .iter()
            .position(|c| c.id == classifier.check_in)?;
        let escalating = labels
            .iter()
            .map(|l| {
                settings
                    .categories
                    .iter()
                    .any(|c| c.escalates && c.id == *l)
            })
            .collect();
        Some(EscalationRule {
            escalating,
            check_in,
            at: classifier.at,
        })
    }

    /// The probability (one per label, as the classifier gives them) that
    /// a message belongs to an escalating category.
    pub fn score(&self, probabilities: &[f64]) -> f64 {
        probabilities
            .iter()
            .zip(&self.escalating)
            .filter(|(_, e)| **e)
            .map(|(p, _)| p)
            .sum()
    }

    /// The check-in category, when `probabilities` score at or above the
    /// threshold.
    pub fn verdict(&self, probabilities: &[f64]) -> Option<usize> {
        (self.score(probabilities) >= self.at).then_some(self.check_in)
    }
}

impl SafetyGate {
    /// Patterns were validated when the bundle was loaded; one that still
    /// fails to compile is skipped rather than taking the tutor down.
    pub fn new(workflow: &Workflow) -> Self {
        let settings = workflow.safety.clone();
        let vocabulary = &settings.vocabulary;
        let ordinary: Vec<String> = settings
            .ordinary
            .iter()
            .filter_map(|p| pattern::compile(p, vocabulary).ok())
            .filter(|p| Regex::new(p).is_ok())
            .collect();
        let ordinary = (!ordinary.is_empty())
            .then(|| Regex::new(&ordinary.join("|")).ok())
            .flatten();
        let categories = settings
            .categories
            .iter()
            .enumerate()
            .map(|(rank, c)| {
                let mut rules = Vec::new();
                let mut rule_names = Vec::new();
                for (i, term) in c.terms.iter().enumerate() {
                    if let Ok(re) = pattern::compile_term(term)
                        && Regex::new(&re).is_ok()
                    {
                        rules.push(re);
                        rule_names.push(format!("{}/terms[{i}]", c.id));
                    }
                }
                let mut push_patterns = |patterns: &[String], name: &str| {
                    let first = rules.len();
                    for (i, p) in patterns.iter().enumerate() {
                        if let Ok(re) = pattern::compile(p, vocabulary)
                            && Regex::new(&re).is_ok()
                        {
                            rules.push(re);
                            rule_names.push(format!("{}/{name}[{i}]", c.id));
                        }
                    }
                    first..rules.len()
                };
                // Terms and plain patterns.
                let plain = 0..push_patterns(&c.patterns, "patterns").end;
                let by_kind: Vec<_> = c
                    .patterns_by_kind
                    .iter()
                    .map(|(kind, patterns)| {
                        let name = format!("patterns_by_kind.{kind}");
                        (kind, push_patterns(patterns, &name))
                    })
                    .collect();
                let set_aside = if c.someone_else {
                    std::iter::once(Aside::new(&rules[plain], c.id.clone()))
                        .chain(by_kind.into_iter().map(|(kind, range)| {
                            Aside::new(&rules[range], format!("{}_{kind}", c.id))
                        }))
                        .flatten()
                        .collect()
                } else {
                    Vec::new()
                };
                CompiledCategory {
                    id: c.id.clone(),
                    set_aside,
                    rules: RuleSets::new(&rules),
                    rule_names,
                    words: c
                        .terms
                        .iter()
                        .map(|t| normalize(t))
                        .filter(|t| !t.is_empty() && !t.contains(' '))
                        .collect(),
                    hit: SafetyHit {
                        category: c.id.clone(),
                        rule_id: c.id.clone(),
                        source: FlagSource::Rules,
                        response: c.response.trim().to_owned(),
                        tutoring: c.tutoring,
                        notify_teacher: c.alert,
                        escalates: c.escalates,
                        help_resources: c.help_resources,
                        rank,
                    },
                }
            })
            .collect();
        let model = settings
            .classifier
            .as_ref()
            .filter(|c| !c.labelled.is_empty())
            .and_then(|c| {
                let normal: Vec<String> =
                    c.labelled.iter().map(|e| normalize(&e.message)).collect();
                let classifier = Classifier::train(
                    c.labelled
                        .iter()
                        .zip(&normal)
                        .map(|(e, n)| (e.label.as_str(), n.as_str())),
                );
                let decision = EscalationRule::new(classifier.labels(), &settings)?;
                Some(Model {
                    classifier,
                    decision,
                })
            });
        SafetyGate {
            ordinary,
            categories,
            model,
            settings,
        }
    }

    /// The offline verdict on `message`: the first category (in the
    /// workflow's order) one of whose rules matches; failing that, the
    /// classifier's check-in ([`EscalationRule::verdict`]).
    pub fn classify(&self, message: &str) -> Option<SafetyHit> {
        let normal = normalize(message);
        self.by_rules(&normal)
            .or_else(|| self.by_classifier(&normal))
    }

    /// The rules' verdict alone, as [`SafetyGate::classify`] gives it
    /// before the classifier is asked.
    pub fn classify_by_rules(&self, message: &str) -> Option<SafetyHit> {
        self.by_rules(&normalize(message))
    }

    /// The classifier's verdict on a normalised message.
    fn by_classifier(&self, normal: &str) -> Option<SafetyHit> {
        let model = self.model.as_ref()?;
        let probabilities = model.classifier.probabilities(normal);
        let c = self
            .categories
            .get(model.decision.verdict(&probabilities)?)?;
        Some(SafetyHit {
            rule_id: format!("{}/classifier", c.id),
            source: FlagSource::Classifier,
            ..c.hit.clone()
        })
    }

    /// The first category (in the workflow's order) one of whose rules
    /// matches the normalised message. A category about someone else
    /// hides what it matches from the categories listed above it: they
    /// read the message with another person's risk set aside, and its id
    /// (with the kind of risk, when its patterns give one) in its place,
    /// so that a rule can still answer for the student saying the same of
    /// themself ("my friend wants to die and so do i" reads
    /// "someone_at_risk and so do i", "my friend gets hit at home and so
    /// do i" "someone_at_risk_abuse and so do i"). A normalised message
    /// has no `_`, so the id is a word no other rule can match.
    fn by_rules(&self, normal: &str) -> Option<SafetyHit> {
        let text = match &self.ordinary {
            Some(ordinary) => ordinary.replace_all(normal, " ~ ").into_owned(),
            None => normal.to_owned(),
        };
        // Usually none: a category about someone else whose rules match.
        let asides: Vec<(usize, &Aside)> = self
            .categories
            .iter()
            .enumerate()
            .flat_map(|(j, c)| c.set_aside.iter().map(move |aside| (j, aside)))
            .filter(|(_, aside)| aside.matches.is_match(&text))
            .collect();
        self.categories.iter().enumerate().find_map(|(i, c)| {
            let text = asides.iter().filter(|(j, _)| *j > i).fold(
                Cow::Borrowed(text.as_str()),
                |t, (_, aside)| {
                    // A match starts and ends at a word, between spaces.
                    let read = aside.matches.replace_all(&t, NoExpand(&aside.reads_as));
                    Cow::Owned(read.into_owned())
                },
            );
            let text = text.as_ref();
            let rule = c
                .rules
                .first_match(text)
                .map(|i| c.rule_names[i].clone())
                .or_else(|| {
                    text.split(' ')
                        .filter(|w| w.contains(normalize::MASK))
                        .find_map(|w| {
                            c.words
                                .iter()
                                .find(|t| masked_match(w, t))
                                .map(|t| format!("{}/masked:{t}", c.id))
                        })
                })?;
            Some(SafetyHit {
                rule_id: rule,
                ..c.hit.clone()
            })
        })
    }

    /// The verdict of an online check that flagged `names` (its own
    /// category names): the first workflow category listing one of them,
    /// else the workflow's catch-all response.
    pub fn online(&self, names: &[String], source: FlagSource) -> Option<SafetyHit> {
        if names.is_empty() {
            return None;
        }
        let prefix = match source {
            FlagSource::Moderation => "moderation",
            FlagSource::Judge | FlagSource::Rules | FlagSource::Classifier => "judge",
        };
        let mapped = self.categories.iter().find_map(|c| {
            let name = names.iter().find(|n| {
                self.settings
                    .categories
                    .iter()
                    .any(|s| s.id == c.id && s.online.contains(n))
            })?;
            Some(SafetyHit {
                rule_id: format!("{prefix}:{name}"),
                source,
                ..c.hit.clone()
            })
        });
        Some(mapped.unwrap_or_else(|| SafetyHit {
            category: OTHER_CATEGORY.to_owned(),
            rule_id: format!("{prefix}:{}", names.join(",")),
            source,
            response: self.settings.moderation_response.trim().to_owned(),
            tutoring: SafetyTutoring::Pause,
            notify_teacher: true,
            escalates: true,
            help_resources: false,
            rank: self.categories.len(),
        }))
    }

    /// The verdict of the safety LLM call, which names one of its own
    /// categories (none: "other").
    pub fn judged(&self, category: Option<SafetyCategory>) -> Option<SafetyHit> {
        let name = category
            .and_then(|c| serde_json::to_value(c).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| OTHER_CATEGORY.to_owned());
        self.online(&[name], FlagSource::Judge)
    }

    /// Flags of escalating categories so far in this session.
    pub fn escalating_flags(&self, session: &SessionState) -> u32 {
        session
            .safety_flags
            .iter()
            .filter(|(id, _)| {
                id.as_str() == OTHER_CATEGORY
                    || self
                        .settings
                        .categories
                        .iter()
                        .any(|c| c.id == **id && c.escalates)
            })
            .map(|(_, n)| *n)
            .sum()
    }

    /// What the tutor says for `hit` in a session that already has
    /// `session` flags: the category's response for the mode, the
    /// region's help resources when the category asks for them, and the
    /// escalation text once this flag reaches the workflow's threshold.
    pub fn reply(
        &self,
        hit: &SafetyHit,
        session: &SessionState,
        ctx: ReplyContext<'_>,
    ) -> SafetyReply {
        let mode = ctx.mode.as_str();
        let category = self
            .settings
            .categories
            .iter()
            .find(|c| c.id == hit.category);
        let response = category
            .and_then(|c| c.response_by_mode.get(mode))
            .map_or(hit.response.as_str(), |r| r.trim());
        let resources = if hit.help_resources {
            self.settings
                .help_resources
                .get(ctx.region)
                .or_else(|| self.settings.help_resources.get(DEFAULT_REGION))
                .cloned()
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let threshold = self.settings.escalation.after_flags;
        let escalated =
            hit.escalates && threshold > 0 && self.escalating_flags(session) + 1 >= threshold;
        let mut text = response.trim().to_owned();
        if !resources.is_empty() {
            text.push_str("\n\n");
            text.push_str(&resources_text(&resources));
        }
        if escalated {
            let escalation = &self.settings.escalation;
            let words = escalation
                .text_by_mode
                .get(mode)
                .map_or(escalation.text.as_str(), String::as_str);
            text.push_str("\n\n");
            text.push_str(words.trim());
        }
        SafetyReply {
            text,
            mark: SafetyMark {
                category: hit.category.clone(),
                escalated,
                alert: hit.notify_teacher || escalated,
                tutoring_paused: hit.pauses_tutoring(),
                help_resources: resources,
            },
        }
    }

    /// The flagged message counted in the session and the course.
    pub fn record(hit: &SafetyHit, session: &mut SessionState, snapshot: &mut StudentSnapshot) {
        for counts in [&mut session.safety_flags, &mut snapshot.safety_flags] {
            *counts.entry(hit.category.clone()).or_default() += 1;
        }
    }
}

fn resources_text(resources: &[HelpResource]) -> String {
    resources
        .iter()
        .map(|r| {
            let mut line = format!("- {}", r.name);
            if !r.contact.trim().is_empty() {
                line.push_str(": ");
                line.push_str(r.contact.trim());
            }
            if let Some(url) = &r.url {
                line.push_str(&format!(" ({url})"));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a self-censored word ("f*ck", "sh**") can be `term`: each run
/// of masks stands for one more letter than it has, at most.
fn masked_match(word: &str, term: &str) -> bool {
    let mut regex = String::from("^");
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        if c == normalize::MASK {
            let mut run = 1;
            while chars.peek() == Some(&normalize::MASK) {
                chars.next();
                run += 1;
            }
            regex.push_str(&format!("[a-z]{{1,{}}}", run + 1));
        } else {
            regex.push_str(&regex::escape(&c.to_string()));
        }
    }
    regex.push('$');
    Regex::new(&regex).is_ok_and(|r| r.is_match(term))
}

#[cfg(test)]
mod tests;
