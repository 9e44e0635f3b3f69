//! The seams implemented with one provider call each: the tutor, and the
//! safety, drill grading, exam evaluation, planner and summary calls. Each
//! renders its workflow's template, asks for its reply type and checks the
//! reply against its input before handing it back.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::time::Instant;

use super::prompt::tutor_prompt;
use super::provider::{CallSettings, ChatMessage, LlmCall, LlmProvider};
use super::schema::StructuredOutput;
use super::stream_json::FieldReader;
use super::structured::{structured_call, structured_call_streaming};
use super::tokens;
use crate::content::Bundle;
use crate::content::prompt::PromptTemplate;
use crate::content::workflow::Workflow;
use crate::model::{
    DrillGrader, DrillGradingInput, ExamEvaluationInput, ExamEvaluator, Judgement, LlmDrillGrade,
    LlmError, LlmExamEvaluation, LlmSafetyVerdict, LlmSessionSummary, LlmStudyPlan,
    LlmTutorResponse, Planner, PlannerInput, Reply, Role, SafetyInput, SafetyJudge, SafetyOutcome,
    Summarizer, SummaryInput, TextSink, Tutor, TutorTurnInput,
};

/// A provider bound to a content bundle's workflow: where templates and
/// model settings come from. Cheap to clone; build one per request with
/// that request's deadline.
#[derive(Clone)]
pub struct LlmBinding {
    provider: Arc<dyn LlmProvider>,
    bundle: Arc<Bundle>,
    workflow: String,
    deadline: Option<Instant>,
}

impl std::fmt::Debug for LlmBinding {
    // The bundle is large; its version identifies it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmBinding")
            .field("provider", &self.provider)
            .field("bundle", &self.bundle.version)
            .field("workflow", &self.workflow)
            .field("deadline", &self.deadline)
            .finish()
    }
}

impl LlmBinding {
    pub fn new(provider: Arc<dyn LlmProvider>, bundle: Arc<Bundle>, workflow: &str) -> Self {
        LlmBinding {
            provider,
            bundle,
            workflow: workflow.to_owned(),
            deadline: None,
        }
    }

    /// Calls end by `deadline` at the latest (e.g. the Lambda's remaining time).
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    fn workflow(&self) -> Result<&Workflow, LlmError> {
        self.bundle.workflows.get(&self.workflow).ok_or_else(|| {
            LlmError::InvalidInput(format!("workflow `{}` is not in the bundle", self.workflow))
        })
    }

    fn template(&self, name: &str) -> Result<&PromptTemplate, LlmError> {
        self.bundle
            .prompts
            .get(name)
            .ok_or_else(|| LlmError::InvalidInput(format!("prompt `{name}` is not in the bundle")))
    }

    /// Renders template `name` as the single user message and calls.
    async fn single_prompt<T: StructuredOutput>(
        &self,
        call: LlmCall,
        name: &str,
        values: &BTreeMap<&str, String>,
    ) -> Result<Reply<T>, LlmError> {
        let text = self
            .template(name)?
            .render(values)
            .map_err(|e| LlmError::InvalidInput(e.to_string()))?;
        self.call(call, vec![ChatMessage::user(text.trim())]).await
    }

    async fn call<T: StructuredOutput>(
        &self,
        call: LlmCall,
        messages: Vec<ChatMessage>,
    ) -> Result<Reply<T>, LlmError> {
        let settings = CallSettings::from(call.settings(&self.workflow()?.llm));
        structured_call(
            self.provider.as_ref(),
            call,
            messages,
            settings,
            self.deadline,
        )
        .await
    }
}

/// The tutor as one LLM call with the workflow's prompt bundle.
#[derive(Debug, Clone)]
pub struct LlmTutor(pub LlmBinding);

