//! The headline's decision: [`title::choose_ruled`] over the page's `<title>`,
//! `og:title`, JSON-LD headline and `<h1>`s, as the page shows it.

use crate::dom::{element_text, meta_value};
use crate::page::PageView;
use crate::title;

/// The headline and the rule that chose it (see [`title::choose_ruled`]), as the page
/// shows it.
pub(crate) fn decide_title(p: &PageView<'_>) -> (Option<String>, Option<&'static str>) {
    let og_title = meta_value(p.metas, "og:title").or_else(|| meta_value(p.metas, "twitter:title"));
    let founder_title = p
        .els
        .founder_title
        .map(|e| element_text(&e))
        .filter(|t| !t.is_empty());
    let (title, rule) = title::choose_ruled(
        p.title_tag.as_deref(),
        og_title,
        p.ld.headline.as_deref().or(founder_title.as_deref()),
        &p.h1s,
        &p.names,
    )
    .unzip();
    let title = title
        .map(|t| title::as_shown(&t, &p.lines).unwrap_or(t))
        .map(|t| title::as_spaced(&t, &p.lines).unwrap_or(t));
    (title, rule)
}

#[cfg(test)]
mod tests {
    use crate::extract;
    use crate::tests::url;

    #[test]
    fn title_prefers_og_then_cleaned_title_then_h1() {
        let u = url("http://example.com/a");
        let e = extract(
            r#"<html><head><meta property="og:title" content=" OG  title "><title>T - Site</title></head></html>"#,
            &u,
        );
        assert_eq!(e.title.as_deref(), Some("OG title"));
        let e = extract("<title>Storm passes - CNN.com</title>", &u);
        assert_eq!(e.title.as_deref(), Some("Storm passes"));
        let e = extract(
            "<title>\n短缺药品保供稳价 全力保障临床用药需求-新华网\n</title>",
            &u,
        );
        assert_eq!(
            e.title.as_deref(),
            Some("短缺药品保供稳价 全力保障临床用药需求")
        );
        let e = extract("<body><h1>Only a heading</h1></body>", &u);
        assert_eq!(e.title.as_deref(), Some("Only a heading"));
    }
}
