//! The offline tutor: the same structured reply an LLM gives, built
//! deterministically from the policy, the retrieved context, the routing
//! category and the workflow's phrasebook. It is the local default and the
//! fallback, so it must always produce a reply the policy accepts: an
//! action the policy allows, a target unit in scope, the card that action
//! needs, and words that read like a patient tutor — never internal names.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;

use crate::content::Bundle;
use crate::content::prompt::PromptTemplate;
use crate::content::tutor_text::{
    FollowUp, ITEM_PLACEHOLDERS, OfflinePhrases, PhraseSlot, list_in_words,
};
use crate::content::workflow::Workflow;
use crate::engine::interpret::student_math;
use crate::engine::reply::answer_guard;
use crate::engine::reply::fallback::{self, ValidationContext};
use crate::llm::offline::passage;
use crate::model::{
    CallUsage, CheckReply, ClientEvent, ContentChunk, ExamCandidate, ExamResult, LlmConceptCard,
    LlmDrillCard, LlmError, LlmExamSuggestion, LlmMappedUnit, LlmQuestionAsked, LlmTurnAnalysis,
    LlmTutorResponse, LlmWorkedExample, MAX_REPLY_LIST, PacingDirective, Reply, Role, StepKind,
    StudentIntent, TextSink, Tutor, TutorAction, TutorTurnInput, UnderstandingSignal, UnitAnchor,
};

/// Longest passage of lesson text quoted as an explanation, in characters.
const MAX_EXPLANATION_CHARS: usize = 320;

#[derive(Clone)]
pub struct OfflineTutor {
    bundle: Arc<Bundle>,
    workflow: String,
}

#[async_trait]
impl Tutor for OfflineTutor {
    async fn decide(&self, input: &TutorTurnInput) -> Result<Reply<LlmTutorResponse>, LlmError> {
        Ok(Reply {
            value: self.reply(input)?,
            usage: CallUsage::offline(),
        })
    }

    /// The reply's text in word-sized pieces, as a model would stream it.
    async fn decide_streaming(
        &self,
        input: &TutorTurnInput,
        sink: &dyn TextSink,
    ) -> Result<Reply<LlmTutorResponse>, LlmError> {
        let reply = self.decide(input).await?;
        for word in reply.value.tutor_text.split_inclusive(char::is_whitespace) {
            sink.text(word);
        }
        Ok(reply)
    }
}

impl crate::model::FallbackTutor for OfflineTutor {
    fn reply(&self, input: &TutorTurnInput) -> Result<LlmTutorResponse, LlmError> {
        OfflineTutor::reply(self, input)
    }

    fn reply_with(
        &self,
        input: &TutorTurnInput,
        action: TutorAction,
    ) -> Result<LlmTutorResponse, LlmError> {
        OfflineTutor::reply_with(self, input, action)
    }
}

impl std::fmt::Debug for OfflineTutor {
    // The bundle is large; its version identifies it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineTutor")
            .field("bundle", &self.bundle.version)
            .field("workflow", &self.workflow)
            .finish()
    }
}

impl OfflineTutor {
    pub fn new(bundle: Arc<Bundle>, workflow: &str) -> Self {
        OfflineTutor {
            bundle,
            workflow: workflow.to_owned(),
        }
    }

    fn workflow(&self) -> Result<&Workflow, LlmError> {
        self.bundle.workflows.get(&self.workflow).ok_or_else(|| {
            LlmError::InvalidInput(format!("workflow `{}` is not in the bundle", self.workflow))
        })
    }

    /// The reply this tutor gives to `input`: the most fitting action for
    /// the message's category that the policy allows and the context has
    /// material for.
    pub fn reply(&self, input: &TutorTurnInput) -> Result<LlmTutorResponse, LlmError> {
        let workflow = self.workflow()?;
        let follow_up = follow_up(&workflow.offline_tutor, input);
        preference(input, follow_up)
            .into_iter()
            .find_map(|action| checked(&self.bundle, workflow, input, action, follow_up).ok())
            .ok_or_else(|| {
                LlmError::InvalidInput(
                    "no allowed action can be carried out with the context given".into(),
                )
            })
    }

    /// The reply for a given `action`, e.g. the fallback action the policy
    /// validator picked after an LLM reply was rejected.
    pub fn reply_with(
        &self,
        input: &TutorTurnInput,
        action: TutorAction,
    ) -> Result<LlmTutorResponse, LlmError> {
        let workflow = self.workflow()?;
        checked(
            &self.bundle,
            workflow,
            input,
            action,
            follow_up(&workflow.offline_tutor, input),
        )
    }

    /// The actions this tutor can reply with to `input`.
    pub fn feasible_actions(&self, input: &TutorTurnInput) -> Vec<TutorAction> {
        ALL_ACTIONS
            .into_iter()
            .filter(|a| self.reply_with(input, *a).is_ok())
            .collect()
    }
}

const ALL_ACTIONS: [TutorAction; 4] = [
    TutorAction::SocraticQuestion,
    TutorAction::ConceptCard,
    TutorAction::DrillCard,
    TutorAction::ExamBlock,
];

/// The reply for `action`, only if the policy validator accepts it: the
/// fallback path must never produce a reply that would itself fall back.
fn checked(
    bundle: &Bundle,
    workflow: &Workflow,
    input: &TutorTurnInput,
    action: TutorAction,
    follow_up: FollowUp,
) -> Result<LlmTutorResponse, LlmError> {
    if !input.policy.allows(action) {
        return Err(LlmError::InvalidInput(format!(
            "{} is not allowed",
            action.as_str()
        )));
    }
    let reply = compose(bundle, workflow, input, action, follow_up)?;
    let offered: Vec<String> = input
        .context
        .exam_candidates
        .iter()
        .map(|c| c.question_id.clone())
        .collect();
    let context = ValidationContext {
        exam_candidates: &offered,
        max_key_ideas: workflow.policy.constraints.max_key_ideas,
    };
    let found = fallback::violations(&reply, &input.policy, &context);
    if !found.is_empty() {
        return Err(LlmError::InvalidInput(format!(
            "{} has no valid form this turn: {found:?}",
            action.as_str()
        )));
    }
    reply.check().map_err(LlmError::InvalidInput)?;
    Ok(reply)
}

fn follow_up(phrases: &OfflinePhrases, input: &TutorTurnInput) -> FollowUp {
    let then = phrases.reaction(&input.category.id).then;
    match input.context.client_event {
        ClientEvent::IAmStuck { .. } => FollowUp::Scaffold,
        _ => then,
    }
}

