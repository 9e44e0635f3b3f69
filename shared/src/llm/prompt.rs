//! The tutor's prompt bundle:
//! the workflow's templates rendered into three system messages (core
//! rules, POLICY, CONTEXT) and one user message (conversation, student
//! input, category guidance and the reply contract), trimmed to the
//! workflow's token budget — history first, then the lowest-ranked content
//! chunks.

use std::collections::BTreeMap;

use super::provider::ChatMessage;
use super::tokens;
use crate::content::prompt::PromptTemplate;
use crate::content::tutor_text::PromptSignals;
use crate::content::workflow::Workflow;
use crate::model::{
    ClientEvent, HistoryMessage, LanguageLevel, LlmError, Personalization, QuestionPhase,
    QuestionState, Role, StudentStyle, TutorLanguage, TutorTurnInput,
};

/// The rendered prompt and what trimming it took.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptBundle {
    pub messages: Vec<ChatMessage>,
    /// Estimated tokens of all messages (see [`tokens`]).
    pub tokens: u32,
    pub dropped_history: usize,
    pub dropped_chunks: usize,
}

/// The tutor's templates as a workflow names them.
struct TutorTemplates<'a> {
    system: &'a PromptTemplate,
    policy: &'a PromptTemplate,
    context: &'a PromptTemplate,
    input: &'a PromptTemplate,
    guidance: &'a PromptTemplate,
}

fn template<'a>(
    prompts: &'a BTreeMap<String, PromptTemplate>,
    name: &str,
) -> Result<&'a PromptTemplate, LlmError> {
    prompts
        .get(name)
        .ok_or_else(|| LlmError::InvalidInput(format!("prompt `{name}` is not in the bundle")))
}

/// Builds the tutor prompt for `input` from `workflow`'s templates in `prompts`.
pub fn tutor_prompt(
    prompts: &BTreeMap<String, PromptTemplate>,
    workflow: &Workflow,
    input: &TutorTurnInput,
) -> Result<PromptBundle, LlmError> {
    let category = workflow.category(&input.category.id).ok_or_else(|| {
        LlmError::InvalidInput(format!(
            "`{}` is not a routing category of workflow `{}`",
            input.category.id, workflow.id
        ))
    })?;
    let names = &workflow.prompts;
    let templates = TutorTemplates {
        system: template(prompts, &names.tutor_system)?,
        policy: template(prompts, &names.tutor_policy)?,
        context: template(prompts, &names.tutor_context)?,
        input: template(prompts, &names.tutor_input)?,
        guidance: template(prompts, &category.prompt)?,
    };
    let history_limit = usize::try_from(workflow.history_messages).unwrap_or(usize::MAX);
    let history = &input.history[input.history.len().saturating_sub(history_limit)..];
    // Messages from earlier problems (hybrid memory) come first; those the
    // limit or the budget drops are among them.
    let earlier = input
        .problem
        .as_ref()
        .map_or(0, |p| p.earlier_messages as usize)
        .saturating_sub(input.history.len() - history.len());
    let budget = workflow.token_budget;
    let fixed = FixedParts::render(&templates, &workflow.prompt_signals, input)?;
    let chunks = &input.context.unit_content_chunks;
    // Trimming drops the oldest history messages, then the lowest-ranked
    // chunks: `k` counts both, in that order.
    let droppable = history.len() + chunks.len();
    let render = |k: usize| {
        let dropped_history = k.min(history.len());
        let dropped_chunks = k - dropped_history;
        assemble(
            &templates,
            &fixed,
            input,
            &history[dropped_history..],
            earlier.saturating_sub(dropped_history),
            chunks.len() - dropped_chunks,
        )
        .map(|bundle| PromptBundle {
            dropped_history,
            dropped_chunks,
            ..bundle
        })
    };
    let full = render(0)?;
    if full.tokens <= budget {
        return Ok(full);
    }
    // Rendering is the expensive part: first guess how much to drop from
    // each piece's own estimate, then correct the guess with real renders.
    let mut excess = full.tokens - budget;
    let costs = history
        .iter()
        .map(|m| tokens::estimate(&history_line(m)) + 1)
        .chain(
            chunks
                .iter()
                .rev()
                .map(|c| serde_json::to_string(c).map_or(0, |json| tokens::estimate(&json) + 1)),
        );
    let mut k = 0;
    for cost in costs {
        if excess == 0 {
            break;
        }
        excess = excess.saturating_sub(cost);
        k += 1;
    }
    // The largest number of drops known to leave the prompt over budget.
    let mut over = 0;
    let mut bundle = render(k)?;
    while bundle.tokens > budget {
        if k == droppable {
            return Err(LlmError::InvalidInput(format!(
                "the tutor prompt needs about {} tokens without history or content \
                 chunks; the workflow's token budget is {budget}",
                bundle.tokens
            )));
        }
        over = k;
        k += 1;
        bundle = render(k)?;
    }
    // Keep whatever still fits.
    while k > over + 1 {
        let fuller = render(k - 1)?;
        if fuller.tokens > budget {
            break;
        }
        k -= 1;
        bundle = fuller;
    }
    Ok(bundle)
}

