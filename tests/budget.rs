//! Page budgets end to end (issue 13): the real `harvest` binary crawls a
//! loopback site that holds a 200,000-deep page and a 100,000-link page; the
//! crawl stays short, archives every page byte for byte, and its `--json`
//! summary (also the `runs` record) counts what the limits did.

mod util;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use harvest::site::SiteFiles;
use util::{assert_warcio_accepts, walk_packs, Site, Workspace};

fn hostile_site() -> BTreeMap<String, Vec<u8>> {
    let mut deep = String::from("<html><head><title>Deep page</title></head><body>");
    deep.push_str(&"<div>".repeat(200_000));
    deep.push_str("the bottom of the pit");
    deep.push_str(&"</div>".repeat(200_000));
    deep.push_str("</body></html>");
    let mut many = String::from("<html><head><title>Many links</title></head><body>");
    for i in 0..100_000 {
        many.push_str(&format!("<a href=\"/l/{i}.html\">{i}</a> "));
    }
    many.push_str("</body></html>");
    let long = format!("/{}.html", "x".repeat(3_000));
    let index = format!(
        "<!DOCTYPE html><html><head><title>Index</title></head><body>\
         <a href=\"/deep.html\">deep</a> <a href=\"/many.html\">many</a> \
         <a href=\"/a.html\">a</a> <a href=\"/b.html\">b</a> <a href=\"{long}\">long</a></body></html>"
    );
    let page = |t: &str| {
        format!("<html><head><title>{t}</title></head><body><p>An ordinary page called {t}, with some words in it.</p></body></html>")
            .into_bytes()
    };
    BTreeMap::from([
        ("/index.html".to_string(), index.into_bytes()),
        ("/deep.html".to_string(), deep.into_bytes()),
        ("/many.html".to_string(), many.into_bytes()),
        ("/a.html".to_string(), page("a")),
        ("/b.html".to_string(), page("b")),
    ])
}

#[test]
fn a_crawl_with_hostile_pages_archives_everything_and_counts_the_limits() {
    let files = hostile_site();
    let site = Site::serve(SiteFiles::from_pairs(files.clone()));
    // Depth 1: the 50,000 links kept from many.html are not fetched.
    let ws = Workspace::new(&site.url("/index.html"), "hostile", Some(1));
    let t0 = Instant::now();
    let summary = ws.crawl();
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(60),
        "the crawl took {took:?} (the deep page alone took minutes before issue 13)"
    );
    assert_eq!(summary["pages"].as_u64(), Some(5), "{summary}");
    assert_eq!(summary["pages_flattened"].as_u64(), Some(1), "{summary}");
    assert_eq!(summary["pages_links_capped"].as_u64(), Some(1), "{summary}");
    assert_eq!(summary["links_dropped"].as_u64(), Some(50_000), "{summary}");
    assert_eq!(summary["urls_too_long"].as_u64(), Some(1), "{summary}");
    let failures = summary["failures"].as_object().map_or(0, |f| f.len());
    assert_eq!(failures, 0, "{summary}");

    // Every page archived as served.
    let records = walk_packs(&ws);
    for (path, body) in &files {
        let uri = site.url(path);
        let found: Vec<_> = records.iter().filter(|r| r.uri == uri).collect();
        assert_eq!(found.len(), 1, "{path}: {} records", found.len());
        assert_eq!(found[0].kind, "response", "{path}");
        assert!(found[0].body == *body, "{path}: archived bytes differ");
    }
    for pack in ws.packs() {
        assert_warcio_accepts(&pack);
    }
    // The deep page is indexed with the attributes of its flattened DOM.
    let out = ws.harvest(&["get", &site.url("/deep.html")]);
    assert_eq!(out.stdout, files["/deep.html"]);
    let hits = ws.harvest(&["query", "--format", "jsonl"]);
    let text = String::from_utf8_lossy(&hits.stdout);
    assert!(text.contains("Deep page"), "{text}");
    assert!(text.contains("Many links"), "{text}");
}
