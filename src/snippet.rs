//! Snippets of text hits: a short passage of a page's text around the words a text query
//! matched, those words marked. The text index keeps no text: the passage is cut from the
//! page's archived response, extracted again as the crawl extracted it (its article text,
//! else its body text).

use anyhow::Result;
use indexer::{PageRecord, TextQuery};
use rayon::prelude::*;

/// Characters of a snippet (about two lines).
pub const SNIPPET_CHARS: usize = 160;
/// Characters shown before the first marked word.
const LEAD_CHARS: usize = 30;

/// One run of a snippet's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub text: String,
    /// A word of the query.
    pub marked: bool,
}

/// The snippet of each page (`None` where the record cannot be read or no word is found in
/// its text), read in parallel; `page_text` reads a page's archived response as text.
pub fn snippets<F>(pages: &[&PageRecord], q: &TextQuery, page_text: F) -> Vec<Option<Vec<Piece>>>
where
    F: Fn(&PageRecord) -> Result<String> + Sync,
{
    let words = query_words(q);
    pages
        .par_iter()
        .map(|p| page_snippet(p, &words, &page_text).ok().flatten())
        .collect()
}

fn page_snippet<F>(page: &PageRecord, words: &[String], page_text: &F) -> Result<Option<Vec<Piece>>>
where
    F: Fn(&PageRecord) -> Result<String>,
{
    let html = page_text(page)?;
    let url = url::Url::parse(&page.url)?;
    let x = extract::extract(&html, &url);
    Ok(snippet_of(x.main_text(), words, SNIPPET_CHARS)
        .or_else(|| snippet_of(&page.title, words, SNIPPET_CHARS)))
}

/// The strings a snippet marks: each word the query looks for (not those it excludes) as
/// written: a Chinese word or phrase as its characters, the words of another phrase one by
/// one (stop words and punctuation may stand between them). Each once, longest first (where
/// two overlap, the longer is marked).
pub fn query_words(q: &TextQuery) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for term in q.wanted() {
        let words = match &term.han {
            Some(chars) => vec![chars.clone()],
            None => term.tokens.clone(),
        };
        for w in words {
            if !w.is_empty() && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out.sort_by_key(|w| std::cmp::Reverse(w.len()));
    out
}

/// The passage of `text` of about `width` characters that holds the most distinct `words`
/// (lowercase tokens), with every occurrence marked; `None` when none occurs.
pub fn snippet_of(text: &str, words: &[String], width: usize) -> Option<Vec<Piece>> {
    // Case-insensitive search where lowercasing keeps byte offsets (every script but a few
    // letters, e.g. Turkish İ); else as written.
    let lower = text.to_lowercase();
    let hay = if lower.len() == text.len() {
        lower.as_str()
    } else {
        text
    };
    let mut hits: Vec<(usize, usize, usize)> = Vec::new(); // start, end, word index
    for (wi, w) in words.iter().enumerate() {
        if w.is_empty() {
            continue;
        }
        for (at, _) in hay.match_indices(w.as_str()) {
            if !hits.iter().any(|&(s, e, _)| at < e && s < at + w.len()) {
                hits.push((at, at + w.len(), wi));
            }
        }
    }
    if hits.is_empty() {
        return None;
    }
    hits.sort_unstable();
    // The window starting at a hit that covers the most distinct words.
    let char_end = |from: usize, chars: usize| {
        text[from..]
            .char_indices()
            .nth(chars)
            .map_or(text.len(), |(i, _)| from + i)
    };
    let mut best = (0usize, 0usize);
    for (i, &(s, _, _)) in hits.iter().enumerate() {
        let end = char_end(s, width);
        let mut seen: Vec<usize> = hits[i..]
            .iter()
            .take_while(|h| h.1 <= end)
            .map(|h| h.2)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() > best.1 {
            best = (i, seen.len());
        }
    }
    let first = hits[best.0].0;
    let lead_start = text[..first]
        .char_indices()
        .rev()
        .nth(LEAD_CHARS.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    let end = char_end(lead_start, width);
    let mut pieces = Vec::new();
    let mut at = lead_start;
    let plain = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if lead_start > 0 {
        pieces.push(Piece {
            text: "…".into(),
            marked: false,
        });
    }
    for &(s, e, _) in hits.iter().filter(|h| h.0 >= lead_start && h.1 <= end) {
        if s > at {
            pieces.push(Piece {
                text: plain(&text[at..s]),
                marked: false,
            });
        }
        pieces.push(Piece {
            text: text[s..e].to_owned(),
            marked: true,
        });
        at = e;
    }
    if end > at {
        pieces.push(Piece {
            text: plain(&text[at..end]),
            marked: false,
        });
    }
    if end < text.len() {
        pieces.push(Piece {
            text: "…".into(),
            marked: false,
        });
    }
    Some(pieces)
}

/// A snippet as HTML: text escaped, the query's words in `<mark>`.
pub fn to_html(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for p in pieces {
        let escaped = p
            .text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;");
        if p.marked {
            out.push_str("<mark>");
            out.push_str(&escaped);
            out.push_str("</mark>");
        } else {
            out.push_str(&escaped);
        }
    }
    out
}

/// A snippet for a terminal: the query's words in «».
pub fn to_plain(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| {
            if p.marked {
                format!("«{}»", p.text)
            } else {
                p.text.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_words_in_the_densest_passage() {
        let text = format!(
            "{} Trade talks began. {} The trade war and its tariffs <hurt> farmers. {}",
            "x ".repeat(200),
            "y ".repeat(100),
            "z ".repeat(200)
        );
        let words = vec![
            "tariffs".to_string(),
            "trade".to_string(),
            "war".to_string(),
        ];
        let s = snippet_of(&text, &words, 80).expect("snippet");
        let marked: Vec<&str> = s
            .iter()
            .filter(|p| p.marked)
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(marked, ["trade", "war", "tariffs"]);
        let html = to_html(&s);
        assert!(html.contains("<mark>tariffs</mark>"));
        assert!(html.contains("&lt;hurt&gt;"));
        assert!(html.starts_with('…') && html.ends_with('…'));
        assert!(to_plain(&s).contains("«war»"));
        assert!(snippet_of("nothing here", &words, 80).is_none());
    }

    #[test]
    fn chinese_words_are_marked_where_they_stand() {
        let words = vec!["贸易".to_string()];
        let s = snippet_of("中美贸易谈判重启。", &words, 40).expect("snippet");
        assert_eq!(to_plain(&s), "中美«贸易»谈判重启。");
        // A word looked for in two tokens too is marked whole, not by its pieces.
        let q = TextQuery::parse("超链接 \"trade war\" -tariffs").expect("query");
        assert_eq!(query_words(&q), ["超链接", "trade", "war"]);
    }
}
