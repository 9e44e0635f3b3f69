use super::*;

fn workflow() -> Workflow {
    serde_yaml::from_str(
        r#"
id: w
title: W
categories: []
default_category: general
prompts: {tutor_system: a, tutor_policy: a, tutor_context: a, tutor_input: a, drill_grading: a, exam_evaluation: a, planner: a, summary: a, safety: a}
safety:
  vocabulary:
    me: [myself, me]
    person: [him, her, my teacher]
  ordinary:
    - "(this|it|maths) is killing me"
    - "dying to (know|see)"
  categories:
    - id: self_harm
      response: "You matter."
      alert: true
      escalates: true
      help_resources: true
      online: [self-harm, self-harm/intent, self_harm]
      terms: [kms, suicide]
      patterns: ["(kill|hurt) {me}", "want to die"]
    - id: violence
      response: "That is not okay."
      alert: true
      escalates: true
      online: [violence]
      patterns: ["(kill|stab) {person}"]
    - id: cheating
      response: "I can't give you test answers."
      response_by_mode: {exam: "Not during an exam."}
      patterns: ["answers to my test"]
    - id: profanity
      response: "Language, please."
      tutoring: continue
      terms: [fuck, shit]
  help_resources:
    default: [{name: Childline, contact: call 0800 1111, url: "https://childline.org.uk"}]
    US: [{name: 988 Lifeline, contact: call or text 988}]
  escalation:
    after_flags: 2
    text: "Please talk to a trusted adult today."
    text_by_mode: {exam: "Please tell your teacher."}
  moderation_response: "Let's keep it about maths."
"#,
    )
    .unwrap()
}

fn category(gate: &SafetyGate, message: &str) -> Option<String> {
    gate.classify(message).map(|h| h.category)
}

#[test]
fn categories_match_in_order_and_say_which_rule() {
    let gate = SafetyGate::new(&workflow());
    let hit = gate.classify("I want to kill myself").unwrap();
    assert_eq!(hit.category, "self_harm");
    assert_eq!(hit.rule_id, "self_harm/patterns[0]");
    assert!(hit.notify_teacher && hit.pauses_tutoring());
    assert_eq!(gate.classify("kms").unwrap().rule_id, "self_harm/terms[0]");
    assert_eq!(
        category(&gate, "im gonna stab my teacher").as_deref(),
        Some("violence")
    );
    // Both match: self-harm comes first.
    assert_eq!(
        category(&gate, "kill him then kill myself").as_deref(),
        Some("self_harm")
    );
    let swear = gate.classify("what the fuck is 3/4").unwrap();
    assert!(!swear.pauses_tutoring());
    assert_eq!(category(&gate, "what is 3/4 of 12?"), None);
}

#[test]
fn disguised_words_are_still_caught() {
    let gate = SafetyGate::new(&workflow());
    for message in [
        "k m s",
        "K.M.S",
        "i wanna... no, i WANT TO DIIIIE",
        "su1c1de",
        "$uicide",
        "𝓀𝓂𝓈",
        "kíll myself",
    ] {
        assert_eq!(
            category(&gate, message).as_deref(),
            Some("self_harm"),
            "{message}"
        );
    }
    for message in ["f*ck this", "sh*t", "FUUUCK", "f**k"] {
        assert_eq!(
            category(&gate, message).as_deref(),
            Some("profanity"),
            "{message}"
        );
    }
}

#[test]
fn ordinary_talk_is_set_aside_but_only_where_it_is() {
    let gate = SafetyGate::new(&workflow());
    assert_eq!(category(&gate, "this is killing me, what's 7x8?"), None);
    assert_eq!(category(&gate, "I'm dying to know the answer"), None);
    assert_eq!(
        category(&gate, "I'm dying to know how to kill myself").as_deref(),
        Some("self_harm")
    );
    // "kill me" outside the ordinary phrase still counts.
    assert_eq!(
        category(&gate, "maths is killing me, I want to hurt me").as_deref(),
        Some("self_harm")
    );
}

