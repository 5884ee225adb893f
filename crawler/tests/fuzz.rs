//! Fuzz targets of the crawler's parsers (issue 13): the HTML extractor (and
//! its nesting pre-scan), the charset decoder, robots.txt, sitemaps, sitemap
//! indexes and feeds, URL normalisation. Inputs are arbitrary bytes and real
//! documents with random edits; every input must give an answer (or an
//! error), never a panic or a hang. `deploy/fuzz.sh SECONDS` runs them longer.

mod util;

use crawler::discover::{self, Limits as DiscoverLimits};
use crawler::robots::RobotsRules;
use crawler::Url;
use extract::{budget, extract_with, TimeContext};
use fuzzkit::gen;
use fuzzkit::proptest;
use fuzzkit::proptest::prelude::*;

fn base() -> Url {
    Url::parse("https://news.example.com/section/index.html").expect("static url")
}

/// Real pages of the extraction fixtures (several charsets and layouts).
fn html_corpus() -> Vec<Vec<u8>> {
    let dir = util::fixtures().join("../../../extract/tests/fixtures/pages");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("html"))
                .filter_map(|p| std::fs::read(p).ok())
                .map(|mut b| {
                    // Short documents mutate into more shapes per case.
                    b.truncate(16 * 1024);
                    b
                })
                .collect()
        })
        .unwrap_or_default();
    out.push(b"<html><head><meta charset=gbk><title>t</title><script type=\"application/ld+json\">{\"@type\":\"NewsArticle\",\"datePublished\":\"2024-01-02T03:04:05+08:00\",\"author\":[{\"name\":\"x\"}]}</script></head><body><table><tr><td><div class=comment-count>12</div><time datetime=2024-01-02>x</time><a href=../a>a</a><svg><path/></svg><select><option>o<option>p</select></body></html>".to_vec());
    out
}

/// Markup made of tags the extractor and the pre-scan treat specially.
fn markup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<div>".to_string()),
        Just("</div>".to_string()),
        Just("<p>".to_string()),
        Just("<li>".to_string()),
        Just("<table><tr><td>".to_string()),
        Just("</td></tr></table>".to_string()),
        Just("<b>".to_string()),
        Just("</b>".to_string()),
        Just("<a href=\"/x\">".to_string()),
        Just("</a>".to_string()),
        Just("<svg><g/>".to_string()),
        Just("</svg>".to_string()),
        Just("<script>".to_string()),
        Just("</script>".to_string()),
        Just("<!--".to_string()),
        Just("-->".to_string()),
        Just("<div/>".to_string()),
        Just("<title>".to_string()),
        Just(
            "<meta property=\"article:published_time\" content=\"2024-02-30T25:61:00Z\">"
                .to_string()
        ),
        Just("<span class=\"comment-count\">9万</span>".to_string()),
        Just("发布时间：2024年13月45日 ".to_string()),
        "[ -~]{0,12}",
        "[\\u{0}-\\u{10FFFF}]{0,4}",
    ];
    proptest::collection::vec(piece, 0..200).prop_map(|v| v.concat())
}

#[test]
fn fuzz_html_extractor() {
    let strategy = prop_oneof![
        2 => gen::bytes_or_mutated(html_corpus(), 4096)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        1 => markup(),
    ];
    fuzzkit::fuzz("html_extractor", strategy, |html| {
        let x = extract_with(&html, &base(), &TimeContext::default());
        assert!(x.links.len() <= budget::DEFAULT_MAX_LINKS);
        assert!(x
            .links
            .iter()
            .all(|l| l.len() <= budget::DEFAULT_MAX_URL_LENGTH));
    });
}

/// The pre-scan's copy is within the limit by its own measure and keeps
/// every byte of text outside the tags it cut.
#[test]
fn fuzz_nesting_prescan() {
    fuzzkit::fuzz(
        "nesting_prescan",
        (markup(), 1usize..40),
        |(html, limit)| {
            let f = budget::flatten(&html, limit);
            if let Some(out) = &f.html {
                assert!(out.len() < html.len());
                // The copy is within the limit by the same measure.
                let again = budget::flatten(out, limit);
                assert!(again.html.is_none(), "{html:?} -> {out:?}");
            } else {
                assert_eq!(f.dropped, 0);
            }
        },
    );
}

