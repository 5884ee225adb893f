//! The sections a page says it belongs to (its `article:section` metas, the
//! steps of its breadcrumb): words that stand beside a date and name no
//! outlet.

use crate::lines::squash;

/// The page's sections: its `article:section` metas and the steps of a
/// breadcrumb line (`首页 / 财经新闻 / 企业`, `Home > World`).
pub(crate) fn page_sections(metas: &[(String, String)], lines: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = metas
        .iter()
        .filter(|(k, _)| k == "article:section")
        .map(|(_, v)| squash(v))
        .collect();
    const HOME: [&str; 5] = ["首页", "首頁", "Home", "当前位置", "您的位置"];
    for l in lines.iter().take(MAX_CRUMB_LINES) {
        let t = l.trim();
        if !HOME.iter().any(|h| t.starts_with(h)) {
            continue;
        }
        out.extend(
            t.split(['/', '>', '›', '»', '|', '＞', '／'])
                .map(|w| w.trim().trim_start_matches(['：', ':']).trim().to_string())
                .filter(|w| !w.is_empty()),
        );
    }
    out
}

/// Lines from the page's top searched for a breadcrumb.
const MAX_CRUMB_LINES: usize = 80;
