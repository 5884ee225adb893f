//! The author a page's byline elements name (`<a rel="author">`, microdata,
//! `class="byline"`): their names, without the labels and the date that
//! share the element.

use scraper::ElementRef;

use crate::dom::element_text;
use crate::lines::{is_han, squash};
use crate::media;
use crate::time;

/// `By <a rel="author">Joe Cash</a> and <a rel="author">Ellen Zhang</a>`:
/// the names of the first byline link and the byline links beside it (the
/// same parent), when they are two or more, listed as their script lists
/// them.
fn sibling_author_links(bylines: &[ElementRef<'_>]) -> Option<String> {
    let first = bylines.first().filter(|e| e.value().name() == "a")?;
    let parent = first.parent()?.id();
    let mut names: Vec<String> = Vec::new();
    for e in bylines
        .iter()
        .filter(|e| e.value().name() == "a" && e.parent().is_some_and(|p| p.id() == parent))
    {
        let name = media::author_value(&element_text(e))?;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [] | [_] => None,
        _ if names.iter().any(|n| n.chars().any(is_han)) => Some(names.join("、")),
        [rest @ .., last] => Some(format!("{} and {last}", rest.join(", "))),
    }
}

/// `<div itemprop="author"><meta itemprop="name" content="航空观察员老李">…
/// <div>民航从业者</div></div>`: the name microdata gives an author element,
/// not the badge beside it.
fn microdata_name(e: &ElementRef<'_>) -> Option<String> {
    // The element or one inside it (`<div class="Post-Author"><div
    // itemprop="author">…`).
    let author = e
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|d| d.value().attr("itemprop") == Some("author"))?;
    author
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|d| d.value().attr("itemprop") == Some("name"))
        .map(|d| {
            d.value()
                .attr("content")
                .map(squash)
                .unwrap_or_else(|| element_text(&d))
        })
        .filter(|n| !n.is_empty())
}