#[test]
fn fuzz_charset_decoder() {
    let labels = prop_oneof![
        Just(None),
        Just(Some("utf-8".to_string())),
        Just(Some("gbk".to_string())),
        Just(Some("gb2312".to_string())),
        Just(Some("big5".to_string())),
        Just(Some("shift_jis".to_string())),
        Just(Some("iso-8859-1".to_string())),
        Just(Some("utf-16le".to_string())),
        "[ -~]{0,20}".prop_map(Some),
    ];
    let strategy = (gen::bytes_or_mutated(html_corpus(), 4096), labels);
    fuzzkit::fuzz("charset_decoder", strategy, |(bytes, label)| {
        let d = crawler::charset::decode(&bytes, label.as_deref());
        // Decoding never loses more than the replacement characters cost.
        assert!(d.text.len() <= bytes.len() * 3 + 16);
        let again = crawler::charset::decode_with_name(&bytes, d.encoding.name());
        assert_eq!(again, d.text);
    });
}

fn robots_corpus() -> Vec<Vec<u8>> {
    vec![
        b"User-agent: *\nDisallow: /private/\nAllow: /private/ok$\nCrawl-delay: 2\nSitemap: https://news.example.com/sitemap.xml\n\nUser-agent: harvest\nDisallow: /*.php$\nDisallow: /a*b*c\n".to_vec(),
        b"# comment\nuser-agent: harvest\nuser-agent: other\ndisallow:\ncrawl-delay: 1e9\nsitemap: /relative.xml\n".to_vec(),
    ]
}

#[test]
fn fuzz_robots() {
    let strategy = (gen::bytes_or_mutated(robots_corpus(), 2048), "/[ -~]{0,40}");
    fuzzkit::fuzz("robots", strategy, |(body, path)| {
        let rules = RobotsRules::from_bytes("harvest", &body);
        if let Ok(u) = base().join(&path) {
            let _ = rules.allowed(&u);
        }
        let _ = rules.crawl_delay();
        let robots = Url::parse("https://news.example.com/robots.txt").expect("static url");
        let _ = rules.sitemaps(&robots);
        let _ = discover::robots_sitemaps(&body, &robots);
    });
}

fn sitemap_corpus() -> Vec<Vec<u8>> {
    let sitemap = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
<url><loc>https://news.example.com/a.html</loc><lastmod>2024-01-02T03:04:05+08:00</lastmod>
<news:news><news:publication_date>2024-01-02</news:publication_date><news:title>A</news:title></news:news></url>
<url><loc>/relative.html</loc></url></urlset>"#
        .to_vec();
    let index = br#"<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://news.example.com/s1.xml.gz</loc></sitemap></sitemapindex>"#.to_vec();
    let rss = br#"<?xml version="1.0" encoding="gbk"?><rss version="2.0"><channel><title>t</title><item><title>x</title><link>https://news.example.com/x.html</link><pubDate>Tue, 02 Jan 2024 03:04:05 +0800</pubDate></item></channel></rss>"#.to_vec();
    let atom = br#"<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><entry><title>e</title><link href="/e.html"/><published>2024-01-02T03:04:05Z</published><updated>2024-01-02T03:04:05Z</updated><id>e</id></entry></feed>"#.to_vec();
    let json = br#"{"version":"https://jsonfeed.org/version/1.1","title":"t","items":[{"id":"1","url":"https://news.example.com/j.html","date_published":"2024-01-02T03:04:05Z"}]}"#.to_vec();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = std::io::Write::write_all(&mut gz, &sitemap);
    let gzipped = gz.finish().unwrap_or_default();
    vec![sitemap, index, rss, atom, json, gzipped]
}

#[test]
fn fuzz_sitemaps_and_feeds() {
    let limits = DiscoverLimits {
        max_bytes: 1 << 20,
        ..DiscoverLimits::default()
    };
    fuzzkit::fuzz(
        "sitemap_feed",
        gen::bytes_or_mutated(sitemap_corpus(), 2048),
        |bytes| {
            if let Ok(o) = discover::parse_document(&bytes, &base(), &limits) {
                assert!(o.document.urls().len() <= limits.max_urls);
            }
        },
    );
}

#[test]
fn fuzz_url_normalisation() {
    let strategy = prop_oneof![
        "[ -~]{0,80}",
        "(https?|ftp|mailto|javascript):[ -~]{0,60}",
        "[\\u{0}-\\u{10FFFF}]{0,20}",
    ];
    fuzzkit::fuzz("url_normalisation", strategy, |s| {
        if let Some(u) = crawler::normalize::parse_normalized(&s, Some(&base())) {
            let again = crawler::normalize::parse_normalized(u.as_str(), None);
            assert_eq!(
                again.as_ref(),
                Some(&u),
                "normalising is idempotent for {s:?}"
            );
        }
    });
}
