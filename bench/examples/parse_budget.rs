//! Parse budget benchmark: hostile pages (deep nesting) through the real
//! extractor, beside html5ever's DOM alone on the same input.
//!
//! `cargo run --release -p harvest-bench --example parse_budget [-- SIZES]`

use std::time::Instant;

use extract::{extract_with, TimeContext};
use url::Url;

fn nested(n: usize, open: &str, close: &str) -> String {
    let mut s = String::with_capacity(n * (open.len() + close.len()) + 64);
    s.push_str("<html><head><title>deep</title></head><body>");
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str("bottom text <a href=\"/bottom\">bottom</a>");
    for _ in 0..n {
        s.push_str(close);
    }
    s.push_str("</body></html>");
    s
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .nth(1)
        .map(|a| a.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![25_000, 50_000, 100_000, 200_000]);
    let url = Url::parse("http://example.com/deep.html").expect("static url");
    let ctx = TimeContext::default();
    println!("shape            n        bytes   extract_with  DOM only");
    for (shape, open, close) in [
        ("div", "<div>", "</div>"),
        ("div class", "<div class=comment-count>", "</div>"),
    ] {
        for &n in &sizes {
            let html = nested(n, open, close);
            let t = Instant::now();
            let x = extract_with(&html, &url, &ctx);
            let ours = t.elapsed();
            let t = Instant::now();
            let doc = scraper::Html::parse_document(&html[..html.len().min(512 * 1024)]);
            let dom = t.elapsed();
            drop(doc);
            println!(
                "{shape:<12} {n:>8} {:>12} {:>12.2?} {:>10.2?}  links {}",
                html.len(),
                ours,
                dom,
                x.links.len()
            );
        }
    }
}
