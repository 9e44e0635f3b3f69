//! The phrase picker: which of a phrasebook's variants is said, the same
//! for the same seed, among those this turn's values can fill.

use std::collections::BTreeMap;

use crate::content::prompt::PromptTemplate;
use crate::content::tutor_text::ITEM_PLACEHOLDERS;

/// Deterministic variety: the same seed and slot always pick the same variant.
pub(super) struct Picker {
    pub(super) seed: u64,
}

impl Picker {
    pub(super) fn index(&self, salt: &str, len: usize) -> usize {
        if len == 0 {
            return 0;
        }
        let mixed = splitmix64(self.seed ^ fnv1a(salt));
        usize::try_from(mixed % u64::try_from(len).unwrap_or(1)).unwrap_or(0)
    }

    /// A rendered variant of `list` whose placeholders `values` can fill; empty when none can.
    pub(super) fn phrase(
        &self,
        salt: &str,
        list: &[String],
        values: &BTreeMap<&'static str, String>,
    ) -> String {
        let mut usable: Vec<PromptTemplate> = list
            .iter()
            .filter_map(|p| PromptTemplate::parse(salt, p).ok())
            .filter(|t| {
                t.placeholders()
                    .all(|p| values.contains_key(p.name.as_str()))
            })
            .collect();
        // Help about the item in front of the student comes before help
        // about the unit in general.
        let about_item = |t: &PromptTemplate| {
            t.placeholders()
                .filter(|p| ITEM_PLACEHOLDERS.contains(&p.name.as_str()))
                .count()
        };
        let most = usable.iter().map(about_item).max().unwrap_or(0);
        usable.retain(|t| about_item(t) == most);
        if usable.is_empty() {
            return String::new();
        }
        usable[self.index(salt, usable.len())]
            .render(values)
            .unwrap_or_default()
    }
}

/// The variants of `list` that `values` can fill and that say the most:
/// the most placeholders with something in them.
pub(super) fn most_said(list: &[String], values: &BTreeMap<&'static str, String>) -> Vec<String> {
    let filled = |p: &String| -> Option<usize> {
        let template = PromptTemplate::parse("answer", p).ok()?;
        let names: Vec<&str> = template.placeholders().map(|p| p.name.as_str()).collect();
        names.iter().all(|n| values.contains_key(n)).then(|| {
            names
                .iter()
                .filter(|n| values.get(*n).is_some_and(|v| !v.is_empty()))
                .count()
        })
    };
    let most = list.iter().filter_map(filled).max();
    list.iter()
        .filter(|p| most.is_some() && filled(p) == most)
        .cloned()
        .collect()
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picker_is_stable_and_spreads() {
        let seen: std::collections::BTreeSet<usize> = (0..64)
            .map(|seed| Picker { seed }.index("ask", 4))
            .collect();
        assert_eq!(seen.len(), 4);
        assert_eq!(
            Picker { seed: 7 }.index("ask", 4),
            Picker { seed: 7 }.index("ask", 4)
        );
    }
}
