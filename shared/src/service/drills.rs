//! `POST /threads/{threadId}/drill/grade`: drills are stateless (never stored);
//! the signed token says what was asked, the item is regenerated, and code
//! grades the answer. Only a first, understood attempt is evidence.

use chrono::Duration;

use super::error::ServiceError;
use super::idempotency::Idempotency;
use super::threads::{
    FirstRead, RECENT_MESSAGES, ThreadReads, commit_with_retries, snapshot_or_new,
};
use super::timeline::{card_message, card_state, event_message, set_card_state};
use super::{Output, Service};
use crate::content::Unit;
use crate::engine::grading::SlipTag;
use crate::engine::mastery::evidence::record_ability;
use crate::engine::mastery::evidence::{self, DrillGraded, TransitionContext};
use crate::engine::mastery::thread_learning;
use crate::engine::practice::drill::{self, DrillError, Expected};
use crate::engine::practice::drill_grade::{DrillVerdict, grade_drill};
use crate::engine::practice::drill_token::{self, DrillTokenError};
use crate::engine::session::lifecycle;
use crate::engine::snapshot_lite::build_snapshot_lite;
use crate::engine::turn::remember_drill;
use crate::model::{
    CardState, DrillCardState, DrillGradeRequest, DrillGradeResponse, DrillGradingInput,
    GradeOutcome, Judgement, MistakeTagBrief, Principal, TimelineEvent, TutorCard,
};
use crate::store::{UnitOfWork, WriteCondition};

/// Card answers kept for the next turn: more than a turn ever brings.
const CARD_GRADES_KEPT: usize = 8;

impl Service {
    pub async fn grade_drill(
        &self,
        who: &Principal,
        thread_id: &str,
        request: DrillGradeRequest,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        let answer = request.student_answer.trim().to_owned();
        if answer.is_empty() {
            return Err(ServiceError::invalid_field(
                "studentAnswer",
                "the answer is empty",
            ));
        }
        if answer.chars().count() > self.config.limits.max_message_chars {
            return Err(ServiceError::invalid_field(
                "studentAnswer",
                format!(
                    "the answer is longer than {} characters",
                    self.config.limits.max_message_chars
                ),
            ));
        }
        // As sent, so the position named is the client's own.
        super::text_hygiene::check("studentAnswer", &request.student_answer)?;
        let reads = self
            .read_thread_and_course(who, thread_id, None, RECENT_MESSAGES)
            .await?;
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, &reads.record.thread.course_id)?;
        let (course, workflow) = (rt.course(), rt.workflow());
        let ttl = Duration::seconds(
            i64::try_from(self.config.drills.token_ttl_seconds).unwrap_or(i64::MAX / 2),
        );
        let verified = drill_token::verify(
            &request.drill_token,
            &self.token_keys,
            thread_id,
            self.clock.now(),
            ttl,
        )
        .map_err(token_problem)?;
        let expected = drill::expected(&verified, &bundle.blueprints).map_err(|e| match e {
            DrillError::Token(t) => token_problem(t),
            other => drill_outdated(other.to_string()),
        })?;
        let unit = course.unit(&verified.claims.unit_id).ok_or_else(|| {
            drill_outdated("this drill's unit is no longer in the course".to_owned())
        })?;
        let mut verdict = grade_drill(&expected, &answer, &workflow.grading);
        let mut feedback = feedback(&verdict, unit);
        if verdict.outcome == GradeOutcome::Unverifiable
            && let Expected::Authored {
                prompt,
                question_latex,
                expected_answer,
            } = &expected
        {
            // Code could not read the answer: the drill-grading model may.
            let grader = self.llm.drill_grader(
                &bundle,
                &course.workflow,
                Some(
                    tokio::time::Instant::now()
                        + std::time::Duration::from_millis(workflow.llm.drill_grading.timeout_ms),
                ),
            );
            let input = DrillGradingInput {
                unit_title: unit.title.clone(),
                prompt: prompt.clone(),
                question: question_latex.clone(),
                expected_answer: expected_answer.clone(),
                student_answer: answer.clone(),
                mistake_tags: unit
                    .mistake_tags
                    .iter()
                    .map(|t| MistakeTagBrief {
                        id: t.id.clone(),
                        description: t.description.clone(),
                    })
                    .collect(),
            };
            if let Ok(reply) = grader.grade(&input).await
                && let Judgement::Judged(judged) = reply.value
            {
                verdict.outcome = if judged.is_correct {
                    GradeOutcome::Correct
                } else {
                    GradeOutcome::Wrong
                };
                verdict.mistake_tag = judged.common_mistake_tag.filter(|_| !judged.is_correct);
                feedback = judged.feedback_text;
            }
        }
        let understood = verdict.outcome != GradeOutcome::Unverifiable;
        let difficulty = match &expected {
            Expected::Generated(item) => Some(item.difficulty),
            Expected::Authored { .. } => None,
        };
        let first_read = FirstRead::new(reads);
        commit_with_retries(self, |_| async {
            let now = self.clock.now();
            let ThreadReads {
                record: fresh,
                snapshot: read,
                lockouts: lockouts_read,
            } = first_read.or_fresh(self, who, thread_id, &course.id).await?;
            let mut snapshot = snapshot_or_new(
                read.as_ref(),
                &who.student_id,
                &course.id,
                &course.entry_unit,
            );
            let mut thread = fresh.thread.clone();
            let first_attempt =
                understood && !thread.session.graded_drills.contains(&verified.replay_key);
            let ctx = TransitionContext {
                course,
                workflow,
                now,
            };
            let mut work = UnitOfWork::new();
            if understood {
                evidence::apply_drill_graded(
                    &mut snapshot,
                    &ctx,
                    &DrillGraded {
                        unit_id: unit.id.clone(),
                        correct: verdict.is_correct(),
                        mistake_tag: verdict.mistake_tag.clone(),
                        first_attempt,
                    },
                )
                .map_err(|e| ServiceError::invalid_request(e.to_string()))?;
                if first_attempt && let Some(d) = difficulty {
                    record_ability(&mut snapshot, workflow, &unit.id, d, verdict.is_correct());
                }
                let session = &mut thread.session;
                remember_drill(session, &verified.replay_key);
                if first_attempt {
                    session.card_grades.push(verdict.outcome);
                    let excess = session.card_grades.len().saturating_sub(CARD_GRADES_KEPT);
                    session.card_grades.drain(..excess);
                }
                thread_learning::record_answer(
                    &mut session.learning,
                    &unit.id,
                    verdict.is_correct(),
                    !first_attempt,
                    verdict.mistake_tag.as_deref(),
                );
                // The drill may also be the question pending in the chat.
                if session
                    .pending_question
                    .as_ref()
                    .and_then(|q| q.drill_token.as_deref())
                    == Some(request.drill_token.as_str())
                {
                    if verdict.is_correct() {
                        lifecycle::clear_question(session);
                    } else {
                        lifecycle::record_wrong_attempt(session, &answer);
                    }
                }
                thread.updated_at = now;
                // The timeline records the answer; the card keeps the first.
                let grade = DrillCardState {
                    answer: answer.clone(),
                    result: verdict.outcome,
                    is_correct: verdict.is_correct(),
                    feedback_text: feedback.clone(),
                    correct_answer: (!verdict.is_correct()).then(|| verdict.correct_answer.clone()),
                };
                let card = card_message(&fresh.recent_messages, |c| {
                    matches!(c, TutorCard::Drill(d) if d.drill_token.as_deref() == Some(request.drill_token.as_str()))
                });
                if let Some(card) = card
                    && card_state(&thread.session, &card.id).is_none()
                {
                    set_card_state(&mut thread.session, &card.id, CardState::Drill(grade.clone()));
                }
                let event = event_message(
                    &mut thread,
                    self.ids.new_id(),
                    answer.clone(),
                    TimelineEvent::DrillGraded {
                        drill_key: verified.replay_key.clone(),
                        unit_id: unit.id.clone(),
                        grade,
                        counted: first_attempt,
                    },
                    now,
                );
                work.put_snapshot(snapshot.clone(), WriteCondition::of(read.as_ref()));
                work.put_thread(fresh.update(thread, vec![event]));
            }
            let lockouts = self
                .exams
                .revisit_statuses(&lockouts_read, &snapshot, now)
                .await?;
            let response = DrillGradeResponse {
                result: verdict.outcome,
                is_correct: verdict.is_correct(),
                feedback_text: feedback.clone(),
                common_mistake_tag: verdict.mistake_tag.clone(),
                correct_answer: (understood && !verdict.is_correct())
                    .then(|| verdict.correct_answer.clone()),
                counted: first_attempt,
                snapshot_lite: build_snapshot_lite(&snapshot, course, workflow, &lockouts, now),
            };
            let output = idempotency.respond(&mut work, 200, &response)?;
            Ok((work, output))
        })
        .await
    }
}

