//! Exam questions: MCQ submissions and support views, with lockouts from
//! the exam gateway (`super::lockouts`).

use chrono::{DateTime, Duration, Utc};

use super::error::ServiceError;
use super::idempotency::Idempotency;
use super::lockouts::{ExamGateway, exam_api_down};
use super::threads::{
    FirstRead, RECENT_MESSAGES, ThreadReads, commit_with_retries, snapshot_or_new,
};
use super::timeline::{card_message, card_state, event_message, exam_state, set_card_state};
use super::{Output, Service};
use crate::content::{Course, ExamItem, Unit};
use crate::engine::exam::cards::{self, CardRefusal};
use crate::engine::exam::lockout::LockoutStatus;
use crate::engine::mastery::evidence::{self, ExamSubmitted, SupportViewed, TransitionContext};
use crate::engine::mastery::thread_learning;
use crate::engine::snapshot_lite::build_snapshot_lite;
use crate::integrations::exam_api::ExamVerdict;
use crate::model::{
    ExamCardState, ExamCardStatus, McqSubmitRequest, McqSubmitResponse, Principal, RevisitReason,
    SupportType, SupportViewedRequest, SupportViewedResponse, Thread, TimelineEvent, TutorCard,
    TutorMessage,
};
use crate::store::{ExamLockout, UnitOfWork, WriteCondition};

/// The exam item, its unit, and checks of what the client claimed about it.
fn find_question<'c>(
    course: &'c Course,
    question_id: &str,
    unit_id: Option<&str>,
    tier: Option<crate::model::ExamTier>,
) -> Result<(&'c Unit, &'c ExamItem), ServiceError> {
    let (unit, item) = course.exam_item(question_id).ok_or_else(|| {
        ServiceError::invalid_field(
            "questionId",
            format!("question `{question_id}` is not in course `{}`", course.id),
        )
    })?;
    // A written question is asked and marked inside an exam session only.
    if item.is_written() {
        return Err(ServiceError::invalid_field(
            "questionId",
            format!(
                "question `{question_id}` is answered in words in an exam session, not submitted \
                 as an option"
            ),
        ));
    }
    if let Some(claimed) = unit_id
        && claimed != unit.id
    {
        return Err(ServiceError::invalid_field(
            "unitId",
            format!(
                "question `{question_id}` belongs to unit `{}`, not `{claimed}`",
                unit.id
            ),
        ));
    }
    if let Some(claimed) = tier
        && claimed != item.tier
    {
        return Err(ServiceError::invalid_field(
            "difficultyTier",
            format!(
                "question `{question_id}` is a {} question",
                item.tier.as_str()
            ),
        ));
    }
    Ok((unit, item))
}

