//! The offline tutor: the same structured reply an LLM gives, built
//! deterministically from the policy, the retrieved context, the routing
//! category and the workflow's phrasebook. It is the local default and the
//! fallback, so it must always produce a reply the policy accepts: an
//! action the policy allows, a target unit in scope, the card that action
//! needs, and words that read like a patient tutor — never internal names.
//!
//! This file chooses the action and composes the reply; what it says is
//! filled from `values` by the picker in `phrases`.

mod asking;
mod concept_card;
mod phrases;
mod quoting;
mod turn;
mod values;

use std::sync::Arc;

use async_trait::async_trait;

use self::concept_card::concept_card;
use self::phrases::{Picker, most_said};
use self::quoting::{tidy, without_repeated_instructions};
use self::turn::{
    anchor, asks_another_way, asks_for_an_example, beyond_just_answered, exam_choice, explaining,
    has_item_help, on_a_problem, pending_offer, practice_target, said_last, target_unit,
};
use self::values::{Values, another_example};
use crate::content::Bundle;
use crate::content::tutor_text::{FollowUp, OfflinePhrases, PhraseSlot};
use crate::content::workflow::Workflow;
use crate::engine::interpret::student_math;
use crate::engine::reply::fallback::{self, ValidationContext};
use crate::llm::offline::passage;
use crate::model::{
    CallUsage, CheckReply, ClientEvent, ExamResult, LlmDrillCard, LlmError, LlmExamSuggestion,
    LlmMappedUnit, LlmQuestionAsked, LlmTurnAnalysis, LlmTutorResponse, MAX_REPLY_LIST, Reply,
    StepKind, StudentIntent, TextSink, Tutor, TutorAction, TutorTurnInput, UnderstandingSignal,
};

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
            FollowUp::Continue if pending_offer(input).is_some() => {
                parts.extend(pending_offer(input).map(str::to_owned));
                None
            }
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
        TutorAction::ConceptCard if concept_card::is_later_idea(input) => {
            Some(PhraseSlot::NextIdeaCard)
        }
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