fn token_problem(e: DrillTokenError) -> ServiceError {
    let detail = match e {
        DrillTokenError::Expired { .. } => "this drill has expired; ask for a new one".to_owned(),
        DrillTokenError::WrongThread => "this drill belongs to another conversation".to_owned(),
        DrillTokenError::UnsupportedVersion(_) => {
            "this drill is from an older version; ask for a new one".to_owned()
        }
        _ => "the drill token is not valid: it was changed or not issued here".to_owned(),
    };
    ServiceError::invalid_field("drillToken", detail)
}

/// A drill whose token is sound but whose content has changed since.
fn drill_outdated(detail: String) -> ServiceError {
    ServiceError::DrillOutdated {
        field: "drillToken".to_owned(),
        detail,
    }
}

/// Feedback that helps without giving the whole solution away.
fn feedback(verdict: &DrillVerdict, unit: &Unit) -> String {
    match verdict.outcome {
        GradeOutcome::Correct if verdict.tags.contains(&SlipTag::Unsimplified) => {
            "That's right — and you can simplify it further next time.".to_owned()
        }
        GradeOutcome::Correct => "That's right — nice work!".to_owned(),
        GradeOutcome::Close => {
            let hint = if verdict.tags.contains(&SlipTag::SignError) {
                "Check the sign."
            } else if verdict.tags.contains(&SlipTag::DecimalPlace) {
                "Check where the decimal point goes."
            } else if verdict.tags.contains(&SlipTag::Rounding) {
                "Keep more digits before you round."
            } else {
                "Check your last step."
            };
            format!("Very close! {hint}")
        }
        GradeOutcome::Wrong => {
            let mistake = verdict
                .mistake_tag
                .as_deref()
                .and_then(|tag| unit.mistake_tags.iter().find(|t| t.id == tag));
            match mistake {
                Some(m) => format!(
                    "Not quite. A common slip here: {}.",
                    m.description.trim().trim_end_matches('.').to_lowercase()
                ),
                None => "Not quite. Have another look at how you set it up.".to_owned(),
            }
        }
        GradeOutcome::Unverifiable => {
            "I couldn't read that as an answer. Try writing just the answer, like 12, 3/4 or x = 5."
                .to_owned()
        }
    }
}