/// The actions to try, most fitting first: what the category and the
/// student's button ask for, then every other action.
fn preference(input: &TutorTurnInput, follow_up: FollowUp) -> Vec<TutorAction> {
    use TutorAction::*;
    let policy = &input.policy;
    // A lesson's check or practice step is worked through its items: with
    // one to ask and none pending, moving on or back to the lesson means
    // asking it.
    let lesson_item = input
        .lesson
        .as_ref()
        .and_then(|l| l.step.as_ref())
        .is_some_and(|s| s.kind != StepKind::Explain)
        && input.context.practice_item.is_some()
        && input.question.is_none();
    // A student whose replies are fading is won back with a quick, concrete
    // item rather than asked to explain their answer.
    let fading = input.style.disengaged;
    let wanted: &[TutorAction] = match follow_up {
        FollowUp::Continue | FollowUp::Redirect if lesson_item => &[DrillCard, SocraticQuestion],
        FollowUp::TeachBack if lesson_item && fading => &[DrillCard, SocraticQuestion],
        FollowUp::Continue => match input.context.client_event {
            ClientEvent::RequestDrill { .. } => &[DrillCard, SocraticQuestion],
            // After a failed (now locked) exam question: back to
            // drills rather than straight into another exam question.
            ClientEvent::ExamContinue {
                result: Some(ExamResult::Locked),
                ..
            } => &[DrillCard, SocraticQuestion],
            _ if policy.exam_ready => &[ExamBlock, DrillCard, SocraticQuestion],
            // Stuck (drills keep going wrong): "Continue" brings the
            // concept card; its "Try a drill" button then asks for a drill.
            _ if policy.stuck => &[ConceptCard, DrillCard, SocraticQuestion],
            ClientEvent::DrillContinue { .. } => &[DrillCard, SocraticQuestion],
            _ if input.context.practice_item.is_some() && input.question.is_none() => {
                &[DrillCard, SocraticQuestion]
            }
            _ => &[SocraticQuestion, DrillCard],
        },
        // A smaller step of the item itself beats a card about the unit,
        // unless the drills say the student is stuck (then a card teaches).
        FollowUp::Scaffold if has_item_help(input) && !policy.stuck => {
            &[SocraticQuestion, ConceptCard]
        }
        FollowUp::Scaffold | FollowUp::Clarify => &[ConceptCard, SocraticQuestion],
        // A question session answers in words: the whole answer is the reply.
        _ => &[SocraticQuestion],
    };
    // A problem of the student's own is worked through with them.
    let wanted = if input.category.own_problem.trim().is_empty() {
        wanted
    } else {
        &[SocraticQuestion][..]
    };
    let mut order: Vec<TutorAction> = Vec::new();
    for action in wanted.iter().chain(&ALL_ACTIONS) {
        if !order.contains(action) {
            order.push(*action);
        }
    }
    order
}

/// Whether the student is stuck on an idea rather than a problem: on a
/// lesson's explain step, or with nothing pending that has steps of its
/// own (a question like "Does that make sense?").
fn explaining(input: &TutorTurnInput) -> bool {
    let on_idea = input
        .lesson
        .as_ref()
        .and_then(|l| l.step.as_ref())
        .is_some_and(|s| s.kind == StepKind::Explain);
    !has_item_help(input) && (on_idea || !on_a_problem(input))
}

/// Whether the pending question is a problem with steps of its own.
fn on_a_problem(input: &TutorTurnInput) -> bool {
    input
        .question
        .as_ref()
        .is_some_and(|q| !q.help.steps.is_empty())
}

/// Whether the pending item offers a step or another view of itself.
fn has_item_help(input: &TutorTurnInput) -> bool {
    input
        .question
        .as_ref()
        .is_some_and(|q| q.help.next_step.is_some() || q.help.representation.is_some())
}

fn anchor<'a>(input: &'a TutorTurnInput, unit_id: &str) -> Option<&'a UnitAnchor> {
    input
        .context
        .unit_anchors
        .iter()
        .find(|a| a.unit_id == unit_id)
}

fn in_scope(input: &TutorTurnInput, unit_id: &str) -> bool {
    input.policy.scoped_unit_ids.iter().any(|u| u == unit_id)
}

/// The unit a drill on the server's practice item targets.
fn practice_target(input: &TutorTurnInput) -> Option<&str> {
    let item = input.context.practice_item.as_ref()?;
    (in_scope(input, &item.unit_id) && anchor(input, &item.unit_id).is_some())
        .then_some(item.unit_id.as_str())
}

/// The first candidate at the desired tier for the focus unit: exam
/// candidates belong to the focus, and an exam block targets it.
fn exam_choice(input: &TutorTurnInput) -> Option<(&ExamCandidate, &str)> {
    let focus = input.policy.focus_unit_id.as_str();
    if !in_scope(input, focus) || anchor(input, focus).is_none() {
        return None;
    }
    input
        .context
        .exam_candidates
        .iter()
        .find(|c| {
            c.difficulty_tier == input.policy.desired_exam_tier
                && c.unit_ids.iter().any(|u| u == focus)
        })
        .map(|c| (c, focus))
}

/// The unit a reply is about: the blocking prerequisite, else the primary
/// target, else the focus, else any scoped unit the context describes.
/// Replies about the pending question stay on its unit.
fn target_unit<'a>(input: &'a TutorTurnInput, follow_up: FollowUp) -> Option<&'a str> {
    let policy = &input.policy;
    let usable = |u: &&'a str| in_scope(input, u) && anchor(input, u).is_some();
    // A question that names another unit is answered about that unit
    // (the policy's target), not about the question being worked on.
    let names_a_unit = input
        .reading
        .mapped_units
        .first()
        .is_some_and(|m| m.unit_id == policy.primary_target_unit_id);
    let about_question = match follow_up {
        FollowUp::Retry | FollowUp::Scaffold | FollowUp::TeachBack => true,
        FollowUp::Clarify => !names_a_unit,
        _ => false,
    };
    let question_unit = input
        .question
        .as_ref()
        .filter(|_| about_question)
        .map(|q| q.unit_id.as_str());
    question_unit
        .into_iter()
        .chain(policy.prereq_blocking_unit_id.as_deref())
        .chain([
            policy.primary_target_unit_id.as_str(),
            policy.focus_unit_id.as_str(),
        ])
        .chain(policy.scoped_unit_ids.iter().map(String::as_str))
        .find(usable)
}

