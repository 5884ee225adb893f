//! Issue 11, "a missing attribute rather than a wrong one": the demo site's
//! 379 real Chinese LibreOffice help pages state no publish time, yet their
//! text says `今天`, `昨天`, `1月1日` and shows example dates; none of them may
//! come out with a publish time (four did before relative and yearless dates
//! were limited to datelines).

use harvest::site::{SiteFiles, DEMO_SITE};

#[test]
fn help_pages_without_a_publish_time_get_none() {
    let site = SiteFiles::from_tar_gz(DEMO_SITE).expect("demo site");
    let ctx = extract::TimeContext {
        fetched: "2026-12-01T03:22:43Z".parse().expect("time"),
        zone: None,
        hint: None,
    };
    let mut pages = 0;
    let mut dated = Vec::new();
    for path in site.html_paths() {
        let bytes = site.get(path).expect("listed file");
        let text = crawler::charset::decode(bytes, None).text;
        let url = crawler::Url::parse(&format!("http://127.0.0.1:8000{path}")).expect("url");
        let x = extract::extract_with(&text, &url, &ctx);
        pages += 1;
        if let Some(p) = x.published {
            dated.push(format!("{path}: {p} from {:?}", x.published_from));
        }
        assert!(x.title.is_some(), "{path}: no title");
    }
    assert!(pages > 300, "{pages} pages");
    assert!(
        dated.is_empty(),
        "{} dated:\n{}",
        dated.len(),
        dated.join("\n")
    );
}
