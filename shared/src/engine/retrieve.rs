//! In-process retrieval over a course: which units a message is about
//! (lexical mapping over titles, anchors, tags and key ideas) and which
//! content chunks to put in front of the tutor (BM25 over the chunks).
//! Built once per course and content version; no external search service.

use std::collections::BTreeMap;

use bm25::{Language, SearchEngine, SearchEngineBuilder};

use crate::content::Course;
use crate::model::MappedUnit;

/// Confidence given to a message that names a unit unambiguously. Below
/// 1 because words alone never prove what a student means.
const CLEAR_MATCH: f64 = 0.9;

/// Search indexes of one course.
pub struct CourseIndex {
    units: SearchEngine<usize>,
    unit_ids: Vec<String>,
    /// Lower-cased unit titles, for "the message names the unit" matches.
    titles: Vec<String>,
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
        let mut unit_docs = Vec::new();
        let mut unit_ids = Vec::new();
        let mut titles = Vec::new();
        let mut chunk_docs = Vec::new();
        let mut chunk_refs = Vec::new();
        for unit_id in &course.order {
            let Some(unit) = course.unit(unit_id) else {
                continue;
            };
            let text = format!(
                "{} {} {} {} {}",
                unit.title,
                unit.title,
                unit.anchor,
                unit.tags.join(" "),
                unit.key_ideas.join(" ")
            );
            unit_docs.push(bm25::Document::new(unit_ids.len(), text));
            unit_ids.push(unit.id.clone());
            titles.push(unit.title.to_lowercase());
            for (i, chunk) in unit.chunks.iter().enumerate() {
                let text = format!("{} {} {}", unit.title, chunk.section, chunk.text);
                chunk_docs.push(bm25::Document::new(chunk_refs.len(), text));
                chunk_refs.push((unit.id.clone(), i));
            }
        }
        CourseIndex {
            units: SearchEngineBuilder::<usize>::with_documents(Language::English, unit_docs)
                .build(),
            unit_ids,
            titles,
            chunks: SearchEngineBuilder::<usize>::with_documents(Language::English, chunk_docs)
                .build(),
            chunk_refs,
        }
    }

    /// Units the message is about, with a confidence in [0, 1], best first.
    ///
    /// The best unit's confidence reflects how far it stands out from the
    /// runner-up: alone it maps with [`CLEAR_MATCH`] (0.9); tied with another
    /// unit, with half that — below the policy's target threshold, so the
    /// tutor asks which one is meant. Other units get confidence in
    /// proportion to their score. Naming exactly one unit's title outright
    /// counts as a clear match.
    pub fn map_message(&self, message: &str, limit: usize) -> Vec<MappedUnit> {
        let lower = message.to_lowercase();
        let results = self.units.search(message, limit.max(2));
        let mut mapped: BTreeMap<usize, f64> = BTreeMap::new();
        if let Some(best) = results.first().filter(|r| r.score > 0.0) {
            let best_score = f64::from(best.score);
            let runner_up = results
                .get(1)
                .map_or(0.0, |r| f64::from(r.score) / best_score);
            mapped.insert(best.document.id, CLEAR_MATCH * (1.0 - runner_up / 2.0));
            for r in &results[1..] {
                mapped.insert(
                    r.document.id,
                    CLEAR_MATCH * f64::from(r.score) / best_score / 2.0,
                );
            }
        }
        let named: Vec<usize> = (0..self.titles.len())
            .filter(|&i| self.titles[i].len() >= 4 && lower.contains(self.titles[i].as_str()))
            .collect();
        if let [only] = named[..] {
            mapped.insert(only, CLEAR_MATCH);
        }
        let mut out: Vec<MappedUnit> = mapped
            .into_iter()
            .map(|(i, confidence)| MappedUnit {
                unit_id: self.unit_ids[i].clone(),
                confidence: (confidence * 1000.0).round() / 1000.0,
            })
            .collect();
        out.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then_with(|| a.unit_id.cmp(&b.unit_id))
        });
        out.truncate(limit);
        out
    }

    /// The best chunks for `query` among `scope` units, at most `limit`.
    /// When the query matches nothing in scope, the first chunks of the scoped
    /// units (in scope order) are returned, so the tutor always has material.
    pub fn chunks_for(&self, query: &str, scope: &[String], limit: usize) -> Vec<RankedChunk> {
        let mut ranked: Vec<RankedChunk> = self
            .chunks
            .search(query, None)
            .into_iter()
            .filter_map(|r| {
                let (unit_id, chunk) = &self.chunk_refs[r.document.id];
                scope.contains(unit_id).then(|| RankedChunk {
                    unit_id: unit_id.clone(),
                    chunk: *chunk,
                    score: r.score,
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