fn compose(
    bundle: &Bundle,
    workflow: &Workflow,
    input: &TutorTurnInput,
    action: TutorAction,
    follow_up: FollowUp,
) -> Result<LlmTutorResponse, LlmError> {
    let spoken = workflow
        .offline_tutor
        .in_language(input.personalization.language);
    let phrases = &*spoken;
    let exam = exam_choice(input);
    let target = match action {
        TutorAction::DrillCard => practice_target(input),
        TutorAction::ExamBlock => exam.map(|(_, unit)| unit),
        _ => target_unit(input, follow_up),
    }
    .ok_or_else(|| LlmError::InvalidInput("no scoped unit is described in the context".into()))?;
    let unit = anchor(input, target).ok_or_else(|| {
        LlmError::InvalidInput("no scoped unit is described in the context".into())
    })?;
    let pick = Picker { seed: input.seed };
    // "Give me an example" in a question session is answered with the
    // unit's worked example, whole, not a passage that happens to hold
    // the word.
    let wants_example = follow_up == FollowUp::Answer
        && input
            .student
            .said()
            .is_some_and(|said| asks_for_an_example(&said));
    // A question is answered from what in the unit answers it.
    let asked = (matches!(follow_up, FollowUp::Clarify | FollowUp::Answer) && !wants_example)
        .then(|| input.student.said())
        .flatten()
        .map(|said| passage::Asked::new(&said));
    let mut values = Values::new(input, unit, &pick, asked.as_ref());
    // Shown in the last reply already: asked again, the idea is put
    // another way rather than the same example repeated word for word.
    if values
        .map
        .get("example_problem")
        .is_some_and(|problem| said_last(input, problem))
    {
        for key in ["example_problem", "example_steps", "example_answer"] {
            values.map.remove(key);
        }
    }
    // Another example asked for: one of the lesson's own, whole.
    if wants_example
        && !values.map.contains_key("example_problem")
        && let Some(example) = another_example(input, &unit.unit_id)
    {
        values.map.insert("example_problem", example);
        values.map.insert("example_steps", String::new());
    }

    // Asked to put the problem another way when the item has nothing new
    // to show (its next step only asks the problem again): the unit's idea
    // behind the problem, at work in an example, instead.
    let another_way = follow_up == FollowUp::Scaffold
        && action == TutorAction::SocraticQuestion
        && asks_another_way(workflow, input)
        && values.another_way(input, unit);

    // Still lost after an answer about maths beyond the course: said
    // honestly, with the nearest unit offered, instead of a worked example
    // from whatever unit the course is on (a silent change of subject).
    let beyond = (follow_up == FollowUp::Scaffold)
        .then(|| beyond_just_answered(workflow, input))
        .flatten();
    if beyond.is_some() && action != TutorAction::SocraticQuestion {
        return Err(LlmError::InvalidInput(
            "after an answer beyond the course, the reply is in words".into(),
        ));
    }

    let reaction = phrases.reaction(&input.category.id);
    let mut parts = Vec::new();
    let opening = pick.phrase(
        "reaction",
        reaction.openings(input.category.phase),
        &values.map,
    );
    // What is wrong with a known mistake is said first, whatever the phase.
    if follow_up == FollowUp::Retry
        && let Some(mistake) = values.map.get("mistake")
        && !opening.contains(mistake.as_str())
    {
        parts.push(mistake.clone());
    }
    parts.push(opening);
    let note = input.category.code_note.trim();
    if !note.is_empty() {
        parts.push(note.to_owned());
    }
    let blocker = input.policy.prereq_blocking_unit_id.as_deref();
    if follow_up == FollowUp::Continue
        && blocker == Some(target)
        && input.policy.primary_target_unit_id != target
    {
        parts.push(pick.phrase(
            "prerequisite",
            &phrases.moves.prerequisite,
            &values.prerequisite(input),
        ));
    }
    let slot = match action {
        TutorAction::SocraticQuestion => match follow_up {
            FollowUp::Continue if input.question.is_some() => Some(PhraseSlot::AskPending),
            FollowUp::Continue => Some(PhraseSlot::Ask),
            FollowUp::TeachBack => Some(PhraseSlot::TeachBack),
            FollowUp::Retry => None,
            // Stuck on an idea with no problem to break down: the idea is
            // shown at work in the unit's worked example.
            FollowUp::Scaffold if explaining(input) || another_way => Some(PhraseSlot::Example),
            // Already working in steps: the next step, not the introduction again.
            FollowUp::Scaffold if input.category.scaffold_depth > 1 => {
                Some(PhraseSlot::ScaffoldNext)
            }
            FollowUp::Scaffold => Some(PhraseSlot::Scaffold),
            FollowUp::Clarify => Some(PhraseSlot::Clarify),
            // Back to the lesson: to the problem the student was working
            // on, if any ("Does that make sense?" is not one to go back to).
            FollowUp::Redirect if on_a_problem(input) => Some(PhraseSlot::AskPending),
            FollowUp::Redirect => Some(PhraseSlot::Redirect),
            FollowUp::WrapUp => Some(PhraseSlot::WrapUp),
            FollowUp::Answer if values.map.contains_key("solution_steps") => {
                Some(PhraseSlot::Solution)
            }
            FollowUp::Answer if wants_example && values.map.contains_key("example_problem") => {
                Some(PhraseSlot::Example)
            }
            FollowUp::Answer => Some(PhraseSlot::Answer),
            FollowUp::Recap => Some(PhraseSlot::Recap),
            FollowUp::AfterCompletion => {
                if let Some(short) = values.map.get("short_answer") {
                    parts.push(short.clone());
                }
                Some(PhraseSlot::AfterCompletion)
            }
        },
        TutorAction::ConceptCard => Some(PhraseSlot::ConceptCard),
        TutorAction::DrillCard => Some(PhraseSlot::DrillCard),
        TutorAction::ExamBlock => Some(PhraseSlot::ExamBlock),
    };
    let own = input.category.own_problem.trim();
    let in_session = matches!(
        follow_up,
        FollowUp::Answer | FollowUp::Recap | FollowUp::AfterCompletion
    );
    // Their own problem's first step is the question this reply asks.
    let works_own = !own.is_empty() && action == TutorAction::SocraticQuestion && !in_session;
    if let Some(slot) = slot.filter(|_| !works_own) {
        let list = phrases.moves.phrases(slot);
        // A recap names the concepts whenever there are some, and an
        // example move shows the worked example whenever the unit has one.
        let (must, needs) = match slot {
            PhraseSlot::Recap => ("{{concepts}}", "concepts"),
            PhraseSlot::Example => ("{{example_problem}}", "example_problem"),
            _ => ("", ""),
        };
        let fullest: Vec<String> = list
            .iter()
            .filter(|p| !must.is_empty() && p.contains(must))
            .cloned()
            .collect();
        let list = if values.map.contains_key(needs) && !fullest.is_empty() {
            fullest.as_slice()
        } else {
            list
        };
        // An answer to a question says all it has that answers it.
        let answering;
        let list = if matches!(slot, PhraseSlot::Clarify | PhraseSlot::Answer) {
            answering = most_said(list, &values.map);
            answering.as_slice()
        } else {
            list
        };
        let mut said = pick.phrase(slot.name(), list, &values.map);
        // A phrasebook without examples, or with no next step to say,
        // scaffolds as it always did.
        if said.is_empty() && matches!(slot, PhraseSlot::Example | PhraseSlot::ScaffoldNext) {
            said = pick.phrase(
                PhraseSlot::Scaffold.name(),
                phrases.moves.phrases(PhraseSlot::Scaffold),
                &values.map,
            );
        }
        parts.push(said);
    }
    if !own.is_empty() && action != TutorAction::DrillCard && !in_session {
        let mut map = values.map.clone();
        map.insert("own_problem", own.to_owned());
        let step = input.category.own_problem_step.trim();
        if !step.is_empty() {
            map.insert("own_step", step.to_owned());
        }
        parts.push(pick.phrase("own_problem", &phrases.moves.own_problem, &map));
    }
    if let Some(beyond) = beyond {
        parts = vec![parts.first().cloned().unwrap_or_default()];
        // The course that has the unit the reply is about names it.
        let nearest = beyond.nearest_unit.as_deref().and_then(|u| {
            bundle
                .courses
                .values()
                .filter(|c| c.unit(target).is_some())
                .find_map(|c| c.unit(u))
                .map(|unit| unit.title.clone())
        });
        parts.push(match nearest {
            Some(title) => format!(
                "That question goes beyond this course, so the short answer I gave is as far as I can take it here. The nearest thing we cover is {title}, and knowing it well makes answers like that easier to follow. Tell me which part of the answer lost you, or shall we look at {title}?"
            ),
            None => "That question goes beyond this course, so the short answer I gave is as far as I can take it here. Tell me which part of it lost you, or what would you like to work on instead?".to_owned(),
        });
    }
    let tutor_text = tidy(&without_repeated_instructions(&parts.join(" ")));
    if tutor_text.is_empty() {
        return Err(LlmError::InvalidInput(
            "the phrasebook has nothing to say for this turn".into(),
        ));
    }

    let mut reply = LlmTutorResponse {
        mapped_units: input
            .reading
            .mapped_units
            .iter()
            .take(MAX_REPLY_LIST)
            .map(|m| LlmMappedUnit {
                unit_id: m.unit_id.clone(),
                confidence: if m.confidence.is_finite() {
                    m.confidence.clamp(0.0, 1.0)
                } else {
                    0.0
                },
            })
            .collect(),
        action,
        target_unit_id: target.to_owned(),
        tutor_text,
        concept_card: None,
        drill_card: None,
        exam_suggestion: None,
        question_asked: None,
        advance: false,
        turn_analysis: LlmTurnAnalysis {
            student_intent: input.reading.intent,
            understanding_signal: understanding(follow_up),
            suggested_prereq_units: blocker.map(str::to_owned).into_iter().collect(),
            answer_text: input
                .student
                .said()
                .filter(|_| input.reading.intent == StudentIntent::Answer),
            answer_correct: None,
            misconceptions_detected: Vec::new(),
        },
    };
    match action {
        TutorAction::SocraticQuestion => reply.question_asked = question_asked(&reply.tutor_text),
        TutorAction::ConceptCard => {
            let max_ideas = workflow.policy.constraints.max_key_ideas;
            reply.concept_card = Some(concept_card(input, unit, max_ideas));
        }
        TutorAction::DrillCard => {
            let item = input.context.practice_item.as_ref().ok_or_else(|| {
                LlmError::InvalidInput("a drill needs the server's practice item".into())
            })?;
            reply.drill_card = Some(LlmDrillCard {
                prompt: item.prompt.clone(),
                question_latex: item.question_latex.clone(),
                expected_answer: None,
            });
        }
        TutorAction::ExamBlock => {
            let (candidate, _) =
                exam.ok_or_else(|| LlmError::InvalidInput("no exam candidate fits".into()))?;
            reply.exam_suggestion = Some(LlmExamSuggestion {
                question_id: candidate.question_id.clone(),
                difficulty_tier: candidate.difficulty_tier,
            });
        }
    }
    Ok(reply)
}

