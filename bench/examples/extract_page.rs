//! Prints the attributes harvest extracts from saved pages, one block a page:
//! a look at what the extraction sees when a `harvest bench extract` line says
//! it missed. `cargo run --release -p harvest-bench --example extract_page --
//! [--url URL] [--fetched RFC3339] FILE...` (default URL: `http://fakehost/`,
//! fetched now). `BODY=1` also
//! prints the page's visible text, `ARTICLE=1` the whole article text.

use extract::{extract_with, TimeContext};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).peekable();
    let mut url = url::Url::parse("http://fakehost/")?;
    let mut ctx = TimeContext::default();
    let mut files = Vec::new();
    while let Some(a) = args.next() {
        if a == "--url" {
            let u = args
                .next()
                .ok_or_else(|| anyhow::anyhow!("--url needs a value"))?;
            url = url::Url::parse(&u)?;
        } else if a == "--fetched" {
            let t = args
                .next()
                .ok_or_else(|| anyhow::anyhow!("--fetched needs a value"))?;
            ctx.fetched = chrono::DateTime::parse_from_rfc3339(&t)?.with_timezone(&chrono::Utc);
        } else {
            files.push(a);
        }
    }
    if files.is_empty() {
        anyhow::bail!("usage: extract_page [--url URL] FILE...");
    }
    for f in files {
        let bytes = std::fs::read(&f)?;
        let decoded = crawler::charset::decode(&bytes, None);
        let x = extract_with(&decoded.text, &url, &ctx);
        println!("== {f}");
        println!("title      {:?}", x.title);
        println!(
            "published  {:?} local {:?} from {:?}",
            x.published,
            x.published_local,
            x.published_from.map(|p| p.as_str())
        );
        println!(
            "media      {:?} (from host: {})",
            x.media, x.media_from_host
        );
        println!("author     {:?}", x.author);
        println!("comments   {:?}", x.comments);
        if std::env::var_os("BODY").is_some() {
            println!("body\n{}", x.body_text);
        }
        let take = if std::env::var_os("ARTICLE").is_some() {
            usize::MAX
        } else {
            200
        };
        let art: String = x.article_text.chars().take(take).collect();
        println!(
            "article    {} chars: {art:?}",
            x.article_text.chars().count()
        );
    }
    Ok(())
}
