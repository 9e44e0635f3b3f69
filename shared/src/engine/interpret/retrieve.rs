//! In-process retrieval over a course: which units a message is about
//! ([`UnitMapper`]) and which content chunks to put in front of the tutor
//! (BM25 over the chunks). Built once per course and content version; no
//! external search service.

use bm25::{Language, SearchEngine, SearchEngineBuilder};

use crate::content::Course;
use crate::engine::interpret::mapping::UnitMapper;
use crate::model::MappedUnit;

/// Search indexes of one course.
pub struct CourseIndex {
    pub mapper: UnitMapper,
    chunks: SearchEngine<usize>,
    /// (unit id, chunk index within the unit) per chunk document.
    chunk_refs: Vec<(String, usize)>,
}

/// A content chunk chosen for the prompt, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedChunk {
    pub unit_id: String,
    /// Index into the unit's `chunks`.
    pub chunk: usize,
    pub score: f32,
}

impl CourseIndex {
    pub fn build(course: &Course) -> Self {
        let mut chunk_docs = Vec::new();
        let mut chunk_refs = Vec::new();
        for unit_id in &course.order {
            let Some(unit) = course.unit(unit_id) else {
                continue;
            };
            for (i, chunk) in unit.chunks.iter().enumerate() {
                let text = format!("{} {} {}", unit.title, chunk.section, chunk.text);
                chunk_docs.push(bm25::Document::new(chunk_refs.len(), text));
                chunk_refs.push((unit.id.clone(), i));
            }
        }
        CourseIndex {
            mapper: UnitMapper::build(course),
            chunks: SearchEngineBuilder::<usize>::with_documents(Language::English, chunk_docs)
                .build(),
            chunk_refs,
        }
    }

    /// Units the message is about, with a confidence in \[0, 1\], best
    /// first, at most `limit` ([`UnitMapper::map`]).
    pub fn map_message(&self, message: &str, limit: usize) -> Vec<MappedUnit> {
        self.mapper.map(message, limit)
    }

    /// The best chunks for `query` with the `target` unit's own first: up
    /// to half of `limit` (rounded up) from the unit the reply is about,
    /// then the best of the rest of `scope`. A question is answered from
    /// its unit's lesson even when another scoped unit's words rank higher.
    pub fn chunks_about(
        &self,
        query: &str,
        target: &str,
        scope: &[String],
        limit: usize,
    ) -> Vec<RankedChunk> {
        // One search serves both picks: it scores the whole course anyway.
        let found = self.search(query);
        let own = [target.to_owned()];
        let mut ranked = self.pick(&found, &own, limit.div_ceil(2));
        for chunk in self.pick(&found, scope, limit) {
            if ranked.len() == limit {
                break;
            }
            if !ranked.contains(&chunk) {
                ranked.push(chunk);
            }
        }
        ranked
    }

    /// The best chunks for `query` among `scope` units, at most `limit`.
    /// When the query matches nothing in scope, the first chunks of the scoped
    /// units (in scope order) are returned, so the tutor always has material.
    pub fn chunks_for(&self, query: &str, scope: &[String], limit: usize) -> Vec<RankedChunk> {
        self.pick(&self.search(query), scope, limit)
    }

    /// Every chunk that matches `query`, best first: (chunk document, score).
    fn search(&self, query: &str) -> Vec<(usize, f32)> {
        self.chunks
            .search(query, None)
            .into_iter()
            .map(|r| (r.document.id, r.score))
            .collect()
    }

    fn pick(&self, found: &[(usize, f32)], scope: &[String], limit: usize) -> Vec<RankedChunk> {
        let mut ranked: Vec<RankedChunk> = found
            .iter()
            .filter_map(|&(doc, score)| {
                let (unit_id, chunk) = &self.chunk_refs[doc];
                scope.contains(unit_id).then(|| RankedChunk {
                    unit_id: unit_id.clone(),
                    chunk: *chunk,
                    score,
                })
            })
            .take(limit)
            .collect();
        if ranked.is_empty() {
            for unit_id in scope {
                for (id, chunk) in &self.chunk_refs {
                    if ranked.len() < limit && id == unit_id {
                        ranked.push(RankedChunk {
                            unit_id: id.clone(),
                            chunk: *chunk,
                            score: 0.0,
                        });
                    }
                }
            }
        }
        ranked
    }
}
