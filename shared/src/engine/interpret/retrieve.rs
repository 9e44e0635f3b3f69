//! In-process retrieval over a course: which units a message is about
//! ([`UnitMapper`]) and which content chunks to put in front of the tutor
//! (BM25 over the chunks). Built once per course and content version; no
//! external search service.

use std::collections::HashMap;

use bm25::{Embedder, EmbedderBuilder, Language};

use crate::content::Course;
use crate::engine::interpret::mapping::UnitMapper;
use crate::model::MappedUnit;

/// Search indexes of one course.
pub struct CourseIndex {
    pub mapper: UnitMapper,
    chunks: ChunkSearch,
    /// (unit id, chunk index within the unit) per chunk document.
    chunk_refs: Vec<(String, usize)>,
}

/// BM25 over the chunk documents: the bm25 crate's tokens and term weights,
/// kept as postings. A search adds up scores in place instead of cloning
/// every matching document as the crate's own engine does, and equal
/// scores keep document order, so a turn's chunks never depend on hashing.
struct ChunkSearch {
    embedder: Embedder,
    /// Per token: (document, BM25 term weight) for each document holding it,
    /// and the token's inverse document frequency.
    postings: HashMap<u32, (Vec<(usize, f32)>, f32)>,
    documents: usize,
}

impl ChunkSearch {
    fn build(texts: &[String]) -> Self {
        let corpus: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder = EmbedderBuilder::with_fit_to_corpus(Language::English, &corpus).build();
        let mut postings: HashMap<u32, (Vec<(usize, f32)>, f32)> = HashMap::new();
        for (doc, text) in texts.iter().enumerate() {
            for token in embedder.embed(text).iter() {
                let (docs, _) = postings.entry(token.index).or_default();
                // A repeated token has the same weight at every occurrence.
                if docs.last().is_none_or(|&(last, _)| last != doc) {
                    docs.push((doc, token.value));
                }
            }
        }
        let n = texts.len() as f32;
        for (docs, idf) in postings.values_mut() {
            let df = docs.len() as f32;
            *idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        }
        ChunkSearch {
            embedder,
            postings,
            documents: texts.len(),
        }
    }

    /// Every document sharing a token with `query`, best first: (document,
    /// score). A token the query repeats counts once per occurrence.
    fn search(&self, query: &str) -> Vec<(usize, f32)> {
        let mut scores = vec![0f32; self.documents];
        let mut matched = vec![false; self.documents];
        for token in self.embedder.embed(query).iter() {
            if let Some((docs, idf)) = self.postings.get(&token.index) {
                for &(doc, weight) in docs {
                    scores[doc] += idf * weight;
                    matched[doc] = true;
                }
            }
        }
        let mut found: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|&(doc, _)| matched[doc])
            .collect();
        found.sort_by(|a, b| b.1.total_cmp(&a.1));
        found
    }
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
        let mut chunk_texts = Vec::new();
        let mut chunk_refs = Vec::new();
        for unit_id in &course.order {
            let Some(unit) = course.unit(unit_id) else {
                continue;
            };
            for (i, chunk) in unit.chunks.iter().enumerate() {
                chunk_texts.push(format!("{} {} {}", unit.title, chunk.section, chunk.text));
                chunk_refs.push((unit.id.clone(), i));
            }
        }
        CourseIndex {
            mapper: UnitMapper::build(course),
            chunks: ChunkSearch::build(&chunk_texts),
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
        self.chunks.search(query)
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

#[cfg(test)]
mod tests {
    use bm25::SearchEngineBuilder;

    use super::*;

    fn texts() -> Vec<String> {
        [
            "Fractions A fraction names equal parts of a whole: 3/4 is three of four equal parts.",
            "Fractions To add fractions, first give them a common denominator, then add the numerators.",
            "Ratios A ratio compares two quantities; ratios ratios ratios.",
            "Percentages A percent is a fraction out of a hundred: 15% of 80 is 12.",
            "Equations Undo the operations in reverse order to solve a two-step equation.",
            "Fractions Equivalent fractions name the same amount.",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn scores_what_the_bm25_engine_scores() {
        let texts = texts();
        let ours = ChunkSearch::build(&texts);
        let docs = texts
            .iter()
            .enumerate()
            .map(|(i, t)| bm25::Document::new(i, t.clone()));
        let theirs = SearchEngineBuilder::<usize>::with_documents(Language::English, docs).build();
        for query in [
            "how do I add fractions",
            "what is a ratio ratio",
            "15% of 80",
            "solve the equation",
            "photosynthesis",
        ] {
            let mut expected: Vec<(usize, f32)> = theirs
                .search(query, None)
                .into_iter()
                .map(|r| (r.document.id, r.score))
                .collect();
            expected.sort_by_key(|&(doc, _)| doc);
            let mut found = ours.search(query);
            assert!(found.windows(2).all(|w| w[0].1 >= w[1].1), "{query}");
            found.sort_by_key(|&(doc, _)| doc);
            assert_eq!(found, expected, "{query}");
        }
    }

    #[test]
    fn equal_scores_keep_document_order() {
        let texts = ["alpha beta", "gamma delta", "alpha beta", "alpha beta"].map(String::from);
        let found = ChunkSearch::build(&texts).search("alpha");
        let docs: Vec<usize> = found.iter().map(|&(doc, _)| doc).collect();
        assert_eq!(docs, [0, 2, 3]);
    }
}
