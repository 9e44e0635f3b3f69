//! Drill tokens: a round trip gives back exactly what was sealed; any
//! change to any byte, another key, another thread or too much time is
//! refused with its own error; tokens stay compact; nothing a token carries
//! (blueprint, seed, authored answer) can be read from it; a retired key
//! still opens what it sealed; and a drill regenerates into the very item
//! that was shown, unless its blueprint has changed since.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;
use tutorflow::content::blueprint::Blueprint;
use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::practice::drill::{self, DrillError, DrillRequest, Expected};
use tutorflow::engine::practice::drill_token::{
    self, DrillClaims, DrillSource, DrillTokenError, MAX_CLOCK_SKEW_SECONDS, MAX_TOKEN_CHARS,
    TokenKeys,
};
use tutorflow::model::LlmDrillCard;

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";
const OLD_KEY: &[u8] = b"the key before the rotation, 32b";

static KEYS: LazyLock<TokenKeys> = LazyLock::new(|| TokenKeys::single(KEY).unwrap());
const THREAD: &str = "3f1c9a2e-7b4d-4e8f-9a61-0c2d5e7f8a9b";

static BLUEPRINTS: LazyLock<BTreeMap<String, Blueprint>> = LazyLock::new(|| {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let files = runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle");
    Bundle::load(&files)
        .unwrap_or_else(|d| panic!("{d}"))
        .blueprints
});

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 14, 15, 9, 26).unwrap()
}

fn ttl() -> Duration {
    Duration::hours(24)
}

fn blueprint_claims() -> DrillClaims {
    DrillClaims {
        unit_id: "two-step-equations".into(),
        thread_id: THREAD.into(),
        issued_at: now(),
        source: DrillSource::Blueprint {
            blueprint_id: "MATH.ALG.EQ.TWOSTEP".into(),
            fingerprint: [1, 2, 3, 4, 5, 6, 7, 8],
            seed: 0xDEAD_BEEF_0BAD_F00D,
            target_difficulty: 0.6137,
            theme: None,
        },
    }
}

fn themed_claims() -> DrillClaims {
    let mut claims = blueprint_claims();
    if let DrillSource::Blueprint { theme, .. } = &mut claims.source {
        *theme = Some("sports".into());
    }
    claims
}

fn authored_claims() -> DrillClaims {
    DrillClaims {
        source: DrillSource::Authored {
            prompt: "Solve for x".into(),
            question_latex: "2x+3=11".into(),
            expected_answer: "x = 4".into(),
        },
        ..blueprint_claims()
    }
}

/// A drill in the plain wording.
fn plain(blueprint: &Blueprint, target_difficulty: f64, seed: u64) -> DrillRequest<'_> {
    DrillRequest {
        blueprint,
        fingerprint: blueprint.fingerprint(),
        target_difficulty,
        seed,
        themes: &[],
    }
}

fn verify(token: &str) -> Result<DrillClaims, DrillTokenError> {
    drill_token::verify(token, &KEYS, THREAD, now(), ttl()).map(|v| v.claims)
}

#[test]
fn round_trips() {
    for claims in [blueprint_claims(), themed_claims(), authored_claims()] {
        let token = drill_token::issue(&claims, &KEYS).unwrap();
        assert_eq!(verify(&token).unwrap(), claims);
        assert_eq!(
            token,
            drill_token::issue(&claims, &KEYS).unwrap(),
            "deterministic"
        );
    }
}

#[test]
fn tokens_are_compact() {
    let token = drill_token::issue(&blueprint_claims(), &KEYS).unwrap();
    assert!(token.len() < 250, "{} characters", token.len());
    let authored = drill_token::issue(&authored_claims(), &KEYS).unwrap();
    assert!(authored.len() < 250, "{} characters", authored.len());
    assert!(
        token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    );
}

#[test]
fn every_single_byte_tamper_is_rejected() {
    for claims in [blueprint_claims(), authored_claims()] {
        let token = drill_token::issue(&claims, &KEYS).unwrap();
        let bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
        for i in 0..bytes.len() {
            for value in 0..=255u8 {
                if value == bytes[i] {
                    continue;
                }
                let mut forged = bytes.clone();
                forged[i] = value;
                let forged = URL_SAFE_NO_PAD.encode(&forged);
                // Bytes 1..5 name the key: another id names no key held here.
                let expected = if (1..5).contains(&i) {
                    DrillTokenError::UnknownKey
                } else {
                    DrillTokenError::BadSignature
                };
                assert_eq!(verify(&forged), Err(expected), "byte {i} = {value}");
            }
        }
    }
}