fn history_line(message: &HistoryMessage) -> String {
    let who = match message.role {
        Role::Student => "Student",
        Role::Assistant => "Tutor",
    };
    format!("{who}: {}", message.text.trim())
}

/// The parts that trimming never changes, rendered once.
struct FixedParts {
    system: String,
    policy: String,
    guidance: String,
    /// Estimated tokens of the system and policy messages.
    tokens: u32,
}

impl FixedParts {
    fn render(
        t: &TutorTemplates<'_>,
        signals: &PromptSignals,
        input: &TutorTurnInput,
    ) -> Result<Self, LlmError> {
        let mut values = BTreeMap::new();
        values.insert("course_title", input.course.title.clone());
        values.insert("course_audience", or_unknown(&input.course.audience));
        values.insert("mode", input.mode.as_str().replace('_', " "));
        let rules = signals.mode_rules(input.mode).trim();
        values.insert(
            "mode_rules",
            match (&input.lesson, &input.clarify, &input.problem) {
                (Some(lesson), _, _) => {
                    format!("{rules}\n{}", signals.lesson(lesson, input.pacing))
                }
                (None, Some(clarify), _) => format!("{rules}\n{}", signals.clarify(clarify))
                    .trim_end()
                    .to_owned(),
                (None, None, Some(problem)) => format!("{rules}\n{}", signals.problem(problem)),
                (None, None, None) => rules.to_owned(),
            },
        );
        values.insert("personalization", personalization(&input.personalization));
        values.insert("student_style", student_style(signals, input.style));
        values.insert(
            "pacing_directive",
            signals.pacing(input.pacing).trim().to_owned(),
        );
        let system = render(t.system, &values)?;
        let policy_json = serde_json::to_string(&input.policy)
            .map_err(|e| LlmError::InvalidInput(format!("policy: {e}")))?;
        let policy = render(t.policy, &BTreeMap::from([("policy_json", policy_json)]))?;
        let cue = &input.category;
        let misconceptions = if cue.misconceptions.is_empty() {
            "none recorded".to_owned()
        } else {
            cue.misconceptions.join("; ")
        };
        let guidance = render(
            t.guidance,
            &BTreeMap::from([
                ("attempt", cue.attempt.to_string()),
                ("phase", phase_words(cue.phase).to_owned()),
                ("scaffold_depth", cue.scaffold_depth.to_string()),
                ("unit_title", cue.unit_title.clone()),
                ("misconceptions", misconceptions),
                ("code_note", cue.code_note.clone()),
            ]),
        )?;
        let tokens = tokens::message_tokens(&system) + tokens::message_tokens(&policy);
        Ok(FixedParts {
            system,
            policy,
            guidance,
            tokens,
        })
    }
}

