//! The tutor prompt: rendered from the workflow's templates, a missing
//! value is an error, trimming keeps the token budget (history first, then
//! the lowest-ranked chunks), and no expected answer of a pending question,
//! drill or exam item ever reaches it.

use crate::llm_support;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use tutorflow::content::Bundle;
use tutorflow::content::course::ExamItem;
use tutorflow::content::prompt::PromptTemplate;
use tutorflow::llm::prompt::tutor_prompt;
use tutorflow::llm::tokens;
use tutorflow::llm::{ChatRole, Endpoint, LlmBinding, LlmTutor, RetryPolicy};
use tutorflow::model::{
    AnswerKind, ExamCandidate, ExamTier, ExpectedAnswer, HistoryMessage, LlmError, PendingQuestion,
    PracticeItem, ProblemBrief, QuestionPhase, QuestionState, Role, Tutor,
};

use llm_support::{bundle, sample_units, turn_input};

fn workflow(bundle: &Bundle) -> &tutorflow::content::Workflow {
    &bundle.workflows["default"]
}

/// The default workflow with room for every sample unit in the context.
fn roomy(bundle: &Bundle) -> tutorflow::content::Workflow {
    let mut workflow = workflow(bundle).clone();
    workflow.token_budget = 200_000;
    workflow
}

#[test]
fn the_prompt_is_three_system_messages_and_the_student_turn() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut input = turn_input(&units);
    input.history = vec![
        HistoryMessage {
            role: Role::Assistant,
            text: "What is being done to x?".into(),
        },
        HistoryMessage {
            role: Role::Student,
            text: "it is multiplied by 3".into(),
        },
    ];
    input.category.id = "conceptual_question".into();
    let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
    let roles: Vec<ChatRole> = prompt.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            ChatRole::System,
            ChatRole::System,
            ChatRole::System,
            ChatRole::User
        ]
    );
    let [system, policy, context, user] = [0, 1, 2, 3].map(|i| &prompt.messages[i].content);
    assert!(system.contains("Pre-algebra foundations") && system.contains("ages 12-15"));
    assert!(system.contains(workflow(&bundle).prompt_signals.pacing.steady.trim()));
    assert!(!system.contains("{{"), "{system}");
    assert!(policy.starts_with("POLICY") && policy.contains("\"allowedActions\""));
    assert!(context.contains("\"unitAnchors\"") && context.contains("\"snapshotLiteForLLM\""));
    assert!(user.contains("Tutor: What is being done to x?\nStudent: it is multiplied by 3"));
    assert!(user.contains("- messageText: Can you help me with this?"));
    assert!(user.contains("How this message was read: conceptual_question."));
    assert!(user.contains(&format!(
        "The student asked about an idea in {}",
        units[0].title
    )));
    assert_eq!(
        prompt.tokens,
        prompt
            .messages
            .iter()
            .map(|m| tokens::message_tokens(&m.content))
            .sum::<u32>()
    );
    assert_eq!((prompt.dropped_history, prompt.dropped_chunks), (0, 0));
}

#[test]
fn every_category_renders_with_the_shipped_templates() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    for category in &workflow(&bundle).categories {
        let mut input = turn_input(&units);
        input.category.id = category.id.clone();
        input.category.phase = QuestionPhase::Hint;
        let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input)
            .unwrap_or_else(|e| panic!("{}: {e}", category.id));
        assert!(
            !prompt.messages[3].content.contains("{{"),
            "{}",
            category.id
        );
    }
}

#[test]
fn a_template_value_the_renderer_lacks_is_an_error() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let input = turn_input(&units);
    let mut prompts = bundle.prompts.clone();
    prompts.insert(
        "tutor_system".into(),
        PromptTemplate::parse("tutor_system", "Rules for {{course_title}} in {{galaxy}}.").unwrap(),
    );
    let err = tutor_prompt(&prompts, workflow(&bundle), &input).unwrap_err();
    assert!(
        matches!(&err, LlmError::InvalidInput(m) if m.contains("{{galaxy}}")),
        "{err:?}"
    );
    prompts.remove("tutor_input");
    let err = tutor_prompt(&prompts, workflow(&bundle), &input).unwrap_err();
    assert!(
        matches!(&err, LlmError::InvalidInput(m) if m.contains("tutor_input")),
        "{err:?}"
    );
    let mut unknown = input.clone();
    unknown.category.id = "no_such_category".into();
    let err = tutor_prompt(&bundle.prompts, workflow(&bundle), &unknown).unwrap_err();
    assert!(matches!(&err, LlmError::InvalidInput(m) if m.contains("no_such_category")));
}

