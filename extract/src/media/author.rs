//! The author the text labels or a value names: author labels and bylines
//! (`作者：`, `（记者 王希）`, `By Jane Doe`), reporters' lines and the outlet
//! they name, an author value cleaned of its labels, and the outlet's name
//! before an author.

use crate::fold::fold;
use crate::lines::{is_han, squash};

use super::agency::agency_dateline_names;
use super::names::{chinese_names, name_value, outlet_like, person_names};
use super::patterns::{
    RE_AGENCY_DATELINE, RE_AUTHOR_LABEL, RE_AUTHOR_REPORTER, RE_BODY_AUTHOR, RE_BRACKETED_REPORTER,
    RE_BYLINE, RE_BY_PREFIX, RE_HANDLE_POSTER, RE_KO_REPORTER, RE_LEAD_REPORTER, RE_NAME_THEN_WEN,
    RE_REPORTER_LINE, RE_REPORTER_OUTLET, RE_REPORTER_PLACE, RE_THREAD_POSTER,
};
use super::words::{NOT_REPORTERS, SELF_OUTLETS, SOFTWARE_CREDITS};

/// The reporter of a [`RE_REPORTER_PLACE`] byline in `original` (`folded` is
/// its [`fold`]).
fn reporter_place(original: &str, folded: &str) -> Option<String> {
    let c = RE_REPORTER_PLACE.captures(folded)?;
    let m = c.get(1).or_else(|| c.get(2))?;
    if NOT_REPORTERS.iter().any(|w| m.as_str().ends_with(w)) {
        return None;
    }
    name_value(&original[m.range()])
}

/// The outlet of the first reporter's byline in `lines` ([`RE_REPORTER_OUTLET`]):
/// a short line holding only the outlet's reporter title and names of 2-4
/// characters, the outlet a name (not `本报`, not a dateline `…电`).
pub fn reporter_outlet<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    lines.into_iter().find_map(|l| {
        let l = l.trim();
        if l.chars().count() > 48 {
            return None;
        }
        let f = fold(l);
        if f.ends_with(['摄', '図']) {
            return None;
        }
        let c = RE_REPORTER_OUTLET.captures(&f)?;
        let outlet = &l[c.get(1)?.range()];
        let folded = c.get(1)?.as_str();
        if SELF_OUTLETS.iter().any(|s| folded.ends_with(s))
            || folded.ends_with('电')
            || !outlet_like(outlet)
        {
            return None;
        }
        let names = chinese_names(&l[c.get(2)?.range()])?;
        person_names(&names).then(|| name_value(outlet))?
    })
}

/// The first line of `lines` that starts with an author label (`作者：余毅菁`,
/// `采写：南都记者 余毅菁 向雪妮`): a byline line anywhere in the article, where
/// a label inside a sentence (`该书作者：`) is not one.
pub fn byline_line_author<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    lines.into_iter().find_map(|l| {
        let l = l.trim_start_matches(|c: char| c.is_whitespace());
        let f = fold(l);
        if let Some(c) = RE_AUTHOR_LABEL
            .captures(&f)
            .filter(|c| c.get(0).is_some_and(|m| m.start() == 0))
        {
            return name_value(&chinese_names(&l[c.get(1)?.range()])?);
        }
        // A photo's credit (`新华社记者 李四 摄`) is no byline.
        let line = l.trim_end();
        if line.chars().count() > 48 || f.trim_end().ends_with(['摄', '図']) {
            return None;
        }
        reporter_line(line)
    })
}

/// The names of a [`RE_REPORTER_LINE`] line, `line` trimmed: names of 2-4
/// characters, not a sentence (`记者从…获悉`).
fn reporter_line(line: &str) -> Option<String> {
    let f = fold(line);
    let c = RE_REPORTER_LINE.captures(&f)?;
    let names = chinese_names(&line[c.get(1)?.range()])?;
    person_names(&names).then(|| name_value(&names))?
}

