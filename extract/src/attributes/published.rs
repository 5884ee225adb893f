//! The publish time's decision: the meta keys that name a publish, a weak or
//! a modified time, the candidates the markup gives, and every other source
//! of candidates the page offers, handed to [`time::decide`].

use crate::dom::{element_text, meta_value};
use crate::jsonld::JsonLd;
use crate::page::{Around, PageView};
use crate::scan;
use crate::time::{self, page_zone, score, Candidate, Published, PublishedFrom};

/// Meta names/properties/itemprops that name the publish time.
pub const PUBLISHED_META_KEYS: [&str; 31] = [
    "article:published_time",
    "publishedtime",
    "og:published_time",
    "og:article:published_time",
    "article:published",
    "datepublished",
    "pubdate",
    "publishdate",
    "publish_date",
    "publish-date",
    "publishtime",
    "publish_time",
    "pubtime",
    "parsely-pub-date",
    "sailthru.date",
    "dc.date.issued",
    "dcterms.issued",
    "article.published",
    "og:pubdate",
    "bytedance:published_time",
    "weibo:article:create_at",
    "apub:time",
    "og:release_date",
    "release_date",
    "firstpublishedtime",
    "citation_publication_date",
    "originalpublicationdate",
    "article_date_original",
    "publication_date",
    "date_published",
    "cxenseparse:recs:publishtime",
];

/// Meta keys holding a date that is usually, not surely, the publish time.
pub const DATE_META_KEYS: [&str; 7] = [
    "date",
    "dc.date",
    "dcterms.date",
    "dcterms.created",
    "created",
    "citation_date",
    // schema.org's `dateCreated` (Zhihu's articles, beside `dateModified`).
    "datecreated",
];

/// Meta tags (and microdata) naming when the page was modified: a
/// publish time only when the page states none ([`PublishedFrom::Modified`]).
pub const MODIFIED_META_KEYS: [&str; 9] = [
    "article:modified_time",
    "og:updated_time",
    "og:modified_time",
    "datemodified",
    "dateupdated",
    "dateupdate",
    "dcterms.modified",
    "last-modified",
    "lastmod",
];