#[tokio::test]
async fn the_llm_tutor_reports_an_unrenderable_prompt_without_calling_out() {
    let loaded = bundle();
    let units = sample_units(&loaded);
    let mut broken = (*loaded).clone();
    broken.prompts.insert(
        "tutor_input".into(),
        PromptTemplate::parse("tutor_input", "{{student_input}} {{weather}}").unwrap(),
    );
    // Nothing listens at this address: a call would fail as Unavailable.
    let provider = tutorflow::llm::openai::OpenAiProvider::new(
        Endpoint {
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: None,
            default_model: "m".into(),
        },
        tutorflow::llm::openai::OpenAiFlavor::Compatible,
        RetryPolicy::default(),
    );
    let tutor = LlmTutor(LlmBinding::new(
        Arc::new(provider),
        Arc::new(broken),
        "default",
    ));
    let err = tutor.decide(&turn_input(&units)).await.unwrap_err();
    assert!(matches!(err, LlmError::InvalidInput(_)), "{err:?}");
}

fn words(n: usize, salt: usize) -> String {
    (0..n)
        .map(|i| format!("word{}", (i * 7 + salt) % 97))
        .collect::<Vec<_>>()
        .join(" ")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Trimming keeps the budget, drops the oldest history before any
    /// chunk, keeps the newest messages, and fails only when even the
    /// untrimmable part is over budget.
    #[test]
    fn trimming_keeps_the_token_budget(
        history_sizes in prop::collection::vec(1usize..120, 0..24),
        chunk_sizes in prop::collection::vec(1usize..250, 0..10),
        budget in 1200u32..5000,
        student_words in 1usize..300,
    ) {
        let bundle = bundle();
        let units = sample_units(&bundle);
        let mut workflow = workflow(&bundle).clone();
        workflow.token_budget = budget;
        workflow.history_messages = 50;
        let mut input = turn_input(&units);
        input.student.message_text = Some(words(student_words, 3));
        input.history = history_sizes
            .iter()
            .enumerate()
            .map(|(i, n)| HistoryMessage {
                role: if i % 2 == 0 { Role::Assistant } else { Role::Student },
                text: format!("m{i} {}", words(*n, i)),
            })
            .collect();
        input.context.unit_content_chunks = chunk_sizes
            .iter()
            .enumerate()
            .map(|(i, n)| tutorflow::model::ContentChunk {
                unit_id: units[0].id.clone(),
                chunk_id: format!("c{i}"),
                section: format!("Section {i}"),
                text: format!("chunk{i} {}", words(*n, i + 50)),
                worked_example: false,
            })
            .collect();
        match tutor_prompt(&bundle.prompts, &workflow, &input) {
            Ok(prompt) => {
                prop_assert!(prompt.tokens <= budget);
                if prompt.dropped_chunks > 0 {
                    prop_assert_eq!(prompt.dropped_history, input.history.len());
                }
                let user = &prompt.messages[3].content;
                let context = &prompt.messages[2].content;
                let kept = input.history.len() - prompt.dropped_history;
                for (i, _) in input.history.iter().enumerate() {
                    let shown = user.contains(&format!("m{i} "));
                    prop_assert_eq!(shown, i >= input.history.len() - kept, "message {}", i);
                }
                let kept_chunks = input.context.unit_content_chunks.len() - prompt.dropped_chunks;
                for i in 0..input.context.unit_content_chunks.len() {
                    prop_assert_eq!(context.contains(&format!("chunk{i} ")), i < kept_chunks);
                }
                // Nothing was trimmed that did not have to be: keeping one
                // more message (or chunk) would not fit.
                if prompt.dropped_history > 0 || prompt.dropped_chunks > 0 {
                    let mut roomier = workflow.clone();
                    roomier.token_budget = 200_000;
                    let mut one_more = input.clone();
                    if prompt.dropped_chunks > 0 {
                        one_more.history.clear();
                        one_more.context.unit_content_chunks.truncate(kept_chunks + 1);
                    } else {
                        one_more.history.drain(..prompt.dropped_history - 1);
                    }
                    let fuller = tutor_prompt(&bundle.prompts, &roomier, &one_more).unwrap();
                    prop_assert!(fuller.tokens > budget, "{} tokens would have fit", fuller.tokens);
                }
            }
            Err(LlmError::InvalidInput(message)) => {
                prop_assert!(message.contains("token budget"), "{}", message);
                let mut bare = input.clone();
                bare.history.clear();
                bare.context.unit_content_chunks.clear();
                let mut roomy = workflow.clone();
                roomy.token_budget = 200_000;
                let minimum = tutor_prompt(&bundle.prompts, &roomy, &bare).unwrap();
                prop_assert!(minimum.tokens > budget);
            }
            Err(other) => prop_assert!(false, "unexpected error {:?}", other),
        }
    }

    /// Answers of pending questions, drills and exam items never reach the
    /// prompt, while the rest of those items does.
    #[test]
    fn no_expected_answer_reaches_the_prompt(
        answer in "[A-Z]{3}[0-9]{4}[a-z]{3}",
        question in "[a-z]{4}[0-9]{3}",
        options in prop::collection::vec("[A-Z][a-z]{5}[0-9]{3}", 2..5),
        correct in 0usize..4,
        memo in "[a-z]{5}[0-9]{5}",
        practice_answer in "[0-9]{6}[A-Z]{2}",
        practice_question in "[a-z]{3}[0-9]{3}[a-z]{2}",
        kind in prop::sample::select(vec![AnswerKind::Number, AnswerKind::Expression, AnswerKind::Equation, AnswerKind::Mcq, AnswerKind::Text]),
        phase in prop::sample::select(vec![QuestionPhase::Asked, QuestionPhase::Probe, QuestionPhase::Hint, QuestionPhase::Explain, QuestionPhase::StrategyChange]),
    ) {
        let bundle = bundle();
        let units = sample_units(&bundle);
        let correct = correct % options.len();
        let pending = PendingQuestion {
            text: format!("Solve {question}."),
            expected: Some(ExpectedAnswer {
                kind,
                value: answer.clone(),
                unit: None,
                options: if kind == AnswerKind::Mcq { options.clone() } else { vec![] },
                mistakes: Vec::new(),
            }),
            unit_id: units[0].id.clone(),
            concept: "solving".into(),
            wrong_attempts: 2,
            previous_answers: vec!["12".into()],
            hints_used: 1,
            phase,
            asked_at: Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap(),
            drill_token: None,
        };
        let exam = ExamItem {
            id: "EX-GEN-1".into(),
            tier: ExamTier::Bronze,
            stem: format!("Which is right for {question}?"),
            options: options.clone(),
            answer: ExamItem::option_id(correct),
            memo: format!("The answer is {} because {memo}.", options[correct]),
            video_url: None,
            tags: vec!["generated".into()],
            steps: Vec::new(),
            format: tutorflow::content::ExamItemFormat::Choice,
            rubric: Vec::new(),
        };
        let mut input = turn_input(&units);
        input.question = Some(QuestionState::from(&pending));
        input.context.exam_candidates.push(ExamCandidate::from_item(&units[0].id, &exam));
        // The server keeps `practice_answer`; the item carries only what the student sees.
        let (item, _kept_by_server) = (
            PracticeItem {
                unit_id: units[0].id.clone(),
                prompt: "Solve for x".into(),
                question_latex: practice_question.clone(),
                options: None,
            },
            &practice_answer,
        );
        input.context.practice_item = Some(item);
        let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
        let text: String = prompt.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
        prop_assert!(!text.contains(&answer), "pending answer leaked");
        prop_assert!(!text.contains(&practice_answer), "practice answer leaked");
        prop_assert!(!text.contains(&memo), "exam memo leaked");
        for option in &options {
            prop_assert!(!text.contains(option.as_str()), "exam option leaked");
        }
        // The items themselves are there: the check looks at the right text.
        prop_assert!(text.contains(&question));
        prop_assert!(text.contains(&practice_question));
        prop_assert!(text.contains("EX-GEN-1"));
    }
}

