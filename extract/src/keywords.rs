//! Keywords and word tokens of a page's main text: jieba's TF-IDF for
//! Chinese, term frequency over a stop-word list otherwise.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use tokens::Tokens;

/// Number of keywords extracted per page.
pub const KEYWORD_COUNT: usize = 10;

/// At most this many characters of body text go to keyword extraction.
const KEYWORD_TEXT_CHARS: usize = 50_000;

/// Small English stop-word list for term-frequency keywords.
const STOP_WORDS: [&str; 119] = [
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "have", "him", "his", "how", "its", "may", "new", "now", "old",
    "see", "two", "way", "who", "did", "get", "got", "let", "say", "says", "said", "she", "too",
    "use", "that", "with", "this", "from", "they", "will", "would", "there", "their", "what",
    "about", "which", "when", "make", "like", "time", "just", "know", "take", "into", "year",
    "your", "some", "could", "them", "than", "then", "look", "only", "come", "over", "also",
    "back", "after", "first", "well", "even", "want", "because", "these", "give", "most", "were",
    "been", "more", "where", "here", "while", "such", "each", "other", "those", "very", "should",
    "being", "does", "through", "before", "between", "under", "again", "against", "both", "same",
    "during", "without", "within", "upon", "yet", "per", "via", "off", "own", "why", "yes", "http",
    "https", "www", "com",
];

static STOP_WORD_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.into_iter().collect());

/// Keywords ranked by jieba's TF-IDF: the first [`KEYWORD_COUNT`] that are not numbers.
/// More are asked for than needed: numbers ("17", "2023") are dropped here.
const TFIDF_CANDIDATES: usize = KEYWORD_COUNT * 3;

/// The first [`KEYWORD_COUNT`] of jieba's TF-IDF ranking that are not numbers.
fn without_numbers(ranked: Vec<String>) -> Vec<String> {
    ranked
        .into_iter()
        .filter(|k| {
            !k.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_punctuation())
        })
        .take(KEYWORD_COUNT)
        .collect()
}

/// The keywords and the word tokens of a page's main text, from one segmentation of it:
/// for Chinese, jieba's cut gives both (`tokens::Tokens::with_keywords`); otherwise the
/// tokens and the term-frequency keywords are separate walks over the words.
pub fn keywords_and_tokens(text: &str, chinese: bool) -> (Vec<String>, Tokens) {
    if chinese {
        let (tokens, ranked) = Tokens::with_keywords(text, KEYWORD_TEXT_CHARS, TFIDF_CANDIDATES);
        return (without_numbers(ranked), tokens);
    }
    (keywords(text, false), Tokens::new(text))
}

/// Top keywords of `text`: jieba TF-IDF for Chinese (jieba's default IDF table, no HMM),
/// term frequency otherwise.
pub fn keywords(text: &str, chinese: bool) -> Vec<String> {
    if chinese {
        return without_numbers(tokens::tfidf_keywords(
            text,
            KEYWORD_TEXT_CHARS,
            TFIDF_CANDIDATES,
        ));
    }
    let text: String = text.chars().take(KEYWORD_TEXT_CHARS).collect();
    let mut counts: HashMap<String, u64> = HashMap::new();
    for word in text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !STOP_WORD_SET.contains(w.as_str()))
    {
        *counts.entry(word).or_default() += 1;
    }
    let mut ranked: Vec<(String, u64)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
        .into_iter()
        .take(KEYWORD_COUNT)
        .map(|(w, _)| w)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract;
    use crate::tests::url;

    #[test]
    fn language_and_keywords() {
        let zh = extract(
            "<p>短缺药品保供稳价，全力保障临床用药需求。国家卫生健康委表示，短缺药品保供稳价工作取得积极成效，药品供应保障能力不断提升。</p>",
            &url("http://example.com/"),
        );
        assert_eq!(zh.language.as_deref(), Some("zh"));
        assert!(zh.keywords.iter().any(|k| k == "短缺"), "{:?}", zh.keywords);
        let dated = extract(
            "<p>新华社北京11月17日电 2023年短缺药品保供稳价工作会商联动机制17日启动</p>",
            &url("http://example.com/"),
        );
        assert!(
            dated.keywords.iter().all(|k| k.parse::<u64>().is_err()),
            "{:?}",
            dated.keywords
        );
        assert!(zh.keywords.len() <= KEYWORD_COUNT);
        let en = extract(
            "<p>Forecasters expect the storm to clear before Thanksgiving; the storm brought snow, and forecasters warned travelers.</p>",
            &url("http://example.com/"),
        );
        assert_eq!(en.language.as_deref(), Some("en"));
        assert_eq!(en.keywords.first().map(String::as_str), Some("forecasters"));
        assert!(!en.keywords.iter().any(|k| k == "the"));
        let fr = extract(
            r#"<html lang="fr-FR"><p>Bonjour à tous</p></html>"#,
            &url("http://example.com/"),
        );
        assert_eq!(fr.language.as_deref(), Some("fr"));
    }
}
