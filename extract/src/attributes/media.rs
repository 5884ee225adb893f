//! The media's decision: its rule table (source labels, source elements and
//! metas, datelines, accounts, agencies, the site's own names), the
//! corrections made to the value the first rule gives, else the host.

use super::outlet::{og_site_name, publisher_name, site_meta, title_site_part};
use crate::dom::{element_text, meta_value};
use crate::media;
use crate::page::{Around, PageView, ACCOUNT_LINES};
use crate::rules::{decide, Rule};
use crate::sections::page_sections;
use crate::time::Published;
use crate::title;

/// The media as decided: the outlet a page names or credits, else its host.
pub(crate) struct MediaChoice {
    pub(crate) media: Option<String>,
    /// The media is only the host name.
    pub(crate) from_host: bool,
    /// What a source label names (it outranks a wire agency credited as the author).
    pub(crate) labelled: Option<String>,
    /// The rule, then the corrections made to its value.
    pub(crate) rule: Vec<&'static str>,
}

/// The account a follow button names under the headline.
fn followed_account(p: &PageView<'_>, a: &Around<'_>) -> Option<String> {
    media::followed_account(a.under_title(&p.lines, ACCOUNT_LINES))
}

/// The media's sources, in order: the first that names one decides.
fn media_rules<'r>(
    p: &'r PageView<'_>,
    a: &'r Around<'_>,
    title: Option<&'r str>,
    published: Option<Published>,
    labelled: &'r Option<String>,
) -> Vec<Rule<'r>> {
    let metas = p.metas;
    vec![
        ("source label", Box::new(|| labelled.clone())),
        // `資料來源：環境部` under the headline of a government's release (a
        // data source's label elsewhere: a chart's).
        (
            "data source label",
            Box::new(|| media::data_source_media(a.header.iter().copied())),
        ),
        (
            "edition line",
            Box::new(|| media::edition_media(a.header.iter().copied())),
        ),
        (
            "source element",
            Box::new(|| {
                media::source_element_media(
                    p.els
                        .source
                        .iter()
                        .filter(|e| e.children().filter(|c| c.value().is_element()).count() <= 2)
                        .map(element_text),
                )
            }),
        ),
        (
            "source meta",
            Box::new(|| {
                media::MEDIA_META_KEYS
                    .iter()
                    .find_map(|k| meta_value(metas, k).and_then(media::name_value))
            }),
        ),
        (
            "account element",
            Box::new(|| {
                p.els
                    .account
                    .and_then(|e| media::name_value(&element_text(&e)))
            }),
        ),
        (
            "outlet beside the date",
            Box::new(move || {
                // Not a related item's line under the article (`行政院會通過前瞻預算
                // 18:10 2024/11/25`, the same day).
                media::dateline_media(
                    a.header_above_end.iter().copied(),
                    published.map(|p| p.local.date_naive()),
                )
                // `2024-10-30 14:26 财经新闻`: the page's section beside the date
                // (its `article:section`, a step of its breadcrumb) is no outlet.
                .filter(|m| !page_sections(metas, &p.lines).iter().any(|s| s == m))
            }),
        ),
        ("followed account", Box::new(|| followed_account(p, a))),
        (
            "reporter's outlet",
            Box::new(|| media::reporter_outlet(p.header_and_edges(a))),
        ),
        // `MEMPHIS, Tenn. (AP) —`, `新华社北京11月17日电`: the agency that
        // filed the story, over the site that runs it; the site's own name
        // over its short form (`Yonhap News Agency`, `(Yonhap) --`).
        (
            "agency dateline or og:site_name",
            Box::new(|| {
                // Not `dw.com`: a domain for a name gives way to the
                // publisher's (and is taken last).
                let site = og_site_name(metas);
                let agency = media::agency_dateline_media(p.edges.iter().copied());
                match (site, agency) {
                    (Some(s), Some(a)) if !s.to_lowercase().contains(&a.to_lowercase()) => Some(a),
                    (site, agency) => site.or(agency),
                }
            }),
        ),
        (
            "JSON-LD publisher",
            Box::new(|| publisher_name(p.ld.publisher.as_deref())),
        ),
        ("site meta", Box::new(|| site_meta(metas))),
        (
            "site part of <title>",
            Box::new(|| title_site_part(p.title_tag.as_deref(), &p.names)),
        ),
        (
            "account above the dateline",
            Box::new(|| media::account_above_dateline(a.under_title(&p.lines, 2))),
        ),
        (
            "segment after the headline in <title>",
            Box::new(move || {
                p.title_tag
                    .as_deref()
                    .zip(title)
                    .and_then(|(t, h)| title::segment_after_headline(t, h))
                    .and_then(|n| media::name_value(&n))
            }),
        ),
        (
            "og:site_name (a domain)",
            Box::new(|| meta_value(metas, "og:site_name").and_then(media::name_value)),
        ),
    ]
}