#[test]
fn personalization_style_and_pacing_come_from_the_workflow() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let signals = &workflow(&bundle).prompt_signals;
    let mut input = turn_input(&units);
    input.pacing = tutorflow::model::PacingDirective::Simplify;
    input.style = tutorflow::model::StudentStyle {
        verbosity: tutorflow::model::Verbosity::Quiet,
        disengaged: true,
        uses_emoji: false,
        asks_questions: false,
    };
    input.personalization = tutorflow::model::Personalization {
        student_name: Some("Ana".into()),
        age: Some(13),
        about_me: Some("I play football".into()),
        preferred_examples: vec![tutorflow::model::ExampleTheme::Sports],
        ..Default::default()
    };
    input.mode = tutorflow::model::Mode::ClarifyDoubts;
    let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
    let system = &prompt.messages[0].content;
    assert!(system.contains(signals.pacing.simplify.trim()));
    assert!(system.contains(signals.style.quiet.trim()));
    assert!(system.contains(signals.style.disengaged.trim()));
    assert!(!system.contains(signals.style.emoji.trim()));
    assert!(system.contains(signals.mode_rules.clarify_doubts.trim()));
    assert!(system.contains("Ana, age 13") && system.contains("I play football"));
    assert!(system.contains("Session mode: clarify doubts"));
}