impl LlmTutor {
    fn prompt(&self, input: &TutorTurnInput) -> Result<Vec<ChatMessage>, LlmError> {
        let workflow = self.0.workflow()?;
        let prompt = tutor_prompt(&self.0.bundle.prompts, workflow, input)?;
        if prompt.dropped_history > 0 || prompt.dropped_chunks > 0 {
            tracing::debug!(
                target: "tutorflow::llm",
                dropped_history = prompt.dropped_history,
                dropped_chunks = prompt.dropped_chunks,
                tokens = prompt.tokens,
                "tutor prompt trimmed to its token budget"
            );
        }
        Ok(prompt.messages)
    }
}

/// The field of the tutor's reply the student reads.
const TUTOR_TEXT_FIELD: &str = "tutor_text";

#[async_trait]
impl Tutor for LlmTutor {
    async fn decide(&self, input: &TutorTurnInput) -> Result<Reply<LlmTutorResponse>, LlmError> {
        let messages = self.prompt(input)?;
        self.0.call(LlmCall::Tutor, messages).await
    }

    async fn decide_streaming(
        &self,
        input: &TutorTurnInput,
        sink: &dyn TextSink,
    ) -> Result<Reply<LlmTutorResponse>, LlmError> {
        let messages = self.prompt(input)?;
        let settings = CallSettings::from(LlmCall::Tutor.settings(&self.0.workflow()?.llm));
        let mut reader = FieldReader::new(TUTOR_TEXT_FIELD);
        let mut chunks = |chunk: &str| {
            let text = reader.push(chunk);
            if !text.is_empty() {
                sink.text(&text);
            }
        };
        structured_call_streaming(
            self.0.provider.as_ref(),
            LlmCall::Tutor,
            messages,
            settings,
            self.0.deadline,
            &mut chunks,
        )
        .await
    }
}

#[derive(Debug, Clone)]
pub struct LlmSafetyJudge(pub LlmBinding);

#[async_trait]
impl SafetyJudge for LlmSafetyJudge {
    async fn judge(&self, input: &SafetyInput) -> Result<Reply<SafetyOutcome>, LlmError> {
        let name = &self.0.workflow()?.prompts.safety;
        let values = BTreeMap::from([("message", input.message.clone())]);
        let reply: Reply<LlmSafetyVerdict> =
            self.0.single_prompt(LlmCall::Safety, name, &values).await?;
        Ok(Reply {
            value: SafetyOutcome::Judged(reply.value),
            usage: reply.usage,
        })
    }
}

#[derive(Debug, Clone)]
pub struct LlmDrillGrader(pub LlmBinding);