/// Publish-time candidates from the markup: meta tags, microdata, JSON-LD, `<time>`.
fn markup_time_candidates(
    els: &scan::PageElements<'_>,
    metas: &[(String, String)],
    ld: &JsonLd,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (keys, sc) in [
        (&PUBLISHED_META_KEYS[..], score::META_PUBLISHED),
        (&DATE_META_KEYS[..], score::META_WEAK),
    ] {
        out.extend(
            metas
                .iter()
                .filter(|(k, _)| keys.contains(&k.as_str()))
                .find_map(|(_, v)| time::parsed_candidate(v, PublishedFrom::Meta, sc)),
        );
    }
    out.extend(els.itemprop_published.iter().find_map(|e| {
        let v = e.value();
        let from = if v.name() == "time" {
            PublishedFrom::Time
        } else {
            PublishedFrom::Meta
        };
        let value = v
            .attr("content")
            .or_else(|| v.attr("datetime"))
            .map(str::to_string)
            .unwrap_or_else(|| element_text(e));
        time::parsed_candidate(&value, from, score::META_PUBLISHED)
    }));
    out.extend(
        ld.published
            .as_deref()
            .and_then(|v| time::parsed_candidate(v, PublishedFrom::Jsonld, score::JSONLD)),
    );
    out.extend(
        ld.published_other
            .as_deref()
            .and_then(|v| time::parsed_candidate(v, PublishedFrom::Jsonld, score::META_WEAK)),
    );
    // When the page was modified: taken only if it states no publish time.
    out.extend(
        metas
            .iter()
            .filter(|(k, _)| MODIFIED_META_KEYS.contains(&k.as_str()))
            .find_map(|(_, v)| time::parsed_candidate(v, PublishedFrom::Modified, score::MODIFIED)),
    );
    out.extend(
        ld.modified
            .as_deref()
            .and_then(|v| time::parsed_candidate(v, PublishedFrom::Modified, score::MODIFIED)),
    );
    let times = &els.time;
    let mut unmarked_taken = false;
    for t in times {
        let v = t.value();
        let marks = format!(
            "{} {} {}",
            v.attr("class").unwrap_or_default(),
            v.attr("itemprop").unwrap_or_default(),
            v.attr("id").unwrap_or_default()
        )
        .to_ascii_lowercase();
        // `class="entry-date published updated"` (a post never updated) is
        // the publish time.
        if (marks.contains("updat") || marks.contains("modif")) && !marks.contains("publish") {
            let value = v
                .attr("datetime")
                .map(str::to_string)
                .unwrap_or_else(|| element_text(t));
            out.extend(time::parsed_candidate(
                &value,
                PublishedFrom::Modified,
                score::MODIFIED,
            ));
            continue;
        }
        let marked = v.attr("pubdate").is_some() || marks.contains("pub") || marks.contains("post");
        let sc = match (marked, unmarked_taken) {
            (true, _) => score::TIME_MARKED,
            (false, true) => continue,
            (false, false) if times.len() <= 3 => score::TIME_FIRST,
            (false, false) => score::TIME_OTHER,
        };
        // An unreadable `datetime` (`01-11-2023 10:29`): the visible text.
        let parsed = v
            .attr("datetime")
            .and_then(|d| time::parsed_candidate(d, PublishedFrom::Time, sc))
            .or_else(|| time::parsed_candidate(&element_text(t), PublishedFrom::Time, sc));
        if let Some(c) = parsed {
            unmarked_taken |= !marked;
            out.push(c);
        }
    }
    // hAtom's `<abbr class="published" title="2024-11-25T15:05:00-08:00">3:05
    // PM</abbr>` (Blogger, older blog themes): the title holds the instant.
    for (class, from, sc) in [
        ("published", PublishedFrom::Time, score::TIME_MARKED),
        ("updated", PublishedFrom::Modified, score::MODIFIED),
    ] {
        out.extend(els.titled.iter().find_map(|e| {
            let v = e.value();
            v.attr("class")?
                .split_whitespace()
                .any(|c| c == class)
                .then(|| time::parsed_candidate(v.attr("title")?, from, sc))?
        }));
    }
    out
}