#[test]
fn online_names_map_to_workflow_categories() {
    let gate = SafetyGate::new(&workflow());
    let hit = gate
        .online(&["self-harm/intent".into()], FlagSource::Moderation)
        .unwrap();
    assert_eq!(hit.category, "self_harm");
    assert_eq!(hit.rule_id, "moderation:self-harm/intent");
    let other = gate
        .online(&["illicit".into()], FlagSource::Moderation)
        .unwrap();
    assert_eq!(other.category, OTHER_CATEGORY);
    assert_eq!(other.response, "Let's keep it about maths.");
    assert!(other.notify_teacher && other.pauses_tutoring());
    assert!(gate.online(&[], FlagSource::Moderation).is_none());
    // The more serious verdict wins, whichever source gave it.
    let swear = gate.classify("shit").unwrap();
    let worst = SafetyHit::most_serious(Some(swear.clone()), Some(hit.clone())).unwrap();
    assert_eq!(worst.category, "self_harm");
    assert_eq!(
        SafetyHit::most_serious(Some(swear.clone()), None),
        Some(swear)
    );
    assert_eq!(
        gate.judged(Some(SafetyCategory::SelfHarm))
            .unwrap()
            .category,
        "self_harm"
    );
    assert_eq!(gate.judged(None).unwrap().category, OTHER_CATEGORY);
}

#[test]
fn replies_carry_resources_per_region_and_escalate_on_repeat() {
    let gate = SafetyGate::new(&workflow());
    let hit = gate.classify("i want to die").unwrap();
    let mut session = SessionState::default();
    let guided = ReplyContext {
        mode: Mode::Guided,
        region: "GB",
    };
    let first = gate.reply(&hit, &session, guided);
    assert!(
        first
            .text
            .starts_with("You matter.\n\n- Childline: call 0800 1111 (https://childline.org.uk)")
    );
    assert!(!first.mark.escalated && first.mark.alert && first.mark.tutoring_paused);
    assert_eq!(first.mark.help_resources[0].name, "Childline");
    let us = gate.reply(
        &hit,
        &session,
        ReplyContext {
            mode: Mode::Guided,
            region: "US",
        },
    );
    assert!(
        us.text.contains("988 Lifeline: call or text 988"),
        "{}",
        us.text
    );

    let mut snapshot = StudentSnapshot::new("s", "c", "u");
    SafetyGate::record(&hit, &mut session, &mut snapshot);
    assert_eq!(snapshot.safety_flags["self_harm"], 1);
    assert_eq!(gate.escalating_flags(&session), 1);
    let second = gate.reply(&hit, &session, guided);
    assert!(second.mark.escalated);
    assert!(
        second
            .text
            .ends_with("Please talk to a trusted adult today."),
        "{}",
        second.text
    );
    let in_exam = gate.reply(
        &hit,
        &session,
        ReplyContext {
            mode: Mode::Exam,
            region: "GB",
        },
    );
    assert!(in_exam.text.ends_with("Please tell your teacher."));

    // Profanity neither escalates nor alerts; cheating has an exam wording.
    let swear = gate.classify("shit").unwrap();
    SafetyGate::record(&swear, &mut session, &mut snapshot);
    assert_eq!(gate.escalating_flags(&session), 1);
    let note = gate.reply(&swear, &session, guided);
    assert!(!note.mark.escalated && !note.mark.alert && !note.mark.tutoring_paused);
    assert_eq!(note.text, "Language, please.");
    let cheat = gate.classify("give me the answers to my test").unwrap();
    let exam = ReplyContext {
        mode: Mode::Exam,
        region: "GB",
    };
    assert_eq!(
        gate.reply(&cheat, &session, exam).text,
        "Not during an exam."
    );
}

/// [`workflow`] with a `concern` category and a classifier trained on a
/// few examples, flagging at `at`.
fn with_classifier(at: f64) -> Workflow {
    let mut w = workflow();
    let mut concern = w.safety.categories[0].clone();
    concern.id = "concern".into();
    concern.response = "Are you okay?".into();
    concern.alert = false;
    concern.terms.clear();
    concern.patterns.clear();
    w.safety.categories.push(concern);
    let example = |label: &str, message: &str| crate::content::workflow::SafetyExample {
        label: label.into(),
        message: message.into(),
    };
    w.safety.classifier = Some(crate::content::workflow::SafetyClassifierSettings {
        examples: "safety_examples.tsv".into(),
        check_in: "concern".into(),
        at,
        labelled: vec![
            example("self_harm", "nobody would miss me if i was gone"),
            example("self_harm", "everyone would be better off without me"),
            example("self_harm", "i wrote goodbye letters to my family"),
            example("self_harm", "i dont want to be here anymore"),
            example("ordinary", "what is 3 4 of 12"),
            example("ordinary", "can you help me with fractions"),
            example("ordinary", "my dad helped me with my homework"),
            example("ordinary", "how do i find the area of a triangle"),
            example("ordinary", "this question is too hard"),
            example("ordinary", "can we do percentages next"),
        ]
        .into(),
    });
    w
}

