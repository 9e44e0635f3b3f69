//! Sealed drill tokens over HTTP: a drill card's token shows nothing of
//! what regenerates its answer (blueprint id, seed), and a token altered
//! anywhere, or sealed with another server's key, is refused by
//! drill-grade with a problem naming `drillToken`, changing nothing; the
//! untouched token still grades.

use crate::e2e_support;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use e2e_support::{Harness, drill_answer};
use serde_json::json;
use tutorflow::engine::practice::drill_token::{self, DrillClaims, DrillSource, TokenKeys};

async fn sealed_tokens_hide_their_item_and_refuse_tampering(h: &Harness) {
    let student = "student-tokens";
    let thread = h.new_thread(student).await;
    let turn = h
        .turn(
            student,
            &thread,
            json!({"clientEvent": {"type": "REQUEST_DRILL", "unitId": "whole-numbers"}}),
        )
        .await;
    let card = Harness::card(&turn, "DRILL").unwrap_or_else(|| panic!("a drill card: {turn}"));
    let token = card["drillToken"].as_str().unwrap().to_owned();

    let bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
    let visible = String::from_utf8_lossy(&bytes);
    let blueprints =
        &e2e_support::bundle().course("prealgebra").unwrap().units["whole-numbers"].blueprints;
    assert!(!blueprints.is_empty());
    for id in blueprints {
        assert!(!visible.contains(id.as_str()), "{id} readable in the token");
    }
    assert!(!visible.contains("whole-numbers") && !visible.contains(&thread));

    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x01;
    let foreign = drill_token::issue(
        &DrillClaims {
            unit_id: "whole-numbers".into(),
            thread_id: thread.clone(),
            issued_at: Utc::now(),
            source: DrillSource::Blueprint {
                blueprint_id: blueprints[0].clone(),
                fingerprint: [0; 8],
                seed: 1,
                target_difficulty: 0.5,
                theme: None,
            },
        },
        &TokenKeys::single(b"another deployment's drill secret").unwrap(),
    )
    .unwrap();
    for forged in [URL_SAFE_NO_PAD.encode(&flipped), foreign] {
        let r = h
            .post(
                student,
                &format!("/threads/{thread}/drill/grade"),
                json!({"drillToken": forged, "studentAnswer": "4"}),
            )
            .await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.body["field"], "drillToken", "{}", r.body);
        assert!(
            r.body["detail"]
                .as_str()
                .unwrap()
                .contains("changed or not issued here"),
            "{}",
            r.body
        );
    }
    let right = drill_answer(&thread, &token);
    let graded = h.grade(student, &thread, &token, &right).await;
    assert_eq!(graded["isCorrect"], true, "{graded}");
}

#[tokio::test]
async fn sqlite_sealed_tokens_hide_their_item_and_refuse_tampering() {
    sealed_tokens_hide_their_item_and_refuse_tampering(&Harness::sqlite().await).await;
}