/// The last question `text` asks, with its answer when code can work it
/// out ("What is 15 - 9?"): the server grades the reply to it.
fn question_asked(text: &str) -> Option<LlmQuestionAsked> {
    let question = text
        .split_inclusive(['.', '!', '?', '\n'])
        .rev()
        .find(|s| s.trim_end().ends_with('?'))?
        .trim();
    Some(LlmQuestionAsked {
        text: question.to_owned(),
        expected_answer: student_math::student_problem(question).map(|p| p.answer),
    })
}

fn understanding(follow_up: FollowUp) -> UnderstandingSignal {
    match follow_up {
        FollowUp::TeachBack => UnderstandingSignal::Confident,
        FollowUp::Retry | FollowUp::Scaffold => UnderstandingSignal::Confused,
        _ => UnderstandingSignal::Uncertain,
    }
}

/// The unit's key ideas, those sharing the most words with the lesson
/// step being taught first: a lesson's card leads with its step's idea.
fn lesson_order<'a>(input: &TutorTurnInput, ideas: &'a [String]) -> Vec<&'a str> {
    let ideas: Vec<&str> = ideas
        .iter()
        .map(|i| i.trim())
        .filter(|i| !i.is_empty())
        .collect();
    let Some(step) = input.lesson.as_ref().and_then(|l| l.step.as_ref()) else {
        return ideas;
    };
    // The concept says what the step is about; its title weighs less
    // ("One small idea: ..." shares words by chance).
    let concept = content_words(&step.concept);
    let title = content_words(&step.title);
    let mut scored: Vec<(usize, &str)> = ideas
        .iter()
        .map(|i| {
            let words = content_words(i);
            let score =
                2 * words.intersection(&concept).count() + words.intersection(&title).count();
            (score, *i)
        })
        .collect();
    scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    scored.into_iter().map(|(_, i)| i).collect()
}

/// Lowercased words of four letters or more, a plural `s` or an `-ing`
/// dropped (carrying is about carry).
fn content_words(text: &str) -> std::collections::BTreeSet<String> {
    crate::engine::modes::study_plan::words(text)
}

/// How much a lesson's concept card holds, from the pacing: a student the
/// pacing SIMPLIFYs gets a smaller step (the step's one idea, with the
/// worked example to lean on); one racing ahead (ACCELERATE) the ideas
/// without the example they do not need. Outside a lesson, the policy's
/// limits alone.
fn card_size(input: &TutorTurnInput, max_ideas: u32) -> (usize, bool) {
    let max_ideas = usize::try_from(max_ideas.min(3)).unwrap_or(3);
    let in_lesson = input.lesson.as_ref().is_some_and(|l| l.step.is_some());
    match input.pacing {
        PacingDirective::Simplify if in_lesson => (1, true),
        PacingDirective::Accelerate if in_lesson => (max_ideas, false),
        _ => (max_ideas, true),
    }
}

