//! Server-Sent Events as providers send them (the WHATWG event-stream
//! format): bytes in, whole events out, whatever the network's chunking.

/// One event: its `event:` name (when it has one) and its `data:` lines
/// joined by newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Lines are cut at `\n` only, so a multi-byte character split between
/// chunks is whole again before it is decoded.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    /// Reads `bytes` and returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if let Some(event) = self.line_done(&String::from_utf8_lossy(&line)) {
                    events.push(event);
                }
            } else {
                self.line.push(b);
            }
        }
        events
    }

    /// The event a stream's last lines make when it ends without a blank line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            let text = String::from_utf8_lossy(&line).into_owned();
            if let Some(event) = self.line_done(text.trim_end_matches('\r')) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    fn line_done(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            // `id` and `retry` matter to browsers reconnecting, not here.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if self.data.is_empty() {
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data).join("\n"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const STREAM: &str = ": keep-alive\r\nevent: message_start\r\ndata: {\"a\":\"é🙂\"}\r\n\r\ndata: one\ndata: two\n\nevent: ping\n\nid: 7\ndata:x\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent {
                event: Some("message_start".into()),
                data: "{\"a\":\"é🙂\"}".into(),
            },
            SseEvent {
                event: None,
                data: "one\ntwo".into(),
            },
            SseEvent {
                event: None,
                data: "x".into(),
            },
        ]
    }

    #[test]
    fn events_fields_and_comments() {
        let mut parser = SseParser::default();
        assert_eq!(parser.push(STREAM.as_bytes()), expected());
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn an_unterminated_last_event_is_read_at_the_end() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"data: [DONE]").is_empty());
        assert_eq!(
            parser.finish(),
            Some(SseEvent {
                event: None,
                data: "[DONE]".into()
            })
        );
    }

    proptest! {
        #[test]
        fn any_byte_chunking_reads_the_same(cuts in proptest::collection::vec(0usize..200, 0..30)) {
            let bytes = STREAM.as_bytes();
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            points.extend([0, bytes.len()]);
            points.sort_unstable();
            points.dedup();
            let mut parser = SseParser::default();
            let events: Vec<SseEvent> = points
                .windows(2)
                .flat_map(|w| parser.push(&bytes[w[0]..w[1]]))
                .collect();
            prop_assert_eq!(events, expected());
        }
    }
}
