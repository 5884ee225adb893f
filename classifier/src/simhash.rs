//! 64-bit SimHash of a text (Charikar 2002, as used for web near-duplicates by
//! Manku, Jain and Das Sarma 2007): the text's features are hashed to 64 bits,
//! every bit position sums +1 for a feature whose hash has the bit set and -1
//! otherwise, and the fingerprint keeps the positions whose sum is positive.
//! Texts that share most of their features get fingerprints a few bits apart
//! (Hamming distance), so reposts of an article with a different frame or small
//! edits land within `k` bits of each other while other texts land ~32 bits away.
//!
//! Features are the shingles of 1 and [`SHINGLE_TOKENS`] consecutive tokens
//! of one line of the text, from [`crate::tokenize`] (jieba words for Chinese,
//! Unicode words otherwise, lowercased, stop words dropped), hashed with
//! xxh3-64, each occurrence weighted by the square of its line's token count
//! (2-token shingles at [`SHINGLE_WEIGHT`] of that).
//!
//! Why: a page's text has one line per block (paragraph, heading, menu, list
//! item), and the frame a site puts around an article (menus, bylines,
//! "related news" headlines, share and comment lines) comes as short lines,
//! the article as long ones: the line weights let the article decide the
//! fingerprint. The distance SimHash gives grows with the square root of the
//! share of features that differ (64·θ/π), so at k = 3 a repost may differ in
//! ~1% of its feature weight; a replaced word changes one word feature but two
//! 2-token shingles, so single words carry most of the weight and the
//! shingles keep the word order's say. Measured on the repost set of
//! `tests/neardup.rs` (prototype, 400 pages a language): reposts within 3 bits
//! with 2-token shingles alone, unweighted 3% (en) / 2% (zh); with line
//! weights 74% / 75%; words + shingles at 1/4 with line weights 93% / 86%;
//! other stories stay >= 11 bits apart in every variant.
//!
//! The fingerprint is stored with every page: [`FINGERPRINT_VERSION`] names
//! this recipe and the text of a page it reads, and any change to tokens,
//! shingles, weights, hashing or that text must bump it (stored fingerprints
//! of another version are not comparable).

use xxhash_rust::xxh3::xxh3_64;

use crate::tokenize::{for_each_token, Tokens};

/// Tokens per shingle (besides the single words).
pub const SHINGLE_TOKENS: usize = 2;
/// Weight of a [`SHINGLE_TOKENS`]-token shingle relative to a single word.
pub const SHINGLE_WEIGHT: (i64, i64) = (1, 4);
/// Texts with fewer features (words and shingles) than this get no fingerprint: a handful of
/// features gives an unstable fingerprint (a one-word change flips many bits)
/// and short texts (menus, captions) are not stories.
pub const MIN_SHINGLES: usize = 24;
/// The recipe of [`simhash`] (tokens, shingles, line weights, hashes) and the
/// text of a page ingest fingerprints: 1 = the body text, 2 = the article
/// text when the extractor finds one, else the body text
/// (`harvest::ingest::analyse::fingerprint`). `harvest reindex` fingerprints an
/// archive again.
pub const FINGERPRINT_VERSION: u32 = 2;

/// Hamming distance between two fingerprints.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Accumulates weighted feature hashes into a fingerprint.
#[derive(Debug, Clone)]
pub struct SimHasher {
    sums: [i64; 64],
    features: usize,
    /// The token hashes of the current shingle window (ring).
    window: [u64; SHINGLE_TOKENS],
    tokens: usize,
}

impl Default for SimHasher {
    fn default() -> Self {
        SimHasher {
            sums: [0; 64],
            features: 0,
            window: [0; SHINGLE_TOKENS],
            tokens: 0,
        }
    }
}

/// Mixes the token hashes of one shingle into one feature hash (order matters).
#[inline]
fn shingle_hash(window: &[u64; SHINGLE_TOKENS], newest: usize) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for i in 1..=SHINGLE_TOKENS {
        let t = window[(newest + i) % SHINGLE_TOKENS];
        h = (h ^ t).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    h
}

impl SimHasher {
    /// A hasher with no features yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one feature hash with weight 1.
    #[inline]
    pub fn add_hash(&mut self, h: u64) {
        self.add_weighted(h, 1);
    }