/// Key ideas, then the worked example if it still fits, within the
/// policy's word, idea and example limits and the lesson's pace.
fn concept_card(input: &TutorTurnInput, unit: &UnitAnchor, max_ideas: u32) -> LlmConceptCard {
    let limits = &input.policy.constraints;
    let max_words = usize::try_from(limits.max_concept_words).unwrap_or(usize::MAX);
    let (max_ideas, with_example) = card_size(input, max_ideas);
    let mut key_ideas = Vec::new();
    let mut used = 0;
    for idea in lesson_order(input, &unit.key_ideas) {
        if key_ideas.len() == max_ideas || used + words(idea) > max_words {
            break;
        }
        used += words(idea);
        key_ideas.push(idea.to_owned());
    }
    let worked_example = unit
        .worked_example
        .as_ref()
        .filter(|_| with_example && limits.max_worked_examples > 0)
        .filter(|e| !overlaps_question(input, &e.problem))
        .filter(|e| {
            let example_words = words(&e.problem)
                + e.steps
                    .iter()
                    .take(MAX_REPLY_LIST)
                    .map(|s| words(s))
                    .sum::<usize>()
                + words(&e.answer);
            used + example_words <= max_words
        })
        .map(|e| LlmWorkedExample {
            problem_latex: e.problem.clone(),
            final_answer_latex: e.answer.clone(),
            steps_latex: Some(e.steps.iter().take(MAX_REPLY_LIST).cloned().collect()),
        });
    LlmConceptCard {
        key_ideas,
        worked_example,
    }
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The placeholder values this turn can fill.
struct Values {
    map: BTreeMap<&'static str, String>,
}

impl Values {
    fn new(
        input: &TutorTurnInput,
        unit: &UnitAnchor,
        pick: &Picker,
        question: Option<&passage::Asked>,
    ) -> Self {
        let mut map = BTreeMap::new();
        map.insert("unit_title", unit.title.clone());
        if let Some(name) = &input.personalization.student_name {
            map.insert("student_name", name.clone());
        }
        let ideas: Vec<&String> = unit
            .key_ideas
            .iter()
            .filter(|i| !i.trim().is_empty())
            .collect();
        let answer = question.and_then(|q| answering(input, unit, &ideas, q));
        let (key_idea, explained) = match answer {
            Some(answer) => answer,
            None => {
                let key_idea = if ideas.is_empty() {
                    first_sentences(&unit.anchor_text, 1)
                } else {
                    let asked = input.student.said().unwrap_or_default();
                    closest_idea(&ideas, &asked)
                        .unwrap_or_else(|| ideas[pick.index("key_idea", ideas.len())])
                        .trim()
                        .to_owned()
                };
                // In a direct answer the passage follows the key idea: the
                // passage closest to it, without a sentence saying the same again.
                let explained = if input.clarify.is_some() {
                    without_repeats(&explanation_near(input, unit, &key_idea), &key_idea)
                } else {
                    explanation(input, unit)
                };
                (key_idea, explained)
            }
        };
        map.insert("key_idea", key_idea);
        map.insert("explanation", explained);
        if let Some(example) = unit
            .worked_example
            .as_ref()
            .filter(|e| !overlaps_question(input, &e.problem))
            .filter(|e| question.is_none_or(|q| passage::example_fits(q, e)))
            // An answer shows one instance: the lesson's, when it works
            // numbers itself, else the worked example.
            .filter(|_| {
                question.is_none() || !map.get("explanation").is_some_and(|e| works_numbers(e))
            })
        {
            map.insert("example_problem", example.problem.trim().to_owned());
            map.insert(
                "example_steps",
                example
                    .steps
                    .iter()
                    .map(|s| as_sentence(s))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            map.insert("example_answer", example.answer.trim().to_owned());
        } else if let Some(asked) = question
            && !map.get("explanation").is_some_and(|e| works_numbers(e))
        {
            // The worked example does another operation than the one
            // asked about: the lesson's own instance of it is shown instead.
            let chunks: Vec<&ContentChunk> = lesson_chunks(input, &unit.unit_id);
            let about = map
                .get("key_idea")
                .map_or_else(|| asked.clone(), |idea| asked.and(idea));
            // Not a sentence the idea or its explanation already said.
            let said = ["key_idea", "explanation"]
                .iter()
                .filter_map(|k| map.get(k).map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            if let Some((problem, working)) = passage::instance(asked, &about, &chunks)
                .filter(|(problem, _)| !passage::repeats(problem, &said))
            {
                map.insert("example_problem", problem);
                map.insert("example_steps", working);
            }
        }
        if let Some(question) = &input.question {
            map.insert("question", asked(&question.text));
            if let Some(last) = question.previous_answers.last() {
                map.insert("previous_answer", last.trim().to_owned());
            }
            let help = &question.help;
            if !help.steps.is_empty() {
                let steps: Vec<String> = help.steps.iter().map(|s| as_sentence(s)).collect();
                map.insert("steps", steps.join(" "));
            }
            let item_help = [
                ("next_step", &help.next_step),
                ("representation", &help.representation),
                ("mistake", &help.mistake),
            ];
            // Help just given is not given again word for word.
            let last_said = input
                .history
                .iter()
                .rev()
                .find(|m| m.role == Role::Assistant)
                .map(|m| m.text.as_str())
                .unwrap_or_default();
            for (name, text) in item_help {
                if let Some(text) = text
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty() && !last_said.contains(t))
                {
                    // Another view of the question ends by asking it.
                    let text = if name == "representation" && !text.ends_with('?') {
                        format!("{} What do you get?", as_sentence(text))
                    } else {
                        text.to_owned()
                    };
                    map.insert(name, text);
                }
            }
        }
        map.insert("tier", input.policy.desired_exam_tier.as_str().to_owned());
        if let Some(item) = &input.context.practice_item {
            map.insert("drill_prompt", item.prompt.trim().to_owned());
        }
        if let Some(clarify) = &input.clarify {
            if !clarify.concepts_discussed.is_empty() {
                map.insert("concepts", list_in_words(&clarify.concepts_discussed));
            }
            let asked = input.student.said().unwrap_or_default();
            if clarify.complete && asked.contains('?') {
                let idea = map.get("key_idea").cloned().unwrap_or_default();
                map.insert("short_answer", idea);
            }
        }
        let own = input.category.own_problem.trim();
        if !own.is_empty()
            && let Some(steps) =
                student_math::student_problem(own).and_then(|p| student_math::solution_steps(&p))
        {
            map.insert("own_problem", own.to_owned());
            map.insert("solution_steps", steps.join(" "));
        }
        Values { map }
    }

    /// Readies this turn's values to put the pending problem another way,
    /// if the item has nothing new to say: its next step, if any, only asks
    /// the problem again ("Now put it together: what is (-3) × (-5)?"), and
    /// it has no other view of it left. The key idea is the one the problem
    /// is about, not one at random; the idea, the passage after it and the
    /// worked example each come only if they were not said before in this
    /// conversation, and the example only if it does the problem's
    /// operation (else the lesson's own instance of it). False, with the
    /// values untouched, when the item still has something to offer.
    fn another_way(&mut self, input: &TutorTurnInput, unit: &UnitAnchor) -> bool {
        let Some(question) = &input.question else {
            return false;
        };
        let help = &question.help;
        let new_step = help
            .next_step
            .as_deref()
            .is_some_and(|step| !reasks(&question.text, step));
        if new_step || help.representation.is_some() {
            return false;
        }
        let map = &mut self.map;
        map.remove("next_step");
        let problem = passage::Asked::new(&question.text);
        let all: Vec<&String> = unit
            .key_ideas
            .iter()
            .filter(|i| !i.trim().is_empty())
            .collect();
        let unsaid: Vec<&String> = all
            .iter()
            .copied()
            .filter(|i| !said_before(input, i))
            .collect();
        // Every idea said already: the one the problem is about, once more.
        let ideas = if unsaid.is_empty() { all } else { unsaid };
        let idea = passage::key_idea(&problem, &ideas)
            .map(|(idea, _)| idea)
            .or_else(|| ideas.first().copied())
            .map(|idea| idea.trim().to_owned());
        let explained = idea
            .as_deref()
            .map(|idea| without_repeats(&explanation_near(input, unit, idea), idea))
            .map(|e| {
                passage::sentences(&e)
                    .into_iter()
                    .filter(|s| !said_before(input, s))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        match idea {
            Some(idea) => map.insert("key_idea", idea),
            None => map.remove("key_idea"),
        };
        // An empty passage would leave "Think of it like this:" hanging.
        if explained.is_empty() {
            map.remove("explanation");
        } else {
            map.insert("explanation", explained);
        }
        for key in ["example_problem", "example_steps", "example_answer"] {
            map.remove(key);
        }
        let chunks: Vec<&ContentChunk> = lesson_chunks(input, &unit.unit_id);
        let example = unit
            .worked_example
            .as_ref()
            .filter(|e| !overlaps_question(input, &e.problem))
            .filter(|e| passage::example_fits(&problem, e))
            .map(|e| {
                let steps: Vec<String> = e.steps.iter().map(|s| as_sentence(s)).collect();
                (e.problem.trim().to_owned(), steps.join(" "))
            })
            .or_else(|| passage::instance(&problem, &problem, &chunks))
            .filter(|(problem, _)| !said_before(input, problem));
        if let Some((problem, steps)) = example {
            map.insert("example_problem", problem);
            map.insert("example_steps", steps);
        }
        true
    }

    /// For the prerequisite phrase: the unit the student wanted and the one
    /// they need first.
    fn prerequisite(&self, input: &TutorTurnInput) -> BTreeMap<&'static str, String> {
        let mut map = BTreeMap::new();
        if let Some(blocker) = input
            .policy
            .prereq_blocking_unit_id
            .as_deref()
            .and_then(|b| anchor(input, b))
        {
            map.insert("prereq_title", blocker.title.clone());
        }
        if let Some(wanted) = anchor(input, &input.policy.primary_target_unit_id) {
            map.insert("unit_title", wanted.title.clone());
        }
        map
    }
}

/// The key idea and explanation that answer a question, from what in the
/// unit shares most with it: the best key idea followed by the lesson
/// sentences that answer it, or those sentences alone when no key idea
/// answers as well. `None` when nothing in the unit is about the question.
fn answering(
    input: &TutorTurnInput,
    unit: &UnitAnchor,
    ideas: &[&String],
    asked: &passage::Asked,
) -> Option<(String, String)> {
    let chunks: Vec<&ContentChunk> = lesson_chunks(input, &unit.unit_id);
    let idea = passage::key_idea(asked, ideas);
    let lesson = passage::lesson_sentences(asked, &chunks);
    match (idea, lesson) {
        // The idea leads, and the lesson sentences that go with it and the
        // question explain it.
        (Some((idea, idea_score)), Some((_, lesson_score))) if lesson_score <= idea_score => {
            let idea = idea.trim().to_owned();
            let explained = passage::lesson_sentences(&asked.and(&idea), &chunks)
                .map(|(lesson, _)| first_sentences(&without_repeats(&lesson, &idea), 2))
                .unwrap_or_default();
            Some((idea, explained))
        }
        (_, Some((lesson, _))) => Some((first_sentences(&lesson, 2), String::new())),
        (Some((idea, _)), None) => Some((idea.trim().to_owned(), String::new())),
        // Nothing shares a word with the question, which named the unit
        // some other way ("what's BODMAS?"): the unit's first idea, which
        // says what it is about, and the lesson's opening.
        (None, None) => {
            let idea = ideas.first()?.trim().to_owned();
            let explained = chunks
                .first()
                .map(|c| first_sentences(&without_repeats(&c.text, &idea), 2))
                .unwrap_or_default();
            Some((idea, explained))
        }
    }
}

/// Whether a passage shows numbers at work (an instance of its idea).
fn works_numbers(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit())
}

/// The topic beyond the course the student asked about just before this
/// message, when the tutor's last reply answered it: the student's last
/// message names it (the longest phrase of its `asks`, on whole words)
/// and nothing with steps of its own has been set since.
fn beyond_just_answered<'a>(
    workflow: &'a Workflow,
    input: &TutorTurnInput,
) -> Option<&'a crate::content::workflow::BeyondCourse> {
    if on_a_problem(input) || has_item_help(input) {
        return None;
    }
    let mut said = input.history.iter().rev();
    // The last reply is the tutor's, to the student's message before it.
    said.next().filter(|m| m.role == Role::Assistant)?;
    let asked = said.next().filter(|m| m.role == Role::Student)?;
    let asked = format!(
        " {} ",
        asked
            .text
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    );
    workflow
        .beyond_course
        .iter()
        .filter_map(|b| {
            b.asks
                .iter()
                .filter(|a| asked.contains(&format!(" {} ", a.to_lowercase().trim())))
                .map(|a| a.len())
                .max()
                .map(|len| (len, b))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, b)| b)
}