/// The labelled author in `lines`, first found.
pub fn labelled_author<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    lines.into_iter().find_map(|l| {
        // `(By Lin Chang-shun and Lee Hsin-Yin)`: a byline in brackets, a
        // line of its own closing the story.
        let byline = l.trim();
        let byline = byline
            .strip_prefix('(')
            .and_then(|b| b.strip_suffix(')'))
            .unwrap_or(byline);
        if let Some(c) = RE_BYLINE.captures(byline) {
            // `By Li Jingjing Updated 16:45, 17-Dec-2024`: the names end at
            // the date's label.
            const DATE_WORDS: [&str; 6] = [
                "Updated",
                "Published",
                "Posted",
                "Modified",
                "Last",
                "First",
            ];
            // `By Joe Cash November 25, 2024`: nor at a month's name before
            // a day (`June Smith` is a name).
            const MONTHS: [&str; 12] = [
                "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
            ];
            let words: Vec<&str> = c.get(1)?.as_str().split_whitespace().collect();
            let rest = &byline[c.get(1)?.end()..];
            let dated = |i: usize| {
                MONTHS.iter().any(|m| words[i].starts_with(m))
                    && words
                        .get(i + 1)
                        .copied()
                        .or_else(|| rest.split_whitespace().next())
                        .is_some_and(|n| n.starts_with(|ch: char| ch.is_ascii_digit()))
            };
            let names: Vec<&str> = (0..words.len())
                .take_while(|&i| !(DATE_WORDS.contains(&words[i]) || (i > 0 && dated(i))))
                .map(|i| words[i])
                .collect();
            return name_value(&names.join(" "));
        }
        let f = fold(l);
        if let Some(c) = RE_AUTHOR_LABEL.captures(&f) {
            let g = c.get(1)?;
            let mut names = &l[g.range()];
            // `作者：刘晨 字号：A+`, `作者：陈静 选稿：胡敏`: a word right
            // before a colon is the next label, not one more name.
            let labelled_next = f[g.end()..]
                .trim_start_matches([' ', '\t', '\u{3000}'])
                .starts_with([':', '：']);
            if labelled_next {
                if let Some(i) = names.rfind(|c: char| c.is_whitespace() || c == '、') {
                    names = &names[..i];
                }
            }
            return name_value(&chinese_names(names)?);
        }
        if let Some(c) = RE_BODY_AUTHOR.captures(&f) {
            return name_value(&l[c.get(1)?.range()]);
        }
        if let Some(c) = RE_KO_REPORTER.captures(l.trim()) {
            return name_value(c.get(1)?.as_str());
        }
        if let Some(c) = RE_THREAD_POSTER
            .captures(&f)
            .or_else(|| RE_HANDLE_POSTER.captures(&f))
        {
            return name_value(&l[c.get(1)?.range()]);
        }
        if let Some(c) = RE_LEAD_REPORTER.captures(&f) {
            return name_value(&chinese_names(&l[c.get(1)?.range()])?);
        }
        if let Some(c) = RE_AGENCY_DATELINE.captures(&f) {
            return name_value(&agency_dateline_names(&l[c.get(1)?.range()])?);
        }
        if let Some(name) = reporter_place(l, &f) {
            return Some(name);
        }
        if let Some(c) = RE_NAME_THEN_WEN.captures(l) {
            return name_value(&chinese_names(c.get(1)?.as_str())?);
        }
        if let Some(c) = RE_AUTHOR_REPORTER.captures(&f) {
            return name_value(&l[c.get(1).or_else(|| c.get(2))?.range()]);
        }
        let c = RE_BRACKETED_REPORTER.captures(&f)?;
        let names = chinese_names(&l[c.get(1)?.range()])?;
        let credit =
            names.ends_with(['摄', '图']) || f[c.get(1)?.end()..].trim_start().starts_with('摄');
        (!credit).then(|| name_value(&names))?
    })
}

/// `author` without an outlet's short name before a Chinese reporter's name
/// (`财新 吴雨俭`, `财新、吴雨俭`: the outlet as [`names_an_outlet`] knows it);
/// other names stay whole (`Reuters Staff`).
pub fn without_outlet_prefix(
    author: String,
    media: Option<&str>,
    sites: &[String],
    title: Option<&str>,
) -> String {
    match author.split_once([' ', '、']) {
        Some((first, rest))
            if !rest.trim().is_empty()
                && rest
                    .chars()
                    .all(|c| c.is_whitespace() || matches!(c, '·' | '、') || is_han(c))
                && names_an_outlet(first, media, sites, title) =>
        {
            rest.trim().to_string()
        }
        _ => author,
    }
}

