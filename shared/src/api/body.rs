//! Reading JSON request bodies: size limits, content type, and errors that
//! name the offending field.

use http::HeaderMap;
use http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;

use super::problem::Problem;

/// Parses a JSON body of at most `limit` bytes into `T`.
pub fn parse_json<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &[u8],
    limit: usize,
) -> Result<T, Problem> {
    if body.len() > limit {
        return Err(Problem::too_large(format!(
            "the body is {} bytes; the limit is {limit}",
            body.len()
        )));
    }
    if let Some(content_type) = headers.get(CONTENT_TYPE) {
        let media = content_type
            .to_str()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if media != "application/json" && !media.ends_with("+json") {
            return Err(Problem::unsupported_media_type(format!(
                "send the body as application/json (got `{media}`)"
            )));
        }
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Problem::invalid_body(
            "the body is empty; expected a JSON object",
        ));
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| Problem::invalid_body("the body is not valid UTF-8"))?;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let field = err.path().to_string();
        // "?" stands for a key the parser never got to read: no field to name.
        let named = field != "." && !field.split('.').any(|segment| segment == "?");
        let inner = err.into_inner();
        let detail = match inner.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                format!("malformed JSON: {inner}")
            }
            _ if !named => strip_position(&inner.to_string()),
            _ => format!("{field}: {}", strip_position(&inner.to_string())),
        };
        let problem = Problem::invalid_body(detail);
        if named {
            problem.with_field(field)
        } else {
            problem
        }
    })?;
    de.end()
        .map_err(|e| Problem::invalid_body(format!("malformed JSON: {e}")))?;
    Ok(value)
}

/// serde_json appends " at line L column C"; for data errors the field path
/// says more than a position in one long line.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TurnRequest;
    use http::HeaderValue;

    fn json_headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        h
    }

    fn parse(body: &str) -> Result<TurnRequest, Problem> {
        parse_json(&json_headers(), body.as_bytes(), 64 * 1024)
    }

    #[test]
    fn accepts_a_valid_body() {
        let req = parse(r#"{"messageText":"hi","clientEvent":{"type":"NONE"}}"#).unwrap();
        assert_eq!(req.message_text.as_deref(), Some("hi"));
    }

    #[test]
    fn names_the_offending_field() {
        let p = parse(r#"{"messageText":"hi","clientEvent":{"type":"REQUEST_DRILL","unitId":5}}"#)
            .unwrap_err();
        // Tagged enums are buffered, so the path stops at the event itself.
        assert_eq!(p.field.as_deref(), Some("clientEvent"), "{p:?}");
        assert!(p.detail.contains("integer `5`, expected a string"), "{p:?}");
        let p = parse(r#"{"messageText":7}"#).unwrap_err();
        assert_eq!(p.field.as_deref(), Some("messageText"), "{p:?}");
        let p = parse(r#"{"messageTxt":"hi"}"#).unwrap_err();
        assert!(p.detail.contains("messageTxt"), "{p:?}");
        let p = parse(r#"{"clientEvent":{"type":"TELEPORT"}}"#).unwrap_err();
        assert_eq!(p.field.as_deref(), Some("clientEvent.type"), "{p:?}");
        assert!(
            p.detail.contains("REQUEST_DRILL"),
            "lists the valid types: {p:?}"
        );
    }

    #[test]
    fn refuses_malformed_empty_oversized_and_non_json() {
        assert!(
            parse(r#"{"messageText": "#)
                .unwrap_err()
                .detail
                .contains("malformed JSON")
        );
        // Cut off before the next key: there is no field to name.
        let cut = parse(r#"{"messageText": "hi","#).unwrap_err();
        assert!(cut.detail.contains("malformed JSON"), "{cut:?}");
        assert_eq!(cut.field, None, "{cut:?}");
        assert!(
            parse(r#"{"messageText":"a"} trailing"#)
                .unwrap_err()
                .detail
                .contains("malformed")
        );
        assert!(parse("  ").unwrap_err().detail.contains("empty"));
        assert_eq!(parse("[1,2]").unwrap_err().status, 400);
        let big = format!(r#"{{"messageText":"{}"}}"#, "a".repeat(70_000));
        assert_eq!(parse(&big).unwrap_err().status, 413);
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        let p = parse_json::<TurnRequest>(&h, b"{}", 1024).unwrap_err();
        assert_eq!(p.status, 415);
        let p = parse_json::<TurnRequest>(&json_headers(), &[0xff, 0xfe], 1024).unwrap_err();
        assert!(p.detail.contains("UTF-8"));
    }
}