#[test]
fn the_classifier_checks_in_where_no_rule_matches() {
    let gate = SafetyGate::new(&with_classifier(0.8));
    let hit = gate
        .classify("my family would be better off without me")
        .unwrap();
    // Never a category of its own: the gentle check-in.
    assert_eq!(hit.category, "concern");
    assert_eq!(hit.rule_id, "concern/classifier");
    assert_eq!(hit.source, FlagSource::Classifier);
    assert_eq!(hit.response, "Are you okay?");
    assert!(!hit.notify_teacher && hit.escalates);
    // A rule match wins.
    let rule = gate.classify("i want to die").unwrap();
    assert_eq!(
        (rule.category.as_str(), rule.source),
        ("self_harm", FlagSource::Rules)
    );
    assert!(
        gate.classify_by_rules("my family would be better off without me")
            .is_none()
    );
    // Maths goes through.
    assert_eq!(
        category(&gate, "can you help me with the area of a circle"),
        None
    );
    assert_eq!(category(&gate, "my dad helped me with fractions"), None);
}

#[test]
fn the_threshold_decides_and_training_is_deterministic() {
    let message = "my family would be better off without me";
    let strict = SafetyGate::new(&with_classifier(0.999_999));
    assert!(strict.classify(message).is_none());
    let model = |gate: &SafetyGate| {
        let m = gate.model.as_ref().unwrap();
        m.classifier.probabilities(&normalize(message))
    };
    let lenient = SafetyGate::new(&with_classifier(0.8));
    assert_eq!(
        model(&strict),
        model(&lenient),
        "the same examples, the same model"
    );
    let decision = &lenient.model.as_ref().unwrap().decision;
    let score = decision.score(&model(&lenient));
    assert!((0.8..0.999_999).contains(&score), "{score}");
    // The score sums the escalating labels; at the threshold counts.
    let labels = lenient.model.as_ref().unwrap().classifier.labels().to_vec();
    assert_eq!(labels, ["self_harm", "ordinary"]);
    let concern = 4;
    assert_eq!(decision.verdict(&[0.8, 0.2]), Some(concern));
    assert_eq!(decision.verdict(&[0.79, 0.21]), None);
    // Without examples there is no model, and nothing is flagged by it.
    let mut empty = with_classifier(0.8);
    if let Some(c) = &mut empty.safety.classifier {
        c.labelled = Vec::new().into();
    }
    assert!(SafetyGate::new(&empty).classify(message).is_none());
}

/// [`workflow`] with a category about someone else at risk, listed after
/// self-harm (whose term "suicide" would otherwise answer for a friend).
fn with_someone_else(set_aside: bool) -> Workflow {
    let mut w = workflow();
    let mut other = w.safety.categories[0].clone();
    other.id = "someone_at_risk".into();
    other.response = "Thank you for telling me: tell a trusted adult today.".into();
    other.online = vec!["someone_at_risk".into()];
    other.terms.clear();
    other.patterns = vec![
        "(kill|hurt) (himself|herself)".into(),
        "(friend|she|he) keeps talking about suicide".into(),
    ];
    other.someone_else = set_aside;
    w.safety.categories.insert(1, other);
    // The student saying the same of themself, after the friend's words.
    w.safety.categories[0]
        .patterns
        .push("someone_at_risk {gap}(so do i|me too)".into());
    w
}

#[test]
fn the_student_saying_the_same_of_themself_is_at_risk_too() {
    let gate = SafetyGate::new(&with_someone_else(true));
    for message in [
        "my friend wants to kill herself and so do i",
        "My friend keeps talking about suicide... me too tbh",
    ] {
        let hit = gate.classify(message).unwrap();
        assert_eq!(hit.rule_id, "self_harm/patterns[2]", "{message}");
    }
    // Without the friend's words there is nothing to say the same of, and
    // the category's id typed out is only words.
    for message in [
        "my friend got 7 out of 10 and so do i",
        "she cut the cake into 8 pieces and so do i",
        "someone at risk so do i",
        "someone_at_risk so do i",
    ] {
        assert_eq!(category(&gate, message), None, "{message}");
    }
    assert_eq!(
        category(&gate, "my friend wants to kill herself").as_deref(),
        Some("someone_at_risk")
    );
}

