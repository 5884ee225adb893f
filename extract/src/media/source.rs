//! The media a page labels or marks as its source: a source label in the text
//! (`来源：新华社`, `Source: AP`) with the credit line it may end, a data
//! source's label, an edition line, a source element.

use crate::fold::fold;
use crate::lines::is_han;

use super::names::{domain_like, link_shortener, name_value};
use super::patterns::{RE_EDITION, RE_MEDIA_LABEL, RE_SENTENCE_END};
use super::words::{GENERIC_SOURCES, SENTENCE_OPENERS};

/// `资料来源：环境部` alone on a short line (a release's issuing office in its
/// header; below a chart it credits the data).
pub fn data_source_media<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    lines.into_iter().find_map(|l| {
        let l = l.trim();
        let f = fold(l);
        let rest = f.strip_prefix("资料来源")?;
        let v = l[l.len() - rest.len()..].trim_start_matches([':', '：', ' ', '\u{3000}']);
        let n = v.chars().count();
        ((2..=20).contains(&n) && v.chars().all(|c| is_han(c) || c == '·')).then(|| v.to_string())
    })
}

/// The newspaper an edition line ([`RE_EDITION`]) among `lines` names.
pub fn edition_media<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    lines
        .into_iter()
        .find_map(|l| name_value(RE_EDITION.captures(l)?.get(1)?.as_str()))
}

/// The labelled media in `lines`, first found.
pub fn labelled_media<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    /// What a source label names when these words come before it: a picture,
    /// a video, data; not the article.
    const NOT_ARTICLE: [&str; 12] = [
        "图片", "图", "图像", "影像", "照片", "视频", "数据", "资料", "photo", "image", "video",
        "data",
    ];
    lines.into_iter().find_map(|l| {
        let f = fold(l);
        RE_MEDIA_LABEL.captures_iter(&f).find_map(|c| {
            let whole = c.get(0)?;
            let before = f[..whole.start()].trim_end().to_lowercase();
            if NOT_ARTICLE.iter().any(|w| before.ends_with(w)) {
                return None;
            }
            // `… for two years. Source: Supplied`: a credit after a caption's
            // sentence, not the article's source.
            if whole.as_str().is_ascii() && before.ends_with(['.', '!', '?']) {
                return None;
            }
            let name = c.get(1)?;
            let after = &f[name.end()..];
            // `…, says an analyst. Source: Gov.UK However, Sir James added
            // …`: in running prose (a long line with a sentence before the
            // label; a portal's long toolbar line has none) a label credits
            // the article only where its clause closes the line (`… the
            // game. Source: AFP news agency`); one inside the prose credits
            // a figure or a list the text quotes.
            if l.chars().count() > MAX_CREDIT_LINE_CHARS
                && RE_SENTENCE_END.is_match(&f[..whole.start()])
                && !closes_line(after)
            {
                return None;
            }
            // `SOURCE: bit.ly/2lLuWYN`: a link, not an outlet (`《求是》2024/23`
            // is an issue's number).
            if after.starts_with('/') && domain_like(name.as_str()) {
                return None;
            }
            let folded = name.as_str();
            let v = latin_name_end(&l[name.range()]);
            // `来源：2023-11-17`, `来源：网络` are not outlets.
            if v.chars().all(|c| c.is_ascii_digit() || c == '-')
                || matches!(folded, "网络" | "互联网" | "网友" | "未知")
                || GENERIC_SOURCES.contains(&v.to_lowercase().as_str())
                || link_shortener(v)
            {
                return None;
            }
            name_value(&periodical_name(v).unwrap_or_else(|| v.to_string()))
        })
    })
}

/// A line longer than this (characters) is running prose, not a byline or a
/// credit line (as the publish time's byline limit, `time::MAX_BYLINE_CHARS`).
pub(super) const MAX_CREDIT_LINE_CHARS: usize = 160;

/// Most characters a credit's clause may run on after its name to the end of
/// its line (`AFP news agency`, `Al Jazeera and news agencies`).
const MAX_CREDIT_TAIL_CHARS: usize = 40;

/// Whether what follows a credit's name, `after`, ends its line within the
/// credit's clause: a few words, no sentence after them.
fn closes_line(after: &str) -> bool {
    let tail = after.trim();
    let sentence_break = tail
        .char_indices()
        .any(|(i, c)| matches!(c, '.' | '!' | '?' | '。' | '！' | '？') && i + 1 < tail.len());
    tail.chars().count() <= MAX_CREDIT_TAIL_CHARS && !sentence_break
}

/// A labelled Latin name up to the first word of the next sentence (the
/// name's first word is kept: `The Guardian`).
pub(super) fn latin_name_end(name: &str) -> &str {
    let mut offset = 0;
    for (k, w) in name.split([' ', '\t']).enumerate() {
        if k > 0 && SENTENCE_OPENERS.contains(&w) {
            return name[..offset].trim_end();
        }
        offset += w.len() + 1;
    }
    name
}

/// `《求是》2024/23`, `《瞭望》2024年第47期`, `《人民日报》`: a periodical's name in
/// title brackets with nothing after it but an issue's number, the name alone.
fn periodical_name(v: &str) -> Option<String> {
    let rest = v.trim().strip_prefix('《')?;
    let (name, issue) = rest.split_once('》')?;
    let issue_only = issue
        .chars()
        .all(|c| c.is_ascii_digit() || c.is_whitespace() || "年第期/-.()（）".contains(c));
    (issue_only && !name.trim().is_empty()).then(|| name.trim().to_string())
}

/// The media named by a source element (`<a class="source">中国证券报</a>`,
/// `<span class="source">来源：X</span>`): short text that is not a date.
pub fn source_element_media(texts: impl IntoIterator<Item = String>) -> Option<String> {
    let names: Vec<String> = texts
        .into_iter()
        .take(20)
        .filter_map(source_element_name)
        .collect();
    // Source elements naming three outlets or more: a feed of other items
    // (`<a class="source">振王视史 ⋅</a>` under each related story).
    let mut distinct: Vec<&String> = names.iter().collect();
    distinct.sort();
    distinct.dedup();
    if distinct.len() > 2 {
        return None;
    }
    names.into_iter().next()
}

/// The name in one source element's text, if it is one.
fn source_element_name(t: String) -> Option<String> {
    // `<span class="source-prefix">by:</span>`: a label, not a name.
    if t.trim_end().ends_with([':', '：']) {
        return None;
    }
    let v = name_value(&t)?;
    // `CNNMoney (New York)`: the outlet without its dateline's place.
    let v = match v
        .strip_suffix([')', '）'])
        .and_then(|r| r.rfind(['(', '（']))
    {
        Some(i) if !v[..i].trim().is_empty() => v[..i].trim().to_string(),
        _ => v,
    };
    let n = v.chars().count();
    let datelike = v.chars().filter(|c| c.is_ascii_digit()).count() >= 4;
    let generic = GENERIC_SOURCES.contains(&v.to_lowercase().as_str());
    ((2..=30).contains(&n) && !datelike && !generic && !v.contains(['：', ':'])).then_some(v)
}
