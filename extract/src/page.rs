//! A page as the attribute rules read it ([`PageView`]: the elements the scan
//! found, the meta pairs and JSON-LD facts, the site's names, the page's lines)
//! and where its headline is among its lines, with the lines around it
//! ([`Around`]), where bylines, datelines and source labels are read.

use url::Url;

use crate::dom::{element_text, meta_value};
use crate::jsonld::JsonLd;
use crate::lines::squash;
use crate::scan;
use crate::time::TimeContext;
use crate::title;

/// The shortest line taken for a post's text when a page has neither a
/// headline on it nor an article text.
const MIN_POST_CHARS: usize = 20;

/// Lines searched around the title for bylines (date, source, author).
const HEADER_LINES_AFTER: usize = 10;

/// Lines after the title searched for the account a page's follow button
/// names ([`crate::media::followed_account`]).
pub(crate) const ACCOUNT_LINES: usize = 4;

/// Lines at the head and foot of the article searched for source and author.
const ARTICLE_EDGE_LINES: usize = 4;

/// Index of the line of `lines` that shows the title: the chosen title's own
/// line first (a page's first `<h1>` is often its logo), then an `<h1>`'s.
fn title_line(lines: &[&str], title: Option<&str>, h1s: &[String]) -> Option<usize> {
    let norm = |s: &str| s.split_whitespace().collect::<String>();
    let wanted: Vec<String> = title
        .map(norm)
        .into_iter()
        .chain(h1s.iter().map(|h| norm(h)))
        .filter(|t| t.chars().count() >= 2)
        .collect();
    for w in &wanted {
        if let Some(i) = lines.iter().position(|l| norm(l) == *w) {
            return Some(i);
        }
    }
    // A headline the page sets on two or three lines: the last of them.
    for w in &wanted {
        for i in 0..lines.len() {
            let mut joined = norm(lines[i]);
            if joined.is_empty() || joined.len() >= w.len() || !w.starts_with(&joined) {
                continue;
            }
            for (k, l) in lines[i + 1..].iter().take(2).enumerate() {
                joined.push_str(&norm(l));
                if joined == *w {
                    return Some(i + k + 1);
                }
                if !w.starts_with(&joined) {
                    break;
                }
            }
        }
    }
    let t = norm(title?);
    if t.chars().count() < 6 {
        return None;
    }
    lines.iter().position(|l| {
        let l = norm(l);
        l.contains(&t) && l.chars().count() < t.chars().count() * 2
    })
}

/// Site names the title may carry: `og:site_name`, `application-name`,
/// JSON-LD publisher, host labels.
fn site_names(metas: &[(String, String)], ld: &JsonLd, url: &Url) -> Vec<String> {
    let mut names: Vec<String> = [
        "og:site_name",
        "application-name",
        "apple-mobile-web-app-title",
    ]
    .iter()
    .filter_map(|k| meta_value(metas, k))
    .map(squash)
    .chain(ld.publisher.iter().map(|p| squash(p)))
    .filter(|n| !n.is_empty() && n.chars().count() <= 60)
    .collect();
    names.extend(title::host_names(url.host_str()));
    names
}

/// A page as its attribute rules read it: the elements the scan found, the meta
/// pairs and JSON-LD facts, the site's names, and the page's visible text and article
/// text by line.
pub(crate) struct PageView<'p> {
    pub(crate) url: &'p Url,
    pub(crate) ctx: &'p TimeContext,
    pub(crate) els: &'p scan::PageElements<'p>,
    pub(crate) metas: &'p [(String, String)],
    pub(crate) ld: &'p JsonLd,
    pub(crate) language: Option<&'p str>,
    /// Site names the title may carry ([`site_names`]).
    pub(crate) names: Vec<String>,
    pub(crate) h1s: Vec<String>,
    pub(crate) title_tag: Option<String>,
    pub(crate) article_text: &'p str,
    pub(crate) lines: Vec<&'p str>,
    pub(crate) article_lines: Vec<&'p str>,
    /// The first and last lines of the article: bylines, datelines, source labels.
    pub(crate) edges: Vec<&'p str>,
}

