//! Tokenizer: jieba (HMM on) for runs of Chinese characters, Unicode word segmentation
//! (UAX #29) for everything else.
//!
//! Every token is lowercased; tokens made only of punctuation, symbols or digits are dropped,
//! as are stop words (short English and Chinese lists shipped in `stopwords/`) and non-Chinese
//! tokens of a single character (the `s` of `it's`, stray letters).

use std::collections::HashSet;
use std::sync::LazyLock;

use jieba_rs::Jieba;
use unicode_segmentation::UnicodeSegmentation;

/// English stop words, one per line.
const STOP_WORDS_EN: &str = include_str!("../stopwords/en.txt");
/// Chinese stop words, one per line.
const STOP_WORDS_ZH: &str = include_str!("../stopwords/zh.txt");
/// jieba's HMM for words missing from its dictionary (names, new words).
const JIEBA_HMM: bool = true;

/// The jieba segmenter: loading its dictionary takes ~100 ms, so it is built once and shared.
static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// Both stop-word lists, lowercased.
static STOP_WORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    STOP_WORDS_EN
        .lines()
        .chain(STOP_WORDS_ZH.lines())
        .map(str::trim)
        .filter(|w| !w.is_empty() && !w.starts_with('#'))
        .collect()
});

/// Forces the lazy jieba dictionary and stop-word tables to load now (e.g. at start-up,
/// so the first `predict` is not slow).
pub fn warm_up() {
    LazyLock::force(&JIEBA);
    LazyLock::force(&STOP_WORDS);
}

/// True for characters that jieba should segment (CJK unified ideographs and extensions).
fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF      // extension A
        | 0x4E00..=0x9FFF    // unified ideographs
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2EBEF  // extensions B-F
        | 0x30000..=0x323AF) // extensions G-H
}

/// True if `word` is a stop word (expects a lowercased word).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(word)
}

/// Calls `f` once per kept token of `text`, in order. The token is lowercased; `f` may not
/// keep the borrow.
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut lower = String::new();
    let mut emit = |raw: &str, han: bool| {
        let word = if raw.chars().any(char::is_uppercase) {
            lower.clear();
            lower.extend(raw.chars().flat_map(char::to_lowercase));
            lower.as_str()
        } else {
            raw
        };
        if keep(word, han) {
            f(word);
        }
    };
    let mut rest = text;
    while !rest.is_empty() {
        let first_han = rest.chars().next().is_some_and(is_han);
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_han(c) != first_han)
            .map_or(rest.len(), |(i, _)| i);
        let (run, tail) = rest.split_at(end);
        if first_han {
            for token in JIEBA.cut(run, JIEBA_HMM) {
                emit(token.word, true);
            }
        } else {
            for word in run.unicode_words() {
                emit(word, false);
            }
        }
        rest = tail;
    }
}

/// Whether a lowercased token is kept.
fn keep(word: &str, han: bool) -> bool {
    let mut chars = word.chars();
    if chars.next().is_none() || (!han && chars.next().is_none()) {
        return false; // empty, or a single non-Chinese character
    }
    // Something alphabetic (letters of any script, ideographs) must be present: this drops
    // punctuation, symbols, whitespace and numbers such as `1.95` or `2024`.
    word.chars().any(char::is_alphabetic) && !is_stop_word(word)
}

/// The kept tokens of `text`, in order.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_owned()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_sentence_is_segmented_into_words() {
        // A THUCNews-style headline.
        let tokens = tokenize("中国女排在世界杯上战胜了巴西队");
        // jieba's dictionary knows 中国女排 and 巴西队; the stop words 在 / 上 / 了 are dropped
        assert_eq!(tokens, ["中国女排", "世界杯", "战胜", "巴西队"]);
        // a THUCNews finance headline
        let tokens = tokenize("央行下调存款准备金率0.5个百分点");
        assert!(tokens.contains(&"央行".to_owned()), "{tokens:?}");
        assert!(tokens.contains(&"下调".to_owned()), "{tokens:?}");
        assert!(!tokens.iter().any(|t| t.contains("0.5")), "{tokens:?}");
    }

    #[test]
    fn mixed_chinese_english_and_numbers() {
        let tokens = tokenize("苹果发布iPhone 15，股价上涨3.5%！The Stock rose.");
        assert!(tokens.contains(&"苹果".to_owned()), "{tokens:?}");
        assert!(tokens.contains(&"iphone".to_owned()), "{tokens:?}");
        assert!(tokens.contains(&"股价".to_owned()), "{tokens:?}");
        assert!(tokens.contains(&"stock".to_owned()), "{tokens:?}");
        assert!(tokens.contains(&"rose".to_owned()), "{tokens:?}");
        assert!(
            !tokens.contains(&"the".to_owned()),
            "stop word kept: {tokens:?}"
        );
        assert!(
            !tokens.iter().any(|t| t == "15" || t == "3.5"),
            "{tokens:?}"
        );
        assert!(
            !tokens.iter().any(|t| t == "，" || t == "！" || t == "%"),
            "{tokens:?}"
        );
    }

    #[test]
    fn english_is_lowercased_and_short_tokens_dropped() {
        let tokens = tokenize("NASA's Space Shuttle isn't flying in 1993 - it's grounded.");
        assert_eq!(
            tokens,
            ["nasa's", "space", "shuttle", "isn't", "flying", "it's", "grounded"].map(String::from)
        );
    }

    #[test]
    fn empty_and_punctuation_only_give_no_tokens() {
        assert!(tokenize("").is_empty());
        assert!(tokenize("  ,.!?。，、 —— 123 4.5 ").is_empty());
    }
}
