//! Where each node of a YAML document starts, by path, so that problems found
//! after deserializing (a dangling reference, a cycle) can still be reported
//! at the right line and column.

use std::cell::OnceCell;
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScanError, Span};

/// One step of a path into a YAML document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A path into a YAML document, e.g. `units[3].requires[0]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct YamlPath(pub Vec<Seg>);

impl YamlPath {
    pub fn root() -> Self {
        YamlPath(Vec::new())
    }

    pub fn key(&self, key: &str) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(key.to_owned()));
        YamlPath(segs)
    }

    pub fn index(&self, index: usize) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(index));
        YamlPath(segs)
    }
}

/// Line (1-based) and column (1-based) of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Start positions of every value (and of every mapping key) in one document.
#[derive(Debug, Default)]
pub struct YamlIndex {
    values: HashMap<YamlPath, Position>,
    keys: HashMap<YamlPath, Position>,
    complete: bool,
}

impl YamlIndex {
    /// Indexes `text`. A syntax error stops indexing there (the typed parse
    /// reports it with its own position); nodes after it are located at their
    /// nearest indexed ancestor.
    pub fn build(text: &str) -> Self {
        let mut index = YamlIndex::default();
        index.complete = index.walk(text).is_ok();
        index
    }

    /// Whether the whole document was indexed.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    fn walk(&mut self, text: &str) -> Result<(), ScanError> {
        let mut parser = Parser::new_from_str(text);
        let mut stack: Vec<Frame> = Vec::new();
        let mut path = YamlPath::root();
        while let Some(next) = parser.next_event() {
            let (event, span) = next?;
            match event {
                Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => {}
                Event::StreamEnd | Event::DocumentEnd => break,
                Event::Scalar(value, ..) => {
                    if let Some(Frame::Mapping { key: key @ None }) = stack.last_mut() {
                        *key = Some(value.to_string());
                        self.keys.insert(path.key(&value), position(&span));
                    } else {
                        self.value_at(&mut stack, &mut path, &span);
                        self.value_done(&mut stack, &mut path);
                    }
                }
                Event::Alias(_) => {
                    self.value_at(&mut stack, &mut path, &span);
                    self.value_done(&mut stack, &mut path);
                }
                Event::SequenceStart(..) => {
                    self.value_at(&mut stack, &mut path, &span);
                    stack.push(Frame::Sequence { next: 0 });
                }
                Event::MappingStart(..) => {
                    self.value_at(&mut stack, &mut path, &span);
                    stack.push(Frame::Mapping { key: None });
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    stack.pop();
                    self.value_done(&mut stack, &mut path);
                }
            }
        }
        Ok(())
    }

    /// Records where the value that starts now begins, descending into it.
    fn value_at(&mut self, stack: &mut [Frame], path: &mut YamlPath, span: &Span) {
        match stack.last() {
            Some(Frame::Mapping { key: Some(key) }) => path.0.push(Seg::Key(key.clone())),
            Some(Frame::Sequence { next }) => path.0.push(Seg::Index(*next)),
            _ => {}
        }
        self.values.insert(path.clone(), position(span));
    }

    /// Climbs back out of a finished value to its parent.
    fn value_done(&mut self, stack: &mut [Frame], path: &mut YamlPath) {
        match stack.last_mut() {
            Some(Frame::Mapping { key }) => {
                *key = None;
                path.0.pop();
            }
            Some(Frame::Sequence { next }) => {
                *next += 1;
                path.0.pop();
            }
            None => {}
        }
    }

    /// Where the value at `path` starts; for a path that does not exist, the
    /// nearest ancestor that does.
    pub fn locate(&self, path: &YamlPath) -> Position {
        let mut probe = path.clone();
        loop {
            if let Some(pos) = self.values.get(&probe) {
                return *pos;
            }
            if probe.0.pop().is_none() {
                return Position { line: 1, column: 1 };
            }
        }
    }

    /// Where the key naming the value at `path` is written (falls back to the value).
    pub fn locate_key(&self, path: &YamlPath) -> Position {
        self.keys
            .get(path)
            .copied()
            .unwrap_or_else(|| self.locate(path))
    }
}