impl Service {
    /// `POST /threads/{threadId}/exam/mcq-submit`.
    pub async fn mcq_submit(
        &self,
        who: &Principal,
        thread_id: &str,
        request: McqSubmitRequest,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        let reads = self
            .read_thread_and_course(
                who,
                thread_id,
                request.course_id.as_deref(),
                RECENT_MESSAGES,
            )
            .await?;
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, &reads.record.thread.course_id)?;
        let (course, workflow) = (rt.course(), rt.workflow());
        if let Some(c) = &request.course_id
            && *c != course.id
        {
            return Err(ServiceError::invalid_field(
                "courseId",
                "this thread belongs to another course",
            ));
        }
        let (unit, item) = find_question(
            course,
            &request.question_id,
            request.unit_id.as_deref(),
            request.difficulty_tier,
        )?;
        let Some(chosen) = item.option_index(&request.selected_option) else {
            let ids: Vec<String> = (0..item.options.len()).map(ExamItem::option_id).collect();
            return Err(ServiceError::invalid_field(
                "selectedOption",
                format!(
                    "`{}` is not an option of this question ({})",
                    request.selected_option,
                    ids.join(", ")
                ),
            ));
        };
        let lockout_hours = workflow.policy.exam_lockout_hours;
        let card_valid_for = hours(workflow.policy.exam_card_hours);
        let first_read = FirstRead::new(reads);
        commit_with_retries(self, |_| async {
            let now = self.clock.now();
            let ThreadReads { record: fresh, snapshot: read, lockouts: lockouts_read } =
                first_read.or_fresh(self, who, thread_id, &course.id).await?;
            let mut snapshot = snapshot_or_new(read.as_ref(), &who.student_id, &course.id, &course.entry_unit);
            let status = self
                .exams
                .lookup(&lockouts_read, &snapshot, std::slice::from_ref(&item.id), now)
                .await?;
            match status.get(&item.id).map(|s| s.at(now)) {
                Some(LockoutStatus::Locked { until }) => {
                    return Err(ServiceError::QuestionClosed(format!(
                        "this question is locked until {}; come back to it then",
                        until.to_rfc3339()
                    )));
                }
                Some(LockoutStatus::Passed) => {
                    return Err(ServiceError::QuestionClosed(
                        "you have already passed this question".to_owned(),
                    ));
                }
                _ => {}
            }
            cards::check_submission(&fresh.thread.session, &item.id, now, card_valid_for)
                .map_err(card_refused)?;
            let mut work = UnitOfWork::new();
            let verdict = match &self.exams {
                ExamGateway::BuiltIn => {
                    let correct = item.option_index(&item.answer) == Some(chosen);
                    let locked_until = (!correct).then(|| now + hours(lockout_hours));
                    if let Some(until) = locked_until {
                        work.put_lockout(
                            ExamLockout {
                                student_id: who.student_id.clone(),
                                course_id: course.id.clone(),
                                question_id: item.id.clone(),
                                locked_until: until,
                                reason: RevisitReason::Failed,
                            },
                            WriteCondition::of(lockouts_read.get(&item.id)),
                        );
                    }
                    ExamVerdict { correct, locked_until }
                }
                ExamGateway::External(api) => api
                    .submit(
                        &who.student_id,
                        &course.id,
                        &item.id,
                        &ExamItem::option_id(chosen),
                    )
                    .await
                    .map_err(|e| exam_api_down("submissions", &e))?,
            };
            let ctx = TransitionContext { course, workflow, now };
            let effect = evidence::apply_exam_submitted(
                &mut snapshot,
                &ctx,
                &ExamSubmitted {
                    question_id: item.id.clone(),
                    unit_id: unit.id.clone(),
                    tier: item.tier,
                    correct: verdict.correct,
                },
            )
            .map_err(|e| ServiceError::invalid_request(e.to_string()))?;
            let lite_status = self
                .exams
                .revisit_statuses(&lockouts_read, &snapshot, now)
                .await?;
            let mut lockouts = lite_status;
            if let Some(until) = verdict.locked_until {
                lockouts.insert(item.id.clone(), LockoutStatus::Locked { until });
            }
            let response = McqSubmitResponse {
                question_id: item.id.clone(),
                unit_id: unit.id.clone(),
                tier: item.tier,
                is_correct: verdict.correct,
                feedback_text: if verdict.correct {
                    format!(
                        "Correct — well done! That's a {} question passed in {}.",
                        item.tier.as_str(),
                        unit.title
                    )
                } else {
                    "Not this time. This question is now in your revisit list; view the memo to see a worked solution, then come back to it.".to_owned()
                },
                locked_until: verdict.locked_until,
                mastery_tier: effect.tier_after,
                snapshot_lite: build_snapshot_lite(&snapshot, course, workflow, &lockouts, now),
            };
            work.put_snapshot(snapshot, WriteCondition::of(read.as_ref()));
            let mut thread = fresh.thread.clone();
            cards::record_submitted(&mut thread.session, &item.id, now);
            thread_learning::record_answer(
                &mut thread.session.learning,
                &unit.id,
                verdict.correct,
                false,
                None,
            );
            let event = TimelineEvent::ExamSubmitted {
                question_id: item.id.clone(),
                unit_id: unit.id.clone(),
                tier: item.tier,
                selected_option: ExamItem::option_id(chosen),
                is_correct: verdict.correct,
                feedback_text: response.feedback_text.clone(),
                locked_until: verdict.locked_until,
            };
            let text = format!(
                "I chose {}: {}",
                ExamItem::option_id(chosen),
                item.options[chosen].trim()
            );
            let message = record_exam_action(
                &mut thread,
                &fresh.recent_messages,
                &item.id,
                ExamCardStatus::Failed,
                |s| {
                    s.status = if verdict.correct {
                        ExamCardStatus::Passed
                    } else {
                        ExamCardStatus::Failed
                    };
                    s.selected_option = Some(ExamItem::option_id(chosen));
                    s.feedback_text = Some(response.feedback_text.clone());
                    s.locked_until = verdict.locked_until;
                },
                event,
                text,
                self.ids.new_id(),
                now,
            );
            work.put_thread(fresh.update(thread, vec![message]));
            let output = idempotency.respond(&mut work, 200, &response)?;
            Ok((work, output))
        })
        .await
    }

    /// `POST /threads/{threadId}/exam/support-viewed`: the memo or video was
    /// opened, so the question locks and goes on the revisit list.
    pub async fn support_viewed(
        &self,
        who: &Principal,
        thread_id: &str,
        request: SupportViewedRequest,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        let reads = self
            .read_thread_and_course(
                who,
                thread_id,
                request.course_id.as_deref(),
                RECENT_MESSAGES,
            )
            .await?;
        let bundle = self.bundle().await;
        let rt = self.runtime(&bundle, &reads.record.thread.course_id)?;
        let (course, workflow) = (rt.course(), rt.workflow());
        let (unit, item) = find_question(
            course,
            &request.question_id,
            request.unit_id.as_deref(),
            None,
        )?;
        if request.support_type == SupportType::Video && item.video_url.is_none() {
            return Err(ServiceError::invalid_field(
                "supportType",
                "this question has no video",
            ));
        }
        let lockout_hours = workflow.policy.exam_lockout_hours;
        let first_read = FirstRead::new(reads);
        commit_with_retries(self, |_| async {
            let now = self.clock.now();
            let ThreadReads {
                record: fresh,
                snapshot: read,
                lockouts: lockouts_read,
            } = first_read
                .or_fresh(self, who, thread_id, &course.id)
                .await?;
            cards::check_support_view(&fresh.thread.session, &item.id).map_err(card_refused)?;
            let mut snapshot = snapshot_or_new(
                read.as_ref(),
                &who.student_id,
                &course.id,
                &course.entry_unit,
            );
            let mut work = UnitOfWork::new();
            let locked_until = match &self.exams {
                ExamGateway::BuiltIn => {
                    let until = now + hours(lockout_hours);
                    let current = lockouts_read.get(&item.id);
                    // Viewing again never shortens a lock already in place.
                    let until = current
                        .filter(|l| l.value.is_active(now))
                        .map_or(until, |l| l.value.locked_until.max(until));
                    work.put_lockout(
                        ExamLockout {
                            student_id: who.student_id.clone(),
                            course_id: course.id.clone(),
                            question_id: item.id.clone(),
                            locked_until: until,
                            reason: RevisitReason::SupportViewed,
                        },
                        WriteCondition::of(current),
                    );
                    Some(until)
                }
                ExamGateway::External(api) => api
                    .support_viewed(&who.student_id, &course.id, &item.id, request.support_type)
                    .await
                    .map_err(|e| {
                        tracing::warn!(error = %e, "exam API support view failed");
                        ServiceError::unavailable(
                            "the exam service is unavailable; try again shortly",
                            Some(5),
                        )
                    })?,
            };
            let ctx = TransitionContext {
                course,
                workflow,
                now,
            };
            evidence::apply_support_viewed(
                &mut snapshot,
                &ctx,
                &SupportViewed {
                    question_id: item.id.clone(),
                    unit_id: unit.id.clone(),
                    tier: item.tier,
                },
            )
            .map_err(|e| ServiceError::invalid_request(e.to_string()))?;
            let mut lockouts = self
                .exams
                .revisit_statuses(&lockouts_read, &snapshot, now)
                .await?;
            if let Some(until) = locked_until {
                lockouts.insert(item.id.clone(), LockoutStatus::Locked { until });
            }
            let response = SupportViewedResponse {
                question_id: item.id.clone(),
                locked_until,
                memo: (request.support_type == SupportType::Memo)
                    .then(|| item.memo.trim().to_owned()),
                video_url: (request.support_type == SupportType::Video)
                    .then(|| item.video_url.clone())
                    .flatten(),
                snapshot_lite: build_snapshot_lite(&snapshot, course, workflow, &lockouts, now),
            };
            work.put_snapshot(snapshot, WriteCondition::of(read.as_ref()));
            let mut thread = fresh.thread.clone();
            // Having seen the solution, the student cannot answer this showing.
            cards::record_submitted(&mut thread.session, &item.id, now);
            thread_learning::record_help(&mut thread.session.learning, &unit.id);
            let event = TimelineEvent::SupportViewed {
                question_id: item.id.clone(),
                unit_id: unit.id.clone(),
                support_type: request.support_type,
                locked_until,
            };
            let text = match request.support_type {
                SupportType::Memo => "I opened the memo.",
                SupportType::Video => "I watched the video.",
            };
            let support = request.support_type;
            let message = record_exam_action(
                &mut thread,
                &fresh.recent_messages,
                &item.id,
                ExamCardStatus::Locked,
                |s| {
                    if !s.supports_viewed.contains(&support) {
                        s.supports_viewed.push(support);
                    }
                    s.locked_until = s.locked_until.max(locked_until);
                    if support == SupportType::Memo {
                        s.memo = Some(item.memo.trim().to_owned());
                    }
                },
                event,
                text.to_owned(),
                self.ids.new_id(),
                now,
            );
            work.put_thread(fresh.update(thread, vec![message]));
            let output = idempotency.respond(&mut work, 200, &response)?;
            Ok((work, output))
        })
        .await
    }
}