#[test]
fn a_question_session_tells_the_model_what_was_discussed_and_when_to_close() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut input = turn_input(&units);
    input.mode = tutorflow::model::Mode::ClarifyDoubts;
    input.category.id = "clarify_answer".into();
    input.clarify = Some(tutorflow::model::ClarifyBrief {
        concepts_discussed: vec!["Ratios and sharing".into(), "Percentages".into()],
        past_discussions: vec!["2026-11-20: Two-step equations".into()],
        closing: false,
        complete: false,
    });
    let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
    let all: String = prompt.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(
        all.contains("Already answered in this session: Ratios and sharing; Percentages."),
        "{all}"
    );
    assert!(all.contains("2026-11-20: Two-step equations"), "{all}");
    assert!(all.contains("Answer it directly and completely"), "{all}");
    assert!(!all.contains("has already ended"), "{all}");

    input.category.id = "clarify_after".into();
    input.clarify.as_mut().unwrap().complete = true;
    let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
    let all: String = prompt.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(
        all.contains("This question session has already ended"),
        "{all}"
    );
}

/// A lesson's mode block says what the turn's pacing means for its step:
/// a smaller step under SIMPLIFY, a brisk one under ACCELERATE, nothing
/// more otherwise.
#[test]
fn the_lesson_block_carries_the_pacing_of_the_step() {
    use tutorflow::model::{LessonBrief, LessonStep, Mode, PacingDirective, StepKind};
    let bundle = bundle();
    let units = sample_units(&bundle);
    let lesson = &workflow(&bundle).prompt_signals.lesson;
    let system = |pacing: PacingDirective| {
        let mut input = turn_input(&units);
        input.mode = Mode::TeachMe;
        input.pacing = pacing;
        input.lesson = Some(LessonBrief {
            step: Some(LessonStep {
                number: 2,
                title: "Undo addition and subtraction".into(),
                kind: StepKind::Check,
                concept: "inverse of + and -".into(),
                success_criteria: None,
            }),
            steps_total: 4,
            steps_completed: 1,
            complete: false,
            closing: false,
        });
        let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
        prompt.messages[0].content.clone()
    };
    let simplify = system(PacingDirective::Simplify);
    assert!(simplify.contains("step 2 of 4, a check step"));
    assert!(simplify.contains(lesson.simplify.trim()));
    assert!(!simplify.contains(lesson.accelerate.trim()));
    let accelerate = system(PacingDirective::Accelerate);
    assert!(accelerate.contains(lesson.accelerate.trim()));
    assert!(!accelerate.contains(lesson.simplify.trim()));
    let steady = system(PacingDirective::Steady);
    assert!(!steady.contains(lesson.simplify.trim()) && !steady.contains(lesson.accelerate.trim()));
}

