//! The student's presses outside the chat: a drill card's answer box, an
//! exam card's options and memo, and the pause, resume and end buttons.

use serde_json::{Value, json};
use tutorflow::api::routes::Function;
use tutorflow::content::ExamItem;
use tutorflow::model::{
    DrillGradeRequest, DrillGradeResponse, DrillResult, ExamCard, ExamResult, GradeOutcome,
    McqSubmitRequest, McqSubmitResponse, SupportType, SupportViewedRequest, SupportViewedResponse,
};

use super::line::{
    DrillOutcome, ExamOutcome, LifecycleOutcome, MemoOutcome, ProblemSetSummary, StepOutcome,
};
use super::{Simulation, StepError};
use crate::script::{Answer, ExamChoice, LifecycleStep, Step};

impl Simulation<'_> {
    pub(super) async fn answer_drill(
        &mut self,
        step: &Step,
        answer: &Answer,
    ) -> Result<StepOutcome, StepError> {
        let text = self.drill_answer(step, answer)?;
        let (token, _) = self.last_drill_expected(step)?;
        let path = format!("/threads/{}/drill/grade", self.thread_id);
        let graded: DrillGradeResponse = self
            .post_step(
                step,
                &path,
                &DrillGradeRequest {
                    drill_token: token,
                    student_answer: text.clone(),
                    response_time_ms: None,
                },
                Function::DrillGrade,
            )
            .await?;
        self.last_drill_result = Some(if graded.is_correct {
            DrillResult::Correct
        } else {
            DrillResult::Incorrect
        });
        Ok(StepOutcome::Drill(DrillOutcome {
            answer: text,
            result: graded.result,
            counted: graded.counted,
            mistake_tag: graded.common_mistake_tag,
            feedback: graded.feedback_text,
            snapshot_lite: graded.snapshot_lite,
        }))
    }

    fn last_exam(&self, step: &Step) -> Result<(ExamCard, &ExamItem), StepError> {
        let card = self.last_exam.clone().ok_or_else(|| {
            self.error(
                step,
                format!(
                    "`{}` needs an exam card, but the tutor has not shown one yet",
                    step.name()
                ),
            )
        })?;
        let item = self
            .bundle
            .course(&self.script.course)
            .and_then(|c| c.exam_item(&card.question_id))
            .map(|(_, item)| item)
            .ok_or_else(|| {
                self.error(
                    step,
                    format!(
                        "exam question `{}` is not in the course's bank",
                        card.question_id
                    ),
                )
            })?;
        Ok((card, item))
    }

    pub(super) async fn exam(
        &mut self,
        step: &Step,
        choice: ExamChoice,
    ) -> Result<StepOutcome, StepError> {
        let (card, item) = self.last_exam(step)?;
        let correct = item.option_index(&item.answer);
        let selected = match choice {
            ExamChoice::Pass => correct,
            ExamChoice::Fail => (0..item.options.len()).find(|i| Some(*i) != correct),
        }
        .map(ExamItem::option_id)
        .ok_or_else(|| {
            self.error(
                step,
                format!(
                    "exam question `{}` has no {} option",
                    card.question_id,
                    if choice == ExamChoice::Pass {
                        "correct"
                    } else {
                        "wrong"
                    }
                ),
            )
        })?;
        let path = format!("/threads/{}/exam/mcq-submit", self.thread_id);
        let submitted: McqSubmitResponse = self
            .post_step(
                step,
                &path,
                &McqSubmitRequest {
                    question_id: card.question_id.clone(),
                    selected_option: selected.clone(),
                    course_id: None,
                    unit_id: Some(card.unit_id.clone()),
                    difficulty_tier: Some(card.tier),
                },
                Function::ExamSubmit,
            )
            .await?;
        self.last_exam_result = Some(if submitted.is_correct {
            ExamResult::Passed
        } else {
            ExamResult::Locked
        });
        Ok(StepOutcome::Exam(ExamOutcome {
            question_id: submitted.question_id,
            selected,
            result: if submitted.is_correct {
                GradeOutcome::Correct
            } else {
                GradeOutcome::Wrong
            },
            unit_tier: submitted.mastery_tier,
            locked: submitted.locked_until.is_some(),
            locked_until: submitted.locked_until,
            feedback: submitted.feedback_text,
            snapshot_lite: submitted.snapshot_lite,
        }))
    }

    /// Pauses, resumes or ends the thread as the app's buttons would.
    pub(super) async fn lifecycle(
        &mut self,
        step: &Step,
        change: LifecycleStep,
    ) -> Result<StepOutcome, StepError> {
        let path = format!("/threads/{}/{}", self.thread_id, change.key());
        let response: Value = self
            .post_step(step, &path, &json!({}), Function::Turn)
            .await?;
        let unexpected = |what: &str| {
            self.error(
                step,
                format!("the {} reply has no {what}: {response}", change.key()),
            )
        };
        let status =
            serde_json::from_value(response["status"].clone()).map_err(|_| unexpected("status"))?;
        let at = |field: &str| serde_json::from_value(response[field].clone()).ok();
        let problem_set = match &response["state"]["problemSet"] {
            Value::Null => None,
            view => {
                let view: tutorflow::model::ProblemSetView =
                    serde_json::from_value(view.clone()).map_err(|_| unexpected("problem set"))?;
                Some(ProblemSetSummary::of(&view, self.problem_index))
            }
        };
        let tutor_text: Vec<&str> = response["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "assistant")
            .filter_map(|m| m["text"].as_str())
            .map(str::trim)
            .collect();
        Ok(StepOutcome::Lifecycle(LifecycleOutcome {
            status,
            paused_at: at("pausedAt"),
            ended_at: at("endedAt"),
            problem_set,
            tutor_text: tutor_text.join("\n"),
        }))
    }

    pub(super) async fn view_memo(&mut self, step: &Step) -> Result<StepOutcome, StepError> {
        let (card, _) = self.last_exam(step)?;
        let path = format!("/threads/{}/exam/support-viewed", self.thread_id);
        let viewed: SupportViewedResponse = self
            .post_step(
                step,
                &path,
                &SupportViewedRequest {
                    question_id: card.question_id.clone(),
                    support_type: SupportType::Memo,
                    course_id: None,
                    unit_id: Some(card.unit_id.clone()),
                },
                Function::SupportViewed,
            )
            .await?;
        Ok(StepOutcome::Memo(MemoOutcome {
            question_id: viewed.question_id,
            locked: viewed.locked_until.is_some(),
            locked_until: viewed.locked_until,
            snapshot_lite: viewed.snapshot_lite,
        }))
    }
}
