//! What counts as a name: a media's or an author's value (trimmed, not too
//! long, not a generic word), a Chinese person's names, an outlet's forms (its
//! Chinese part, the same outlet under a longer name, a domain, a link
//! shortener) and a plain account name. Every media and author rule shares
//! these.

use crate::fold::fold;
use crate::lines::{is_han, squash};

use super::words::{IP_PLACES, LINK_SHORTENERS, NAME_EXTENSIONS, NOT_NAMES, NOT_OUTLETS};

/// A media or author value longer than this (characters) is not one.
const MAX_NAME_CHARS: usize = 60;

/// A usable name: trimmed, without a `来源：` label, not a URL, not too long.
pub fn name_value(s: &str) -> Option<String> {
    // `· 来自雪球`: the label after a leading separator.
    let t = squash(s)
        .trim_start_matches(['|', '-', '–', '—', '·', '⋅', ' '])
        .to_string();
    let f = fold(&t);
    let t = [
        "来源于",
        "来自于",
        "来源",
        "来自",
        "稿源",
        "出处",
        "Source",
        "source",
    ]
    .iter()
    .find_map(|l| f.starts_with(l).then(|| &t[l.len()..]))
    .map(|rest| rest.trim_start_matches([':', '：', ' ']).to_string())
    .unwrap_or(t);
    let t = t.trim_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '|' | '-' | '–' | '—' | '·' | '⋅' | ',' | '，' | '：' | ':'
            )
    });
    let n = t.chars().count();
    let url_like = t.starts_with("http") || t.starts_with("www.") || t.contains("://");
    ((1..=MAX_NAME_CHARS).contains(&n) && !url_like).then(|| t.to_string())
}

/// Whether every name of a `、`-joined list is a Chinese person's length,
/// 2-4 characters (not a sentence's run, `记者从…获悉`).
pub(super) fn person_names(names: &str) -> bool {
    names
        .split('、')
        .all(|n| (2..=4).contains(&n.chars().count()))
}

/// The names of a matched Chinese byline (`余毅菁 向雪妮`, `李国利、黄一宸`),
/// up to the first role word; joined by `、`.
pub(super) fn chinese_names(matched: &str) -> Option<String> {
    // `本报记者 张 晨`: a name of two characters spaced to the width of
    // three (newspapers align their bylines so) is one name.
    let mut tokens: Vec<String> = Vec::new();
    let mut single_open = false;
    for t in matched
        .split(|c: char| c == '、' || c.is_whitespace())
        .filter(|n| !n.is_empty())
    {
        let single = t.chars().count() == 1 && t.chars().all(is_han);
        match tokens.last_mut() {
            Some(last) if single && single_open => {
                last.push_str(t);
                single_open = false;
            }
            _ => {
                tokens.push(t.to_string());
                single_open = single;
            }
        }
    }
    let names: Vec<&str> = tokens
        .iter()
        .map(String::as_str)
        // `采写：南都记者 余毅菁`, `红星新闻记者 王渝 实习记者 刘可心`: a
        // reporter's title before each name.
        .filter(|n| !fold(n).ends_with("记者"))
        // A role, or an outlet's role (`每经编辑 陈梦妤`), ends the names.
        .take_while(|n| {
            let f = fold(n);
            !NOT_NAMES.iter().any(|w| f.starts_with(w) || f.ends_with(w))
        })
        .collect();
    // Joined as Chinese lists them (`李国利、黄一宸`), however the page spaced them.
    (!names.is_empty()).then(|| names.join("、"))
}

/// `三立新聞網 SETN.COM`, `報導者 The Reporter`, `澎湃新闻-The Paper`: the
/// Chinese name before a Latin one (letters, and the digits, dots and
/// spaces of a name or a domain), when it has two characters at least.
pub fn chinese_part(name: &str) -> Option<String> {
    let cut = name.rfind(|c: char| is_han(c) || matches!(c, '》' | '）' | ')'))?;
    let end = cut + name[cut..].chars().next()?.len_utf8();
    let (head, tail) = name.split_at(end);
    let tail = tail.trim();
    let latin = tail.trim_start_matches(['-', '|', '｜', '·', ' ', '–', '—']);
    let separated = tail.len() > latin.len() || name[end..].starts_with(char::is_whitespace);
    let letters = latin.chars().filter(char::is_ascii_alphabetic).count();
    let plain = latin
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | '\'' | '&' | '-'));
    (separated && letters >= 2 && plain && head.chars().filter(|&c| is_han(c)).count() >= 2)
        .then(|| head.trim().to_string())
}

/// Whether `name` and the site's own name `site` (its `og:site_name`) are one
/// outlet's name in two forms: the same but for the case, a `The` before it,
/// or one of [`NAME_EXTENSIONS`] after it (`Al Jazeera News` for `Al
/// Jazeera`). The site's form is the one to keep: the outlet names itself so
/// on every page, where a credit line varies.
pub fn same_outlet(name: &str, site: &str) -> bool {
    let norm = |s: &str| {
        let s = squash(s).to_lowercase();
        let s = s.trim_matches(|c: char| c.is_whitespace() || c == '.');
        let s = s.strip_prefix("the ").unwrap_or(s);
        s.replace(['.', '-', '_'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (a, b) = (norm(name), norm(site));
    if a.is_empty() || b.is_empty() || a.chars().chain(b.chars()).any(is_han) {
        return false;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short == long {
        return true;
    }
    long.strip_prefix(&short)
        .and_then(|rest| rest.strip_prefix(' '))
        .is_some_and(|rest| NAME_EXTENSIONS.contains(&rest))
}

/// `dw.com`, `www.example.co.uk`: a host name, not an outlet's name.
pub fn domain_like(name: &str) -> bool {
    let labels: Vec<&str> = name.split('.').collect();
    labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        && labels.last().is_some_and(|t| {
            (2..=6).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_lowercase())
        })
}

/// Whether `name` is a link shortener's host ([`LINK_SHORTENERS`]).
pub fn link_shortener(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    let n = n.strip_prefix("www.").unwrap_or(&n);
    LINK_SHORTENERS.contains(&n)
}

/// A Chinese outlet's name as a dateline or a reporter's title prints it:
/// Chinese characters and `·`, with ASCII letters and digits beside at least
/// two of them (`21世纪经济报道`, `IT之家`; not `2楼`).
pub(super) fn outlet_like(name: &str) -> bool {
    name.chars().filter(|&c| is_han(c)).count() >= 2
        && name
            .chars()
            .all(|c| is_han(c) || c == '·' || c.is_ascii_alphanumeric())
}

/// `北京`, `IP属地:浙江` beside a post's time: the IP location platforms show,
/// no outlet or account.
pub(super) fn ip_place(word: &str) -> bool {
    let f = fold(word.trim());
    IP_PLACES.contains(
        &f.trim_start_matches("IP属地")
            .trim_start_matches([':', '：']),
    )
}

/// Whether `name` can be an account's name: 2-20 characters, no label, no
/// digits, no word of a page's toolbar (`阅读`, `原创`), no role (`记者`).
pub(super) fn plain_account(name: &str) -> bool {
    let n = name.chars().count();
    let folded = fold(name);
    (2..=20).contains(&n)
        && !ip_place(name)
        && !name.contains(['：', ':', '|', '｜'])
        && !name.chars().any(|c| c.is_ascii_digit())
        && !folded.contains("记者")
        && !NOT_OUTLETS
            .iter()
            .chain(NOT_NAMES.iter())
            .any(|w| folded.starts_with(w) || folded.ends_with(w))
}