    /// Adds one feature hash with a weight.
    #[inline]
    pub fn add_weighted(&mut self, h: u64, weight: i64) {
        self.features += 1;
        for (bit, s) in self.sums.iter_mut().enumerate() {
            // +weight when the bit is set, -weight otherwise, without a branch.
            *s += ((((h >> bit) & 1) as i64) * 2 - 1) * weight;
        }
    }

    /// Adds the features of one line's tokens (token hashes, in order): each
    /// word weighted by the square of the line's token count, each
    /// [`SHINGLE_TOKENS`]-token shingle by [`SHINGLE_WEIGHT`] of that.
    pub fn add_line(&mut self, token_hashes: &[u64]) {
        let n = token_hashes.len() as i64;
        let weight = n.saturating_mul(n);
        let (num, den) = SHINGLE_WEIGHT;
        for &t in token_hashes {
            self.add_weighted(t, weight.saturating_mul(den));
        }
        for w in token_hashes.windows(SHINGLE_TOKENS) {
            self.window.copy_from_slice(w);
            let h = shingle_hash(&self.window, SHINGLE_TOKENS - 1);
            self.add_weighted(h, weight.saturating_mul(num));
        }
    }

    /// Adds the next token of an unweighted token stream; every window of
    /// [`SHINGLE_TOKENS`] tokens becomes a feature of weight 1.
    pub fn add_token(&mut self, token: &str) {
        let slot = self.tokens % SHINGLE_TOKENS;
        self.window[slot] = xxh3_64(token.as_bytes());
        self.tokens += 1;
        if self.tokens >= SHINGLE_TOKENS {
            let h = shingle_hash(&self.window, slot);
            self.add_hash(h);
        }
    }

    /// Features added so far.
    pub fn features(&self) -> usize {
        self.features
    }

    /// The fingerprint, or `None` below `min_features` features.
    pub fn finish(&self, min_features: usize) -> Option<u64> {
        if self.features < min_features.max(1) {
            return None;
        }
        Some(
            self.sums
                .iter()
                .enumerate()
                .filter(|(_, &s)| s > 0)
                .fold(0u64, |acc, (bit, _)| acc | (1u64 << bit)),
        )
    }
}

/// The SimHash of `text` (lines weighted by their length, see the module
/// docs): `None` when it has fewer than [`MIN_SHINGLES`] shingles.
pub fn simhash(text: &str) -> Option<u64> {
    let mut h = SimHasher::new();
    let mut line: Vec<u64> = Vec::new();
    for l in text.lines() {
        line.clear();
        for_each_token(l, |t| line.push(xxh3_64(t.as_bytes())));
        h.add_line(&line);
    }
    h.finish(MIN_SHINGLES)
}

