//! Creating threads, reading them back, and the helpers every use case on a
//! thread shares: ownership checks and committing with retries.

use std::future::Future;

use super::error::ServiceError;
use super::idempotency::Idempotency;
use super::lease::backoff;
use super::lockouts::LockoutsRead;
use super::timeline::with_card_states;
use super::views;
use super::{Output, Service};
use crate::content::workflow::ProblemSetMode;
use crate::content::{Course, Workflow};
use crate::engine::exam::lockout::{LockoutStatus, NoLockouts};
use crate::engine::modes::{self, Start, StartCall, StartReply};
use crate::engine::snapshot_lite::build_snapshot_lite;
use crate::model::{
    CreateThreadRequest, CreateThreadResponse, Mode, Principal, Role, StudentSnapshot, Thread,
    ThreadStatus, TutorMessage,
};
use crate::store::{
    Order, PageRequest, StoreError, ThreadChange, ThreadRecord, UnitOfWork, Versioned,
    WriteCondition,
};

/// Which of the caller's threads `GET /me/threads` lists.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadFilter {
    pub status: Option<ThreadStatus>,
    pub mode: Option<crate::model::Mode>,
}

/// Times a use case re-reads and re-applies after a version conflict
/// before answering 409.
const COMMIT_ATTEMPTS: usize = 5;
/// First and longest pause before a commit is tried again.
const COMMIT_BACKOFF_BASE: std::time::Duration = std::time::Duration::from_millis(10);
const COMMIT_BACKOFF_CAP: std::time::Duration = std::time::Duration::from_millis(200);

/// Messages a turn reads back for its history and style signals.
pub(crate) const RECENT_MESSAGES: usize = 20;

