//! Issue 40 item 6: a `/YYYY/MM/` calendar that goes on forever ran a crawl
//! to the per-host cap (6,631 pages in 300 s, nothing refused). A loopback
//! site with such a calendar (months, their days, a jump far ahead and far
//! back) beside a news archive with dated articles: the crawl ends by itself,
//! counts the refused calendar pages and still archives every article.

mod util;

use std::collections::BTreeSet;
use std::time::Duration;

use crawler::guard::{DEFAULT_CALENDAR_MIN_YEAR, DEFAULT_MAX_EMPTY_CALENDAR_MONTHS};
use util::{pages, run, test_config, Reply, TestServer};

/// Months of the news archive that have articles (three each).
const NEWS_MONTHS: [(i32, u32); 3] = [(2024, 9), (2024, 10), (2024, 11)];

fn prev(y: i32, m: u32) -> (i32, u32) {
    if m == 1 {
        (y - 1, 12)
    } else {
        (y, m - 1)
    }
}

fn next(y: i32, m: u32) -> (i32, u32) {
    if m == 12 {
        (y + 1, 1)
    } else {
        (y, m + 1)
    }
}

fn article_paths(y: i32, m: u32) -> Vec<String> {
    (1..=3)
        .map(|k| format!("/news/{y}/{m:02}/{:02}/story-{k}.html", 10 + k))
        .collect()
}

fn page(title: &str, links: &[String]) -> Reply {
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    Reply::html(format!(
        "<html><head><title>{title}</title></head><body><h1>{title}</h1><ul>{links}</ul></body></html>"
    ))
}

/// The numbers of a path like `/calendar/2024/11/05/` after `prefix`.
fn numbers(path: &str, prefix: &str) -> Option<Vec<u32>> {
    path.strip_prefix(prefix)?
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect()
}

/// `/calendar/Y/M/` (prev/next month, its 28 days, a jump to 2999 and to
/// 1900), `/calendar/Y/M/D/` (prev/next day, its month), `/news/Y/M/` (the
/// month's articles when it has some, always the month before), articles.
async fn calendar_site() -> TestServer {
    TestServer::start(|req| {
        let path = req.path.as_str();
        if path == "/robots.txt" {
            return Reply::status(404);
        }
        if path == "/" {
            return page(
                "Home",
                &[
                    "/calendar/2024/11/".to_string(),
                    "/news/2024/11/".to_string(),
                ],
            );
        }
        if path.ends_with(".html") {
            let title = path.rsplit('/').next().unwrap_or_default();
            return Reply::html(format!(
                "<html><head><title>{title}</title></head><body><article><h1>{title}</h1>\
                 <p>A story published on the date of its address, with enough words to be \
                 an article: the council met, the budget passed, the river rose.</p>\
                 </article></body></html>"
            ));
        }
        if let Some(n) = numbers(path, "/news/") {
            let [y, m] = n[..] else {
                return Reply::status(404);
            };
            let y = i32::try_from(y).unwrap_or(0);
            let mut links = if NEWS_MONTHS.contains(&(y, m)) {
                article_paths(y, m)
            } else {
                Vec::new()
            };
            let (py, pm) = prev(y, m);
            links.push(format!("/news/{py}/{pm:02}/"));
            return page(&format!("News {y}-{m:02}"), &links);
        }
        if let Some(n) = numbers(path, "/calendar/") {
            let y = i32::try_from(n.first().copied().unwrap_or(0)).unwrap_or(0);
            match n[..] {
                [_, m] => {
                    let (py, pm) = prev(y, m);
                    let (ny, nm) = next(y, m);
                    let mut links = vec![
                        format!("/calendar/{py}/{pm:02}/"),
                        format!("/calendar/{ny}/{nm:02}/"),
                        "/calendar/2999/01/".to_string(),
                        "/calendar/1900/01/".to_string(),
                    ];
                    links.extend((1..=28).map(|d| format!("/calendar/{y}/{m:02}/{d:02}/")));
                    return page(&format!("Calendar {y}-{m:02}"), &links);
                }
                [_, m, d] => {
                    let (py, pm, pd) = if d == 1 {
                        let (py, pm) = prev(y, m);
                        (py, pm, 28)
                    } else {
                        (y, m, d - 1)
                    };
                    let (ny, nm, nd) = if d >= 28 {
                        let (ny, nm) = next(y, m);
                        (ny, nm, 1)
                    } else {
                        (y, m, d + 1)
                    };
                    return page(
                        &format!("Calendar {y}-{m:02}-{d:02}"),
                        &[
                            format!("/calendar/{py}/{pm:02}/{pd:02}/"),
                            format!("/calendar/{ny}/{nm:02}/{nd:02}/"),
                            format!("/calendar/{y}/{m:02}/"),
                        ],
                    );
                }
                _ => {}
            }
        }
        Reply::status(404)
    })
    .await
}

#[tokio::test]
async fn an_endless_calendar_ends_and_dated_articles_are_still_archived() {
    let server = calendar_site().await;
    let cfg = test_config(vec![server.url("/")]);
    let (summary, events) = tokio::time::timeout(Duration::from_secs(240), run(cfg))
        .await
        .expect("the crawl ends by itself");
    assert!(!summary.cancelled);

    // Every article of the archive is archived.
    let got: BTreeSet<String> = pages(&events)
        .iter()
        .filter_map(|p| crawler::Url::parse(&p.url).ok())
        .map(|u| u.path().to_string())
        .collect();
    for (y, m) in NEWS_MONTHS {
        for a in article_paths(y, m) {
            assert!(got.contains(&a), "{a} archived; got {} pages", got.len());
        }
    }

    // The calendar was cut, and the cut is counted.
    let refused = summary.refused.get("calendar").copied().unwrap_or(0);
    assert!(refused > 0, "{:?}", summary.refused);
    assert_eq!(
        summary.refused.get("host_limit"),
        None,
        "not the per-host cap"
    );
    let hits = server.all_hits();
    for far in ["/calendar/2999/01/", "/calendar/1900/01/"] {
        assert_eq!(hits.get(far), None, "{far} is refused when queued");
    }
    // Months of the calendar and archive pages fetched: the months with
    // articles plus at most the empty-month budget.
    let months: BTreeSet<(u32, u32)> = hits
        .keys()
        .filter(|p| !p.ends_with(".html"))
        .filter_map(|p| numbers(p, "/calendar/").or_else(|| numbers(p, "/news/")))
        .filter_map(|n| Some((*n.first()?, *n.get(1)?)))
        .collect();
    let budget = DEFAULT_MAX_EMPTY_CALENDAR_MONTHS as usize + NEWS_MONTHS.len();
    assert!(
        months.len() <= budget,
        "{} months fetched, at most {budget}: {months:?}",
        months.len()
    );
    assert!(months
        .iter()
        .all(|(y, _)| i64::from(*y) >= i64::from(DEFAULT_CALENDAR_MIN_YEAR)));
    // Each month at most its page, 28 days and the archive's page.
    assert!(
        summary.pages <= (budget as u64) * 30 + 1 + 9,
        "{} pages",
        summary.pages
    );
}
