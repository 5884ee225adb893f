//! Every answer is a record (issue 14 item 2): a redirect and the error
//! answers of a crawl are archived as `response` records, `harvest get`
//! follows an archived redirect to its page, and a reindex keeps them.

mod util;

use axum::body::Body;
use axum::http::{header, StatusCode, Uri};
use axum::response::Response;
use util::{assert_records_linked, assert_warcio_accepts, jsonl, walk_packs, Workspace};

const NEW_PAGE: &str =
    "<html><head><title>The new place</title></head><body><p>Moved here.</p></body></html>";
const GONE: &str = "<html><body><h1>404</h1><p>Nothing here.</p></body></html>";

async fn answer(uri: Uri) -> Response {
    let html = |status: StatusCode, body: &str| {
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "text/html")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    match uri.path() {
        "/index.html" => html(
            StatusCode::OK,
            r#"<html><head><title>Home</title></head><body>
               <a href="/old">old</a> <a href="/alias">alias</a> <a href="/gone.html">gone</a> <a href="/boom">boom</a></body></html>"#,
        ),
        "/old" => Response::builder()
            .status(StatusCode::MOVED_PERMANENTLY)
            .header(header::LOCATION, "/new.html")
            .body(Body::from("moved"))
            .unwrap(),
        // A second name of the same page: whichever redirect comes second
        // leads to a page already seen, and is archived all the same.
        "/alias" => Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, "/new.html")
            .body(Body::from("found"))
            .unwrap(),
        "/new.html" => html(StatusCode::OK, NEW_PAGE),
        "/boom" => html(StatusCode::INTERNAL_SERVER_ERROR, "<p>server error</p>"),
        _ => html(StatusCode::NOT_FOUND, GONE),
    }
}

/// A chain of two redirects, one relative, one absolute-path, to a page.
async fn chain(uri: Uri) -> Response {
    let redirect = |status: StatusCode, to: &str| {
        Response::builder()
            .status(status)
            .header(header::LOCATION, to)
            .body(Body::from("moved"))
            .unwrap()
    };
    match uri.path() {
        "/index.html" => Response::builder()
            .header(header::CONTENT_TYPE, "text/html")
            .body(Body::from(
                r#"<html><head><title>Home</title></head><body><a href="/r/1">one</a></body></html>"#,
            ))
            .unwrap(),
        "/r/1" => redirect(StatusCode::FOUND, "2"),
        "/r/2" => redirect(StatusCode::MOVED_PERMANENTLY, "/new.html"),
        "/new.html" => Response::builder()
            .header(header::CONTENT_TYPE, "text/html")
            .body(Body::from(NEW_PAGE))
            .unwrap(),
        _ => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Body::from(GONE))
            .unwrap(),
    }
}

fn serve() -> (tokio::runtime::Runtime, String) {
    serve_with(answer)
}

fn serve_with<F, Fut>(handler: F) -> (tokio::runtime::Runtime, String)
where
    F: Fn(Uri) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let base = rt.block_on(async {
        let app = axum::Router::new().fallback(move |uri: Uri| handler(uri));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    });
    (rt, base)
}

