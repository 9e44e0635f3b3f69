//! Sealed drill tokens. Drills are never stored, yet grading must not trust
//! the client: the drill card carries a compact token from which the server
//! regenerates the item — or, for a drill the LLM wrote, reads back the
//! expected answer — and checks that it was issued for this thread,
//! recently.
//!
//! The token is sealed with ChaCha20-Poly1305 (an AEAD), not only signed:
//! a signed token would show its blueprint id and seed to anyone who
//! decodes the base64, and with the content bundle those regenerate the
//! answer. A token is URL-safe base64 (no padding) of
//!
//! ```text
//! version u8 | key id [4] | nonce [12] | ciphertext of the claims | tag [16]
//! ```
//!
//! The version, key id and a fixed context label are authenticated as
//! associated data. The key id names which of the server's keys sealed the
//! token, so a key can be rotated: tokens sealed with a retired key still
//! open until that key is removed from the [`TokenKeys`].
//!
//! The nonce is synthetic (an HMAC of the claims under a key of its own),
//! so sealing needs no randomness and the engine stays pure: distinct
//! claims never share a nonce, and the same claims seal to the same token.
//!
//! Claims, all integers big-endian:
//!
//! ```text
//! kind u8 | issued_at i64 (unix seconds) | unit str8 | thread str8 |
//!   kind 0 (blueprint): blueprint_id str8 | fingerprint [8] | seed u64 | target f64 |
//!                       theme str8 (empty: the plain wording)
//!   kind 1 (authored):  prompt str16 | question_latex str16 | answer str16
//! ```
//!
//! `str8`/`str16` are UTF-8 strings after a one/two-byte length. Version 2
//! tokens, sealed before items had themes, have no theme and still open.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, Payload};
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Layout version. Bump it whenever the layout or the generator's use of
/// the seed changes: older tokens are then refused, not misread, unless
/// they are among the readable versions below.
pub const TOKEN_VERSION: u8 = 3;

/// Versions this server opens: the current one, and version 2, which only
/// lacks the theme (its items are regenerated in the plain wording, as
/// they were shown).
const READABLE_VERSIONS: [u8; 2] = [2, TOKEN_VERSION];

/// Longest token accepted or issued, in characters. Tokens travel in JSON
/// bodies; a blueprint token is about 150 characters.
pub const MAX_TOKEN_CHARS: usize = 1024;

/// Shortest key secret accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// Clock difference between servers tolerated for the issue time.
pub const MAX_CLOCK_SKEW_SECONDS: i64 = 60;

const KEY_ID_BYTES: usize = 4;
const NONCE_BYTES: usize = 12;
const TAG_BYTES: usize = 16;
const HEADER_BYTES: usize = 1 + KEY_ID_BYTES + NONCE_BYTES;
const CONTEXT: &[u8] = b"tutorflow drill token";
const CIPHER_LABEL: &[u8] = b"tutorflow drill token: sealing key";
const NONCE_LABEL: &[u8] = b"tutorflow drill token: nonce key";
const KEY_ID_LABEL: &[u8] = b"tutorflow drill token: key id";

const KIND_BLUEPRINT: u8 = 0;
const KIND_AUTHORED: u8 = 1;

type HmacSha256 = Hmac<Sha256>;

/// One key, derived from a secret: the AEAD key, the nonce key and the id.
#[derive(Clone)]
struct SealingKey {
    id: [u8; KEY_ID_BYTES],
    cipher: ChaCha20Poly1305,
    nonce_key: [u8; 32],
}