/// A new thread's randomness (an exam's questions), drawn from the id
/// drawn for it so that creating a thread takes nothing from the id
/// source's other draws.
fn seed_of(drawn_id: &str) -> u64 {
    // FNV-1a: the id is already random; this only folds it into 64 bits.
    drawn_id.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The thread, if it exists and is the caller's; otherwise 404 either way,
/// so nobody can probe for other students' threads.
pub(crate) async fn owned_thread(
    service: &Service,
    who: &Principal,
    thread_id: &str,
    recent: usize,
) -> Result<ThreadRecord, ServiceError> {
    let record = service
        .store
        .get_thread(thread_id, recent)
        .await
        .map_err(|e| match e {
            StoreError::InvalidInput(_) => {
                ServiceError::not_found(format!("thread `{thread_id}` does not exist"))
            }
            other => ServiceError::Store(other),
        })?;
    match record {
        Some(r) if r.thread.student_id == who.student_id => Ok(r),
        _ => Err(ServiceError::not_found(format!(
            "thread `{thread_id}` does not exist"
        ))),
    }
}

/// A thread's id carries its course, so that what a request reads in the
/// course (snapshot, lockouts) can be read alongside the thread rather
/// than after it. Only a course id of letters, digits, `-` and `_` is
/// carried (any other thread gets a bare id and takes the slower path).
const COURSE_SEPARATOR: char = '.';
const MAX_CARRIED_COURSE_BYTES: usize = 64;

fn carriable_course(course_id: &str) -> bool {
    !course_id.is_empty()
        && course_id.len() <= MAX_CARRIED_COURSE_BYTES
        && course_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A new thread's id: its course, then the drawn id.
fn new_thread_id(course_id: &str, drawn: &str) -> String {
    if carriable_course(course_id) {
        format!("{course_id}{COURSE_SEPARATOR}{drawn}")
    } else {
        drawn.to_owned()
    }
}

/// The course a thread id says its thread is in: only a hint, which the
/// thread read alongside confirms (an id from before ids carried it, or a
/// webhook session's, says none).
pub(crate) fn course_in_thread_id(thread_id: &str) -> Option<&str> {
    let (course, rest) = thread_id.split_once(COURSE_SEPARATOR)?;
    (carriable_course(course) && !rest.is_empty()).then_some(course)
}

/// What a request on a thread builds on: the thread, and the student's
/// snapshot and lockouts in the thread's course.
pub(crate) struct ThreadReads {
    pub record: ThreadRecord,
    /// `None` before the student's first interaction with the course.
    pub snapshot: Option<Versioned<StudentSnapshot>>,
    pub lockouts: LockoutsRead,
}

/// The reads a request's attempts build on: the first attempt uses what
/// was read when the request started (so a request reads each item once);
/// an attempt after a version conflict reads afresh, in one round, since
/// the course is known by then.
pub(crate) struct FirstRead(std::sync::Mutex<Option<ThreadReads>>);

impl FirstRead {
    /// `reads` must hold a thread read with [`RECENT_MESSAGES`].
    pub(crate) fn new(reads: ThreadReads) -> Self {
        FirstRead(std::sync::Mutex::new(Some(reads)))
    }

    pub(crate) async fn or_fresh(
        &self,
        service: &Service,
        who: &Principal,
        thread_id: &str,
        course_id: &str,
    ) -> Result<ThreadReads, ServiceError> {
        let first = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        match first {
            Some(reads) => Ok(reads),
            None => {
                service
                    .read_thread_and_course(who, thread_id, Some(course_id), RECENT_MESSAGES)
                    .await
            }
        }
    }
}

/// The workflow's bounds on the problems a request sends for a problem set
/// (creating a thread, or a webhook turn).
pub(crate) fn check_problem_count(
    count: usize,
    settings: &ProblemSetMode,
) -> Result<(), ServiceError> {
    let (min, max) = (
        settings.min_problems as usize,
        settings.max_problems as usize,
    );
    if count < min || count > max {
        return Err(ServiceError::invalid_field(
            "problems",
            format!("a problem set has {min} to {max} problems; this one has {count}"),
        ));
    }
    Ok(())
}

/// The student's snapshot for a course, or a fresh one at the entry unit.
pub(crate) fn snapshot_or_new(
    read: Option<&Versioned<StudentSnapshot>>,
    student_id: &str,
    course_id: &str,
    entry_unit: &str,
) -> StudentSnapshot {
    read.map_or_else(
        || StudentSnapshot::new(student_id, course_id, entry_unit),
        |v| v.value.clone(),
    )
}

impl Service {
    /// The student's stored snapshot for `course`, if any (a write's
    /// condition, or whether they have started), and the snapshot to work
    /// from: that one, or a fresh one at the entry unit.
    pub(crate) async fn read_snapshot(
        &self,
        who: &Principal,
        course: &Course,
    ) -> Result<(Option<Versioned<StudentSnapshot>>, StudentSnapshot), ServiceError> {
        let read = self.store.get_snapshot(&who.student_id, &course.id).await?;
        let snapshot = snapshot_or_new(
            read.as_ref(),
            &who.student_id,
            &course.id,
            &course.entry_unit,
        );
        Ok((read, snapshot))
    }
}

impl Service {
    /// The caller's thread (with its `recent` latest messages), and the
    /// student's snapshot and lockouts in its course: see
    /// [`read_with_course`](Self::read_with_course).
    pub(crate) async fn read_thread_and_course(
        &self,
        who: &Principal,
        thread_id: &str,
        course_hint: Option<&str>,
        recent: usize,
    ) -> Result<ThreadReads, ServiceError> {
        let thread = async { owned_thread(self, who, thread_id, recent).await.map(Some) };
        // On the heap: a thread's state is large, and the reads in flight
        // together hold it more than once.
        let reads = Box::pin(self.read_with_course(who, thread_id, course_hint, thread)).await?;
        reads.ok_or_else(|| ServiceError::internal("an owned thread read as absent"))
    }

    /// The thread `read_thread` reads, and the student's snapshot and
    /// lockouts in its course. When the course is known beforehand — the
    /// thread's id carries it, or `course_hint` names it — the three reads
    /// go out together; the thread confirms the course, and if it is
    /// another, the course's reads are made again for the thread's own
    /// course (so nothing is ever built on another course's state).
    /// Otherwise they follow the thread's read. `None` when there is no
    /// thread (nothing more is read).
    pub(crate) async fn read_with_course(
        &self,
        who: &Principal,
        thread_id: &str,
        course_hint: Option<&str>,
        read_thread: impl Future<Output = Result<Option<ThreadRecord>, ServiceError>>,
    ) -> Result<Option<ThreadReads>, ServiceError> {
        let bundle = self.bundle().await;
        // A course the bundle does not have is no hint worth a read.
        let hint = course_in_thread_id(thread_id)
            .or(course_hint)
            .filter(|c| bundle.course(c).is_some());
        let (record, early) = match hint {
            Some(course_id) => {
                let (record, course) =
                    tokio::try_join!(read_thread, self.read_course(who, course_id))?;
                let confirmed = record
                    .as_ref()
                    .is_some_and(|r| r.thread.course_id == course_id);
                (record, confirmed.then_some(course))
            }
            None => (read_thread.await?, None),
        };
        let Some(record) = record else {
            return Ok(None);
        };
        let (snapshot, lockouts) = match early {
            Some(course) => course,
            None => self.read_course(who, &record.thread.course_id).await?,
        };
        Ok(Some(ThreadReads {
            record,
            snapshot,
            lockouts,
        }))
    }

    /// The student's snapshot and lockouts in `course_id`, read together.
    async fn read_course(
        &self,
        who: &Principal,
        course_id: &str,
    ) -> Result<(Option<Versioned<StudentSnapshot>>, LockoutsRead), ServiceError> {
        tokio::try_join!(
            async { Ok(self.store.get_snapshot(&who.student_id, course_id).await?) },
            self.read_lockouts(&who.student_id, course_id)
        )
    }
}

/// Runs `attempt` (read, compute, build a unit of work) and commits it; on
/// a version conflict reads and computes again, a few times, after a
/// jittered pause so that requests in conflict do not collide again in step.
pub(crate) async fn commit_with_retries<F, Fut, T>(
    service: &Service,
    mut attempt: F,
) -> Result<T, ServiceError>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<(UnitOfWork, T), ServiceError>>,
{
    let mut last = None;
    for n in 0..COMMIT_ATTEMPTS {
        // On the heap: an attempt holds the state it read and computes on,
        // and a caller's stack (a test's thread, a debug build) need not.
        let (work, value) = Box::pin(attempt(n)).await?;
        match service.store.commit(work).await {
            Ok(()) => return Ok(value),
            Err(StoreError::Conflict(item)) => {
                // Expected under concurrency: a count to watch, not a fault.
                tracing::info!(item = %item, attempt = n + 1, metric = "commit_conflict", "version conflict; re-reading and re-applying");
                last = Some(StoreError::Conflict(item));
                if n + 1 < COMMIT_ATTEMPTS {
                    tokio::time::sleep(backoff(
                        n as u32,
                        service.ids.seed(),
                        COMMIT_BACKOFF_BASE,
                        COMMIT_BACKOFF_CAP,
                    ))
                    .await;
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.map_or_else(
        || ServiceError::internal("no commit attempted"),
        ServiceError::Store,
    ))
}

/// The problems of a problem_set thread, as the caller sent them: a
/// problem set from the course, or between the workflow's fewest and most
/// problems, each with an id of its own, text and an answer code can check.
fn check_problems(
    request: &CreateThreadRequest,
    course: &Course,
    workflow: &Workflow,
) -> Result<(), ServiceError> {
    if request.mode != Mode::ProblemSet {
        for (field, given) in [
            ("problems", request.problems.is_some()),
            ("problemSetId", request.problem_set_id.is_some()),
        ] {
            if given {
                return Err(ServiceError::invalid_field(
                    field,
                    format!("`{field}` is for mode `problem_set` only"),
                ));
            }
        }
        return Ok(());
    }
    let settings = &workflow.modes.problem_set;
    match (&request.problems, &request.problem_set_id) {
        (Some(_), Some(_)) => Err(ServiceError::invalid_field(
            "problemSetId",
            "send either `problems` or `problemSetId`, not both",
        )),
        (None, Some(id)) if !course.problem_sets.iter().any(|s| &s.id == id) => {
            Err(ServiceError::invalid_field(
                "problemSetId",
                format!("course `{}` has no problem set `{id}`", course.id),
            ))
        }
        (None, None) if course.problem_sets.is_empty() => Err(ServiceError::invalid_field(
            "problems",
            format!(
                "course `{}` has no problem set: send `problems` or `problemSetId`",
                course.id
            ),
        )),
        (None, _) => Ok(()),
        (Some(problems), None) => {
            check_problem_count(problems.len(), settings)?;
            let mut ids = std::collections::BTreeSet::new();
            for (i, p) in problems.iter().enumerate() {
                let at = |name: &str| format!("problems[{i}].{name}");
                let bad =
                    |name: &str, why: String| Err(ServiceError::invalid_field(&at(name), why));
                if p.id.trim().is_empty() || p.id.len() > 100 {
                    return bad("id", "a problem id is 1 to 100 characters".into());
                }
                if !ids.insert(p.id.as_str()) {
                    return bad("id", format!("problem id `{}` is used twice", p.id));
                }
                if p.text.trim().is_empty() || p.text.chars().count() > 2000 {
                    return bad("text", "a problem's text is 1 to 2000 characters".into());
                }
                if p.correct_answer.trim().is_empty() || p.correct_answer.chars().count() > 200 {
                    return bad(
                        "correctAnswer",
                        "a correct answer is 1 to 200 characters".into(),
                    );
                }
                // Code must be able to tell the answer itself right.
                let expected = crate::engine::modes::problem_set::entry(
                    &p.id,
                    &p.text,
                    &p.correct_answer,
                    None,
                    &[],
                )
                .expected;
                let checkable = expected.kind != crate::model::AnswerKind::Text
                    && crate::engine::grading::grade(
                        &expected,
                        &p.correct_answer,
                        Some(&p.text),
                        &workflow.grading,
                    )
                    .result
                        == crate::model::GradeOutcome::Correct;
                if !checkable {
                    return bad(
                        "correctAnswer",
                        format!(
                            "`{}` is not an answer code can check: give a number, fraction, expression or equation",
                            p.correct_answer
                        ),
                    );
                }
                if let Some(unit) = &p.unit_id
                    && course.unit(unit).is_none()
                {
                    return bad(
                        "unitId",
                        format!("unit `{unit}` is not part of course `{}`", course.id),
                    );
                }
                if p.hints.len() > 10
                    || p.hints
                        .iter()
                        .any(|h| h.trim().is_empty() || h.chars().count() > 1000)
                {
                    return bad("hints", "at most 10 hints of 1 to 1000 characters".into());
                }
                super::text_hygiene::check(&at("id"), &p.id)?;
                super::text_hygiene::check(&at("text"), &p.text)?;
                super::text_hygiene::check(&at("correctAnswer"), &p.correct_answer)?;
                for (h, hint) in p.hints.iter().enumerate() {
                    super::text_hygiene::check(&at(&format!("hints[{h}]")), hint)?;
                }
            }
            Ok(())
        }
    }
}

impl Service {
    /// `POST /threads`.
    pub async fn create_thread(
        &self,
        who: &Principal,
        request: CreateThreadRequest,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        let bundle = self.bundle().await;
        let course = bundle.course(&request.course_id).ok_or_else(|| {
            ServiceError::invalid_field(
                "courseId",
                format!("course `{}` does not exist", request.course_id),
            )
        })?;
        let workflow = bundle
            .workflow_for(course)
            .ok_or_else(|| ServiceError::internal("course without workflow"))?;
        let mode = modes::for_mode(request.mode);
        if !workflow.modes.enabled(request.mode) {
            return Err(ServiceError::ModeDisabled {
                field: "mode".to_owned(),
                detail: format!(
                    "mode `{}` is switched off for course `{}`",
                    request.mode.as_str(),
                    course.id
                ),
            });
        }
        if let Some(unit) = &request.unit_id
            && course.unit(unit).is_none()
        {
            return Err(ServiceError::invalid_field(
                "unitId",
                format!("unit `{unit}` is not part of course `{}`", course.id),
            ));
        }
        if let Some(goal) = &request.goal
            && goal.chars().count() > self.config.limits.max_message_chars
        {
            return Err(ServiceError::invalid_field("goal", "the goal is too long"));
        }
        if let Some(goal) = &request.goal {
            super::text_hygiene::check("goal", goal)?;
        }
        check_problems(&request, course, workflow)?;
        if request.mode != Mode::Survey && request.survey_id.is_some() {
            return Err(ServiceError::invalid_field(
                "surveyId",
                "`surveyId` is for mode `survey` only",
            ));
        }
        // The saved profile and the snapshot are read in one round.
        let (personalization, snapshot_now) = tokio::join!(
            self.thread_personalization(who, &request),
            self.store.get_snapshot(&who.student_id, &course.id)
        );
        let (personalization, snapshot_now) = (personalization?, snapshot_now?);
        let drawn_id = self.ids.new_id();
        let thread_id = new_thread_id(&course.id, &drawn_id);
        let now = self.clock.now();
        let locked_questions = if mode.draws_from_bank() {
            self.locked_questions(course, snapshot_now.as_ref().map(|v| &v.value), now)
                .await?
        } else {
            Default::default()
        };
        let mut start = Start {
            bundle: &bundle,
            course,
            workflow,
            unit: request.unit_id.as_deref().and_then(|u| course.unit(u)),
            goal: request.goal.as_deref(),
            prepared: None,
            earlier: &[],
            request: &request,
            now,
            seed: seed_of(&drawn_id),
            locked_questions: &locked_questions,
            snapshot: snapshot_now.as_ref().map(|v| &v.value),
            problems: request.problems.as_deref(),
            problem_set_id: request.problem_set_id.as_deref(),
            personalization: &personalization,
        };
        mode.check(&start)
            .map_err(|e| ServiceError::invalid_field(e.field, e.detail))?;
        let earlier = self
            .earlier_threads(who, course, request.mode, mode.earlier_sessions(&start))
            .await?;
        start.earlier = &earlier;
        let prepared = match mode.start_call(&start) {
            Some(call) => Some(self.start_call(&bundle, &course.workflow, call).await),
            None => None,
        };
        start.prepared = prepared.as_ref();
        let mut started = mode
            .start(&start)
            .map_err(|e| ServiceError::internal(e.to_string()))?;
        started.session.personalization = personalization.clone();

        // The first attempt builds on the snapshot read above; a retry after
        // a conflict reads it afresh.
        let first_snapshot = std::sync::Mutex::new(Some(snapshot_now.clone()));
        commit_with_retries(self, |_| async {
            let now = self.clock.now();
            let first = first_snapshot
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let snapshot_read = match first {
                Some(read) => read,
                None => self.store.get_snapshot(&who.student_id, &course.id).await?,
            };
            let mut snapshot = snapshot_or_new(
                snapshot_read.as_ref(),
                &who.student_id,
                &course.id,
                &course.entry_unit,
            );
            if let Some(unit) = &request.unit_id
                && snapshot_read.is_none()
            {
                snapshot.focus_unit_id = unit.clone();
            }
            let thread = Thread {
                thread_id: thread_id.clone(),
                student_id: who.student_id.clone(),
                course_id: course.id.clone(),
                mode: request.mode,
                status: ThreadStatus::Active,
                goal: request.goal.clone(),
                unit_id: request.unit_id.clone(),
                created_at: now,
                updated_at: now,
                title: None,
                preview: None,
                paused_at: None,
                ended_at: None,
                session: started.session.clone(),
            };
            let message = TutorMessage {
                id: format!("{thread_id}-welcome"),
                thread_id: thread_id.clone(),
                role: Role::Assistant,
                text: started.welcome.clone(),
                latex: None,
                card: None,
                card_state: None,
                event: None,
                safety: None,
                created_at: now,
            };
            let lite = build_snapshot_lite(&snapshot, course, workflow, &NoLockouts, now);
            let response = CreateThreadResponse {
                thread_id: thread_id.clone(),
                mode: thread.mode,
                messages: vec![message.clone()],
                snapshot_lite: lite,
                state: views::state_view(&thread, &bundle),
            };
            let mut work = UnitOfWork::new();
            work.put_thread(ThreadChange::create(thread, vec![message]));
            if snapshot_read.is_none() {
                work.put_snapshot(snapshot, WriteCondition::New);
            }
            let output = idempotency.respond(&mut work, 201, &response)?;
            Ok((work, output))
        })
        .await
    }

    /// The caller's latest `count` threads in `mode` on `course`, newest
    /// first: the ones a new thread of that mode builds on. Only the first
    /// pages of the thread list are looked through.
    async fn earlier_threads(
        &self,
        who: &Principal,
        course: &crate::content::Course,
        mode: crate::model::Mode,
        count: usize,
    ) -> Result<Vec<Thread>, ServiceError> {
        const PAGES: usize = 3;
        let mut found = Vec::new();
        let mut page = PageRequest {
            limit: 50,
            cursor: None,
        };
        for _ in 0..PAGES {
            if found.len() >= count {
                break;
            }
            let listed = self.store.list_threads(&who.student_id, &page).await?;
            for summary in listed
                .items
                .iter()
                .filter(|t| t.mode == mode && t.course_id == course.id)
            {
                if found.len() >= count {
                    break;
                }
                if let Some(record) = self.store.get_thread(&summary.thread_id, 0).await? {
                    found.push(record.thread);
                }
            }
            match listed.next_cursor {
                Some(cursor) => page.cursor = Some(cursor),
                None => break,
            }
        }
        Ok(found)
    }

    /// The course's bank questions the student is locked out of now.
    async fn locked_questions(
        &self,
        course: &crate::content::Course,
        snapshot: Option<&StudentSnapshot>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<std::collections::BTreeSet<String>, ServiceError> {
        let Some(snapshot) = snapshot else {
            return Ok(Default::default());
        };
        let ids: Vec<String> = course
            .units
            .values()
            .flat_map(|u| u.exam.iter().map(|q| q.id.clone()))
            .collect();
        let statuses = self
            .exams
            .statuses(self.store.as_ref(), snapshot, &ids, now)
            .await?;
        Ok(statuses
            .into_iter()
            .filter(|(_, s)| matches!(s.at(now), LockoutStatus::Locked { .. }))
            .map(|(q, _)| q)
            .collect())
    }

    /// Makes the LLM call a mode asks for at creation. A failed call is
    /// handed to the mode as such: it starts without it.
    async fn start_call(
        &self,
        bundle: &std::sync::Arc<crate::content::Bundle>,
        workflow_id: &str,
        call: StartCall,
    ) -> StartReply {
        match call {
            StartCall::Plan(input) => {
                let timeout = bundle
                    .workflows
                    .get(workflow_id)
                    .map_or(15_000, |w| w.llm.planner.timeout_ms);
                let planner = self.llm.planner(
                    bundle,
                    workflow_id,
                    Some(tokio::time::Instant::now() + std::time::Duration::from_millis(timeout)),
                );
                let reply = planner.plan(&input).await;
                if let Err(e) = &reply {
                    tracing::warn!(error = %e, "planner call failed; the mode's own plan is used");
                }
                StartReply::Plan(reply.map(|r| r.value).map_err(|e| e.to_string()))
            }
        }
    }

    /// `GET /threads/{threadId}`: the thread's state and its messages, oldest
    /// first, a page at a time. A session left idle past its time is closed
    /// first, so a reloaded page shows it ended.
    pub async fn get_thread(
        &self,
        who: &Principal,
        thread_id: &str,
        page: PageRequest,
    ) -> Result<Output, ServiceError> {
        let mut record = owned_thread(self, who, thread_id, 0).await?;
        if self.expire_idle(who, &record).await? {
            record = owned_thread(self, who, thread_id, 0).await?;
        }
        let bundle = self.bundle().await;
        let mut messages = self
            .store
            .list_messages(thread_id, Order::OldestFirst, &page)
            .await?;
        with_card_states(&mut messages.items, &record.thread.session);
        let body = views::ThreadReplay {
            thread_id: record.thread.thread_id.clone(),
            course_id: record.thread.course_id.clone(),
            mode: record.thread.mode,
            status: record.thread.status,
            goal: record.thread.goal.clone(),
            created_at: record.thread.created_at,
            updated_at: record.thread.updated_at,
            state: views::state_view(&record.thread, &bundle),
            messages: messages.items,
            next_cursor: messages.next_cursor,
        };
        Output::json(200, &body)
    }

    /// `GET /me/threads`: the caller's threads, most recent first.
    /// The filter applies within each page: a page may hold fewer threads
    /// than asked for while `nextCursor` still leads to more.
    pub async fn list_threads(
        &self,
        who: &Principal,
        page: PageRequest,
        filter: ThreadFilter,
    ) -> Result<Output, ServiceError> {
        let threads = self.store.list_threads(&who.student_id, &page).await?;
        Output::json(
            200,
            &views::ThreadList {
                threads: threads
                    .items
                    .into_iter()
                    .filter(|t| filter.status.is_none_or(|s| s == t.status))
                    .filter(|t| filter.mode.is_none_or(|m| m == t.mode))
                    .collect(),
                next_cursor: threads.next_cursor,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_id_carries_a_course_that_can_be_read_back() {
        let id = new_thread_id("prealgebra", "3f2a-b9");
        assert_eq!(id, "prealgebra.3f2a-b9");
        assert_eq!(course_in_thread_id(&id), Some("prealgebra"));
        assert_eq!(
            course_in_thread_id("pre_algebra-2.x"),
            Some("pre_algebra-2")
        );
    }

    #[test]
    fn ids_without_a_carried_course_name_none() {
        // A course id that could not be told apart from the rest is not carried.
        for course in ["a.b", "a/b", "", &"c".repeat(65)] {
            assert_eq!(new_thread_id(course, "drawn"), "drawn");
        }
        // Ids drawn before ids carried their course, and webhook sessions'.
        for id in [
            "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
            "wh-0123456789abcdef0123456789abcdef",
            "wh-0123456789abcdef0123456789abcdef-2",
            "prealgebra.",
            ".drawn",
        ] {
            assert_eq!(course_in_thread_id(id), None, "{id}");
        }
    }
}