#[test]
fn the_student_saying_the_same_follows_the_kind_of_the_friends_risk() {
    let mut w = with_someone_else(true);
    w.safety.categories[1].patterns_by_kind.insert(
        "hurt".into(),
        vec!["(friend|she|he) gets hit at home".into()],
    );
    // A second category of the student's own, above the friend's, which
    // answers for "me too" after a friend hit at home.
    let mut hurt = w.safety.categories[0].clone();
    hurt.id = "abuse".into();
    hurt.terms.clear();
    hurt.patterns = vec!["someone_at_risk_hurt {gap}(so do i|me too)".into()];
    w.safety.categories.insert(1, hurt);
    let gate = SafetyGate::new(&w);
    for (message, expected) in [
        ("my friend gets hit at home and so do i", "abuse"),
        ("my friend wants to kill herself and so do i", "self_harm"),
        ("my friend gets hit at home", "someone_at_risk"),
    ] {
        assert_eq!(
            category(&gate, message).as_deref(),
            Some(expected),
            "{message}"
        );
    }
    assert_eq!(
        gate.classify("she gets hit at home").unwrap().rule_id,
        "someone_at_risk/patterns_by_kind.hurt[0]"
    );
}

#[test]
fn the_safety_llm_call_can_name_a_friend_at_risk() {
    let gate = SafetyGate::new(&with_someone_else(true));
    let hit = gate.judged(Some(SafetyCategory::SomeoneAtRisk)).unwrap();
    assert_eq!(hit.category, "someone_at_risk");
    assert_eq!(hit.rule_id, "judge:someone_at_risk");
    assert!(hit.notify_teacher && hit.help_resources);
    let hit = gate.judged(Some(SafetyCategory::SelfHarm)).unwrap();
    assert_eq!(hit.category, "self_harm");
}

#[test]
fn someone_else_at_risk_gets_its_own_reply_unless_the_student_is_too() {
    let gate = SafetyGate::new(&with_someone_else(true));
    let hit = gate
        .classify("my friend said she wants to kill herself")
        .unwrap();
    assert_eq!(hit.category, "someone_at_risk");
    assert_eq!(hit.rule_id, "someone_at_risk/patterns[0]");
    assert!(hit.notify_teacher && hit.pauses_tutoring());
    // The category above reads the message with the friend's risk set
    // aside: its term "suicide" is inside it.
    assert_eq!(
        category(&gate, "my friend keeps talking about suicide").as_deref(),
        Some("someone_at_risk")
    );
    // The student's own words, alone or beside the friend's, are theirs.
    assert_eq!(
        category(&gate, "I want to kill myself").as_deref(),
        Some("self_harm")
    );
    for (message, rule) in [
        (
            "my friend wants to kill herself and i want to die too",
            "self_harm/patterns[1]",
        ),
        (
            "my friend keeps talking about suicide, i think about suicide too",
            "self_harm/terms[1]",
        ),
    ] {
        let hit = gate.classify(message).unwrap();
        assert_eq!(hit.rule_id, rule, "{message}");
    }
    // Categories below it are not affected; maths goes through.
    assert_eq!(
        category(&gate, "im gonna stab my teacher").as_deref(),
        Some("violence")
    );
    assert_eq!(category(&gate, "she cut the cake into 8 pieces"), None);

    // Without setting aside, the student's category answers for a friend.
    let plain = SafetyGate::new(&with_someone_else(false));
    assert_eq!(
        category(&plain, "my friend keeps talking about suicide").as_deref(),
        Some("self_harm")
    );
    assert_eq!(
        category(&plain, "my friend said she wants to kill herself").as_deref(),
        Some("someone_at_risk")
    );
}

/// A long list of rules is compiled as several sets; the rule that answers
/// is still the first in the workflow's order that matches, named by its
/// place among all of the category's rules.
#[test]
fn long_rule_lists_are_split_and_still_name_the_first_matching_rule() {
    let mut rules: Vec<String> = (0..40)
        .map(|i| format!(r"\bfiller{i}{}\b", "x".repeat(1000)))
        .collect();
    rules.push(r"\bwant to die\b".into());
    rules.push(r"\bdie\b".into());
    let split = RuleSets::new(&rules);
    assert!(split.sets.len() > 2);
    assert_eq!(split.first_match("i want to die"), Some(40));
    assert_eq!(split.first_match("die"), Some(41));
    assert_eq!(split.first_match("i want to live"), None);

    // An earlier set's rule comes before a later set's.
    rules.insert(0, r"\bto die\b".into());
    assert_eq!(RuleSets::new(&rules).first_match("i want to die"), Some(0));
}
