//! Word tokens of harvest, shared by the stages that read a page's words.
//!
//! - [`jieba`]: the process's one jieba segmenter (default dictionary, ~100 ms and tens of MB
//!   to load): the crawler's keywords and the tokenizer below use this one instance.
//! - The tokenizer ([`for_each_token`], [`tokenize`]): jieba (HMM on) for runs of Chinese
//!   characters, Unicode word segmentation (UAX #29) for everything else. Every token is
//!   lowercased; tokens made only of punctuation, symbols or digits are dropped, as are stop
//!   words (short English and Chinese lists shipped in `stopwords/`) and non-Chinese tokens of
//!   a single character (the `s` of `it's`, stray letters). The topic classifier and the
//!   near-duplicate fingerprint read these tokens.
//! - [`Tokens`]: the tokens of a page's text from one pass, kept by line, so that every
//!   consumer of one page (classifier, fingerprint) reads them instead of segmenting the text
//!   again.
//!
//! The stage crates depend on this crate, never on each other: the crawler computes a page's
//! [`Tokens`] with its extraction, and the binary hands them to the classifier.

mod keywords;

use std::collections::HashSet;
use std::sync::LazyLock;

use jieba_rs::Jieba;
use unicode_segmentation::UnicodeSegmentation;

pub use keywords::tfidf_keywords;
use keywords::TermCounts;

/// English stop words, one per line.
const STOP_WORDS_EN: &str = include_str!("../stopwords/en.txt");
/// Chinese stop words, one per line.
const STOP_WORDS_ZH: &str = include_str!("../stopwords/zh.txt");
/// jieba's HMM for words missing from its dictionary (names, new words).
const JIEBA_HMM: bool = true;

/// The jieba segmenter: loading its dictionary takes ~100 ms, so it is built once and shared.
static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// The process's jieba segmenter with its default dictionary, loaded on first use. Every
/// user of jieba in harvest segments with this instance, so one dictionary is loaded.
pub fn jieba() -> &'static Jieba {
    &JIEBA
}

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
    keywords::warm_up();
}

/// True for characters that jieba should segment (CJK unified ideographs and extensions).
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF      // extension A
        | 0x4E00..=0x9FFF    // unified ideographs
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2EBEF  // extensions B-F
        | 0x30000..=0x323AF) // extensions G-H
}

/// True for the characters jieba itself segments as Chinese (its CJK ranges). They differ
/// from [`is_han`] only outside the Basic Multilingual Plane.
fn is_jieba_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2EBEF
        | 0x2F800..=0x2FA1F)
}

/// True if `word` is a stop word (expects a lowercased word).
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(word)
}

/// Calls `f` once per kept token of `text`, in order. The token is lowercased; `f` may not
/// keep the borrow.
pub fn for_each_token(text: &str, f: impl FnMut(&str)) {
    tokens_of(
        text,
        |run, _, push| {
            for token in JIEBA.cut(run, JIEBA_HMM) {
                push(token.word);
            }
        },
        f,
    );
}

/// The tokenizer's frame: splits `text` into maximal runs of Chinese characters and of other
/// characters, segments the others into Unicode words and a Chinese run with `cut_han(run,
/// its byte offset in text, push)` (which pushes its jieba words, HMM on, in order), and calls
/// `f` with every token lowercased and kept.
fn tokens_of(
    text: &str,
    mut cut_han: impl FnMut(&str, usize, &mut dyn FnMut(&str)),
    mut f: impl FnMut(&str),
) {
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
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let first_han = rest.chars().next().is_some_and(is_han);
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_han(c) != first_han)
            .map_or(rest.len(), |(i, _)| i);
        let run = &rest[..end];
        if first_han {
            cut_han(run, at, &mut |w| emit(w, true));
        } else {
            for word in run.unicode_words() {
                emit(word, false);
            }
        }
        at += end;
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