#[async_trait]
impl DrillGrader for LlmDrillGrader {
    async fn grade(
        &self,
        input: &DrillGradingInput,
    ) -> Result<Reply<Judgement<LlmDrillGrade>>, LlmError> {
        let name = &self.0.workflow()?.prompts.drill_grading;
        let tags = if input.mistake_tags.is_empty() {
            "(no tags: always use null)".to_owned()
        } else {
            input
                .mistake_tags
                .iter()
                .map(|t| format!("- {}: {}", t.id, t.description))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let values = BTreeMap::from([
            ("unit_title", input.unit_title.clone()),
            ("prompt", input.prompt.clone()),
            ("question", input.question.clone()),
            ("expected_answer", input.expected_answer.clone()),
            ("student_answer", input.student_answer.clone()),
            ("mistake_tags", tags),
        ]);
        let reply: Reply<LlmDrillGrade> = self
            .0
            .single_prompt(LlmCall::DrillGrading, name, &values)
            .await?;
        // Tags come from the unit's fixed list only: a made-up tag would
        // count evidence against a mistake the unit does not know.
        if let Some(tag) = &reply.value.common_mistake_tag
            && !input.mistake_tags.iter().any(|t| &t.id == tag)
        {
            return Err(LlmError::InvalidOutput(format!(
                "mistake tag `{tag}` is not in the unit's list"
            )));
        }
        Ok(Reply {
            value: Judgement::Judged(reply.value),
            usage: reply.usage,
        })
    }
}

#[derive(Debug, Clone)]
pub struct LlmExamEvaluator(pub LlmBinding);

#[async_trait]
impl ExamEvaluator for LlmExamEvaluator {
    async fn evaluate(
        &self,
        input: &ExamEvaluationInput,
    ) -> Result<Reply<Judgement<LlmExamEvaluation>>, LlmError> {
        let name = &self.0.workflow()?.prompts.exam_evaluation;
        let rubric = if input.rubric.is_empty() {
            "none".to_owned()
        } else {
            format!(
                "\n{}",
                crate::engine::exam::judge::rubric_text(&input.rubric)
            )
        };
        let values = BTreeMap::from([
            ("question", input.question.clone()),
            ("expected_answer", input.expected_answer.clone()),
            ("rubric", rubric),
            ("student_answer", input.student_answer.clone()),
        ]);
        let reply: Reply<LlmExamEvaluation> = self
            .0
            .single_prompt(LlmCall::ExamEvaluation, name, &values)
            .await?;
        Ok(Reply {
            value: Judgement::Judged(reply.value),
            usage: reply.usage,
        })
    }
}

#[derive(Debug, Clone)]
pub struct LlmPlanner(pub LlmBinding);

#[async_trait]
impl Planner for LlmPlanner {
    async fn plan(&self, input: &PlannerInput) -> Result<Reply<LlmStudyPlan>, LlmError> {
        let name = &self.0.workflow()?.prompts.planner;
        let bullets = |items: &[String]| {
            items
                .iter()
                .map(|i| format!("- {i}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let previous = if input.previous_plan.is_empty() {
            "none (this is the first plan)".to_owned()
        } else {
            bullets(&input.previous_plan)
        };
        let values = BTreeMap::from([
            ("unit_title", input.unit_title.clone()),
            ("unit_anchor", input.unit_anchor.clone()),
            ("key_ideas", bullets(&input.key_ideas)),
            ("student_profile", or_none(&input.student_profile)),
            ("previous_plan", previous),
            (
                "replan_reason",
                or_none(input.replan_reason.as_deref().unwrap_or("")),
            ),
            ("max_steps", input.max_steps.to_string()),
        ]);
        let reply: Reply<LlmStudyPlan> = self
            .0
            .single_prompt(LlmCall::Planner, name, &values)
            .await?;
        let steps = reply.value.steps.len();
        if steps > usize::try_from(input.max_steps).unwrap_or(usize::MAX) {
            return Err(LlmError::InvalidOutput(format!(
                "the plan has {steps} steps; at most {} were asked for",
                input.max_steps
            )));
        }
        Ok(reply)
    }
}

/// Most of a transcript a summary prompt carries, in estimated tokens
/// (the latest messages are kept).
const SUMMARY_TRANSCRIPT_TOKENS: u32 = 6000;

#[derive(Debug, Clone)]
pub struct LlmSummarizer(pub LlmBinding);

#[async_trait]
impl Summarizer for LlmSummarizer {
    async fn summarize(&self, input: &SummaryInput) -> Result<Reply<LlmSessionSummary>, LlmError> {
        let name = &self.0.workflow()?.prompts.summary;
        let mut kept = Vec::new();
        let mut used = 0;
        for message in input.transcript.iter().rev() {
            let who = match message.role {
                Role::Student => "Student",
                Role::Assistant => "Tutor",
            };
            let line = format!("{who}: {}", message.text.trim());
            used += tokens::estimate(&line) + 1;
            if used > SUMMARY_TRANSCRIPT_TOKENS {
                break;
            }
            kept.push(line);
        }
        kept.reverse();
        let stats_json = serde_json::to_string(&input.stats)
            .map_err(|e| LlmError::InvalidInput(format!("stats: {e}")))?;
        let values = BTreeMap::from([
            ("course_title", input.course_title.clone()),
            ("transcript", kept.join("\n")),
            ("stats_json", stats_json),
        ]);
        self.0.single_prompt(LlmCall::Summary, name, &values).await
    }
}

fn or_none(text: &str) -> String {
    if text.trim().is_empty() {
        "none".to_owned()
    } else {
        text.trim().to_owned()
    }
}
