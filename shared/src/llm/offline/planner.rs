//! The offline planner: the unit's authored study plan, or the workflow's
//! default plan (explain → check → explain → practice) built from
//! the unit's key ideas.

use async_trait::async_trait;

use super::offline;
use crate::model::{LlmError, LlmPlanStep, LlmStudyPlan, Planner, PlannerInput, Reply, StepKind};

#[derive(Debug, Clone, Copy, Default)]
pub struct OfflinePlanner;

#[async_trait]
impl Planner for OfflinePlanner {
    async fn plan(&self, input: &PlannerInput) -> Result<Reply<LlmStudyPlan>, LlmError> {
        plan(input).map(offline)
    }
}

fn plan(input: &PlannerInput) -> Result<LlmStudyPlan, LlmError> {
    let max = usize::try_from(input.max_steps.max(1)).unwrap_or(usize::MAX);
    let mut steps: Vec<LlmPlanStep> = match input.authored_plan.as_deref() {
        Some(authored) if !authored.is_empty() => authored
            .iter()
            .map(|s| LlmPlanStep {
                title: s.title.clone(),
                kind: s.kind,
                concept: s.concept.clone(),
                success_criteria: s
                    .success_criteria
                    .clone()
                    .unwrap_or_else(|| criteria(s.kind, &input.unit_title)),
            })
            .collect(),
        _ => default_plan(input)?,
    };
    // A replan starts again from the basics before the same path.
    if input.replan_reason.is_some() {
        let idea = input
            .key_ideas
            .first()
            .cloned()
            .unwrap_or_else(|| input.unit_title.clone());
        steps.insert(
            0,
            LlmPlanStep {
                title: format!("Review the basics of {}", input.unit_title),
                kind: StepKind::Explain,
                concept: idea,
                success_criteria: criteria(StepKind::Explain, &input.unit_title),
            },
        );
    }
    steps.truncate(max);
    Ok(LlmStudyPlan { steps })
}

fn default_plan(input: &PlannerInput) -> Result<Vec<LlmPlanStep>, LlmError> {
    if input.default_plan.is_empty() {
        return Err(LlmError::InvalidInput(
            "the workflow's default plan has no steps".into(),
        ));
    }
    let ideas: Vec<&str> = input
        .key_ideas
        .iter()
        .map(|i| i.trim())
        .filter(|i| !i.is_empty())
        .collect();
    let title = input.unit_title.trim();
    let mut explained = 0usize;
    Ok(input
        .default_plan
        .iter()
        .map(|&kind| {
            let (step_title, concept) = match kind {
                StepKind::Explain => {
                    explained += 1;
                    let idea = ideas
                        .get((explained - 1) % ideas.len().max(1))
                        .map_or_else(|| title.to_owned(), |i| (*i).to_owned());
                    (format!("{title}: key idea {explained}"), idea)
                }
                StepKind::Check => {
                    let idea = ideas
                        .get(explained.saturating_sub(1) % ideas.len().max(1))
                        .map_or_else(|| title.to_owned(), |i| (*i).to_owned());
                    (format!("Check key idea {}", explained.max(1)), idea)
                }
                StepKind::Practice => (format!("Practise {title}"), title.to_owned()),
            };
            LlmPlanStep {
                title: step_title,
                kind,
                concept,
                success_criteria: criteria(kind, title),
            }
        })
        .collect())
}

fn criteria(kind: StepKind, unit_title: &str) -> String {
    match kind {
        StepKind::Explain => "Explains the idea back in their own words".to_owned(),
        StepKind::Check => "Answers two questions on the idea correctly".to_owned(),
        StepKind::Practice => format!("Solves problems on {} correctly", unit_title.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AuthoredStep, CheckReply};

    fn input() -> PlannerInput {
        PlannerInput {
            unit_title: "Fractions".into(),
            unit_anchor: "Parts of a whole".into(),
            key_ideas: vec![
                "A fraction is a part of a whole.".into(),
                "The denominator counts the parts.".into(),
            ],
            authored_plan: None,
            default_plan: vec![
                StepKind::Explain,
                StepKind::Check,
                StepKind::Explain,
                StepKind::Practice,
            ],
            student_profile: String::new(),
            previous_plan: vec![],
            replan_reason: None,
            max_steps: 5,
        }
    }

    #[test]
    fn the_default_plan_walks_the_key_ideas() {
        let plan = plan(&input()).unwrap();
        let kinds: Vec<StepKind> = plan.steps.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, input().default_plan);
        assert_eq!(plan.steps[0].concept, "A fraction is a part of a whole.");
        assert_eq!(plan.steps[1].concept, "A fraction is a part of a whole.");
        assert_eq!(plan.steps[2].concept, "The denominator counts the parts.");
        assert_eq!(plan.steps[3].title, "Practise Fractions");
        plan.check().unwrap();
    }

    #[test]
    fn an_authored_plan_is_used_as_written_and_capped() {
        let mut request = input();
        request.authored_plan = Some(vec![AuthoredStep {
            title: "Pizza slices".into(),
            kind: StepKind::Explain,
            concept: "part of a whole".into(),
            success_criteria: None,
        }]);
        let plan = plan(&request).unwrap();
        assert_eq!(plan.steps.len(), 1);
        assert_eq!(plan.steps[0].title, "Pizza slices");
        request.replan_reason = Some("failed the check twice".into());
        request.max_steps = 1;
        let replanned = super::plan(&request).unwrap();
        assert_eq!(replanned.steps.len(), 1);
        assert!(replanned.steps[0].title.starts_with("Review"));
    }

    #[test]
    fn an_empty_default_plan_is_an_error() {
        let mut request = input();
        request.default_plan.clear();
        assert!(matches!(plan(&request), Err(LlmError::InvalidInput(_))));
    }
}