/// Records an action on the exam card of `question_id` (the latest one
/// shown, if still among `recent`): `update` changes its state, which
/// starts as `initial`. Returns the action's timeline item.
#[allow(clippy::too_many_arguments)]
fn record_exam_action(
    thread: &mut Thread,
    recent: &[TutorMessage],
    question_id: &str,
    initial: ExamCardStatus,
    update: impl FnOnce(&mut ExamCardState),
    event: TimelineEvent,
    text: String,
    message_id: String,
    now: DateTime<Utc>,
) -> TutorMessage {
    let card = card_message(
        recent,
        |c| matches!(c, TutorCard::Exam(e) if e.question_id == question_id),
    );
    if let Some(card) = card {
        let state = exam_state(card_state(&thread.session, &card.id), update, initial);
        let card_id = card.id.clone();
        set_card_state(&mut thread.session, &card_id, state);
    }
    thread.updated_at = now;
    event_message(thread, message_id, text, event, now)
}

/// A submission or memo view of a question the thread has no open card for.
fn card_refused(refusal: CardRefusal) -> ServiceError {
    ServiceError::ExamCardRequired {
        field: "questionId".to_owned(),
        detail: refusal.to_string(),
    }
}

/// Fractional hours from the workflow, as a duration.
pub(crate) fn hours(h: f64) -> Duration {
    Duration::milliseconds((h * 3_600_000.0).round() as i64)
}