#[test]
fn every_single_character_change_is_rejected() {
    let token = drill_token::issue(&blueprint_claims(), &KEYS).unwrap();
    let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. ";
    for (i, original) in token.char_indices() {
        for c in alphabet.chars().filter(|c| *c != original) {
            let mut forged = token.clone();
            forged.replace_range(i..i + 1, &c.to_string());
            assert!(
                matches!(
                    verify(&forged),
                    Err(DrillTokenError::BadSignature
                        | DrillTokenError::UnknownKey
                        | DrillTokenError::Malformed)
                ),
                "character {i} = {c:?}"
            );
        }
    }
}

#[test]
fn truncated_extended_and_empty_tokens_are_rejected() {
    let token = drill_token::issue(&blueprint_claims(), &KEYS).unwrap();
    for cut in 0..token.len() {
        assert!(verify(&token[..cut]).is_err(), "cut at {cut}");
    }
    assert!(verify(&format!("{token}A")).is_err());
    assert!(verify(&format!("{token}AAAA")).is_err());
    assert_eq!(
        verify(&"A".repeat(MAX_TOKEN_CHARS + 4)),
        Err(DrillTokenError::Malformed)
    );
}

#[test]
fn another_servers_key_does_not_open_a_token() {
    let foreign = TokenKeys::single(b"another key, at least 16 bytes").unwrap();
    let token = drill_token::issue(&blueprint_claims(), &foreign).unwrap();
    assert_eq!(verify(&token), Err(DrillTokenError::UnknownKey));
    assert_eq!(
        TokenKeys::single(b"short").map(|_| ()),
        Err(DrillTokenError::KeyTooShort)
    );
    assert_eq!(
        TokenKeys::new(KEY, &[b"short"]).map(|_| ()),
        Err(DrillTokenError::KeyTooShort)
    );
}

#[test]
fn a_token_under_a_known_key_id_but_another_key_does_not_open() {
    // Splice the key id of our key onto a token sealed by another: the id
    // only picks the key; the AEAD tag decides.
    let foreign = TokenKeys::single(b"another key, at least 16 bytes").unwrap();
    let ours = URL_SAFE_NO_PAD
        .decode(drill_token::issue(&blueprint_claims(), &KEYS).unwrap())
        .unwrap();
    let mut theirs = URL_SAFE_NO_PAD
        .decode(drill_token::issue(&blueprint_claims(), &foreign).unwrap())
        .unwrap();
    theirs[1..5].copy_from_slice(&ours[1..5]);
    assert_eq!(
        verify(&URL_SAFE_NO_PAD.encode(&theirs)),
        Err(DrillTokenError::BadSignature)
    );
}

#[test]
fn a_retired_key_still_opens_its_tokens_until_removed() {
    let before = TokenKeys::single(OLD_KEY).unwrap();
    let token = drill_token::issue(&blueprint_claims(), &before).unwrap();
    let rotated = TokenKeys::new(KEY, &[OLD_KEY]).unwrap();
    assert_ne!(rotated.current_key_id(), before.current_key_id());
    let opened = drill_token::verify(&token, &rotated, THREAD, now(), ttl()).unwrap();
    assert_eq!(opened.claims, blueprint_claims());
    // New tokens are sealed with the new key, which the old ring lacks.
    let fresh = drill_token::issue(&blueprint_claims(), &rotated).unwrap();
    assert_eq!(
        drill_token::verify(&fresh, &before, THREAD, now(), ttl()).map(|v| v.claims),
        Err(DrillTokenError::UnknownKey)
    );
    assert_eq!(
        drill_token::verify(&fresh, &KEYS, THREAD, now(), ttl()).map(|v| v.claims),
        Ok(blueprint_claims())
    );
    // Once the retired key is removed, its tokens no longer open.
    assert_eq!(verify(&token), Err(DrillTokenError::UnknownKey));
}