impl<'p> PageView<'p> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        url: &'p Url,
        ctx: &'p TimeContext,
        els: &'p scan::PageElements<'p>,
        metas: &'p [(String, String)],
        ld: &'p JsonLd,
        language: Option<&'p str>,
        body_text: &'p str,
        article_text: &'p str,
    ) -> Self {
        let h1s: Vec<String> = els
            .h1
            .iter()
            .map(element_text)
            .filter(|t| !t.is_empty())
            .collect();
        let title_tag = els.title.iter().map(element_text).find(|t| !t.is_empty());
        let article_lines: Vec<&str> = article_text.lines().collect();
        let edges: Vec<&str> = article_lines
            .iter()
            .take(ARTICLE_EDGE_LINES)
            .chain(article_lines.iter().rev().take(ARTICLE_EDGE_LINES))
            .copied()
            .collect();
        PageView {
            url,
            ctx,
            els,
            metas,
            ld,
            language,
            names: site_names(metas, ld, url),
            h1s,
            title_tag,
            article_text,
            lines: body_text.lines().collect(),
            article_lines,
            edges,
        }
    }

    /// The header's lines, then the article's edges.
    pub(crate) fn header_and_edges<'v>(
        &'v self,
        around: &'v Around<'p>,
    ) -> impl Iterator<Item = &'p str> + 'v {
        around.header.iter().chain(self.edges.iter()).copied()
    }
}

/// Where a page's headline is among its lines, and the lines around it.
pub(crate) struct Around<'p> {
    /// The line of the headline.
    pub(crate) at_title: Option<usize>,
    /// Two lines above the headline to [`HEADER_LINES_AFTER`] below it.
    pub(crate) header: &'p [&'p str],
    /// The last line of the article's text, below its start.
    pub(crate) article_end: Option<usize>,
    /// The header down to the article's end (not the related items and
    /// comments under a short article).
    pub(crate) header_above_end: Vec<&'p str>,
    /// Where the page's text starts: the headline, else the article's first line,
    /// else the longest line of the page (a microblog post, a forum reply).
    pub(crate) anchor: Option<usize>,
}

impl<'p> Around<'p> {
    pub(crate) fn find(p: &'p PageView<'p>, title: Option<&str>) -> Self {
        let lines = &p.lines;
        let at_title = title_line(lines, title, &p.h1s);
        let header: &[&str] = match at_title {
            Some(i) => &lines[i.saturating_sub(2)..(i + 1 + HEADER_LINES_AFTER).min(lines.len())],
            None => &[],
        };
        // A page without a headline on it (a microblog post, a forum reply): its
        // byline is read around where its text starts.
        // With no article text found, the longest line of the page (the post).
        let anchor =
            at_title.or_else(
                || match p.article_lines.iter().find(|l| !l.trim().is_empty()) {
                    Some(first) => lines.iter().position(|l| l == first),
                    None => lines
                        .iter()
                        .enumerate()
                        .map(|(i, l)| (l.chars().count(), std::cmp::Reverse(i)))
                        .max()
                        .filter(|(n, _)| *n >= MIN_POST_CHARS)
                        .map(|(_, std::cmp::Reverse(i))| i),
                },
            );
        // The last line of the article's text, below the title.
        let article_end = anchor.and_then(|i| {
            p.article_lines
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .and_then(|last| lines.iter().skip(i + 1).rposition(|l| l == last))
                .map(|j| j + i + 1)
        });
        let from = at_title.map_or(0, |i| i.saturating_sub(2));
        let header_above_end = header
            .iter()
            .enumerate()
            .filter(|(k, _)| article_end.is_none_or(|e| from + k <= e))
            .map(|(_, l)| *l)
            .collect();
        Around {
            at_title,
            header,
            article_end,
            header_above_end,
            anchor,
        }
    }

    /// Up to `n` lines under the headline.
    pub(crate) fn under_title(&self, lines: &'p [&'p str], n: usize) -> &'p [&'p str] {
        self.at_title.map_or(&[][..], |i| {
            &lines[(i + 1).min(lines.len())..(i + 1 + n).min(lines.len())]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// news.az-style pages: the logo is the first `<h1>`; the byline date
    /// follows the article's own `<h1>`.
    #[test]
    fn the_title_line_is_the_chosen_titles() {
        let h1s = ["News.az".to_string(), "Envoy says".to_string()];
        let lines = ["News.az", "Politics", "Envoy says", "13 Oct 2020 18:29"];
        assert_eq!(title_line(&lines, Some("Envoy says"), &h1s), Some(2));
        assert_eq!(title_line(&lines, None, &h1s), Some(0));
        // A headline set on two lines: the second.
        let lines = [
            "首页",
            "长三角一体化发展再提速",
            "三省一市签署合作协议",
            "2024-05-22 14:03:11",
        ];
        assert_eq!(
            title_line(
                &lines,
                Some("长三角一体化发展再提速 三省一市签署合作协议"),
                &[]
            ),
            Some(2)
        );
    }
}