#[test]
fn redirects_and_error_answers_are_records_and_get_follows_the_redirect() {
    let (_rt, base) = serve();
    let ws = Workspace::new(&format!("{base}/index.html"), "answers", None);
    ws.configure(|raw| raw.crawl.retries = Some(0));
    let summary = ws.crawl();
    assert_eq!(summary["pages"].as_u64(), Some(2), "{summary}");
    assert_eq!(summary["answers"].as_u64(), Some(4), "{summary}");
    // The failures are still counted as such.
    assert_eq!(
        summary["failures"]["http_404"].as_u64(),
        Some(1),
        "{summary}"
    );
    assert_eq!(
        summary["failures"]["http_500"].as_u64(),
        Some(1),
        "{summary}"
    );

    // Pages are the rows; the answers are records and captures.
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    assert_eq!(rows.len(), 2);
    let records = walk_packs(&ws);
    let status_of = |path: &str| -> Option<u16> {
        let url = format!("{base}{path}");
        let pack = records.iter().find(|r| r.uri == url)?;
        let bytes = std::fs::read(&pack.pack).ok()?;
        packer::warc::RecordIter::new(&bytes)
            .filter_map(|r| r.ok())
            .find(|(_, _, rec)| rec.target_uri() == Some(url.as_str()))
            .and_then(|(_, _, rec)| rec.http_response().ok())
            .map(|h| h.status)
    };
    assert_eq!(status_of("/old"), Some(301));
    assert_eq!(status_of("/alias"), Some(302));
    assert_eq!(status_of("/gone.html"), Some(404));
    assert_eq!(status_of("/boom"), Some(500));
    for pack in ws.packs() {
        assert_warcio_accepts(&pack);
    }
    // Each answer has its request record, as every page has.
    let links = assert_records_linked(&ws);
    assert_eq!(links.captures, records.len());
    assert_eq!(links.captures, 6, "2 pages, 4 answers");
    for path in ["/old", "/alias", "/gone.html", "/boom", "/new.html"] {
        let headers = links
            .headers_of(&format!("{base}{path}"))
            .unwrap_or_else(|| panic!("no request record of {path}"));
        assert_eq!(headers["host"], base.trim_start_matches("http://"));
    }

    // get: the redirect leads to the page; the error answer is its body.
    let old = format!("{base}/old");
    assert_eq!(ws.harvest(&["get", &old]).stdout, NEW_PAGE.as_bytes());
    // Both names of the page, although its body was fetched once.
    let alias = format!("{base}/alias");
    assert_eq!(ws.harvest(&["get", &alias]).stdout, NEW_PAGE.as_bytes());
    let record =
        String::from_utf8_lossy(&ws.harvest(&["get", "--record", &old]).stdout).to_string();
    assert!(
        record.contains(" 301 ") && record.to_ascii_lowercase().contains("location: /new.html"),
        "{record}"
    );
    assert_eq!(
        ws.harvest(&["get", &format!("{base}/gone.html")]).stdout,
        GONE.as_bytes()
    );
    let never = ws.harvest_raw(&["get", &format!("{base}/never.html")]);
    assert!(!never.status.success());

    // A rebuilt index keeps the answers.
    ws.harvest(&["reindex", "--replace", "--quiet"]);
    assert_eq!(ws.harvest(&["get", &old]).stdout, NEW_PAGE.as_bytes());
    assert_eq!(ws.harvest(&["get", &alias]).stdout, NEW_PAGE.as_bytes());
    let fsck: serde_json::Value =
        serde_json::from_slice(&ws.harvest(&["fsck", "--json", "--quiet"]).stdout).unwrap();
    assert_eq!(fsck["unindexed"].as_u64(), Some(0), "{fsck}");
    assert_eq!(
        jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"])).len(),
        2
    );
}

/// The read path follows an archived chain of redirects (a relative Location,
/// then an absolute path) to the page, with and without `--at`, from either
/// hop; `--record` gives the first hop's own record.
#[test]
fn get_follows_a_chain_of_archived_redirects() {
    let (_rt, base) = serve_with(chain);
    let ws = Workspace::new(&format!("{base}/index.html"), "chain", None);
    ws.configure(|raw| raw.crawl.retries = Some(0));
    let summary = ws.crawl();
    assert_eq!(summary["pages"].as_u64(), Some(2), "{summary}");
    assert_eq!(summary["answers"].as_u64(), Some(2), "{summary}");
    let first = format!("{base}/r/1");
    let second = format!("{base}/r/2");
    let now = chrono::Utc::now().to_rfc3339();
    for url in [&first, &second] {
        assert_eq!(
            ws.harvest(&["get", url]).stdout,
            NEW_PAGE.as_bytes(),
            "{url}"
        );
        assert_eq!(
            ws.harvest(&["get", url, "--at", &now]).stdout,
            NEW_PAGE.as_bytes(),
            "{url} --at {now}"
        );
    }
    let record =
        String::from_utf8_lossy(&ws.harvest(&["get", "--record", &first]).stdout).to_string();
    assert!(
        record.contains(" 302 ") && record.to_ascii_lowercase().contains("location: 2"),
        "{record}"
    );
    // Before the crawl: no capture in force, an error naming the first capture.
    let early = ws.harvest_raw(&["get", &first, "--at", "2001-01-01"]);
    assert!(!early.status.success());
    assert!(
        String::from_utf8_lossy(&early.stderr).contains("first captured"),
        "{}",
        String::from_utf8_lossy(&early.stderr)
    );
}
