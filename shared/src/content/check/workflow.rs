//! Checks of a workflow file: its routing categories, its numbers, its
//! safety and sanitizer patterns, the prompts it names, and the texts of
//! the tutor prompt's signals and the offline tutor's phrasebook.

use std::collections::{BTreeMap, BTreeSet};

use super::prompts::PromptUse;
use super::{Checker, is_slug};
use crate::content::prompt::{PromptRole, PromptTemplate};
use crate::content::read::{Doc, file_stem};
use crate::content::safety_examples;
use crate::content::tutor_text::{
    FollowUp, Moves, OfflinePhrases, PhraseSlot, PromptSignals, Reaction, phase_name,
};
use crate::content::workflow::{Category, Transition, Workflow, unit_interval_fields};
use crate::content::yaml_index::YamlPath;
use crate::model::Mode;

impl Checker<'_> {
    pub(super) fn check_workflow<'a>(
        &mut self,
        doc: &'a Doc<Workflow>,
        uses: &mut Vec<PromptUse<'a>>,
    ) {
        let w = &doc.value;
        let root = YamlPath::root();
        let stem = file_stem(&doc.path);
        if w.id != stem {
            self.at(
                doc,
                &root.key("id"),
                format!("workflow id `{}` must match its file name `{stem}`", w.id),
            );
        }
        self.check_categories(doc, uses);
        self.check_settings(doc);
        self.check_thresholds(doc);
        self.check_mode_settings(doc);
        self.check_llm_calls(doc);
        self.check_patterns(doc);
        self.check_prompt_names(doc, uses);
        self.check_mode_categories(doc);
        self.check_tutor_text(doc);
    }

    /// The routing categories: at least one, ids unique slugs, each one
    /// detectable, and the default among them.
    fn check_categories<'a>(&mut self, doc: &'a Doc<Workflow>, uses: &mut Vec<PromptUse<'a>>) {
        let w = &doc.value;
        let root = YamlPath::root();
        let cats = root.key("categories");
        if w.categories.is_empty() {
            self.at_key(doc, &cats, "a workflow needs at least one routing category");
        }
        let mut seen = BTreeSet::new();
        for (i, c) in w.categories.iter().enumerate() {
            let at = cats.index(i);
            if !is_slug(&c.id) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!(
                        "category id `{}` must be lowercase letters, digits and _",
                        c.id
                    ),
                );
            }
            if !seen.insert(c.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!("category `{}` is defined twice", c.id),
                );
            }
            self.check_category(doc, &at, c);
            uses.push(PromptUse::of(
                doc,
                &c.prompt,
                PromptRole::CategoryGuidance,
                at.key("prompt"),
            ));
        }
        if !w.categories.iter().any(|c| c.id == w.default_category) {
            self.at(
                doc,
                &root.key("default_category"),
                format!(
                    "default_category `{}` is not one of the categories ({})",
                    w.default_category,
                    w.categories
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }

    /// One category can be detected, and its transitions do not undo each
    /// other.
    fn check_category(&mut self, doc: &Doc<Workflow>, at: &YamlPath, c: &Category) {
        let w = &doc.value;
        let d = &c.detect;
        // A mode may answer as a category it never detects.
        let answered_as = [
            &w.modes.problem_set.solved_category,
            &w.modes.problem_set.explained_category,
            &w.modes.problem_set.skipped_category,
        ]
        .contains(&&c.id);
        if d.grades.is_empty()
            && d.intents.is_empty()
            && d.phrases.is_empty()
            && !d.unrelated
            && !d.greeting
            && !d.topic_only
            && !c.set_by_mode
            && !answered_as
        {
            self.at_key(
                doc,
                &at.key("detect"),
                format!(
                    "category `{}` can never be detected: give it grades, intents, phrases, unrelated, greeting or topic_only",
                    c.id
                ),
            );
        }
        for (j, phrase) in d.phrases.iter().enumerate() {
            if phrase.folded().trim().is_empty() {
                self.at(
                    doc,
                    &at.key("detect").key("phrases").index(j),
                    "empty phrase",
                );
            }
        }
        for (a, b) in [
            (Transition::StartScaffolding, Transition::EndScaffolding),
            (Transition::StartTeachBack, Transition::EndTeachBack),
            (Transition::CountOffTopic, Transition::ResetOffTopic),
            (Transition::ClearQuestion, Transition::RecordWrongAttempt),
            (Transition::Harder, Transition::Easier),
        ] {
            if c.transitions.contains(&a) && c.transitions.contains(&b) {
                self.at_key(
                    doc,
                    &at.key("transitions"),
                    format!(
                        "category `{}` both {} and {}: they undo each other",
                        c.id,
                        transition_name(a),
                        transition_name(b)
                    ),
                );
            }
        }
    }

    /// Probabilities, and the policy's hours and counts.
    fn check_settings(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        let root = YamlPath::root();
        for (segments, value) in unit_interval_fields(w) {
            if !(0.0..=1.0).contains(&value) {
                let at = segments.iter().fold(root.clone(), |p, s| p.key(s));
                self.at(doc, &at, format!("{value} is outside [0, 1]"));
            }
        }
        let p = &w.policy;
        let policy = root.key("policy");
        if !(p.recency_window_hours > 0.0 && p.recency_window_hours.is_finite()) {
            self.at(
                doc,
                &policy.key("recency_window_hours"),
                "must be a positive number of hours",
            );
        }
        if !(p.exam_lockout_hours >= 0.0 && p.exam_lockout_hours.is_finite()) {
            self.at(
                doc,
                &policy.key("exam_lockout_hours"),
                "must be zero or more hours",
            );
        }
        if !(p.exam_card_hours > 0.0 && p.exam_card_hours.is_finite()) {
            self.at(
                doc,
                &policy.key("exam_card_hours"),
                "must be a positive number of hours",
            );
        }
        if p.scoped.max_units < 2 {
            self.at(
                doc,
                &policy.key("scoped").key("max_units"),
                "must be at least 2 (the focus and the target are always in scope)",
            );
        }
        if p.candidates.top_mapped == 0 {
            self.at(
                doc,
                &policy.key("candidates").key("top_mapped"),
                "must be at least 1",
            );
        }
        if p.units_in_progress_cap == 0 {
            self.at(
                doc,
                &policy.key("units_in_progress_cap"),
                "must be at least 1 (the focus is always in progress)",
            );
        }
        if p.constraints.max_key_ideas == 0 {
            self.at(
                doc,
                &policy.key("constraints").key("max_key_ideas"),
                "must be at least 1 (a concept card needs an idea)",
            );
        }
        if p.drill_evidence.full_streak == 0 {
            self.at(
                doc,
                &policy.key("drill_evidence").key("full_streak"),
                "must be at least 1",
            );
        }
    }

    /// The grading, pacing and style thresholds.
    fn check_thresholds(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        let root = YamlPath::root();
        let grading = &w.grading;
        let grading_at = root.key("grading");
        for (key, value) in [
            ("close_last_place", grading.close_last_place),
            ("close_min_difference", grading.close_min_difference),
            (
                "close_min_difference_from",
                grading.close_min_difference_from,
            ),
        ] {
            if !(value >= 0.0 && value.is_finite()) {
                self.at(doc, &grading_at.key(key), "must be zero or more");
            }
        }
        if !(1..=15).contains(&grading.rounding_min_significant) {
            self.at(
                doc,
                &grading_at.key("rounding_min_significant"),
                "must be between 1 and 15 significant figures",
            );
        }
        if grading.rounding_min_decimals > 12 {
            self.at(
                doc,
                &grading_at.key("rounding_min_decimals"),
                "must be at most 12 decimal places",
            );
        }
        if !(3..=32).contains(&grading.equivalence_points) {
            self.at(
                doc,
                &grading_at.key("equivalence_points"),
                "must be between 3 and 32 points",
            );
        }
        let pacing = &w.pacing;
        if pacing.consolidate_min_mastery > pacing.consolidate_max_mastery {
            self.at(
                doc,
                &root.key("pacing").key("consolidate_min_mastery"),
                "must not be above consolidate_max_mastery",
            );
        }
        if !(2..=50).contains(&pacing.trend_window) {
            self.at(
                doc,
                &root.key("pacing").key("trend_window"),
                "must be between 2 and 50 answers",
            );
        }
        let style = &w.style;
        if !(style.quiet_max_words >= 0.0 && style.quiet_max_words < style.expressive_min_words) {
            self.at(
                doc,
                &root.key("style").key("quiet_max_words"),
                "must be zero or more and below expressive_min_words",
            );
        }
        if style.disengagement_window < 2 {
            self.at(
                doc,
                &root.key("style").key("disengagement_window"),
                "must be at least 2 messages",
            );
        }
    }

    /// Mastery, exam and lesson settings, and the prompt's size.
    fn check_mode_settings(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        let root = YamlPath::root();
        let bkt = &w.mastery.bkt;
        if bkt.guess + bkt.slip >= 1.0 {
            self.at_key(
                doc,
                &root.key("mastery").key("bkt"),
                "guess + slip must be below 1, or a right answer would be evidence of not knowing",
            );
        }
        let exam = &w.modes.exam;
        let mix = &exam.difficulty_mix;
        if ((mix.easy + mix.medium + mix.hard) - 1.0).abs() > 0.01 {
            self.at_key(
                doc,
                &root.key("modes").key("exam").key("difficulty_mix"),
                format!(
                    "easy + medium + hard must add up to 1 (they add up to {})",
                    mix.easy + mix.medium + mix.hard
                ),
            );
        }
        if !(1..=50).contains(&exam.question_count) {
            self.at(
                doc,
                &root.key("modes").key("exam").key("question_count"),
                "must be between 1 and 50",
            );
        }
        if w.modes.teach_me.default_plan.is_empty() {
            self.at(
                doc,
                &root.key("modes").key("teach_me").key("default_plan"),
                "the default study plan needs at least one step",
            );
        }
        if !(500..=200_000).contains(&w.token_budget) {
            self.at(
                doc,
                &root.key("token_budget"),
                "must be between 500 and 200000 tokens",
            );
        }
        if w.history_messages > 50 {
            self.at(doc, &root.key("history_messages"), "must be at most 50");
        }
    }

    /// Each LLM call's temperature, timeout and output limit.
    fn check_llm_calls(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        let root = YamlPath::root();
        let calls = [
            ("tutor", &w.llm.tutor),
            ("safety", &w.llm.safety),
            ("drill_grading", &w.llm.drill_grading),
            ("exam_evaluation", &w.llm.exam_evaluation),
            ("planner", &w.llm.planner),
            ("summary", &w.llm.summary),
        ];
        for (name, call) in calls {
            let at = root.key("llm").key(name);
            if !(0.0..=2.0).contains(&call.temperature) {
                self.at(
                    doc,
                    &at.key("temperature"),
                    "temperature must be between 0 and 2",
                );
            }
            if !(100..=120_000).contains(&call.timeout_ms) {
                self.at(
                    doc,
                    &at.key("timeout_ms"),
                    "timeout must be between 100 and 120000 ms",
                );
            }
            if call.max_tokens < 16 {
                self.at(doc, &at.key("max_tokens"), "max_tokens must be at least 16");
            }
        }
    }

    /// The safety section's patterns and the sanitizer's regular expressions.
    fn check_patterns(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        let root = YamlPath::root();
        for finding in super::safety::check(&w.safety, &root.key("safety")) {
            self.report(doc, finding);
        }
        for (i, pattern) in w.sanitize.patterns.iter().enumerate() {
            self.check_regex(doc, &root.key("sanitize").key("patterns").index(i), pattern);
        }
    }

    /// The safety classifier's settings and the examples file they name,
    /// looked up among the bundle's `tables`.
    pub(super) fn check_safety_examples(
        &mut self,
        doc: &Doc<Workflow>,
        tables: &BTreeMap<String, String>,
    ) {
        let safety = &doc.value.safety;
        let text = safety.classifier.as_ref().and_then(|c| {
            tables
                .get(&safety_examples::bundle_path(&c.examples))
                .map(String::as_str)
        });
        let (findings, lines) =
            super::safety::check_classifier(safety, &YamlPath::root().key("safety"), text);
        for finding in findings {
            self.report(doc, finding);
        }
        self.diags.extend(lines);
    }

    /// Every prompt the workflow names, for [`Checker::check_prompts`].
    fn check_prompt_names<'a>(&mut self, doc: &'a Doc<Workflow>, uses: &mut Vec<PromptUse<'a>>) {
        let w = &doc.value;
        let root = YamlPath::root();
        let prompts = root.key("prompts");
        let names = &w.prompts;
        for (key, name, role) in [
            ("tutor_system", &names.tutor_system, PromptRole::TutorSystem),
            ("tutor_policy", &names.tutor_policy, PromptRole::TutorPolicy),
            (
                "tutor_context",
                &names.tutor_context,
                PromptRole::TutorContext,
            ),
            ("tutor_input", &names.tutor_input, PromptRole::TutorInput),
            (
                "drill_grading",
                &names.drill_grading,
                PromptRole::DrillGrading,
            ),
            (
                "exam_evaluation",
                &names.exam_evaluation,
                PromptRole::ExamEvaluation,
            ),
            ("planner", &names.planner, PromptRole::Planner),
            ("summary", &names.summary, PromptRole::Summary),
            ("safety", &names.safety, PromptRole::Safety),
        ] {
            uses.push(PromptUse::of(doc, name, role, prompts.key(key)));
        }
        for mode in Mode::ALL {
            uses.push(PromptUse::of(
                doc,
                w.modes.welcome_prompt(mode),
                PromptRole::Welcome,
                root.key("modes").key(mode.as_str()).key("welcome_prompt"),
            ));
        }
        let teach_me = root.key("modes").key("teach_me");
        uses.push(PromptUse::of(
            doc,
            &w.modes.teach_me.completion_prompt,
            PromptRole::LessonComplete,
            teach_me.key("completion_prompt"),
        ));
        uses.push(PromptUse::of(
            doc,
            &w.modes.teach_me.review_prompt,
            PromptRole::LessonComplete,
            teach_me.key("review_prompt"),
        ));
        let problem_set = root.key("modes").key("problem_set");
        let ps = &w.modes.problem_set;
        for (key, name) in [
            ("next_problem_prompt", &ps.next_problem_prompt),
            ("complete_prompt", &ps.complete_prompt),
            ("skip_offer_prompt", &ps.skip_offer_prompt),
            ("intervene_prompt", &ps.intervene_prompt),
        ] {
            uses.push(PromptUse::of(
                doc,
                name,
                PromptRole::ProblemSetText,
                problem_set.key(key),
            ));
        }
    }

    /// The categories the modes answer as or skip on are routing categories.
    fn check_mode_categories(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        let root = YamlPath::root();
        let teach_me = root.key("modes").key("teach_me");
        let problem_set = root.key("modes").key("problem_set");
        let ps = &w.modes.problem_set;
        for (i, category) in ps.skip_categories.iter().enumerate() {
            if w.category(category).is_none() {
                self.at(
                    doc,
                    &problem_set.key("skip_categories").index(i),
                    format!("`{category}` is not a routing category of this workflow"),
                );
            }
        }
        if ps.min_problems == 0 || ps.min_problems > ps.max_problems {
            self.at(
                doc,
                &problem_set.key("min_problems"),
                "min_problems must be at least 1 and at most max_problems".to_owned(),
            );
        }
        let clarify = root.key("modes").key("clarify_doubts");
        let clarify_doubts = &w.modes.clarify_doubts;
        for (node, key, category) in [
            (
                &teach_me,
                "closing_category",
                &w.modes.teach_me.closing_category,
            ),
            (
                &teach_me,
                "replan_category",
                &w.modes.teach_me.replan_category,
            ),
            (&problem_set, "solved_category", &ps.solved_category),
            (&problem_set, "explained_category", &ps.explained_category),
            (&problem_set, "skipped_category", &ps.skipped_category),
            (&clarify, "answer_category", &clarify_doubts.answer_category),
            (
                &clarify,
                "closing_category",
                &clarify_doubts.closing_category,
            ),
            (&clarify, "after_category", &clarify_doubts.after_category),
            (
                &clarify,
                "acknowledged_category",
                &clarify_doubts.acknowledged_category,
            ),
        ] {
            if w.category(category).is_none() {
                self.at(
                    doc,
                    &node.key(key),
                    format!("`{category}` is not a routing category of this workflow"),
                );
            }
        }
    }

    /// The prompt signal texts and the offline tutor's phrasebook.
    fn check_tutor_text(&mut self, doc: &Doc<Workflow>) {
        let w = &doc.value;
        for (section, absent, what) in [
            (
                "prompt_signals",
                w.prompt_signals == PromptSignals::default(),
                "the texts of the tutor prompt's pacing, style and mode signals",
            ),
            (
                "offline_tutor",
                w.offline_tutor == OfflinePhrases::default(),
                "the offline tutor's phrasebook",
            ),
        ] {
            if absent {
                self.error(
                    &doc.path,
                    1,
                    1,
                    format!(
                        "a workflow needs a `{section}` section ({what}); \
                         workflows/default.yaml has one to start from"
                    ),
                );
                return;
            }
        }
        let signals = YamlPath::root().key("prompt_signals");
        for ([group, name], text) in w.prompt_signals.texts() {
            if text.trim().is_empty() {
                self.at(doc, &signals.key(group).key(name), "text is empty");
            }
        }
        self.check_lesson_texts(doc, &signals.key("lesson"));
        let offline = YamlPath::root().key("offline_tutor");
        let phrases = &w.offline_tutor;
        for (id, reaction) in &phrases.reactions {
            let at = offline.key("reactions").key(id);
            if w.category(id).is_none() {
                self.at_key(
                    doc,
                    &at,
                    format!("`{id}` is not a routing category of this workflow"),
                );
            }
            self.check_reaction(doc, &at, reaction);
        }
        self.check_reaction(
            doc,
            &offline.key("default_reaction"),
            &phrases.default_reaction,
        );
        for slot in Moves::SLOTS {
            let at = offline.key("moves").key(slot.name());
            let list = phrases.moves.phrases(slot);
            if list.is_empty() {
                self.at_key(
                    doc,
                    &at,
                    format!("`{}` needs at least one phrase", slot.name()),
                );
            }
            self.check_phrases(doc, &at, list, slot);
        }
        self.check_translations(doc, &offline);
    }

    /// The phrasebook's other languages: each reaction translates an
    /// English one, and each move is one the tutor makes.
    fn check_translations(&mut self, doc: &Doc<Workflow>, offline: &YamlPath) {
        let phrases = &doc.value.offline_tutor;
        for (language, translation) in &phrases.languages {
            let at = offline.key("languages").key(language.as_str());
            for (id, reaction) in &translation.reactions {
                let reaction_at = at.key("reactions").key(id);
                let Some(english) = phrases.reactions.get(id) else {
                    self.at_key(
                        doc,
                        &reaction_at,
                        format!("`{id}` has no English reaction to translate"),
                    );
                    continue;
                };
                // The translation keeps the English entry's `then`.
                let spoken = Reaction {
                    then: english.then,
                    say: if reaction.say.is_empty() {
                        english.say.clone()
                    } else {
                        reaction.say.clone()
                    },
                    by_phase: reaction.by_phase.clone(),
                };
                self.check_reaction(doc, &reaction_at, &spoken);
            }
            for (name, list) in &translation.moves {
                let move_at = at.key("moves").key(name);
                match Moves::SLOTS.into_iter().find(|s| s.name() == name) {
                    Some(slot) => {
                        if list.is_empty() {
                            self.at_key(doc, &move_at, "needs at least one phrase");
                        }
                        self.check_phrases(doc, &move_at, list, slot);
                    }
                    None => self.at_key(doc, &move_at, format!("`{name}` is not a move")),
                }
            }
        }
    }

    /// The lesson texts of the tutor prompt's mode block use only the
    /// placeholders filled in for them; an unknown one would reach the model
    /// as it is written. Each is reported where it stands in the file.
    fn check_lesson_texts(&mut self, doc: &Doc<Workflow>, at: &YamlPath) {
        for (name, text, allowed) in doc.value.prompt_signals.lesson.texts() {
            let text_at = at.key(name);
            let template = match PromptTemplate::parse(name, text) {
                Ok(t) => t,
                Err(errors) => {
                    for e in errors {
                        self.at(doc, &text_at, e.message);
                    }
                    continue;
                }
            };
            for p in template.placeholders() {
                if allowed.contains(&p.name.as_str()) {
                    continue;
                }
                let pos = doc
                    .index
                    .locate_within(&text_at, &format!("{{{{{}}}}}", p.name));
                let available = if allowed.is_empty() {
                    "none".to_owned()
                } else {
                    allowed
                        .iter()
                        .map(|a| format!("{{{{{a}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                self.error(
                    &doc.path,
                    pos.line,
                    pos.column,
                    format!(
                        "placeholder {{{{{}}}}} cannot be used in prompt_signals.lesson.{name}; available: {available}",
                        p.name
                    ),
                );
            }
        }
    }

    fn check_reaction(&mut self, doc: &Doc<Workflow>, at: &YamlPath, reaction: &Reaction) {
        if reaction.then == FollowUp::Retry && reaction.say.is_empty() {
            self.at_key(
                doc,
                &at.key("then"),
                "a `retry` reaction is the whole reply: give it phrases under `say`",
            );
        }
        self.check_phrases(doc, &at.key("say"), &reaction.say, PhraseSlot::Reaction);
        for (phase, list) in &reaction.by_phase {
            let phase_at = at.key("by_phase").key(phase_name(*phase));
            if list.is_empty() {
                self.at_key(doc, &phase_at, "needs at least one phrase");
            }
            self.check_phrases(doc, &phase_at, list, PhraseSlot::Reaction);
        }
    }

    /// Each phrase parses and uses only its slot's placeholders; a non-empty
    /// list has a variant that can always be said.
    fn check_phrases(
        &mut self,
        doc: &Doc<Workflow>,
        at: &YamlPath,
        list: &[String],
        slot: PhraseSlot,
    ) {
        let mut always = false;
        for (i, phrase) in list.iter().enumerate() {
            let phrase_at = at.index(i);
            if phrase.trim().is_empty() {
                self.at(doc, &phrase_at, "phrase is empty");
                continue;
            }
            let template = match PromptTemplate::parse(slot.name(), phrase) {
                Ok(t) => t,
                Err(errors) => {
                    for e in errors {
                        self.at(doc, &phrase_at, e.message);
                    }
                    continue;
                }
            };
            let mut usable = true;
            for p in template.placeholders() {
                if !slot.placeholders().contains(&p.name.as_str()) {
                    usable = false;
                    self.at(
                        doc,
                        &phrase_at,
                        format!(
                            "placeholder {{{{{}}}}} cannot be used in a {} phrase; available: {}",
                            p.name,
                            slot.name(),
                            slot.placeholders().join(", ")
                        ),
                    );
                }
            }
            always |= usable
                && template
                    .placeholders()
                    .all(|p| slot.always_available().contains(&p.name.as_str()));
        }
        if !list.is_empty() && !always {
            self.at_key(
                doc,
                at,
                format!(
                    "one phrase here must use only {}, which can always be filled",
                    slot.always_available()
                        .iter()
                        .map(|p| format!("{{{{{p}}}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }
}

fn transition_name(t: Transition) -> &'static str {
    match t {
        Transition::ClearQuestion => "clear_question",
        Transition::RecordWrongAttempt => "record_wrong_attempt",
        Transition::StartScaffolding => "start_scaffolding",
        Transition::DeepenScaffolding => "deepen_scaffolding",
        Transition::EndScaffolding => "end_scaffolding",
        Transition::StartTeachBack => "start_teach_back",
        Transition::EndTeachBack => "end_teach_back",
        Transition::CountOffTopic => "count_off_topic",
        Transition::ResetOffTopic => "reset_off_topic",
        Transition::MoveOn => "move_on",
        Transition::Harder => "harder",
        Transition::Easier => "easier",
        Transition::RetractGuess => "retract_guess",
        Transition::InviteChoice => "invite_choice",
    }
}
