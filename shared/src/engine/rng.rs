//! SplitMix64 (Steele, Lea and Flood, 2014; Vigna's reference constants):
//! the seeded random stream behind item generation.
//!
//! It is written out here, not taken from a crate, because its outputs are
//! a stored contract: a drill token keeps only a seed, and the server
//! regenerates the item from it hours later, possibly after a deploy. A
//! crate upgrade that changed a single output would change the regenerated
//! question and its answer. The tests pin the first outputs to the
//! published reference values.

/// A 64-bit SplitMix generator. Not for cryptography.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`0` when `n` is 0), without modulo bias:
    /// Lemire's multiply-and-reject method.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // (2^64 - n) mod n: products landing below this would be over-represented.
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// A uniform index into a collection of `len` items.
    pub fn index(&mut self, len: usize) -> usize {
        // usize fits in u64 on every supported target, and the result is below len.
        self.below(len as u64) as usize
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn outputs_match_the_reference_implementation() {
        // Reference outputs of splitmix64.c for seed 1234567.
        let mut rng = SplitMix64::new(1_234_567);
        let first: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    #[test]
    fn derived_draws_are_pinned_too() {
        // `below` and `shuffle` are part of the stored contract as well.
        let mut rng = SplitMix64::new(42);
        let draws: Vec<u64> = (0..8).map(|_| rng.below(10)).collect();
        let mut deck = [0, 1, 2, 3, 4, 5];
        rng.shuffle(&mut deck);
        // From an independent transcription of the algorithm (Python).
        assert_eq!(draws, [7, 1, 2, 3, 0, 8, 2, 8]);
        assert_eq!(deck, [4, 5, 1, 0, 3, 2]);
    }

    proptest! {
        #[test]
        fn below_stays_in_range(seed: u64, n in 1u64..u64::MAX) {
            let mut rng = SplitMix64::new(seed);
            for _ in 0..8 {
                prop_assert!(rng.below(n) < n);
            }
        }

        #[test]
        fn shuffle_is_a_permutation(seed: u64, len in 0usize..40) {
            let mut items: Vec<usize> = (0..len).collect();
            SplitMix64::new(seed).shuffle(&mut items);
            items.sort_unstable();
            prop_assert_eq!(items, (0..len).collect::<Vec<_>>());
        }
    }

    #[test]
    fn small_ranges_are_roughly_uniform() {
        let mut rng = SplitMix64::new(7);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[rng.index(6)] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