/// Whether an author value may name the site or the outlet rather than a
/// person: it is the media the page names, one of the site's names, the start
/// of the `<title>`'s first or last segment (`…_网易科技` for `网易`, Chinese
/// names only), or a domain (`CSDN.NET`). (A personal blog's name is its
/// author's: the caller prefers a labelled author only when there is one.)
pub fn names_an_outlet(
    author: &str,
    media: Option<&str>,
    sites: &[String],
    title: Option<&str>,
) -> bool {
    let a = squash(author).to_lowercase();
    if a.is_empty() {
        return false;
    }
    let same = |n: &str| squash(n).to_lowercase() == a;
    let domain = a.contains('.')
        && !a.contains(' ')
        && a.rsplit('.').next().is_some_and(|tld| {
            (2..=6).contains(&tld.len()) && tld.chars().all(|c| c.is_ascii_alphabetic())
        });
    // `网易` and `…_网易科技`: a portal's name before its channel's.
    let han = a.chars().any(is_han);
    let title_segment = han
        && title.is_some_and(|t| {
            let segments: Vec<&str> = t
                .split(['_', '|', '｜', '-', '–', '—', '·'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            segments.len() > 1
                && [segments[0], segments[segments.len() - 1]]
                    .iter()
                    .any(|s| s.to_lowercase().starts_with(&a))
        });
    // `한국경제 | 네이버` (Naver's `og:article:author`): an outlet beside the
    // portal whose name begins the media's or a site's.
    let begins = |n: &str, p: &str| squash(n).to_lowercase().starts_with(p);
    let parted = a.contains(" | ")
        && a.split(" | ").map(str::trim).any(|p| {
            p.chars().count() >= 2
                && (media.is_some_and(|m| begins(m, p)) || sites.iter().any(|n| begins(n, p)))
        });
    domain || title_segment || parted || media.is_some_and(same) || sites.iter().any(|n| same(n))
}

/// An author meta value: `By ` prefix removed, URLs (Facebook profile links
/// in `article:author`) refused.
pub fn author_value(s: &str) -> Option<String> {
    let t = squash(s);
    // Not `Von der Leyen`: a name after the word starts with a capital.
    let t = RE_BY_PREFIX
        .find(&t)
        .filter(|m| {
            let english = m.as_str().trim_end().to_ascii_lowercase().ends_with("by");
            english || !t[m.end()..].starts_with(char::is_lowercase)
        })
        .map_or(&t[..], |m| &t[m.end()..]);
    // `記者陳嘉寧／桃園機場報導`: the reporter.
    if let Some(name) = reporter_place(t, &fold(t)) {
        return Some(name);
    }
    // `界面新闻记者 | 李可`: the names after the outlet's reporter title.
    if let Some(names) = reporter_line(t.trim()) {
        return Some(names);
    }
    let value = name_value(t)?;
    // `<meta name="author" content="105562">`: a user id, no name.
    if !value.chars().any(char::is_alphabetic) {
        return None;
    }
    // `Discuz! Team and Comsenz UI Team`: the forum software's credit, the
    // same on every page it serves.
    let lower = value.to_lowercase();
    if SOFTWARE_CREDITS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    // Chinese names spaced apart (`王芳 李可`, `艾米·秦, 李原`): listed as
    // Chinese bylines list them.
    let names: Vec<&str> = value
        .split(|c: char| c.is_whitespace() || matches!(c, '、' | ',' | '，'))
        .filter(|n| !n.is_empty())
        .collect();
    // A name of 2-4 characters, or a foreign one transcribed (`艾米·秦`).
    let chinese_name = |n: &&str| {
        let len = n.chars().count();
        n.chars().all(|c| is_han(c) || c == '·')
            && ((2..=4).contains(&len) || (n.contains('·') && len <= 12))
    };
    let chinese = names.len() > 1 && names.iter().all(chinese_name);
    Some(if chinese { names.join("、") } else { value })
}
