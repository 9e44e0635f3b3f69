//! Signed drill tokens. Drills are never stored (seed 004), yet grading
//! must not trust the client: the drill card carries a compact token,
//! HMAC-SHA256 signed, from which the server regenerates the item — or, for
//! a drill the LLM wrote, reads back the expected answer — and checks that
//! it was issued for this thread, recently.
//!
//! A token is URL-safe base64 (no padding) of a binary payload followed by
//! its 32-byte MAC. Payload, version 1, all integers big-endian:
//!
//! ```text
//! version u8 | kind u8 | issued_at i64 (unix seconds) | unit str8 | thread str8 |
//!   kind 0 (blueprint): blueprint_id str8 | fingerprint [8] | seed u64 | target f64
//!   kind 1 (authored):  prompt str16 | question_latex str16 | nonce [12] | sealed answer str16
//! ```
//!
//! `str8`/`str16` are UTF-8 strings after a one/two-byte length. The MAC
//! covers a fixed context label and the payload, so a key shared with
//! another signer can never make a valid drill token.
//!
//! A blueprint token holds no answer, only what regenerates the item on
//! the server. An authored token must carry its answer, and the client must
//! not read it before grading, so that field is encrypted (ChaCha20, with a
//! key derived from the signing key and a nonce derived from the contents,
//! then covered by the MAC: encrypt-then-MAC).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20::ChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Layout version. Bump it whenever the payload or the generator's use of
/// the seed changes: older tokens are then refused, not misread.
pub const TOKEN_VERSION: u8 = 1;

/// Longest token accepted or issued, in characters. Tokens travel in JSON
/// bodies; a blueprint token is about 150 characters.
pub const MAX_TOKEN_CHARS: usize = 1024;

/// Shortest signing key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// Clock difference between servers tolerated for the issue time.
pub const MAX_CLOCK_SKEW_SECONDS: i64 = 60;

const MAC_BYTES: usize = 32;
const NONCE_BYTES: usize = 12;
const CONTEXT: &[u8] = b"tutorflow drill token";
const SEALING_CONTEXT: &[u8] = b"tutorflow drill token: answer sealing key";

const KIND_BLUEPRINT: u8 = 0;
const KIND_AUTHORED: u8 = 1;

/// What the drill is and who it was issued to.
#[derive(Debug, Clone, PartialEq)]
pub struct DrillClaims {
    pub unit_id: String,
    pub thread_id: String,
    /// Kept to the second.
    pub issued_at: DateTime<Utc>,
    pub source: DrillSource,
}

/// Where the expected answer comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum DrillSource {
    /// Regenerated with `generate(blueprint, target_difficulty, seed)`.
    Blueprint {
        blueprint_id: String,
        /// [`crate::content::Blueprint::fingerprint`] when issued: a
        /// blueprint edited since then would regenerate another item.
        fingerprint: [u8; 8],
        seed: u64,
        target_difficulty: f64,
    },
    /// A drill the LLM wrote; its answer travels signed and encrypted.
    Authored {
        prompt: String,
        question_latex: String,
        expected_answer: String,
    },
}

/// A token that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedDrill {
    pub claims: DrillClaims,
    /// Unique per token (hex of its MAC's first 16 bytes): store it to
    /// recognise a drill answered twice.
    pub replay_key: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrillTokenError {
    /// Not a drill token: wrong characters, wrong length or wrong layout.
    #[error("the drill token is malformed")]
    Malformed,
    /// Altered, forged, or signed with another key.
    #[error("the drill token's signature does not match: it was altered or not issued here")]
    BadSignature,
    #[error(
        "the drill token has version {0}, which this server does not read; ask for a new drill"
    )]
    UnsupportedVersion(u8),
    #[error("the drill token expired at {expired_at}; ask for a new drill")]
    Expired { expired_at: DateTime<Utc> },
    #[error("the drill token was issued in the future ({issued_at})")]
    NotYetValid { issued_at: DateTime<Utc> },
    #[error("the drill token belongs to another thread")]
    WrongThread,
    #[error("the drill is too large for a token (at most {MAX_TOKEN_CHARS} characters)")]
    TooLarge,
    #[error("the signing key must have at least {MIN_KEY_BYTES} bytes")]
    KeyTooShort,
}