/// Author from the byline elements of the markup.
pub(crate) fn byline_author(bylines: &[ElementRef<'_>]) -> Option<String> {
    if let Some(names) = sibling_author_links(bylines) {
        return Some(names);
    }
    bylines.iter().find_map(|e| {
        let v = e
            .value()
            .attr("content")
            .map(str::to_string)
            .or_else(|| microdata_name(e))
            .unwrap_or_else(|| element_text(e));
        // `作者：王希`, `楼主：海东青2024`: the name after its label.
        const LABELS: [&str; 5] = ["作者", "楼主", "樓主", "博主", "发帖人"];
        let v = v.trim_start_matches(|c: char| c.is_whitespace());
        let v = LABELS
            .iter()
            .find_map(|l| v.strip_prefix(l))
            .unwrap_or(v)
            .trim_start_matches([':', '：', ' ']);
        // `<div class="byline"><address>…</address><time>…</time>`: the
        // names before the date.
        let v = match time::first_date_start(v) {
            // `Rajesh Kumar / TNN / Updated: Nov 25, 2024`: nor the date's
            // label.
            Some(at) if at > 0 && v.is_char_boundary(at) => without_date_label(&v[..at]),
            _ => v,
        };

        // `<span class="author">黄斌汉：</span>标题`: a list item's author
        // before its headline, not this page's byline.
        if v.trim_end().ends_with([':', '：']) {
            return None;
        }
        // `本文来源：工人日报 作者：赵琛 责任编辑：王晓易`: the labelled name.
        let name = media::labelled_author([v]).or_else(|| media::author_value(v))?;
        // `Rajesh Kumar / TNN`, `Jane Doe | Reuters`: the names come first
        // (`界面新闻记者 | 李可` was read as the reporter's line above).
        let name = [" / ", " | ", " ｜ "]
            .iter()
            .fold(name.as_str(), |n, sep| n.split(sep).next().unwrap_or(n))
            .to_string();
        Some(name)
    })
}

/// `v` without the label of the date that followed it (`… / Updated:`,
/// `Last updated:`, `发布时间：`): the words before its colon that a date's
/// label is made of.
fn without_date_label(v: &str) -> &str {
    let t = v.trim_end();
    let Some(body) = t.strip_suffix([':', '：']) else {
        return v;
    };
    const WORDS: [&str; 12] = [
        "updated",
        "published",
        "posted",
        "modified",
        "last",
        "first",
        "date",
        "time",
        "on",
        "stand",
        "publié",
        "le",
    ];
    let separator = |c: char| c.is_whitespace() || matches!(c, '/' | '|' | '·' | '•' | '｜');
    let mut end = body.len();
    // The label's last word may run into the colon in any script
    // (`发布时间：`); the words before it only from the list.
    let mut first = true;
    while let Some(at) = body[..end].rfind(separator) {
        let word = body[at..end].trim_matches(separator);
        if !(first || WORDS.contains(&word.to_lowercase().as_str())) {
            break;
        }
        first = false;
        end = at;
    }
    if first {
        // One word only (`发布时间：`): nothing is left.
        return "";
    }
    body[..end].trim_end_matches(separator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::url;
    use crate::{extract, extract_with, TimeContext};
    use chrono::Utc;
    use url::Url;

    /// Several authors' links side by side, microdata's name inside a byline
    /// element, a link to an author's page under the headline; a time with
    /// `GMT+8` in a `<time>` of spans.
    #[test]
    fn author_links_microdata_names_and_a_time_in_spans() {
        let u = url("https://www.example.com/world/a-2024-11-25/");
        let body = "<p>BEIJING, Nov 25 - China's manufacturing activity expanded for a second straight month in November.</p>\
            <p>The official purchasing managers' index rose to 50.3 from 50.1 in October, above the 50-point mark.</p>";
        let page = format!(
            "<html><head><title>China's factory activity returns to growth</title></head><body>\
            <h1>China's factory activity returns to growth</h1>\
            <div><span class=\"info\">By <a rel=\"author\" href=\"/authors/joe-cash/\">Joe Cash</a> and \
            <a rel=\"author\" href=\"/authors/ellen-zhang/\">Ellen Zhang</a></span>\
            <time><span>November 25, 2024</span><span>3:05 PM GMT+8</span><span>Updated 2 hours ago</span></time></div>\
            <article>{body}</article></body></html>"
        );
        let ctx = TimeContext {
            fetched: chrono::TimeZone::with_ymd_and_hms(&Utc, 2024, 11, 25, 10, 0, 0)
                .single()
                .expect("valid"),
            zone: None,
            hint: None,
        };
        let x = extract_with(&page, &u, &ctx);
        assert_eq!(x.author.as_deref(), Some("Joe Cash and Ellen Zhang"));
        assert_eq!(
            x.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-11-25T07:05:00+00:00")
        );
        // One link: its name.
        let one = page.replace(
            " and <a rel=\"author\" href=\"/authors/ellen-zhang/\">Ellen Zhang</a>",
            "",
        );
        assert_eq!(extract(&one, &u).author.as_deref(), Some("Joe Cash"));
        // A link to the author's page, not marked as the author's.
        let linked = one.replace("rel=\"author\" ", "");
        assert_eq!(extract(&linked, &u).author.as_deref(), Some("Joe Cash"));
        // One listed under the article is another item's.
        let listed = format!(
            "<html><head><title>China's factory activity returns to growth</title></head><body>\
            <h1>China's factory activity returns to growth</h1><article>{body}</article>\
            <ul><li><a href=\"/x\">Yuan weakens</a> <a href=\"/authors/sam-holmes/\">Sam Holmes</a></li></ul></body></html>"
        );
        assert_eq!(extract(&listed, &u).author, None);
        // Microdata's name, not the badge beside it.
        let zhihu = format!(
            "<html><head><title>如何看待国产大飞机C919开通新航线？</title></head><body>\
            <h1>如何看待国产大飞机C919开通新航线？</h1><div class=\"Post-Author\"><div itemprop=\"author\">\
            <meta itemprop=\"name\" content=\"航空观察员老李\"><a href=\"/people/laoli\">航空观察员老李</a>\
            <div>民航从业者</div></div></div><article>{body}</article></body></html>"
        );
        assert_eq!(
            extract(&zhihu, &url("https://zhuanlan.zhihu.com/p/1"))
                .author
                .as_deref(),
            Some("航空观察员老李")
        );
    }

    #[test]
    fn a_bylines_date_label_is_no_name() {
        for (v, want) in [
            ("Rajesh Kumar / TNN / Updated:", "Rajesh Kumar / TNN"),
            ("Jane Doe Last updated:", "Jane Doe"),
            ("作者：张三 发布时间：", "作者：张三"),
            ("发布时间：", ""),
            ("Jane Doe", "Jane Doe"),
            ("Jane Doe Editor:", "Jane Doe"),
        ] {
            assert_eq!(without_date_label(v), want, "{v}");
        }
        let u =
            Url::parse("https://timesofindia.indiatimes.com/india/a/articleshow/1.cms").unwrap();
        let page = r#"<html lang="en-IN"><body><h1>Winter session begins</h1>
            <div class="byline"><span><a href="/toireporter/author-rajesh-kumar-1.cms">Rajesh Kumar</a> / TNN / </span><span>Updated: Nov 25, 2024, 15:05 IST</span></div>
            <p>NEW DELHI: The session begins on Monday and will run until December 20.</p></body></html>"#;
        let x = extract(page, &u);
        assert_eq!(x.author.as_deref(), Some("Rajesh Kumar"));
    }
}