/// The prompt of a category that asks for what was said to be put
/// another way: what it tells a model to do, the offline tutor does too.
const ANOTHER_WAY_PROMPT: &str = "category_rephrase";

/// Whether the student asks for it to be put another way.
/// "Can you give me an example?", "example pls": a request for one, not a
/// question that says "for example".
fn asks_for_an_example(said: &str) -> bool {
    let said = said.to_lowercase();
    let named = ["example", "exmaple", "exampel"]
        .iter()
        .any(|w| said.contains(w));
    named && !said.contains("for example") && !said.contains("for exmaple")
}

fn asks_another_way(workflow: &Workflow, input: &TutorTurnInput) -> bool {
    workflow
        .category(&input.category.id)
        .is_some_and(|c| c.prompt == ANOTHER_WAY_PROMPT)
}

/// Whether `step` only asks `question` again: it ends a question with the
/// question's maths ("Now put it together: what is (-3) × (-5)?"),
/// whichever sign for times or divide each uses. A step that only names
/// it ("Where do you start for -3 + 5?") asks something smaller.
fn reasks(question: &str, step: &str) -> bool {
    let signs = |text: &str| -> String {
        text.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .map(|c| match c {
                '×' | '*' => 'x',
                '÷' => '/',
                other => other,
            })
            .collect()
    };
    let step = signs(step);
    math_runs(question)
        .iter()
        .any(|run| step.contains(&format!("{}?", signs(run))))
}

/// Whether the tutor said `text` anywhere in the conversation kept.
fn said_before(input: &TutorTurnInput, text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && input
            .history
            .iter()
            .any(|m| m.role == Role::Assistant && m.text.contains(text))
}

/// Whether the tutor's last message contains `text`.
fn said_last(input: &TutorTurnInput, text: &str) -> bool {
    input
        .history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .is_some_and(|m| !text.trim().is_empty() && m.text.contains(text.trim()))
}

/// `passage` without the sentences that mostly repeat `said` (more than
/// two thirds of their content words are in it, or what
/// [`passage::repeats`] finds said again).
fn without_repeats(passage: &str, said: &str) -> String {
    let known = content_words(said);
    // Split on sentence ends only: a decimal point is not one, and a
    // piece cut off at "2." would be dropped and leave "put 3.40 above 2."
    let mut kept: Vec<String> = Vec::new();
    let mut dropped = false;
    for sentence in passage::sentences(passage) {
        let words = content_words(sentence);
        if (!words.is_empty() && words.intersection(&known).count() * 3 > words.len() * 2)
            || passage::repeats(sentence, said)
        {
            dropped = true;
            continue;
        }
        // "So 5 - 8 = ..." after a dropped sentence would point back to
        // nothing: it stands alone without its "So", or goes too.
        let sentence = if std::mem::take(&mut dropped) {
            match passage::standing_alone(sentence) {
                Some(alone) => alone,
                None => {
                    dropped = true;
                    continue;
                }
            }
        } else {
            sentence.to_owned()
        };
        kept.push(passage::without_said_maths(&sentence, said));
    }
    kept.join(" ").trim().to_owned()
}

/// The key idea that shares most words with what the student asked (the
/// first listed among equals; a "why" question prefers an idea that gives
/// a reason), or none when no idea shares a word with it.
fn closest_idea<'a>(ideas: &[&'a String], asked: &str) -> Option<&'a String> {
    let content = |text: &str| -> Vec<String> {
        text.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(|w| w.strip_suffix('s').unwrap_or(w).to_owned())
            .collect()
    };
    let wanted = content(asked);
    let opening = asked.trim_start().to_lowercase();
    let why = opening.starts_with("why");
    // "What is a percentage?" asks what the word means.
    let what = opening.starts_with("what is")
        || opening.starts_with("what's")
        || opening.starts_with("whats")
        || opening.starts_with("what are")
        || opening.starts_with("what does");
    let mut best: Option<(usize, &String)> = None;
    for idea in ideas {
        let words = content(idea);
        let mut score = wanted.iter().filter(|w| words.contains(w)).count() * 2;
        if score > 0 && why && (idea.contains(" so ") || idea.contains("because")) {
            score += 3;
        }
        if what && idea.contains(" means ") {
            score += 3;
        }
        if score > 0 && best.is_none_or(|(top, _)| score > top) {
            best = Some((score, idea));
        }
    }
    best.map(|(_, idea)| idea)
}