impl SealingKey {
    fn derive(secret: &[u8]) -> Result<SealingKey, DrillTokenError> {
        if secret.len() < MIN_KEY_BYTES {
            return Err(DrillTokenError::KeyTooShort);
        }
        let derive = |label: &[u8]| -> Result<[u8; 32], DrillTokenError> {
            let mut mac =
                HmacSha256::new_from_slice(secret).map_err(|_| DrillTokenError::KeyTooShort)?;
            mac.update(label);
            Ok(mac.finalize().into_bytes().into())
        };
        let id = derive(KEY_ID_LABEL)?;
        let cipher_key = derive(CIPHER_LABEL)?;
        Ok(SealingKey {
            id: [id[0], id[1], id[2], id[3]],
            cipher: ChaCha20Poly1305::new(&cipher_key.into()),
            nonce_key: derive(NONCE_LABEL)?,
        })
    }
}

/// The keys a server seals and opens tokens with: the current one seals,
/// every one opens. Built from secrets by the service layer.
#[derive(Clone)]
pub struct TokenKeys {
    current: SealingKey,
    retired: Vec<SealingKey>,
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKeys")
            .field("current", &hex(&self.current.id))
            .field("retired", &self.retired.len())
            .finish()
    }
}

impl TokenKeys {
    /// Keys from the `current` secret, which seals, and `retired` secrets,
    /// which still open the tokens they sealed.
    pub fn new(current: &[u8], retired: &[&[u8]]) -> Result<TokenKeys, DrillTokenError> {
        Ok(TokenKeys {
            current: SealingKey::derive(current)?,
            retired: retired
                .iter()
                .map(|secret| SealingKey::derive(secret))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Only `current`: nothing sealed earlier under another key opens.
    pub fn single(current: &[u8]) -> Result<TokenKeys, DrillTokenError> {
        TokenKeys::new(current, &[])
    }

    /// The id written into the tokens this ring seals, in hex.
    pub fn current_key_id(&self) -> String {
        hex(&self.current.id)
    }

    fn find(&self, id: &[u8]) -> Option<&SealingKey> {
        std::iter::once(&self.current)
            .chain(&self.retired)
            .find(|key| key.id == id)
    }
}

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
        /// The example theme the stem was told in (`None`: the plain wording).
        theme: Option<String>,
    },
    /// A drill the LLM wrote; its answer travels sealed in the token.
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
    /// Unique per token (hex of its authentication tag): store it to
    /// recognise a drill answered twice.
    pub replay_key: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrillTokenError {
    /// Not a drill token: wrong characters, wrong length or wrong layout.
    #[error("the drill token is malformed")]
    Malformed,
    /// Altered, forged, or sealed with another key under a known key id.
    #[error("the drill token does not open: it was altered or not issued here")]
    BadSignature,
    /// Sealed with a key this server does not hold (another deployment's,
    /// or one retired and since removed).
    #[error("the drill token was sealed with a key this server does not hold")]
    UnknownKey,
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
    #[error("a token key must have at least {MIN_KEY_BYTES} bytes")]
    KeyTooShort,
}

/// Seals `claims` with the current key of `keys`.
pub fn issue(claims: &DrillClaims, keys: &TokenKeys) -> Result<String, DrillTokenError> {
    let plaintext = encode(claims)?;
    let key = &keys.current;
    let mut header = Vec::with_capacity(HEADER_BYTES);
    header.push(TOKEN_VERSION);
    header.extend_from_slice(&key.id);
    let mut nonce_mac =
        HmacSha256::new_from_slice(&key.nonce_key).map_err(|_| DrillTokenError::KeyTooShort)?;
    nonce_mac.update(&plaintext);
    let digest = nonce_mac.finalize().into_bytes();
    let nonce: [u8; NONCE_BYTES] = std::array::from_fn(|i| digest[i]);
    header.extend_from_slice(&nonce);
    let sealed = key
        .cipher
        .encrypt(
            &nonce.into(),
            Payload {
                msg: &plaintext,
                aad: &associated_data(&header),
            },
        )
        .map_err(|_| DrillTokenError::TooLarge)?;
    header.extend_from_slice(&sealed);
    let token = URL_SAFE_NO_PAD.encode(&header);
    if token.len() > MAX_TOKEN_CHARS {
        return Err(DrillTokenError::TooLarge);
    }
    Ok(token)
}

/// Opens `token` for `thread_id` at `now`: authenticity first, then
/// version, thread and age.
pub fn verify(
    token: &str,
    keys: &TokenKeys,
    thread_id: &str,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<VerifiedDrill, DrillTokenError> {
    if token.len() > MAX_TOKEN_CHARS {
        return Err(DrillTokenError::Malformed);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(token.as_bytes())
        .map_err(|_| DrillTokenError::Malformed)?;
    if bytes.len() <= HEADER_BYTES + TAG_BYTES {
        return Err(DrillTokenError::Malformed);
    }
    let (header, sealed) = bytes.split_at(HEADER_BYTES);
    let key = keys
        .find(&header[1..1 + KEY_ID_BYTES])
        .ok_or(DrillTokenError::UnknownKey)?;
    // The version is authenticated: an altered version byte fails here.
    let nonce: [u8; NONCE_BYTES] = std::array::from_fn(|i| header[1 + KEY_ID_BYTES + i]);
    let plaintext = key
        .cipher
        .decrypt(
            &nonce.into(),
            Payload {
                msg: sealed,
                aad: &associated_data(header),
            },
        )
        .map_err(|_| DrillTokenError::BadSignature)?;
    if !READABLE_VERSIONS.contains(&header[0]) {
        return Err(DrillTokenError::UnsupportedVersion(header[0]));
    }
    let claims = decode(&plaintext, header[0])?;
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
        replay_key: hex(&sealed[sealed.len() - TAG_BYTES..]),
    })
}

/// The replay key of `token` without opening it: to recognise, on a card
/// read back, the drill a verified answer was for.
pub fn replay_key_of(token: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(token.as_bytes()).ok()?;
    (bytes.len() > HEADER_BYTES + TAG_BYTES).then(|| hex(&bytes[bytes.len() - TAG_BYTES..]))
}

fn associated_data(header: &[u8]) -> Vec<u8> {
    [CONTEXT, &header[..1 + KEY_ID_BYTES]].concat()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn encode(claims: &DrillClaims) -> Result<Vec<u8>, DrillTokenError> {
    let mut out = Vec::with_capacity(128);
    out.push(match claims.source {
        DrillSource::Blueprint { .. } => KIND_BLUEPRINT,
        DrillSource::Authored { .. } => KIND_AUTHORED,
    });
    out.extend_from_slice(&claims.issued_at.timestamp().to_be_bytes());
    put_str8(&mut out, &claims.unit_id)?;
    put_str8(&mut out, &claims.thread_id)?;
    match &claims.source {
        DrillSource::Blueprint {
            blueprint_id,
            fingerprint,
            seed,
            target_difficulty,
            theme,
        } => {
            put_str8(&mut out, blueprint_id)?;
            out.extend_from_slice(fingerprint);
            out.extend_from_slice(&seed.to_be_bytes());
            out.extend_from_slice(&target_difficulty.to_bits().to_be_bytes());
            put_str8(&mut out, theme.as_deref().unwrap_or_default())?;
        }
        DrillSource::Authored {
            prompt,
            question_latex,
            expected_answer,
        } => {
            put_str16(&mut out, prompt)?;
            put_str16(&mut out, question_latex)?;
            put_str16(&mut out, expected_answer)?;
        }
    }
    Ok(out)
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

/// Reads opened claims of layout `version`. Only our own bug (or a leaked
/// key) could make an authentic token unreadable; it is still an error,
/// never a panic.
fn decode(claims: &[u8], version: u8) -> Result<DrillClaims, DrillTokenError> {
    let mut r = Reader(claims);
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
            theme: if version >= 3 {
                Some(r.str8()?).filter(|t| !t.is_empty())
            } else {
                None
            },
        },
        KIND_AUTHORED => DrillSource::Authored {
            prompt: r.str16()?,
            question_latex: r.str16()?,
            expected_answer: r.str16()?,
        },
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