/// A document's text, indexed the first time a position is asked for:
/// valid content, which every cold start loads, never needs the index.
#[derive(Debug)]
pub struct LazyYamlIndex {
    text: String,
    index: OnceCell<YamlIndex>,
}

impl LazyYamlIndex {
    pub fn new(text: &str) -> Self {
        LazyYamlIndex {
            text: text.to_owned(),
            index: OnceCell::new(),
        }
    }

    /// See [`YamlIndex::locate`].
    pub fn locate(&self, path: &YamlPath) -> Position {
        self.get().locate(path)
    }

    /// See [`YamlIndex::locate_key`].
    pub fn locate_key(&self, path: &YamlPath) -> Position {
        self.get().locate_key(path)
    }

    /// Where `needle` first occurs at or after the value at `path`: a word
    /// inside a multi-line scalar, which the index alone places only at the
    /// scalar's start. The value's own position when it does not occur.
    pub fn locate_within(&self, path: &YamlPath, needle: &str) -> Position {
        let start = self.locate(path);
        let offset: usize = self
            .text
            .split_inclusive('\n')
            .take(start.line.saturating_sub(1))
            .map(str::len)
            .sum();
        let line_start = &self.text[offset..];
        let column_bytes = line_start
            .char_indices()
            .nth(start.column.saturating_sub(1))
            .map_or(line_start.len(), |(i, _)| i);
        let from = offset + column_bytes;
        let Some(found) = self.text[from..].find(needle).map(|i| from + i) else {
            return start;
        };
        let before = &self.text[..found];
        let line = before.matches('\n').count() + 1;
        let line_begin = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line,
            column: self.text[line_begin..found].chars().count() + 1,
        }
    }

    fn get(&self) -> &YamlIndex {
        self.index.get_or_init(|| YamlIndex::build(&self.text))
    }
}

enum Frame {
    Mapping { key: Option<String> },
    Sequence { next: usize },
}

fn position(span: &Span) -> Position {
    Position {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
id: algebra
units:
  - id: A
    requires: []
  - id: B
    requires:
      - A
      - Z
meta: {owner: team, tags: [x, y]}
";

    #[test]
    fn finds_nested_values_and_keys() {
        let index = YamlIndex::build(DOC);
        let units = YamlPath::root().key("units");
        let z = units.index(1).key("requires").index(1);
        assert_eq!(index.locate(&z), Position { line: 8, column: 9 });
        assert_eq!(
            index.locate(&units.index(1).key("id")),
            Position { line: 5, column: 9 }
        );
        assert_eq!(
            index.locate_key(&units.index(1).key("requires")),
            Position { line: 6, column: 5 }
        );
        let tags = YamlPath::root().key("meta").key("tags").index(1);
        assert_eq!(
            index.locate(&tags),
            Position {
                line: 9,
                column: 31
            }
        );
    }

    #[test]
    fn missing_paths_fall_back_to_the_nearest_ancestor() {
        let index = YamlIndex::build(DOC);
        let missing = YamlPath::root().key("units").index(0).key("title");
        assert_eq!(index.locate(&missing), Position { line: 3, column: 5 });
    }

    #[test]
    fn the_lazy_index_is_built_on_the_first_question_only() {
        let lazy = LazyYamlIndex::new(DOC);
        assert!(lazy.index.get().is_none());
        let z = YamlPath::root()
            .key("units")
            .index(1)
            .key("requires")
            .index(1);
        assert_eq!(lazy.locate(&z), YamlIndex::build(DOC).locate(&z));
        assert!(lazy.index.get().is_some());
        let requires = YamlPath::root().key("units").index(1).key("requires");
        assert_eq!(lazy.locate_key(&requires), Position { line: 6, column: 5 });
    }

    #[test]
    fn broken_yaml_does_not_panic() {
        for text in [
            "- a\nb: c",
            ": : :",
            "\t- x",
            "a: *nope",
            "a: [1, 2",
            "{{{{",
        ] {
            let index = YamlIndex::build(text);
            let _ = index.locate(&YamlPath::root().key("a"));
        }
        for unterminated in ["a: [1, 2", "{{{{", "a: \"open"] {
            assert!(
                !YamlIndex::build(unterminated).is_complete(),
                "{unterminated:?}"
            );
        }
        assert!(YamlIndex::build(DOC).is_complete());
    }
}