/// The media: the first of [`media_rules`] that names an outlet, then its
/// corrections, else the host.
pub(crate) fn decide_media(
    p: &PageView<'_>,
    a: &Around<'_>,
    title: Option<&str>,
    published: Option<Published>,
) -> MediaChoice {
    let labelled = media::labelled_media(p.header_and_edges(a));
    let mut rule = Vec::new();
    let named = decide(&media_rules(p, a, title, published, &labelled)).map(|(m, r)| {
        rule.push(r);
        m
    });
    // `来源：澎湃新闻·澎湃号·湃客`, the platform's channel (all of it in the
    // title's site part), over an account a follow button names: the
    // account published the article.
    let named = match named {
        Some(m)
            if p.title_tag
                .as_deref()
                .zip(title)
                .is_some_and(|(t, h)| title::names_the_sites_part(t, h, &m)) =>
        {
            match followed_account(p, a) {
                Some(account) => {
                    rule = vec!["followed account (the source names the site)"];
                    Some(account)
                }
                None => Some(m),
            }
        }
        other => other,
    };
    // `<meta name="source" content="bit.ly">`: a link, not an outlet.
    let named = named.filter(|m| {
        let link = media::link_shortener(m);
        if link {
            rule.clear();
        }
        !link
    });
    // `Source: Al Jazeera News` on a page whose `og:site_name` is `Al
    // Jazeera`: the outlet as it names itself on all its pages.
    let named = named.map(|m| {
        match og_site_name(p.metas).filter(|s| *s != m && media::same_outlet(&m, s)) {
            Some(site) => {
                rule.push("then the outlet's name in og:site_name");
                site
            }
            None => m,
        }
    });
    let from_host = named.is_none() && p.url.host_str().is_some();
    // `三立新聞網 SETN.COM`, `端傳媒 Initium Media`: a Chinese name with its
    // Latin form after it is the Chinese name, as source labels give it.
    let named = named.map(|m| match media::chinese_part(&m) {
        Some(chinese) => {
            rule.push("then its Chinese name");
            chinese
        }
        None => m,
    });
    if named.is_none() {
        rule = vec!["host (no source names an outlet)"];
    }
    MediaChoice {
        media: named.or_else(|| p.url.host_str().map(str::to_string)),
        from_host,
        labelled,
        rule,
    }
}

#[cfg(test)]
mod tests {
    use crate::extract;
    use crate::tests::url;

    #[test]
    fn media_falls_back_to_host() {
        let u = url("http://news.example.com/a");
        assert_eq!(
            extract(r#"<meta property="og:site_name" content="CNN">"#, &u)
                .media
                .as_deref(),
            Some("CNN")
        );
        assert_eq!(
            extract(r#"<meta name="source" content="新华社">"#, &u)
                .media
                .as_deref(),
            Some("新华社")
        );
        assert_eq!(
            extract("<p>x</p>", &u).media.as_deref(),
            Some("news.example.com")
        );
    }

    /// Issue 42: the outlet's credit line in another form than its
    /// `og:site_name` (`Source:-Al Jazeera News` under Al Jazeera's
    /// articles) gives the site's name, so the outlet is one media; a
    /// shortener's host is none, and the page falls back to the site.
    #[test]
    fn a_credit_naming_the_site_takes_the_sites_name() {
        let u = url("https://www.aljazeera.com/news/2017/03/x.html");
        let page = |credit: &str| {
            format!(
                r#"<meta property="og:site_name" content="Al Jazeera"><h1>Egypt</h1>
                <article><p>One paragraph of the story, long enough to be the article's text here.</p>
                <p>{credit}</p></article>"#
            )
        };
        let media = |credit: &str| extract(&page(credit), &u).media;
        assert_eq!(
            media("Source:-Al Jazeera News").as_deref(),
            Some("Al Jazeera")
        );
        assert_eq!(media("Source: AFP news agency").as_deref(), Some("AFP"));
        assert_eq!(media("Source: bit.ly").as_deref(), Some("Al Jazeera"));
        let x = extract(
            r#"<meta name="source" content="bit.ly"><p>x</p>"#,
            &url("http://news.example.com/a"),
        );
        assert_eq!(
            (x.media.as_deref(), x.media_from_host),
            (Some("news.example.com"), true)
        );
    }
}