/// The runs of Chinese characters of `text`, each followed by `\n`, at most `max_chars`
/// characters of them (a run cut at the limit ends there). A search index that lists the
/// pairs of characters side by side in each run (what Elasticsearch's and Solr's CJK bigram
/// analysis index) finds any string of two or more Chinese characters written in the text,
/// whatever the words its sentence is cut into (`比增` in `同比增长`); nothing of the text
/// outside the runs is kept, and no pair spans two runs.
pub fn han_runs(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut kept = 0usize;
    let mut in_run = false;
    for c in text.chars() {
        if is_han(c) {
            if kept == max_chars {
                break;
            }
            out.push(c);
            kept += 1;
            in_run = true;
        } else if in_run {
            out.push('\n');
            in_run = false;
        }
    }
    if in_run {
        out.push('\n');
    }
    out
}

/// Whether every character of `word` but whitespace is Chinese (and there is one).
pub fn is_han_word(word: &str) -> bool {
    let mut any = false;
    for c in word.chars().filter(|c| !c.is_whitespace()) {
        if !is_han(c) {
            return false;
        }
        any = true;
    }
    any
}

/// The kept tokens of `text`, in order.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_owned()));
    out
}

/// The tokens of one text (those of [`for_each_token`]) from one pass, kept line by line
/// (the lines of `str::lines`: split at `\n`, a trailing `\r` dropped), so that every reader
/// of a page's words uses this one segmentation.
///
/// A token never spans lines: `\n` is not a Chinese character, so no jieba run crosses it,
/// and UAX #29 always breaks before and after it. The tokens of a text are therefore those
/// of its lines one after the other: [`Tokens::iter`] gives what [`for_each_token`] over the
/// whole text gives, and [`Tokens::for_each_in_prefix`] what it gives over a prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Every token, one after the other.
    buf: String,
    /// End of each token in `buf`.
    ends: Vec<usize>,
    /// The lines, in order.
    lines: Vec<LineSpan>,
}

/// One line of the text [`Tokens`] were made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LineSpan {
    /// Byte offset of the line in the text.
    start: usize,
    /// Byte offset of its end (before the `\n`).
    end: usize,
    /// Tokens of this line and the lines before it.
    tokens_end: usize,
}

impl Tokens {
    /// Segments `text` once.
    pub fn new(text: &str) -> Tokens {
        let mut t = Tokens::default();
        let base = text.as_ptr() as usize;
        for line in text.lines() {
            for_each_token(line, |w| {
                t.buf.push_str(w);
                t.ends.push(t.buf.len());
            });
            let start = line.as_ptr() as usize - base;
            t.lines.push(LineSpan {
                start,
                end: start + line.len(),
                tokens_end: t.ends.len(),
            });
        }
        t
    }

    /// Segments `text` once for both its tokens and jieba's TF-IDF keywords of its first
    /// `keyword_chars` characters (the `top_k` best, best first: [`tfidf_keywords`]), for
    /// Chinese text.
    ///
    /// Each line is cut by jieba once, without HMM: those are the words jieba's TF-IDF
    /// counts. The tokens come from the same cut: jieba with HMM gives the same words except
    /// where its best route leaves two or more single characters in a row, which it hands to
    /// the HMM (unless the run is itself a dictionary word); those runs alone are cut again
    /// with HMM. A run of Chinese characters that a word of the cut crosses (a dictionary
    /// word with Latin letters or digits: `T恤`, `A股`), and a line with Chinese characters
    /// outside jieba's ranges, is segmented on its own as [`for_each_token`] does.
    ///
    /// The tokens equal [`Tokens::new`]'s: a run's best route is the part of the line's best
    /// route over it, found by the same comparisons. Only where two routes of a run tie to
    /// the last bit of their log-probabilities can the rest of the line tip jieba's choice
    /// differently; the tests compare both on every page of their corpora.
    pub fn with_keywords(text: &str, keyword_chars: usize, top_k: usize) -> (Tokens, Vec<String>) {
        let jieba = jieba();
        let kw_cut = text
            .char_indices()
            .nth(keyword_chars)
            .map_or(text.len(), |(i, _)| i);
        let mut counts = TermCounts::default();
        let mut t = Tokens::default();
        let base = text.as_ptr() as usize;
        for line in text.lines() {
            let start = line.as_ptr() as usize - base;
            let end = start + line.len();
            let words = jieba.cut(line, false);
            if end <= kw_cut {
                for w in &words {
                    counts.add(w.word);
                }
            } else if start < kw_cut {
                for w in jieba.cut(&text[start..kw_cut], false) {
                    counts.add(w.word);
                }
            }
            t.push_line_from_cut(line, &words);
            t.lines.push(LineSpan {
                start,
                end,
                tokens_end: t.ends.len(),
            });
        }
        // `str::lines` drops a `\r` before `\n`; jieba's cut of the whole text makes the
        // pair one word.
        if text[..kw_cut].contains('\r') {
            counts.add_n("\r\n", text[..kw_cut].matches("\r\n").count() as u64);
        }
        (t, counts.top(top_k))
    }