#[test]
fn a_blueprint_token_reveals_neither_blueprint_nor_seed() {
    let claims = blueprint_claims();
    let token = drill_token::issue(&claims, &KEYS).unwrap();
    let bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
    let visible = String::from_utf8_lossy(&bytes);
    for clear in ["MATH.ALG.EQ.TWOSTEP", "two-step-equations", THREAD, "MATH"] {
        assert!(!visible.contains(clear), "{clear} readable in {visible}");
    }
    let DrillSource::Blueprint {
        seed,
        fingerprint,
        target_difficulty,
        ..
    } = claims.source
    else {
        unreachable!()
    };
    for secret in [
        seed.to_be_bytes().to_vec(),
        seed.to_le_bytes().to_vec(),
        fingerprint.to_vec(),
        target_difficulty.to_bits().to_be_bytes().to_vec(),
        now().timestamp().to_be_bytes().to_vec(),
    ] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_slice()),
            "{secret:?} found in the token"
        );
    }
}

#[test]
fn another_thread_is_refused() {
    let token = drill_token::issue(&blueprint_claims(), &KEYS).unwrap();
    let other = drill_token::verify(&token, &KEYS, "another-thread", now(), ttl());
    assert_eq!(other, Err(DrillTokenError::WrongThread));
}

#[test]
fn tokens_expire_after_their_ttl() {
    let token = drill_token::issue(&blueprint_claims(), &KEYS).unwrap();
    let at = |t| drill_token::verify(&token, &KEYS, THREAD, t, ttl());
    assert!(at(now()).is_ok());
    assert!(at(now() + ttl()).is_ok(), "valid up to the last second");
    assert_eq!(
        at(now() + ttl() + Duration::seconds(1)),
        Err(DrillTokenError::Expired {
            expired_at: now() + ttl()
        })
    );
    let skew = Duration::seconds(MAX_CLOCK_SKEW_SECONDS);
    assert!(
        at(now() - skew).is_ok(),
        "another server's clock may be a little behind"
    );
    assert!(matches!(
        at(now() - skew - Duration::seconds(1)),
        Err(DrillTokenError::NotYetValid { .. })
    ));
}

#[test]
fn oversized_drills_are_refused_when_issued() {
    let long = DrillClaims {
        source: DrillSource::Authored {
            prompt: "p".repeat(600),
            question_latex: "q".repeat(600),
            expected_answer: "a".into(),
        },
        ..blueprint_claims()
    };
    assert_eq!(
        drill_token::issue(&long, &KEYS),
        Err(DrillTokenError::TooLarge)
    );
    let long_id = DrillClaims {
        unit_id: "u".repeat(300),
        ..blueprint_claims()
    };
    assert_eq!(
        drill_token::issue(&long_id, &KEYS),
        Err(DrillTokenError::TooLarge)
    );
}

#[test]
fn an_authored_answer_cannot_be_read_from_the_token() {
    let answer = "the secret answer is 42";
    let claims = DrillClaims {
        source: DrillSource::Authored {
            prompt: "Work it out".into(),
            question_latex: "6 \\times 7".into(),
            expected_answer: answer.into(),
        },
        ..blueprint_claims()
    };
    let token = drill_token::issue(&claims, &KEYS).unwrap();
    let bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
    let visible = String::from_utf8_lossy(&bytes);
    assert!(
        !visible.contains("Work it out") && !visible.contains("secret") && !visible.contains("42"),
        "{visible}"
    );
    assert_eq!(verify(&token).unwrap(), claims);
}

#[test]
fn replay_keys_tell_tokens_apart() {
    let a = drill_token::verify(
        &drill_token::issue(&blueprint_claims(), &KEYS).unwrap(),
        &KEYS,
        THREAD,
        now(),
        ttl(),
    )
    .unwrap();
    let mut other = blueprint_claims();
    if let DrillSource::Blueprint { seed, .. } = &mut other.source {
        *seed += 1;
    }
    let b = drill_token::verify(
        &drill_token::issue(&other, &KEYS).unwrap(),
        &KEYS,
        THREAD,
        now(),
        ttl(),
    )
    .unwrap();
    assert_eq!(a.replay_key.len(), 32);
    assert_ne!(a.replay_key, b.replay_key);
}

#[test]
fn a_cards_token_names_the_replay_key_its_grading_records() {
    let token = drill_token::issue(&blueprint_claims(), &KEYS).unwrap();
    let verified = drill_token::verify(&token, &KEYS, THREAD, now(), ttl()).unwrap();
    assert_eq!(
        drill_token::replay_key_of(&token),
        Some(verified.replay_key)
    );
    assert_eq!(drill_token::replay_key_of("not a token!"), None);
    assert_eq!(
        drill_token::replay_key_of("AAAA"),
        None,
        "shorter than a sealed token"
    );
}

