//! The deterministic implementations of every LLM seam: no I/O, no clock,
//! no randomness beyond the seed handed in. They are the local default and
//! what the pipeline falls back to when a provider call fails.
//!
//! - tutor: a complete tutor built from the policy, context and phrasebook;
//! - safety: no verdict beyond the rule-based gate;
//! - drill grading: "cannot judge", so code grading decides;
//! - exam evaluation: a written answer marked by its rubric's terms;
//! - planner: the unit's authored plan, else the workflow's default plan;
//! - summary: built from the session's numbers.

mod passage;
mod planner;
mod summary;
mod tutor;

use async_trait::async_trait;

pub use planner::OfflinePlanner;
pub use summary::OfflineSummarizer;
pub use tutor::OfflineTutor;

use crate::model::{
    CallUsage, DrillGrader, DrillGradingInput, ExamEvaluationInput, ExamEvaluator, Judgement,
    LlmDrillGrade, LlmError, LlmExamEvaluation, Reply, SafetyInput, SafetyJudge, SafetyOutcome,
};

fn offline<T>(value: T) -> Reply<T> {
    Reply {
        value,
        usage: CallUsage::offline(),
    }
}

/// Leaves safety to the rule-based gate.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineSafetyJudge;

#[async_trait]
impl SafetyJudge for OfflineSafetyJudge {
    async fn judge(&self, _input: &SafetyInput) -> Result<Reply<SafetyOutcome>, LlmError> {
        Ok(offline(SafetyOutcome::NoVerdict))
    }
}

/// Leaves drill grading to code.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineDrillGrader;

#[async_trait]
impl DrillGrader for OfflineDrillGrader {
    async fn grade(
        &self,
        _input: &DrillGradingInput,
    ) -> Result<Reply<Judgement<LlmDrillGrade>>, LlmError> {
        Ok(offline(Judgement::CannotJudge))
    }
}

/// Marks a written exam answer by its rubric's terms and the model
/// answer's key words (see [`crate::engine::exam::judge`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineExamEvaluator;

#[async_trait]
impl ExamEvaluator for OfflineExamEvaluator {
    async fn evaluate(
        &self,
        input: &ExamEvaluationInput,
    ) -> Result<Reply<Judgement<LlmExamEvaluation>>, LlmError> {
        Ok(offline(Judgement::Judged(
            crate::engine::exam::judge::offline_evaluation(input),
        )))
    }
}