    /// Appends the tokens of `line` from `words`, jieba's cut of it without HMM (see
    /// [`Tokens::with_keywords`]).
    fn push_line_from_cut(&mut self, line: &str, words: &[jieba_rs::Token<'_>]) {
        let jieba = jieba();
        let Tokens { buf, ends, .. } = self;
        let push = |w: &str| {
            buf.push_str(w);
            ends.push(buf.len());
        };
        if line
            .chars()
            .any(|c| c as u32 >= 0x2_0000 && is_han(c) != is_jieba_cjk(c))
        {
            for_each_token(line, push);
            return;
        }
        let mut next = 0; // first word of `words` not yet passed
        tokens_of(
            line,
            |run, s, push| {
                let e = s + run.len();
                while next < words.len() && words[next].byte_end <= s {
                    next += 1;
                }
                let from = next;
                while next < words.len() && words[next].byte_end <= e {
                    next += 1;
                }
                let inside = &words[from..next];
                let whole = inside.first().is_some_and(|w| w.byte_start == s)
                    && inside.last().is_some_and(|w| w.byte_end == e);
                if !whole {
                    for token in jieba.cut(run, JIEBA_HMM) {
                        push(token.word);
                    }
                    return;
                }
                let mut i = 0;
                while i < inside.len() {
                    let single = |w: &jieba_rs::Token<'_>| w.end - w.start == 1;
                    if !single(&inside[i]) {
                        push(inside[i].word);
                        i += 1;
                        continue;
                    }
                    let mut j = i + 1;
                    while j < inside.len() && single(&inside[j]) {
                        j += 1;
                    }
                    if j - i == 1 {
                        push(inside[i].word);
                    } else {
                        let chars = &line[inside[i].byte_start..inside[j - 1].byte_end];
                        for token in jieba.cut(chars, JIEBA_HMM) {
                            push(token.word);
                        }
                    }
                    i = j;
                }
            },
            push,
        );
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when the text has no token.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Tokens `from..to` (indices).
    fn range(&self, from: usize, to: usize) -> TokenIter<'_> {
        TokenIter {
            buf: &self.buf,
            ends: &self.ends[from..to],
            start: if from == 0 { 0 } else { self.ends[from - 1] },
        }
    }

    /// Every token, in order.
    pub fn iter(&self) -> TokenIter<'_> {
        self.range(0, self.ends.len())
    }

    /// The tokens of each line, line by line (a line without tokens gives an empty
    /// iterator).
    pub fn lines(&self) -> impl Iterator<Item = TokenIter<'_>> + '_ {
        let mut from = 0;
        self.lines.iter().map(move |l| {
            let it = self.range(from, l.tokens_end);
            from = l.tokens_end;
            it
        })
    }

    /// Calls `f` with the tokens [`for_each_token`] gives for the first `max_chars`
    /// characters of `text`, the text these tokens were made of: the kept tokens of the lines
    /// before the cut, and the line the cut falls in segmented again up to the cut.
    pub fn for_each_in_prefix(&self, text: &str, max_chars: usize, mut f: impl FnMut(&str)) {
        let cut = text
            .char_indices()
            .nth(max_chars)
            .map_or(text.len(), |(i, _)| i);
        let mut from = 0;
        for l in &self.lines {
            if l.end <= cut {
                self.range(from, l.tokens_end).for_each(&mut f);
            } else {
                if l.start < cut {
                    for_each_token(&text[l.start..cut], &mut f);
                }
                return;
            }
            from = l.tokens_end;
        }
    }
}

/// Tokens of a [`Tokens`], in order.
#[derive(Debug, Clone)]
pub struct TokenIter<'a> {
    buf: &'a str,
    ends: &'a [usize],
    start: usize,
}