type HmacSha256 = Hmac<Sha256>;

fn mac(key: &[u8]) -> Result<HmacSha256, DrillTokenError> {
    if key.len() < MIN_KEY_BYTES {
        return Err(DrillTokenError::KeyTooShort);
    }
    let mut mac = HmacSha256::new_from_slice(key).map_err(|_| DrillTokenError::KeyTooShort)?;
    mac.update(CONTEXT);
    Ok(mac)
}

/// Signs `claims` with `key`.
pub fn issue(claims: &DrillClaims, key: &[u8]) -> Result<String, DrillTokenError> {
    let mut payload = Vec::with_capacity(128);
    payload.push(TOKEN_VERSION);
    payload.push(match claims.source {
        DrillSource::Blueprint { .. } => KIND_BLUEPRINT,
        DrillSource::Authored { .. } => KIND_AUTHORED,
    });
    payload.extend_from_slice(&claims.issued_at.timestamp().to_be_bytes());
    put_str8(&mut payload, &claims.unit_id)?;
    put_str8(&mut payload, &claims.thread_id)?;
    match &claims.source {
        DrillSource::Blueprint {
            blueprint_id,
            fingerprint,
            seed,
            target_difficulty,
        } => {
            put_str8(&mut payload, blueprint_id)?;
            payload.extend_from_slice(fingerprint);
            payload.extend_from_slice(&seed.to_be_bytes());
            payload.extend_from_slice(&target_difficulty.to_bits().to_be_bytes());
        }
        DrillSource::Authored {
            prompt,
            question_latex,
            expected_answer,
        } => {
            put_str16(&mut payload, prompt)?;
            put_str16(&mut payload, question_latex)?;
            let sealing = sealing_key(key)?;
            // Synthetic nonce: distinct contents never share a keystream.
            let mut nonce_mac =
                HmacSha256::new_from_slice(&sealing).map_err(|_| DrillTokenError::KeyTooShort)?;
            nonce_mac.update(&payload);
            nonce_mac.update(expected_answer.as_bytes());
            let digest = nonce_mac.finalize().into_bytes();
            let nonce: [u8; NONCE_BYTES] = digest[..NONCE_BYTES]
                .try_into()
                .map_err(|_| DrillTokenError::Malformed)?;
            payload.extend_from_slice(&nonce);
            let mut sealed = expected_answer.as_bytes().to_vec();
            ChaCha20::new(&sealing.into(), &nonce.into()).apply_keystream(&mut sealed);
            let len = u16::try_from(sealed.len()).map_err(|_| DrillTokenError::TooLarge)?;
            payload.extend_from_slice(&len.to_be_bytes());
            payload.extend_from_slice(&sealed);
        }
    }
    let mut signer = mac(key)?;
    signer.update(&payload);
    payload.extend_from_slice(&signer.finalize().into_bytes());
    let token = URL_SAFE_NO_PAD.encode(&payload);
    if token.len() > MAX_TOKEN_CHARS {
        return Err(DrillTokenError::TooLarge);
    }
    Ok(token)
}