/// [`simhash`] of a text from its tokens, segmented once (`tokens::Tokens::new` of that
/// text): the same fingerprint, without segmenting the text again.
pub fn simhash_tokens(tokens: &Tokens) -> Option<u64> {
    let mut h = SimHasher::new();
    let mut line: Vec<u64> = Vec::new();
    for l in tokens.lines() {
        line.clear();
        line.extend(l.map(|t| xxh3_64(t.as_bytes())));
        h.add_line(&line);
    }
    h.finish(MIN_SHINGLES)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN: &str = "The European Central Bank kept its main interest rate unchanged on \
        Thursday and said it would continue buying government bonds until the end of the \
        year, as inflation in the euro area remained well below its target of close to two \
        per cent. Its president told reporters in Frankfurt that the recovery was gaining \
        momentum but that risks to the outlook had not disappeared.";

    /// Three paragraphs (lines) of one story, ~120 words.
    fn article() -> String {
        format!(
            "{EN}\nAnalysts had expected the decision, and bond yields across the region \
             barely moved after the announcement, while the euro weakened slightly against \
             the dollar in afternoon trading.\nThe bank will publish new staff projections \
             for growth and inflation at its next meeting in six weeks, when economists \
             expect a debate on how quickly the bond purchases should be reduced next year."
        )
    }

    #[test]
    fn same_text_same_fingerprint_and_case_and_spacing_do_not_matter() {
        let a = simhash(EN).expect("long enough");
        assert_eq!(simhash(EN), Some(a));
        let shouted = EN.to_uppercase().replace(' ', "  \t ");
        assert_eq!(simhash(&shouted), Some(a));
        // Line breaks do matter: they set the weights.
        assert_ne!(simhash(&EN.replace(". ", ".\n")), Some(a));
    }

    #[test]
    fn small_edit_is_near_and_another_text_is_far() {
        let a = simhash(&article()).unwrap();
        let b = simhash(&article().replace("Thursday", "Friday")).unwrap();
        // A short text: one word of ~70 is a few % of the weight (the
        // repost accuracy on real articles is measured in tests/neardup.rs).
        assert!(
            hamming(a, b) <= 12,
            "a one-word edit moved {} bits",
            hamming(a, b)
        );
        assert_ne!(a, b, "an edit changes some features");
        let c = simhash(&format!(
            "This article first appeared on Global Wire.\n{}",
            article()
        ))
        .unwrap();
        assert!(
            hamming(a, c) <= 3,
            "a repost line moved {} bits",
            hamming(a, c)
        );
        let other = simhash(
            "Heavy snow closed the main road over the pass for the third day, and the \
             regional council said ploughs would not reach the villages in the valley before \
             the weekend; schools stayed shut and the power company sent extra crews to repair \
             lines brought down by falling trees near the river.",
        )
        .unwrap();
        assert!(
            hamming(a, other) >= 16,
            "unrelated text only {} bits away",
            hamming(a, other)
        );
    }

    #[test]
    fn chinese_is_fingerprinted_from_jieba_words() {
        let text = "国务院总理李克强十二日主持召开国务院常务会议，部署进一步扩大对外开放，\
                    积极利用外资，会议指出，利用外资是我国对外开放基本国策和开放型经济体制的重要内容，\
                    要进一步放宽服务业和制造业准入限制，营造公平竞争的市场环境。";
        let a = simhash(text).expect("long enough");
        let b = simhash(&format!("（转载自人民网）{text}")).unwrap();
        assert!(
            hamming(a, b) <= 6,
            "a repost line moved {} bits",
            hamming(a, b)
        );
    }

    #[test]
    fn short_frame_lines_weigh_little_against_the_article() {
        let frame_a = "Home World Business Politics Tech Science Sport\nRelated: Heavy snow closes the pass road again\n";
        let frame_b = "Latest Markets Opinion Video Podcasts Newsletters\nMost read: Ferry strike halts island traffic\n";
        let a = simhash(&format!("{frame_a}{EN}")).unwrap();
        let b = simhash(&format!("{frame_b}{EN}")).unwrap();
        assert!(hamming(a, b) <= 3, "frames moved {} bits", hamming(a, b));
        // Unweighted, the same frames move the fingerprint far more.
        let flat = |t: &str| {
            let mut h = SimHasher::new();
            for_each_token(t, |w| h.add_token(w));
            h.finish(1).unwrap()
        };
        let d_flat = hamming(
            flat(&format!("{frame_a}{EN}")),
            flat(&format!("{frame_b}{EN}")),
        );
        assert!(
            d_flat > hamming(a, b),
            "flat {d_flat} vs weighted {}",
            hamming(a, b)
        );
    }

    #[test]
    fn short_or_empty_text_has_no_fingerprint() {
        assert_eq!(simhash(""), None);
        assert_eq!(simhash("Home News Sport Weather"), None);
        assert_eq!(simhash("，。！ 123 4.5"), None);
    }

    #[test]
    fn hasher_sums_bits() {
        let mut h = SimHasher::new();
        h.add_hash(0b1011);
        h.add_hash(0b0011);
        h.add_hash(0b1000);
        assert_eq!(h.features(), 3);
        // bit 0: +1 +1 -1; bit 1: +1 +1 -1; bit 2: -3; bit 3: +1 -1 +1; others -3
        assert_eq!(h.finish(1), Some(0b1011));
        assert_eq!(h.finish(4), None);
        assert_eq!(hamming(0b1011, 0b0110), 3);
        assert_eq!(hamming(u64::MAX, 0), 64);
    }
}