fn assemble(
    t: &TutorTemplates<'_>,
    fixed: &FixedParts,
    input: &TutorTurnInput,
    history: &[HistoryMessage],
    earlier: usize,
    chunks: usize,
) -> Result<PromptBundle, LlmError> {
    let mut context = input.context.clone();
    context.unit_content_chunks.truncate(chunks);
    let context_json = serde_json::to_string(&context)
        .map_err(|e| LlmError::InvalidInput(format!("context: {e}")))?;
    let context_text = render(t.context, &BTreeMap::from([("context_json", context_json)]))?;
    let history_text = if history.is_empty() {
        "(this is the start of the conversation)".to_owned()
    } else {
        history
            .iter()
            .enumerate()
            .map(|(k, m)| {
                if k < earlier {
                    format!("(previous problem) {}", history_line(m))
                } else {
                    history_line(m)
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let values = BTreeMap::from([
        ("student_input", student_input(input)),
        ("client_event", client_event(&input.context.client_event)),
        ("category", input.category.id.clone()),
        ("category_guidance", fixed.guidance.clone()),
        ("question_state", question_state(input.question.as_ref())),
        ("history", history_text),
    ]);
    let user = render(t.input, &values)?;
    let tokens =
        fixed.tokens + tokens::message_tokens(&context_text) + tokens::message_tokens(&user);
    let messages = vec![
        ChatMessage::system(fixed.system.clone()),
        ChatMessage::system(fixed.policy.clone()),
        ChatMessage::system(context_text),
        ChatMessage::user(user),
    ];
    Ok(PromptBundle {
        messages,
        tokens,
        dropped_history: 0,
        dropped_chunks: 0,
    })
}

fn render(template: &PromptTemplate, values: &BTreeMap<&str, String>) -> Result<String, LlmError> {
    template
        .render(values)
        .map(|text| text.trim().to_owned())
        .map_err(|e| LlmError::InvalidInput(e.to_string()))
}

fn or_unknown(text: &str) -> String {
    if text.trim().is_empty() {
        "audience not stated".to_owned()
    } else {
        text.trim().to_owned()
    }
}

fn phase_words(phase: QuestionPhase) -> &'static str {
    match phase {
        QuestionPhase::Asked => "asked",
        QuestionPhase::Probe => "probe",
        QuestionPhase::Hint => "hint",
        QuestionPhase::Explain => "explain",
        QuestionPhase::StrategyChange => "strategy_change",
    }
}

fn personalization(p: &Personalization) -> String {
    let mut lines = Vec::new();
    match (&p.student_name, p.age) {
        (Some(name), Some(age)) => lines.push(format!(
            "The student's name is {}, age {age}. Use their name now and then.",
            name.trim()
        )),
        (Some(name), None) => lines.push(format!(
            "The student's name is {}. Use it now and then.",
            name.trim()
        )),
        (None, Some(age)) => lines.push(format!("The student is {age} years old.")),
        (None, None) => {}
    }
    if let Some(grade) = p.grade {
        lines.push(format!("They are in grade {grade}."));
    }
    if let Some(about) = p.about_me.as_deref().filter(|a| !a.trim().is_empty()) {
        lines.push(format!("In their own words: {}", about.trim()));
    }
    if !p.preferred_examples.is_empty() {
        let themes: Vec<&str> = p.preferred_examples.iter().map(|t| t.as_str()).collect();
        lines.push(format!(
            "Set examples and word problems in: {} (when it fits the maths).",
            themes.join(", ")
        ));
    }
    match p.language_level {
        LanguageLevel::Simple => lines.push(
            "Use short sentences and everyday words; explain any maths word you use.".to_owned(),
        ),
        LanguageLevel::Standard => {}
        LanguageLevel::Advanced => {
            lines.push("Use precise mathematical vocabulary; keep explanations brief.".to_owned())
        }
    }
    if p.language != TutorLanguage::En {
        lines.push(format!(
            "Write every reply, card and question in {}, even when the course content below is in English.",
            p.language.name()
        ));
    }
    if lines.is_empty() {
        "No personal details are shared. Do not ask for any.".to_owned()
    } else {
        lines.join(" ")
    }
}

fn student_style(signals: &PromptSignals, style: StudentStyle) -> String {
    let mut parts = vec![signals.verbosity(style.verbosity).trim()];
    if style.disengaged {
        parts.push(signals.style.disengaged.trim());
    }
    if style.uses_emoji {
        parts.push(signals.style.emoji.trim());
    }
    if style.asks_questions {
        parts.push(signals.style.asks_questions.trim());
    }
    parts.join(" ")
}

fn student_input(input: &TutorTurnInput) -> String {
    let s = &input.student;
    let lines: Vec<String> = [
        ("messageText", &s.message_text),
        ("messageLatex", &s.message_latex),
        ("voiceTranscript", &s.voice_transcript),
    ]
    .into_iter()
    .filter_map(|(label, value)| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| format!("- {label}: {v}"))
    })
    .collect();
    if lines.is_empty() {
        "(no message: the student pressed a button, see the event below)".to_owned()
    } else {
        lines.join("\n")
    }
}

fn client_event(event: &ClientEvent) -> String {
    match event {
        ClientEvent::None => "none".to_owned(),
        other => serde_json::to_string(other).unwrap_or_else(|_| "none".to_owned()),
    }
}

fn question_state(question: Option<&QuestionState>) -> String {
    let Some(q) = question else {
        return "none".to_owned();
    };
    let mut text = format!(
        "\"{}\" (concept: {}; wrong answers so far: {}; phase: {}; hints given: {}",
        q.text.trim(),
        q.concept,
        q.wrong_attempts,
        phase_words(q.phase),
        q.hints_used
    );
    if !q.previous_answers.is_empty() {
        text.push_str("; earlier answers: ");
        text.push_str(&q.previous_answers.join(" | "));
    }
    text.push(')');
    let help = &q.help;
    if !help.steps.is_empty() {
        text.push_str(
            "\nIts worked steps (the last left open; never complete it for the student): ",
        );
        text.push_str(&help.steps.join(" | "));
    }
    if let Some(step) = &help.next_step {
        text.push_str(
            "\nThe next step they have not shown, to offer as a hint or smaller question: ",
        );
        text.push_str(step);
    }
    if let Some(other) = &help.representation {
        text.push_str("\nThe question shown another way, for a change of strategy: ");
        text.push_str(other);
    }
    if let Some(mistake) = &help.mistake {
        text.push_str("\nTheir answer is a known mistake; explain it this way: ");
        text.push_str(mistake);
    }
    text
}