#[test]
fn a_drill_regenerates_into_the_item_that_was_shown() {
    let bp = &BLUEPRINTS["MATH.ARITH.ADD.2DIGIT"];
    let issued =
        drill::issue_generated(plain(bp, 0.5, 77), "whole-numbers", THREAD, now(), &KEYS).unwrap();
    let card = &issued.card;
    assert_eq!(card.prompt, issued.item.stem);
    assert_eq!(card.question_latex, issued.item.question_latex);
    assert_eq!(card.options.as_ref(), Some(&issued.item.options));
    let token = card.drill_token.as_deref().unwrap();
    let verified =
        drill_token::verify(token, &KEYS, THREAD, now() + Duration::minutes(5), ttl()).unwrap();
    assert_eq!(verified.claims.unit_id, "whole-numbers");
    match drill::expected(&verified, &BLUEPRINTS).unwrap() {
        Expected::Generated(item) => assert_eq!(*item, issued.item),
        other => panic!("{other:?}"),
    }
    // A typed drill shows no options.
    let typed = &BLUEPRINTS["MATH.ALG.EQ.ONESTEP"];
    let card = drill::issue_generated(
        plain(typed, 0.3, 1),
        "one-step-equations",
        THREAD,
        now(),
        &KEYS,
    )
    .unwrap()
    .card;
    assert_eq!(card.options, None);
}

/// Sealed by the layout before themes (version 2) from
/// [`blueprint_claims`] under [`KEY`]: drills handed out before the
/// upgrade are still graded, in the plain wording they were shown in.
const VERSION_2_TOKEN: &str = "AqPXzKZ95Ajec29nX2GF_97pPp0EkoWVzna7bNAH8T_T-shALYaZwXTOKiKXtJseoo5n6-Qods3Roj05OvCch2po4Km4IO9soWSPN8fBdlLFQc0Pf3GntEH0oIn21OsS2_239_QmlwJ_33TeRx-8T4R-VzB_KGsWoBOnrJQEyDwDTTrh4fVACFi0-xxvWQ";

#[test]
fn a_token_sealed_before_themes_still_opens() {
    assert_eq!(verify(VERSION_2_TOKEN).unwrap(), blueprint_claims());
    // Its version byte is authenticated: relabelled as current, it fails.
    let mut bytes = URL_SAFE_NO_PAD.decode(VERSION_2_TOKEN).unwrap();
    bytes[0] = drill_token::TOKEN_VERSION;
    assert_eq!(
        verify(&URL_SAFE_NO_PAD.encode(&bytes)),
        Err(DrillTokenError::BadSignature)
    );
}

#[test]
fn a_themed_drill_is_graded_in_the_theme_it_was_shown_in() {
    let bp = &BLUEPRINTS["MATH.ARITH.ADD.2DIGIT"];
    let request = DrillRequest {
        themes: &["sports"],
        ..plain(bp, 0.5, 77)
    };
    let issued = drill::issue_generated(request, "whole-numbers", THREAD, now(), &KEYS).unwrap();
    assert_eq!(issued.item.theme.as_deref(), Some("sports"));
    assert_eq!(issued.card.prompt, issued.item.stem);
    let token = issued.card.drill_token.as_deref().unwrap();
    let verified = drill_token::verify(token, &KEYS, THREAD, now(), ttl()).unwrap();
    match drill::expected(&verified, &BLUEPRINTS).unwrap() {
        Expected::Generated(item) => assert_eq!(*item, issued.item),
        other => panic!("{other:?}"),
    }
    // The plain drill from the same seed is the same question, told plainly.
    let plain_item =
        drill::issue_generated(plain(bp, 0.5, 77), "whole-numbers", THREAD, now(), &KEYS)
            .unwrap()
            .item;
    assert_ne!(plain_item.stem, issued.item.stem);
    assert_eq!(plain_item.answer, issued.item.answer);
    assert_eq!(plain_item.options, issued.item.options);
}