/// The opening of the best-ranked lesson passage about `unit` (a worked
/// example's opening would stop short of its answer), unless it works the
/// very problem the student is on or has a hidden answer in it (it would
/// read broken); else the unit's anchor.
fn explanation(input: &TutorTurnInput, unit: &UnitAnchor) -> String {
    input
        .context
        .unit_content_chunks
        .iter()
        .filter(|c| c.unit_id == unit.unit_id && !c.worked_example)
        .map(|c| first_sentences(&c.text, 2))
        .find(|text| quotable(input, text))
        .unwrap_or_else(|| first_sentences(&unit.anchor_text, 2))
}

/// A worked example of the lesson not said before, whole: for a student
/// who has seen the unit's own example and asks for another.
fn another_example(input: &TutorTurnInput, unit_id: &str) -> Option<String> {
    lesson_chunks(input, unit_id)
        .into_iter()
        .filter(|c| c.worked_example && quotable(input, &c.text))
        .map(|c| c.text.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|text| !said_before(input, &first_sentences(text, 1)))
}

/// Whether a passage may be quoted to the student: it says something,
/// does not work the pending problem and hides no answer.
fn quotable(input: &TutorTurnInput, text: &str) -> bool {
    !text.is_empty() && !overlaps_question(input, text) && !text.contains(answer_guard::MASK)
}

/// The opening of the retrieved lesson passage about `unit` that shares
/// most words with `idea` (the best-ranked among equals); else the anchor.
fn explanation_near(input: &TutorTurnInput, unit: &UnitAnchor, idea: &str) -> String {
    let topic = content_words(idea);
    let mut best: Option<(usize, String)> = None;
    for chunk in input
        .context
        .unit_content_chunks
        .iter()
        .filter(|c| c.unit_id == unit.unit_id && !c.worked_example)
    {
        let text = first_sentences(&chunk.text, 2);
        if !quotable(input, &text) {
            continue;
        }
        let shared = content_words(&text).intersection(&topic).count();
        if best.as_ref().is_none_or(|(top, _)| shared > *top) {
            best = Some((shared, text));
        }
    }
    best.map_or_else(|| first_sentences(&unit.anchor_text, 2), |(_, t)| t)
}

/// The lesson chunks of `unit_id` that can be quoted without giving the
/// pending question away.
fn lesson_chunks<'i>(input: &'i TutorTurnInput, unit_id: &str) -> Vec<&'i ContentChunk> {
    input
        .context
        .unit_content_chunks
        .iter()
        .filter(|c| c.unit_id == unit_id && !overlaps_question(input, &c.text))
        .collect()
}

/// Whether `text` contains the mathematics of the pending question (so
/// quoting it could give the answer away). Compares the question's runs of
/// numbers, variables and operators, spaces ignored.
fn overlaps_question(input: &TutorTurnInput, text: &str) -> bool {
    let Some(question) = &input.question else {
        return false;
    };
    let haystack: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    math_runs(&question.text)
        .iter()
        .any(|run| haystack.contains(run.as_str()))
}

/// Runs of math-looking tokens, e.g. `x-4=9` from "Solve x - 4 = 9.".
fn math_runs(text: &str) -> Vec<String> {
    let mathy = |token: &str| {
        token
            .chars()
            .any(|c| c.is_ascii_digit() || "=+-*/×÷^<>".contains(c))
            || (token.chars().count() == 1 && token.chars().all(char::is_alphabetic))
    };
    let mut runs = Vec::new();
    let mut current = String::new();
    for token in text.split_whitespace() {
        let token = token.trim_end_matches(['.', ',', '?', '!', ';', ':']);
        if mathy(token) {
            current.extend(token.chars().flat_map(char::to_lowercase));
        } else if !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs.retain(|r| r.chars().count() >= 3 && r.chars().any(|c| c.is_ascii_digit()));
    runs
}

/// The first `count` sentences of `text`, cut to a quotable length.
fn first_sentences(text: &str, count: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut end = text.len();
    let mut last_start = 0;
    let mut seen = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        let next = chars.get(i + 1).map(|&(_, n)| n);
        if matches!(c, '.' | '?' | '!') && next.is_none_or(char::is_whitespace) {
            seen += 1;
            if seen == count {
                end = at + c.len_utf8();
                break;
            }
            last_start = at + c.len_utf8();
        }
    }
    // A last sentence that sets up what follows ("Take 36/48.") reads as
    // cut off without it.
    if end < text.len() && last_start > 0 && passage::sets_up_next(&text[last_start..end]) {
        end = last_start;
    }
    let mut out = text[..end].trim_end().to_owned();
    if out.chars().count() > MAX_EXPLANATION_CHARS {
        let cut = out
            .char_indices()
            .nth(MAX_EXPLANATION_CHARS)
            .map_or(out.len(), |(i, _)| i);
        let boundary = out[..cut].rfind(' ').unwrap_or(cut);
        out.truncate(boundary);
        out.push('…');
    }
    out
}

fn as_sentence(step: &str) -> String {
    let step = step.trim();
    if step.ends_with(['.', '!', '?', '✓']) {
        step.to_owned()
    } else {
        format!("{step}.")
    }
}

/// Verbs that open an instruction to go over the work again.
const RETRY_VERBS: &[&str] = &["check", "try", "look", "go"];

/// `text` without an instruction that a later sentence gives again
/// ("Check each column again. Check that part and try again."): a known
/// mistake's explanation often ends by saying what to do, and so does the
/// move after it, which is kept. A sentence that works something out
/// ("Check: 3 + 4 = 7.") is working, not an instruction.
fn without_repeated_instructions(text: &str) -> String {
    let instruction = |sentence: &str| -> Option<String> {
        let works_out = sentence.split('=').skip(1).any(|after| {
            after
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit() || c == '-')
        });
        if works_out {
            return None;
        }
        let verb = sentence.split_whitespace().next()?.to_lowercase();
        RETRY_VERBS.contains(&verb.as_str()).then_some(verb)
    };
    let sentences = passage::sentences(text);
    let verbs: Vec<Option<String>> = sentences.iter().map(|s| instruction(s)).collect();
    let repeated = |i: usize| {
        verbs[i]
            .as_ref()
            .is_some_and(|verb| verbs[i + 1..].iter().flatten().any(|v| v == verb))
    };
    if !(0..sentences.len()).any(repeated) {
        return text.to_owned();
    }
    sentences
        .iter()
        .enumerate()
        .filter(|(i, _)| !repeated(*i))
        .map(|(_, s)| *s)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Collapses whitespace and trims.