impl<'a> Iterator for TokenIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (&end, rest) = self.ends.split_first()?;
        let token = &self.buf[self.start..end];
        self.start = end;
        self.ends = rest;
        Some(token)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.ends.len(), Some(self.ends.len()))
    }
}

impl ExactSizeIterator for TokenIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn han_runs_keep_runs_of_chinese_characters_apart() {
        assert_eq!(
            han_runs("外交部发言人 said 同比增长5%。", 100),
            "外交部发言人\n同比增长\n"
        );
        assert_eq!(han_runs("no chinese", 100), "");
        assert_eq!(
            han_runs("一二三，四五", 4),
            "一二三\n四\n",
            "at most 4 characters"
        );
        assert!(is_han_word("中美 贸易"));
        assert!(!is_han_word("华为p60"));
        assert!(!is_han_word("  "));
    }

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
    fn tokens_by_line_are_the_tokens_of_the_text() {
        let text =
            "苹果发布iPhone 15，股价上涨\nThe Stock rose.\r\n\n中国女排在世界杯上战胜了巴西队 it's";
        let t = Tokens::new(text);
        assert_eq!(t.iter().collect::<Vec<_>>(), tokenize(text));
        let lines: Vec<Vec<&str>> = t.lines().map(Iterator::collect).collect();
        let want: Vec<Vec<String>> = text.lines().map(tokenize).collect();
        assert_eq!(lines, want);
        for n in 0..=text.chars().count() + 1 {
            let prefix: String = text.chars().take(n).collect();
            let mut got = Vec::new();
            t.for_each_in_prefix(text, n, |w| got.push(w.to_owned()));
            assert_eq!(got, tokenize(&prefix), "prefix of {n} chars");
        }
        assert!(Tokens::new("").is_empty());
        assert_eq!(Tokens::new(" ,. \n").lines().count(), 1);
    }

    /// jieba's own TF-IDF, the reference of [`tfidf_keywords`].
    fn jieba_keywords(text: &str, max_chars: usize, top_k: usize) -> Vec<String> {
        use jieba_rs::KeywordExtract;
        static TFIDF: LazyLock<jieba_rs::TfIdf> = LazyLock::new(jieba_rs::TfIdf::default);
        let prefix: String = text.chars().take(max_chars).collect();
        TFIDF
            .extract_keywords(jieba(), &prefix, top_k, Vec::new())
            .into_iter()
            .map(|k| k.keyword)
            .collect()
    }

    #[test]
    fn one_cut_gives_the_tokens_and_jiebas_tfidf_keywords() {
        let texts = [
            "中国女排在世界杯上战胜了巴西队，中国女排再次夺冠。",
            // dictionary words with Latin letters cross runs: T恤, A股, 卡拉OK
            "他穿着T恤去看A股行情，晚上唱卡拉OK。苹果发布iPhone15手机，股价上涨3.5%！",
            // names and new words the HMM joins; numbers; English
            "京华大酒店的张尧经理吃了一只北京烤鸭。1998年1月5日，The Stock rose.",
            "第一行\r\n第二行\r\n\r\n第三行 it's OK\n",
            "",
            "  ,.!?。，、 —— 123 4.5 ",
        ];
        for text in texts {
            for chars in [3, 20, 1_000] {
                for top_k in [0, 1, 5, 30] {
                    let (t, kw) = Tokens::with_keywords(text, chars, top_k);
                    assert_eq!(t, Tokens::new(text), "{text}");
                    assert_eq!(
                        kw,
                        jieba_keywords(text, chars, top_k),
                        "{text} {chars} {top_k}"
                    );
                    assert_eq!(kw, tfidf_keywords(text, chars, top_k), "{text}");
                }
            }
        }
    }

    #[test]
    fn keyword_stop_words_are_jiebas() {
        let ours: std::collections::BTreeSet<String> =
            keywords::STOP_WORDS.iter().map(|w| w.to_string()).collect();
        assert_eq!(ours, *jieba_rs::DEFAULT_STOP_WORDS);
    }

    #[test]
    fn empty_and_punctuation_only_give_no_tokens() {
        assert!(tokenize("").is_empty());
        assert!(tokenize("  ,.!?。，、 —— 123 4.5 ").is_empty());
    }
}
