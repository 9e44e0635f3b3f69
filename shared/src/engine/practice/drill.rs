//! Drills end to end, without storing anything (the signed token carries
//! what grading needs): issue a drill
//! card with its signed token, and later, from a verified token, get back
//! what the student's answer is graded against.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::drill_token::{
    self, DrillClaims, DrillSource, DrillTokenError, TokenKeys, VerifiedDrill,
};
use super::generate::{GenerateError, Item, generate_themed};
use crate::content::blueprint::{Blueprint, ItemFormat};
use crate::model::{DrillCard, LlmDrillCard};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrillError {
    #[error(transparent)]
    Token(#[from] DrillTokenError),
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error("blueprint `{0}` is no longer in the content bundle; ask for a new drill")]
    UnknownBlueprint(String),
    #[error("blueprint `{0}` has changed since this drill was made; ask for a new drill")]
    BlueprintChanged(String),
    #[error("the LLM's drill has no expected answer, so it cannot be graded")]
    NoExpectedAnswer,
}

/// A generated drill ready to send: the card (with its token) and the item
/// it shows, whose answer stays on the server.
#[derive(Debug, Clone, PartialEq)]
pub struct IssuedDrill {
    pub card: DrillCard,
    pub item: Item,
}

/// Where a generated drill comes from: the blueprint, the difficulty
/// aimed at, the seed, and the student's example themes (most liked
/// first; empty for the plain wording).
#[derive(Debug, Clone, Copy)]
pub struct DrillRequest<'a> {
    pub blueprint: &'a Blueprint,
    /// The blueprint's [`Blueprint::fingerprint`], which the token records.
    /// A digest of the whole blueprint: the turn takes it once per course
    /// runtime, not once per drill.
    pub fingerprint: [u8; 8],
    pub target_difficulty: f64,
    pub seed: u64,
    pub themes: &'a [&'a str],
}

/// Generates an item and wraps it in a sealed drill card; the token keeps
/// the theme the item was told in, so grading regenerates the same stem.
pub fn issue_generated(
    request: DrillRequest<'_>,
    unit_id: &str,
    thread_id: &str,
    now: DateTime<Utc>,
    keys: &TokenKeys,
) -> Result<IssuedDrill, DrillError> {
    let DrillRequest {
        blueprint,
        fingerprint,
        target_difficulty,
        seed,
        themes,
    } = request;
    let item = generate_themed(blueprint, target_difficulty, seed, themes)?;
    let claims = DrillClaims {
        unit_id: unit_id.to_owned(),
        thread_id: thread_id.to_owned(),
        issued_at: now,
        source: DrillSource::Blueprint {
            blueprint_id: blueprint.id.clone(),
            fingerprint,
            seed,
            target_difficulty,
            theme: item.theme.clone(),
        },
    };
    let token = drill_token::issue(&claims, keys)?;
    let card = DrillCard {
        unit_id: unit_id.to_owned(),
        prompt: item.stem.clone(),
        question_latex: item.question_latex.clone(),
        options: (item.format == ItemFormat::MultipleChoice).then(|| item.options.clone()),
        drill_token: Some(token),
    };
    Ok(IssuedDrill { card, item })
}

/// Signs a drill the LLM wrote: its expected answer goes into the token.
pub fn issue_authored(
    drill: &LlmDrillCard,
    unit_id: &str,
    thread_id: &str,
    now: DateTime<Utc>,
    keys: &TokenKeys,
) -> Result<DrillCard, DrillError> {
    let expected_answer = drill
        .expected_answer
        .as_deref()
        .filter(|a| !a.trim().is_empty())
        .ok_or(DrillError::NoExpectedAnswer)?;
    let claims = DrillClaims {
        unit_id: unit_id.to_owned(),
        thread_id: thread_id.to_owned(),
        issued_at: now,
        source: DrillSource::Authored {
            prompt: drill.prompt.clone(),
            question_latex: drill.question_latex.clone(),
            expected_answer: expected_answer.to_owned(),
        },
    };
    Ok(DrillCard {
        unit_id: unit_id.to_owned(),
        prompt: drill.prompt.clone(),
        question_latex: drill.question_latex.clone(),
        options: None,
        drill_token: Some(drill_token::issue(&claims, keys)?),
    })
}

/// What a verified drill is graded against.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// The regenerated item: its `answer` (value, kind, method), its
    /// options and its distractors with their mistake tags.
    Generated(Box<Item>),
    /// An LLM-written drill and the answer it expects.
    Authored {
        prompt: String,
        question_latex: String,
        expected_answer: String,
    },
}

/// Regenerates (or reads back) what `drill` expects, refusing a blueprint
/// that is gone or has changed since the token was issued.
pub fn expected(
    drill: &VerifiedDrill,
    blueprints: &BTreeMap<String, Blueprint>,
) -> Result<Expected, DrillError> {
    match &drill.claims.source {
        DrillSource::Blueprint {
            blueprint_id,
            fingerprint,
            seed,
            target_difficulty,
            theme,
        } => {
            let blueprint = blueprints
                .get(blueprint_id)
                .ok_or_else(|| DrillError::UnknownBlueprint(blueprint_id.clone()))?;
            if blueprint.fingerprint() != *fingerprint {
                return Err(DrillError::BlueprintChanged(blueprint_id.clone()));
            }
            // A theme since dropped from the blueprint gives the plain
            // wording of the same item.
            let themes: Vec<&str> = theme.as_deref().into_iter().collect();
            let item = generate_themed(blueprint, *target_difficulty, *seed, &themes)?;
            Ok(Expected::Generated(Box::new(item)))
        }
        DrillSource::Authored {
            prompt,
            question_latex,
            expected_answer,
        } => Ok(Expected::Authored {
            prompt: prompt.clone(),
            question_latex: question_latex.clone(),
            expected_answer: expected_answer.clone(),
        }),
    }
}