fn tidy(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Deterministic variety: the same seed and slot always pick the same variant.
struct Picker {
    seed: u64,
}

impl Picker {
    fn index(&self, salt: &str, len: usize) -> usize {
        if len == 0 {
            return 0;
        }
        let mixed = splitmix64(self.seed ^ fnv1a(salt));
        usize::try_from(mixed % u64::try_from(len).unwrap_or(1)).unwrap_or(0)
    }

    /// A rendered variant of `list` whose placeholders `values` can fill; empty when none can.
    fn phrase(
        &self,
        salt: &str,
        list: &[String],
        values: &BTreeMap<&'static str, String>,
    ) -> String {
        let mut usable: Vec<PromptTemplate> = list
            .iter()
            .filter_map(|p| PromptTemplate::parse(salt, p).ok())
            .filter(|t| {
                t.placeholders()
                    .all(|p| values.contains_key(p.name.as_str()))
            })
            .collect();
        // Help about the item in front of the student comes before help
        // about the unit in general.
        let about_item = |t: &PromptTemplate| {
            t.placeholders()
                .filter(|p| ITEM_PLACEHOLDERS.contains(&p.name.as_str()))
                .count()
        };
        let most = usable.iter().map(about_item).max().unwrap_or(0);
        usable.retain(|t| about_item(t) == most);
        if usable.is_empty() {
            return String::new();
        }
        usable[self.index(salt, usable.len())]
            .render(values)
            .unwrap_or_default()
    }
}

/// The variants of `list` that `values` can fill and that say the most:
/// the most placeholders with something in them.
fn most_said(list: &[String], values: &BTreeMap<&'static str, String>) -> Vec<String> {
    let filled = |p: &String| -> Option<usize> {
        let template = PromptTemplate::parse("answer", p).ok()?;
        let names: Vec<&str> = template.placeholders().map(|p| p.name.as_str()).collect();
        names.iter().all(|n| values.contains_key(n)).then(|| {
            names
                .iter()
                .filter(|n| values.get(*n).is_some_and(|v| !v.is_empty()))
                .count()
        })
    };
    let most = list.iter().filter_map(filled).max();
    list.iter()
        .filter(|p| most.is_some() && filled(p) == most)
        .cloned()
        .collect()
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A pending question as the tutor asks it again: a problem the student
/// brought is stored bare (`47 + 38`, `2x + 3 = 11`) and is put as a
/// question.
fn asked(question: &str) -> String {
    let text = question.trim();
    // A drill's prompt followed by its maths: a sentence already. A word
    // problem's sentences state every number of its plain sum, and the sum
    // beside them would tell the student which operation to do; LaTeX and
    // other maths are marked for the page to typeset.
    let sentence_end = [". ", "? ", "! "]
        .iter()
        .filter_map(|p| text.rfind(p))
        .max();
    if let Some(end) = sentence_end {
        let (sentence, maths) = text.split_at(end + 1);
        let maths = maths.trim();
        if is_bare_maths(maths) {
            let numbers = maths
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .map(|n| n.trim_matches('.'))
                .filter(|n| !n.is_empty());
            let stated = numbers.clone().all(|n| sentence_words_hold(sentence, n));
            return if stated && numbers.count() > 0 && !maths.contains('\\') {
                sentence.to_owned()
            } else {
                format!("{sentence} \\({maths}\\)")
            };
        }
    }
    if text.ends_with(['?', '.', '!']) {
        text.to_owned()
    } else if text.contains('=') {
        format!("Solve {text}.")
    } else {
        format!("What is {text}?")
    }
}

/// Maths with nothing in words: digits, signs, single letters and LaTeX
/// commands, not yet marked for typesetting.
fn is_bare_maths(text: &str) -> bool {
    if text.contains("\\(") || text.contains('$') || !text.contains(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let mut words = text.split(|c: char| !(c.is_alphabetic() || c == '\\'));
    words.all(|w| w.starts_with('\\') || w.chars().count() <= 1)
}

/// Whether `number` stands in `sentence` as a number of its own (60 in
/// "has 60 students", not in "160").
fn sentence_words_hold(sentence: &str, number: &str) -> bool {
    sentence
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .any(|n| n.trim_matches('.') == number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_problem_is_asked_without_its_sum() {
        assert_eq!(
            asked(
                "A school has 60 students. 24 of them go on a trip. How many students stay at school? 60 - 24"
            ),
            "A school has 60 students. 24 of them go on a trip. How many students stay at school?"
        );
        assert_eq!(
            asked("Round to the nearest ten. 347"),
            "Round to the nearest ten. \\(347\\)"
        );
    }

    #[test]
    fn a_bare_problem_is_asked_as_a_question() {
        assert_eq!(asked("47 + 38"), "What is 47 + 38?");
        assert_eq!(asked(" 2x + 3 = 11 "), "Solve 2x + 3 = 11.");
        assert_eq!(asked("What is 7 + 5?"), "What is 7 + 5?");
        assert_eq!(
            asked("Write 16/22 in its simplest form."),
            "Write 16/22 in its simplest form."
        );
        assert_eq!(
            asked("Simplify the fraction 6/14 as far as possible. \\frac{6}{14}"),
            "Simplify the fraction 6/14 as far as possible. \\(\\frac{6}{14}\\)"
        );
        assert_eq!(
            asked("Work out. 3.5 \\times 2"),
            "Work out. \\(3.5 \\times 2\\)"
        );
    }

    #[test]
    fn math_runs_find_the_equation() {
        assert_eq!(math_runs("Solve x - 4 = 9."), vec!["x-4=9".to_owned()]);
        assert_eq!(math_runs("What is 3/4 + 1/8?"), vec!["3/4+1/8".to_owned()]);
        assert!(math_runs("Why do we divide?").is_empty());
    }

    #[test]
    fn first_sentences_keep_decimals_together() {
        assert_eq!(
            first_sentences("It costs 2.50 dollars. Then more. And more.", 2),
            "It costs 2.50 dollars. Then more."
        );
        assert_eq!(first_sentences("No full stop", 2), "No full stop");
        assert_eq!(
            first_sentences("Divide by a common factor. Take 36/48. Both halve.", 2),
            "Divide by a common factor."
        );
        assert_eq!(
            first_sentences("Divide by a common factor. Take 36/48.", 2),
            "Divide by a common factor. Take 36/48."
        );
    }

    #[test]
    fn a_repeat_is_dropped_whole_and_a_decimal_is_not_a_sentence_end() {
        let idea = "To add or subtract decimals, line up the decimal points so that digits with the same value are in the same column.";
        let lesson = "When you add decimals, the decimal points must line up. For 3.4 + 2.75, put 3.40 above 2.75 with the points in a straight column.";
        assert_eq!(
            without_repeats(lesson, idea),
            "For 3.4 + 2.75, put 3.40 above 2.75 with the points in a straight column."
        );
    }

    #[test]
    fn an_instruction_is_given_once() {
        assert_eq!(
            without_repeated_instructions(
                "Very close. One fact is out. Check each column again. Check that part and try again."
            ),
            "Very close. One fact is out. Check that part and try again."
        );
        let working = "Check: 3 + 4 = 7. Check that part and try again.";
        assert_eq!(without_repeated_instructions(working), working);
        assert_eq!(
            without_repeated_instructions(
                "Check each column again. Check it with this step: 16 - 7 = ?"
            ),
            "Check it with this step: 16 - 7 = ?"
        );
    }

    #[test]
    fn the_picker_is_stable_and_spreads() {
        let seen: std::collections::BTreeSet<usize> = (0..64)
            .map(|seed| Picker { seed }.index("ask", 4))
            .collect();
        assert_eq!(seen.len(), 4);
        assert_eq!(
            Picker { seed: 7 }.index("ask", 4),
            Picker { seed: 7 }.index("ask", 4)
        );
    }
}