/// The publish time: every candidate the page offers (markup, the lines near the
/// headline, labels, marked and classed elements, the article's edges, the URL, the
/// page's scripts, the feed's or sitemap's hint), scored and decided by [`time::decide`].
pub(crate) fn decide_published(p: &PageView<'_>, a: &Around<'_>) -> Option<Published> {
    let (els, url, ctx) = (p.els, p.url, p.ctx);
    let locales: Vec<&str> = els
        .html_lang
        .into_iter()
        .chain(meta_value(p.metas, "og:locale"))
        .collect();
    let zone = page_zone(ctx.zone, url.host_str(), p.language, &locales);
    let mut cands = markup_time_candidates(els, p.metas, p.ld);
    if let Some(i) = a.anchor {
        cands.extend(time::near_title_candidates(
            &p.lines,
            i,
            a.article_end,
            ctx,
            zone,
            time::url_year(url.path()),
        ));
    }
    cands.extend(time::labelled_candidates(&p.lines));
    let marked: Vec<String> = els
        .date_marked
        .iter()
        .filter(|e| {
            let c = format!(
                "{} {}",
                e.value().attr("class").unwrap_or_default(),
                e.value().attr("id").unwrap_or_default()
            )
            .to_ascii_lowercase();
            !(c.contains("updat") || c.contains("modif")) || c.contains("publish")
        })
        .take(50)
        .map(element_text)
        .filter(|t| t.chars().count() <= 120)
        .collect();
    cands.extend(time::marked_element_candidate(&marked));
    let classed: Vec<String> = els
        .date_classed
        .iter()
        .filter(|e| {
            let c = e
                .value()
                .attr("class")
                .unwrap_or_default()
                .to_ascii_lowercase();
            !(c.contains("updat") || c.contains("modif"))
        })
        .map(element_text)
        .filter(|t| t.chars().count() <= 120)
        .collect();
    cands.extend(time::date_class_candidate(&classed));
    cands.extend(time::article_edge_candidates(p.article_text));
    // `发表于 <span title="2024-11-25 15:05:06">3 天前</span>`: the first
    // relative phrase's time, to the second.
    cands.extend(els.titled.iter().find_map(|e| {
        time::is_relative(&element_text(e))
            .then(|| e.value().attr("title"))
            .flatten()
            .and_then(|t| time::parsed_candidate(t, PublishedFrom::Text, score::TITLED))
    }));
    cands.extend(time::url_candidate(url.path()));
    cands.extend(time::script_candidates(
        els.scripts.iter().flat_map(|e| e.text()),
        zone,
    ));
    if let Some((t, from)) = ctx.hint {
        cands.push(Candidate {
            stated: time::Stated::Zoned(t.fixed_offset()),
            has_time: true,
            from,
            score: score::FEED,
            near_title: false,
            year_inferred: false,
            relative: false,
        });
    }
    time::decide(&cands, ctx, zone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::url;
    use crate::{extract, extract_with, TimeContext};
    use chrono::Utc;

    #[test]
    fn a_labelled_wall_clock_takes_the_offset_of_a_meta_of_its_minute() {
        // `.com`, English: no default zone but UTC. The visible, labelled
        // time wins; the meta of the same minute says where its clock is.
        let page = r#"<html lang="en"><head>
            <meta property="article:published_time" content="2024-12-10T17:42:00+09:00">
            </head><body><h1>Shipyards bag most LNG carrier orders</h1>
            <div class="byline"><span>Published: 10 Dec. 2024, 17:42</span>
            <span>Updated: 10 Dec. 2024, 20:15</span></div>
            <p>Korean shipbuilders won 11 of the 16 carriers ordered worldwide last month.</p>
            </body></html>"#;
        let e = extract(page, &url("https://daily.example.com/news/a"));
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-12-10T08:42:00+00:00")
        );
        // A `Z` of the same minute says nothing of the clock: a `.cn` page
        // stays in Beijing time.
        let page = page
            .replace("+09:00", "Z")
            .replace("lang=\"en\"", "lang=\"zh\"");
        let e = extract(&page, &url("https://news.example.cn/a"));
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-12-10T09:42:00+00:00")
        );
    }

    #[test]
    fn published_from_meta_jsonld_time_and_url() {
        let u = url("http://example.com/a");
        let e = extract(
            r#"<meta property="article:published_time" content="2013-12-30T14:42:01-07:00">"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2013-12-30T21:42:01+00:00")
        );
        let e = extract(
            r#"<script type="application/ld+json">{"@graph":[{"@type":"NewsArticle","datePublished":"2013-12-30T14:42:01-0700"}]}</script>"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2013-12-30T21:42:01+00:00")
        );
        // WordPress marks a post never updated `published updated`: the
        // publish time, not an update.
        let e = extract(
            r#"<h4>am <time class="date updated published" datetime="2020-02-23T10:07:02+01:00">23. Februar 2020</time></h4><p>x</p>"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2020-02-23T09:07:02+00:00")
        );
        assert_eq!(e.published_from, Some(PublishedFrom::Time));
        // A `datetime` that is no date: the visible text.
        let e = extract(
            r#"<div><time datetime="01-11-2023 10:29">1. November 2023 10:29</time></div><p>x</p>"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2023-11-01T10:29:00+00:00")
        );
        assert_eq!(e.published_from, Some(PublishedFrom::Time));
        let e = extract(r#"<p><time datetime="2024-02-29">29 Feb</time></p>"#, &u);
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-02-29T00:00:00+00:00")
        );
        let e = extract(
            "<p>none</p>",
            &url("http://www.news.cn/fortune/2023-11/17/c_1129981476.htm"),
        );
        assert_eq!(
            e.published.map(|d| d.date_naive().to_string()).as_deref(),
            Some("2023-11-17")
        );
        assert!(extract("<p>none</p>", &u).published.is_none());
        // Sina writes this key with a space; a .cn page without an offset is
        // read in Asia/Shanghai.
        let e = extract(
            r#"<meta name="weibo: article:create_at" content="2024-03-08 10:25:44">"#,
            &url("https://news.sina.com.cn/c/2024-03-08/doc-x.shtml"),
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-03-08T02:25:44+00:00")
        );
        assert_eq!(e.published_from, Some(PublishedFrom::Meta));
    }

    #[test]
    fn a_modified_time_stands_in_only_when_no_publish_time_is_stated() {
        let u = url("http://example.com/a");
        let at = |html: &str| {
            let e = extract(html, &u);
            (
                e.published.map(|d| d.to_rfc3339()),
                e.published_from.map(PublishedFrom::as_str),
            )
        };
        let modified = r#"<meta property="article:modified_time" content="2021-05-06T07:08:09Z">"#;
        assert_eq!(
            at(modified),
            (Some("2021-05-06T07:08:09+00:00".into()), Some("modified"))
        );
        // Beside a publish time it loses, wherever that one is stated.
        let both = format!(
            r#"{modified}<h1>Headline of the test</h1><p>Published: 2021-05-01 10:00</p><p>x</p>"#
        );
        assert_eq!(at(&both).1, Some("text"));
        // JSON-LD dateModified, `<time class="updated">`, an `Aktualisiert:` label.
        assert_eq!(
            at(r#"<script type="application/ld+json">{"@type":"NewsArticle","dateModified":"2020-01-02"}</script><p>x</p>"#).1,
            Some("modified")
        );
        assert_eq!(
            at(r#"<p><time class="updated" datetime="2019-03-04T05:06:00Z">4 March</time></p>"#).1,
            Some("modified")
        );
        assert_eq!(
            at("<p>Viel Text hier.</p><p class=info>Aktualisiert: 30.12.2016</p>"),
            (Some("2016-12-30T00:00:00+00:00".into()), Some("modified"))
        );
        // A comment's date is no stand-in.
        assert_eq!(
            at("<p>Text.</p><p>Comment 2016-12-30 by Joe</p><p>Reply: 2016-12-31</p>").1,
            None
        );
    }

    /// Baijiahao's `发布时间：10-08 12:00` read years later: the year of the
    /// page's modified time, not the fetch year.
    #[test]
    fn a_day_without_its_year_takes_a_modified_times_year() {
        let u = url("https://baijiahao.baidu.com/s?id=1646805345");
        let page = "<html><head><title>英国美女在殡仪馆工作太痛苦，转行当美人鱼</title>\
            <meta itemprop=\"dateUpdate\" content=\"2019-10-08 12:00:57\"></head><body>\
            <h1>英国美女在殡仪馆工作太痛苦，转行当美人鱼</h1><p>加拿大必读</p><p>发布时间：10-08 12:00</p>\
            <div class=\"article\"><p>英国汉普郡贝辛斯托克的一位女士放弃了她在殡仪馆的工作，转而从事水下生活的工作。</p>\
            <p>曾在殡仪馆任职，每天和死亡打交道，28岁的茉莉患有纤维肌痛。</p></div></body></html>";
        let ctx = TimeContext {
            fetched: chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 3, 2, 0, 0, 0)
                .single()
                .expect("valid"),
            zone: None,
            hint: None,
        };
        let x = extract_with(page, &u, &ctx);
        assert_eq!(
            x.published_local
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .as_deref(),
            Some("2019-10-08 12:00")
        );
        assert_eq!(x.published_from, Some(PublishedFrom::Text));
    }

    #[test]
    fn a_byline_that_ends_at_its_date_labels_it() {
        let u = url("http://example.com/a");
        let day = |html: &str| {
            extract(html, &u)
                .published
                .map(|d| d.date_naive().to_string())
        };
        let page = |line: &str| {
            format!("<p>Some words of a menu</p><p>More text of the page, long enough.</p><div>{line}</div><p>Body text.</p>")
        };
        assert_eq!(
            day(&page("Submitted by Jane Roe on Mon, 2017-05-22 10:00")).as_deref(),
            Some("2017-05-22")
        );
        assert_eq!(
            day(&page("Author: Bo Berg am 29.12.2010, 13:36 Uhr")).as_deref(),
            Some("2010-12-29")
        );
    }
}