#[test]
fn an_edited_or_removed_blueprint_is_refused() {
    let bp = &BLUEPRINTS["MATH.FRAC.SIMPLIFY"];
    let issued =
        drill::issue_generated(plain(bp, 0.4, 5), "fractions", THREAD, now(), &KEYS).unwrap();
    let token = issued.card.drill_token.unwrap();
    let verified = drill_token::verify(&token, &KEYS, THREAD, now(), ttl()).unwrap();
    let mut edited = BLUEPRINTS.clone();
    if let Some(b) = edited.get_mut("MATH.FRAC.SIMPLIFY") {
        b.stems.push(tutorflow::text::template::Template::new(
            "Simplify {n}/{d}.",
        ));
    }
    assert_eq!(
        drill::expected(&verified, &edited),
        Err(DrillError::BlueprintChanged("MATH.FRAC.SIMPLIFY".into()))
    );
    edited.remove("MATH.FRAC.SIMPLIFY");
    assert_eq!(
        drill::expected(&verified, &edited),
        Err(DrillError::UnknownBlueprint("MATH.FRAC.SIMPLIFY".into()))
    );
}

#[test]
fn an_llm_drill_carries_its_expected_answer() {
    let llm = LlmDrillCard {
        prompt: "Solve for x".into(),
        question_latex: "2x+3=11".into(),
        expected_answer: Some("x = 4".into()),
    };
    let card = drill::issue_authored(&llm, "two-step-equations", THREAD, now(), &KEYS).unwrap();
    assert_eq!(card.options, None);
    let verified = drill_token::verify(
        card.drill_token.as_deref().unwrap(),
        &KEYS,
        THREAD,
        now(),
        ttl(),
    )
    .unwrap();
    assert_eq!(
        drill::expected(&verified, &BLUEPRINTS).unwrap(),
        Expected::Authored {
            prompt: "Solve for x".into(),
            question_latex: "2x+3=11".into(),
            expected_answer: "x = 4".into(),
        }
    );
    let unanswered = LlmDrillCard {
        expected_answer: Some("  ".into()),
        ..llm
    };
    assert_eq!(
        drill::issue_authored(&unanswered, "u", THREAD, now(), &KEYS),
        Err(DrillError::NoExpectedAnswer)
    );
}

proptest! {
    /// Whatever a client sends as a token, verification answers with an
    /// error or a drill, never a panic.
    #[test]
    fn arbitrary_tokens_never_panic(text in "\\PC{0,300}", raw in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = verify(&text);
        let _ = verify(&URL_SAFE_NO_PAD.encode(&raw));
    }

    /// Any claims round-trip (issue times to the second).
    #[test]
    fn any_claims_round_trip(
        unit in "[a-z-]{1,40}", seed: u64, target in 0.0f64..=1.0, fingerprint: [u8; 8],
        answer in "\\PC{1,60}", offset in 0i64..86_400,
    ) {
        let issued_at = now() - Duration::seconds(offset);
        for source in [
            DrillSource::Blueprint { blueprint_id: "MATH.X".into(), fingerprint, seed, target_difficulty: target, theme: None },
            DrillSource::Blueprint { blueprint_id: "MATH.X".into(), fingerprint, seed, target_difficulty: target, theme: Some(unit.clone()) },
            DrillSource::Authored { prompt: "p".into(), question_latex: "q".into(), expected_answer: answer.clone() },
        ] {
            let claims = DrillClaims { unit_id: unit.clone(), thread_id: THREAD.into(), issued_at, source };
            let token = drill_token::issue(&claims, &KEYS).unwrap();
            prop_assert_eq!(verify(&token).unwrap(), claims.clone());
            let rotated = TokenKeys::new(OLD_KEY, &[KEY]).unwrap();
            prop_assert_eq!(
                drill_token::verify(&token, &rotated, THREAD, now(), ttl()).unwrap().claims,
                claims
            );
        }
    }

    /// Flipping any bit of a sealed token makes it refused, never misread.
    #[test]
    fn any_bit_flip_is_refused(seed: u64, bit in 0usize..1000) {
        let mut claims = blueprint_claims();
        if let DrillSource::Blueprint { seed: s, .. } = &mut claims.source {
            *s = seed;
        }
        let mut bytes = URL_SAFE_NO_PAD.decode(drill_token::issue(&claims, &KEYS).unwrap()).unwrap();
        let bit = bit % (bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        prop_assert!(verify(&URL_SAFE_NO_PAD.encode(&bytes)).is_err());
    }
}
