//! The outlet's decision: the site a page belongs to, as it names itself, and
//! the site-name rules the media's table shares.

use crate::dom::meta_value;
use crate::media;
use crate::rules::{decide, Rule};
use crate::title;

/// The site a page belongs to, as it names itself: `og:site_name` (not a
/// domain), the JSON-LD publisher, `application-name` and the other site
/// meta keys, else the site name its `<title>` ends with. A Chinese name with
/// its Latin form after it is the Chinese name (`三立新聞網 SETN.COM`).
pub(crate) fn site_outlet(
    metas: &[(String, String)],
    publisher: Option<&str>,
    title_tag: Option<&str>,
    names: &[String],
) -> Option<(String, &'static str)> {
    let rules: Vec<Rule<'_>> = vec![
        ("og:site_name", Box::new(|| og_site_name(metas))),
        ("JSON-LD publisher", Box::new(|| publisher_name(publisher))),
        (
            "site meta",
            Box::new(|| site_meta(metas).filter(|s| !media::domain_like(s))),
        ),
        (
            "site part of <title>",
            Box::new(|| title_site_part(title_tag, names)),
        ),
    ];
    decide(&rules)
        .filter(|(m, _)| !media::link_shortener(m))
        .map(|(m, rule)| (media::chinese_part(&m).unwrap_or(m), rule))
}

/// `og:site_name` when it names the site, not its domain (`dw.com`).
pub(crate) fn og_site_name(metas: &[(String, String)]) -> Option<String> {
    meta_value(metas, "og:site_name")
        .and_then(media::name_value)
        .filter(|s| !media::domain_like(s))
}

/// The JSON-LD publisher's name.
pub(crate) fn publisher_name(publisher: Option<&str>) -> Option<String> {
    publisher.and_then(media::name_value)
}

/// The first of the site meta keys (`application-name`, `publisher`, ...) that holds a
/// name.
pub(crate) fn site_meta(metas: &[(String, String)]) -> Option<String> {
    media::SITE_META_KEYS
        .iter()
        .find_map(|k| meta_value(metas, k).and_then(media::name_value))
}

/// The site name a `<title>` ends (or starts) with, one of `names`.
pub(crate) fn title_site_part(title_tag: Option<&str>, names: &[String]) -> Option<String> {
    title_tag
        .and_then(|t| title::site_segment(t, names))
        .and_then(|n| media::name_value(&n))
}

#[cfg(test)]
mod tests {
    use crate::extract;
    use crate::tests::url;

    /// The outlet is the site, as its pages name it: the agency an article
    /// credits is its media, never its outlet; a page naming no site has none
    /// (its host stands for it).
    #[test]
    fn the_outlet_is_the_site_not_the_agency_it_credits() {
        let u = url("https://www.aljazeera.com/news/2017/03/x.html");
        let x = extract(
            r#"<meta property="og:site_name" content="Al Jazeera"><h1>Egypt</h1>
            <article><p>One paragraph of the story, long enough to be the article's text here.</p>
            <p>Source: AFP news agency</p></article>"#,
            &u,
        );
        assert_eq!(
            (x.media.as_deref(), x.outlet.as_deref()),
            (Some("AFP"), Some("Al Jazeera"))
        );
        // Each attribute names the rule that decided it.
        let rule = |a: &str| {
            x.decisions
                .iter()
                .find(|d| d.attribute == a)
                .map(|d| d.rule.clone())
        };
        assert_eq!(rule("media").as_deref(), Some("source label"));
        assert_eq!(rule("outlet").as_deref(), Some("og:site_name"));
        assert_eq!(rule("title").as_deref(), Some("first <h1>"));
        assert_eq!(rule("published").as_deref(), Some("none"));
        let hub = extract("<p>x</p>", &url("http://news.example.com/a"));
        assert_eq!(
            hub.decisions
                .iter()
                .map(|d| (d.attribute, d.rule.as_str()))
                .collect::<Vec<_>>(),
            [
                ("title", "none"),
                ("published", "none"),
                ("media", "host (no source names an outlet)"),
                ("outlet", "host (no site name)"),
                ("author", "none"),
            ]
        );
        let named = |html: &str| extract(html, &url("http://news.example.com/a")).outlet;
        assert_eq!(
            named(r#"<meta name="source" content="新华社"><p>x</p>"#),
            None
        );
        assert_eq!(
            named(r#"<meta property="og:site_name" content="example.com"><p>x</p>"#),
            None
        );
        assert_eq!(
            named(r#"<meta name="application-name" content="三立新聞網 SETN.COM"><p>x</p>"#)
                .as_deref(),
            Some("三立新聞網")
        );
        assert_eq!(
            named("<title>Storm hits the coast - The Daily Example</title><p>x</p>").as_deref(),
            Some("The Daily Example")
        );
    }
}