/// Checks `token` for `thread_id` at `now`: signature first (in constant
/// time), then version, thread and age.
pub fn verify(
    token: &str,
    key: &[u8],
    thread_id: &str,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<VerifiedDrill, DrillTokenError> {
    let mut checker = mac(key)?;
    if token.len() > MAX_TOKEN_CHARS {
        return Err(DrillTokenError::Malformed);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(token.as_bytes())
        .map_err(|_| DrillTokenError::Malformed)?;
    if bytes.len() <= MAC_BYTES {
        return Err(DrillTokenError::Malformed);
    }
    let (payload, tag) = bytes.split_at(bytes.len() - MAC_BYTES);
    checker.update(payload);
    checker
        .verify_slice(tag)
        .map_err(|_| DrillTokenError::BadSignature)?;
    let claims = decode(payload, key)?;
    if claims.thread_id != thread_id {
        return Err(DrillTokenError::WrongThread);
    }
    let skew = Duration::seconds(MAX_CLOCK_SKEW_SECONDS);
    if claims.issued_at > now + skew {
        return Err(DrillTokenError::NotYetValid {
            issued_at: claims.issued_at,
        });
    }
    let expired_at = claims.issued_at + ttl;
    if now > expired_at {
        return Err(DrillTokenError::Expired { expired_at });
    }
    Ok(VerifiedDrill {
        claims,
        replay_key: replay_key(tag),
    })
}

/// The replay key of `token` without checking it: to recognise, on a
/// card read back, the drill a verified answer was for.
pub fn replay_key_of(token: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(token.as_bytes()).ok()?;
    let tag = bytes.get(bytes.len().checked_sub(MAC_BYTES)?..)?;
    (bytes.len() > MAC_BYTES).then(|| replay_key(tag))
}

fn replay_key(tag: &[u8]) -> String {
    tag[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The key that encrypts authored answers, derived from the signing key.
fn sealing_key(key: &[u8]) -> Result<[u8; 32], DrillTokenError> {
    let mut derive = mac(key)?;
    derive.update(SEALING_CONTEXT);
    Ok(derive.finalize().into_bytes().into())
}

fn put_str8(out: &mut Vec<u8>, s: &str) -> Result<(), DrillTokenError> {
    let len = u8::try_from(s.len()).map_err(|_| DrillTokenError::TooLarge)?;
    out.push(len);
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

fn put_str16(out: &mut Vec<u8>, s: &str) -> Result<(), DrillTokenError> {
    let len = u16::try_from(s.len()).map_err(|_| DrillTokenError::TooLarge)?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

/// Reads a signed payload. Only our own bug (or a leaked key) could make a
/// signed payload unreadable; it is still an error, never a panic.
fn decode(payload: &[u8], key: &[u8]) -> Result<DrillClaims, DrillTokenError> {
    let mut r = Reader(payload);
    let version = r.u8()?;
    if version != TOKEN_VERSION {
        return Err(DrillTokenError::UnsupportedVersion(version));
    }
    let kind = r.u8()?;
    let issued_at = DateTime::from_timestamp(i64::from_be_bytes(r.array()?), 0)
        .ok_or(DrillTokenError::Malformed)?;
    let unit_id = r.str8()?;
    let thread_id = r.str8()?;
    let source = match kind {
        KIND_BLUEPRINT => DrillSource::Blueprint {
            blueprint_id: r.str8()?,
            fingerprint: r.array()?,
            seed: u64::from_be_bytes(r.array()?),
            target_difficulty: f64::from_bits(u64::from_be_bytes(r.array()?)),
        },
        KIND_AUTHORED => {
            let prompt = r.str16()?;
            let question_latex = r.str16()?;
            let nonce: [u8; NONCE_BYTES] = r.array()?;
            let len = usize::from(u16::from_be_bytes(r.array()?));
            let mut answer = r.take(len)?.to_vec();
            ChaCha20::new(&sealing_key(key)?.into(), &nonce.into()).apply_keystream(&mut answer);
            DrillSource::Authored {
                prompt,
                question_latex,
                expected_answer: String::from_utf8(answer)
                    .map_err(|_| DrillTokenError::Malformed)?,
            }
        }
        _ => return Err(DrillTokenError::Malformed),
    };
    if !r.0.is_empty() {
        return Err(DrillTokenError::Malformed);
    }
    Ok(DrillClaims {
        unit_id,
        thread_id,
        issued_at,
        source,
    })
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DrillTokenError> {
        if self.0.len() < n {
            return Err(DrillTokenError::Malformed);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, DrillTokenError> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DrillTokenError> {
        self.take(N)?
            .try_into()
            .map_err(|_| DrillTokenError::Malformed)
    }

    fn string(&mut self, len: usize) -> Result<String, DrillTokenError> {
        String::from_utf8(self.take(len)?.to_vec()).map_err(|_| DrillTokenError::Malformed)
    }

    fn str8(&mut self) -> Result<String, DrillTokenError> {
        let len = usize::from(self.u8()?);
        self.string(len)
    }

    fn str16(&mut self) -> Result<String, DrillTokenError> {
        let len = usize::from(u16::from_be_bytes(self.array()?));
        self.string(len)
    }
}