/// The hybrid memory as the model reads it: the problem in the mode
/// block, the turns kept from the previous problem marked as such, the
/// current problem's turns not; trimming the history drops the earlier
/// problem's turns first.
#[test]
fn the_prompt_marks_the_turns_kept_from_the_previous_problem() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut input = turn_input(&units);
    let line = |role, text: &str| HistoryMessage {
        role,
        text: text.into(),
    };
    input.history = vec![
        line(Role::Student, "27"),
        line(Role::Assistant, "Spot on! Problem 2 of 5: What is 7 x 8?"),
        line(Role::Student, "54"),
        line(Role::Assistant, "Not quite. How did you start?"),
    ];
    input.problem = Some(ProblemBrief {
        number: 2,
        total: 5,
        text: "What is 7 x 8?".into(),
        hint: Some("Think of 7 x 8 as 7 x 4 doubled.".into()),
        earlier_messages: 2,
        finishing: false,
    });
    let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
    let system = &prompt.messages[0].content;
    assert!(
        system.contains("Problem 2 of 5: \"What is 7 x 8?\""),
        "{system}"
    );
    assert!(
        system.contains("Think of 7 x 8 as 7 x 4 doubled."),
        "{system}"
    );
    let user = &prompt.messages[3].content;
    assert!(user.contains("(previous problem) Student: 27"), "{user}");
    assert!(
        user.contains("(previous problem) Tutor: Spot on! Problem 2 of 5"),
        "{user}"
    );
    assert!(user.contains("\nStudent: 54"), "{user}");
    assert!(!user.contains("(previous problem) Student: 54"), "{user}");

    // With room for only the last two messages, the previous problem's go.
    let mut tight = roomy(&bundle);
    tight.history_messages = 2;
    let prompt = tutor_prompt(&bundle.prompts, &tight, &input).unwrap();
    let user = &prompt.messages[3].content;
    assert!(!user.contains("(previous problem)"), "{user}");
    assert!(user.contains("Student: 54"), "{user}");
}

/// The system prompt of a personalised student, rendered whole and held to
/// a committed file: a change to the wording shows in review.
#[test]
fn a_personalised_system_prompt_matches_its_snapshot() {
    use tutorflow::model::{ExampleTheme, LanguageLevel, Personalization, TutorLanguage};
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut input = turn_input(&units);
    input.personalization = Personalization {
        student_name: Some("Lucía".into()),
        age: Some(12),
        grade: Some(7),
        about_me: None,
        preferred_examples: vec![ExampleTheme::Cooking, ExampleTheme::Money],
        language_level: LanguageLevel::Simple,
        language: TutorLanguage::Es,
    };
    let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
    let system = prompt.messages[0].content.clone() + "\n";
    assert!(system.contains("The student's name is Lucía, age 12."));
    assert!(system.contains("grade 7"));
    assert!(system.contains("cooking, money"));
    assert!(system.contains("short sentences"));
    assert!(system.contains("in Spanish"));
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/prompts/personalized_system.txt");
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &system).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == system,
        "the rendered prompt changed; if intended, run \
         `UPDATE_GOLDEN=1 cargo test -p tutorflow --test llm prompt::` and review {}",
        path.display()
    );
}

#[test]
fn a_student_who_shares_nothing_is_not_asked() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let input = turn_input(&units);
    let prompt = tutor_prompt(&bundle.prompts, &roomy(&bundle), &input).unwrap();
    let system = &prompt.messages[0].content;
    assert!(
        system.contains("No personal details are shared"),
        "{system}"
    );
    assert!(!system.contains("Spanish"), "{system}");
}
