//! Choosing the answer among the candidates a message holds.

use super::extract::Candidate;

/// The candidate chosen as the answer, or why none could be.
pub(super) enum Pick<'a> {
    One(&'a Candidate),
    Ambiguous(String),
    Nothing,
}

/// Chooses the answer among `candidates`: rejected ones (`not 6`) and the
/// numbers a described move is made with (`subtract 5`) are out;
/// among those `preferred`, the last one introduced as the answer wins, else
/// the last one. Alternatives (`7 or 8`) or several different values with
/// nothing to tell them apart make the message ambiguous.
pub(super) fn pick<'a>(
    candidates: &'a [Candidate],
    key: impl Fn(&Candidate) -> String,
    preferred: impl Fn(&Candidate) -> bool,
) -> Pick<'a> {
    let live: Vec<&Candidate> = candidates.iter().filter(|c| c.offered()).collect();
    if live.is_empty() {
        return if candidates.iter().all(|c| c.operand) {
            Pick::Nothing
        } else {
            Pick::Ambiguous("every value in the message is rejected (`not …`)".to_owned())
        };
    }
    let pool: Vec<usize> = {
        let p: Vec<usize> = (0..live.len()).filter(|&i| preferred(live[i])).collect();
        if p.is_empty() {
            (0..live.len()).collect()
        } else {
            p
        }
    };
    let cued: Vec<usize> = pool.iter().copied().filter(|&i| live[i].cued).collect();
    let chosen = cued.last().or(pool.last()).copied().unwrap_or(0);
    // The alternatives joined to the chosen one by `or`.
    let mut first = chosen;
    while first > 0 && live[first].or_joined {
        first -= 1;
    }
    let mut last = chosen;
    while last + 1 < live.len() && live[last + 1].or_joined {
        last += 1;
    }
    let distinct = |indices: &mut dyn Iterator<Item = usize>| {
        let mut keys: Vec<String> = indices.map(|i| key(live[i])).collect();
        keys.dedup();
        keys.sort();
        keys.dedup();
        keys
    };
    let alternatives = distinct(&mut (first..=last));
    if alternatives.len() > 1 {
        return Pick::Ambiguous(format!(
            "it offers several answers ({})",
            alternatives.join(" or ")
        ));
    }
    if cued.is_empty() {
        let values = distinct(&mut pool.iter().copied());
        if values.len() > 1 {
            return Pick::Ambiguous(format!(
                "it has several values ({}) without saying which is the answer",
                values.join(", ")
            ));
        }
    }
    Pick::One(live[chosen])
}
