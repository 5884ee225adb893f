//! The HTTP API without a server (tower `oneshot` on the router) over a real
//! crawl of the demo site: every endpoint, cursor paging, filled statistics,
//! the sandboxed raw page, the token, and every 400 case naming its parameter.

mod util;

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use harvest::config::Config;
use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use harvest::serve::{self, AppState};
use harvest::stores::Stores;
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use util::{Site, Workspace};

const SOURCE: &str = "lohelp";

struct Fixture {
    _ws: Workspace,
    /// Opened once: the embedded store allows one opener per process.
    stores: Stores,
    /// Pages the crawl stored (revisits excluded).
    pages: u64,
    _site: Site,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let site = Site::demo();
        let ws = Workspace::new(&site.url(DEMO_ENTRY), SOURCE, Some(DEMO_DEPTH));
        ws.train_demo_model();
        let summary = ws.crawl();
        let pages =
            summary["pages"].as_u64().unwrap() - summary["duplicates"].as_u64().unwrap_or(0);
        let cfg = Config::load(Some(&ws.config)).expect("config");
        let stores = Stores::open(&cfg).expect("stores");
        Fixture {
            _ws: ws,
            stores,
            pages,
            _site: site,
        }
    })
}

fn app(token: Option<&str>) -> Router {
    serve::router(AppState::new(
        fixture().stores.clone(),
        token.map(str::to_string),
    ))
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn call_with(app: &Router, uri: &str, token: Option<&str>) -> Answer {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut req = Request::builder().uri(uri);
        if let Some(t) = token {
            // A whole header value ("scheme token") is sent as it is.
            let value = if t.contains(' ') {
                t.to_string()
            } else {
                format!("Bearer {t}")
            };
            req = req.header(header::AUTHORIZATION, value);
        }
        let resp = app
            .clone()
            .oneshot(req.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec();
        Answer {
            status,
            headers,
            body,
        }
    })
}

fn call(app: &Router, uri: &str) -> Answer {
    call_with(app, uri, None)
}

fn ok_json(app: &Router, uri: &str) -> Value {
    let a = call(app, uri);
    assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.text());
    a.json()
}

/// Today and the next day in UTC: the demo pages carry no publish date, so
/// they are filed at their fetch time.
fn today() -> (String, String) {
    let d = chrono::Utc::now().date_naive();
    (d.to_string(), (d + chrono::Duration::days(1)).to_string())
}

#[test]
fn search_pages_through_every_hit_with_cursors() {
    let app = app(None);
    let f = fixture();
    let mut seen = std::collections::BTreeSet::new();
    let mut uri = format!("/api/search?source={SOURCE}&limit=50");
    let mut pages = 0;
    let mut last_time: Option<String> = None;
    loop {
        let v = ok_json(&app, &uri);
        let hits = v["hits"].as_array().unwrap();
        assert!(hits.len() <= 50);
        for h in hits {
            let id = h["id"].as_str().unwrap().to_string();
            assert!(seen.insert(id.clone()), "hit {id} repeated across pages");
            assert_eq!(h["links"]["raw"], format!("/api/pages/{id}/raw"));
            assert_eq!(h["source"], SOURCE);
            // Newest first by default (row keys order by the second).
            let t = h["published"].as_str().or(h["fetched"].as_str()).unwrap()[..19].to_string();
            if let Some(prev) = &last_time {
                assert!(&t <= prev, "{t} after {prev}");
            }
            last_time = Some(t);
        }
        pages += 1;
        match v["next_cursor"].as_str() {
            Some(c) => uri = format!("/api/search?source={SOURCE}&limit=50&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(
        seen.len() as u64,
        f.pages,
        "paging must return every page once"
    );
    assert!(pages > 1);
}

#[test]
fn filters_combine_like_the_command_line() {
    let app = app(None);
    let topics = ok_json(&app, "/api/topics");
    let topic = topics["topics"][0]["name"].as_str().unwrap().to_string();
    let v = ok_json(&app, &format!("/api/search?topic={topic}&limit=200"));
    let hits = v["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h["topic"] == topic.as_str()));
    // A keyword of the first hit (a word of its text) finds it; ALL of two is a subset of ANY.
    let kws: Vec<String> = hits[0]["keywords"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    assert!(kws.len() >= 2, "{kws:?}");
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    // Every hit of a search, page after page (the words match more than a page of hits).
    let every = |query: &str| -> Vec<Value> {
        let mut out = Vec::new();
        let mut uri = format!("/api/search?{query}&limit=200");
        loop {
            let v = ok_json(&app, &uri);
            out.extend(v["hits"].as_array().unwrap().iter().cloned());
            match v["next_cursor"].as_str() {
                Some(c) => uri = format!("/api/search?{query}&limit=200&cursor={c}"),
                None => return out,
            }
        }
    };
    let ids = |hits: &[Value]| -> std::collections::BTreeSet<String> {
        hits.iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    };
    let all = every(&format!(
        "keyword={}&keyword={}",
        enc(&kws[0]),
        enc(&kws[1])
    ));
    let any = every(&format!("any={},{}", enc(&kws[0]), enc(&kws[1])));
    assert!(ids(&all).contains(hits[0]["id"].as_str().unwrap()));
    assert!(ids(&all).is_subset(&ids(&any)));
    assert!(any.len() >= all.len());
    // Sorting by relevance gives the same pages, by BM25 score of the words.
    let rel = every(&format!(
        "any={},{}&sort=relevance",
        enc(&kws[0]),
        enc(&kws[1])
    ));
    assert_eq!(ids(&rel), ids(&any));
    assert_eq!(rel.len(), any.len());
    let scores: Vec<f64> = rel
        .iter()
        .map(|h| h["score"].as_f64().expect("a relevance hit has a score"))
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

/// Issue 11: every hit says where its publish time came from, and the
/// `published_from` filter selects exactly the pages with those sources, in
/// search and in statistics (whose counts over all sources add up).
#[test]
fn published_from_is_shown_and_filters_search_and_stats() {
    let f = fixture();
    let app = app(None);
    const FROM: [&str; 8] = [
        "meta", "jsonld", "time", "text", "url", "feed", "sitemap", "fetch",
    ];
    let hits = ok_json(&app, "/api/search?limit=200")["hits"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!hits.is_empty());
    for h in &hits {
        let from = h["published_from"]
            .as_str()
            .unwrap_or_else(|| panic!("no published_from: {h}"));
        assert!(FROM.contains(&from), "{from}");
        // A page filed under its fetch time has no publish time, and back.
        assert_eq!(from == "fetch", h["published"].is_null(), "{h}");
    }
    let mut sum = 0;
    for from in FROM {
        let total = ok_json(&app, &format!("/api/stats.json?published_from={from}"))["total"]
            .as_u64()
            .unwrap();
        sum += total;
        let got = ok_json(&app, &format!("/api/search?limit=50&published_from={from}"));
        let got = got["hits"].as_array().unwrap();
        assert_eq!(got.len() as u64, total.min(50), "{from}");
        assert!(got.iter().all(|h| h["published_from"] == from), "{from}");
    }
    assert_eq!(
        sum, f.pages,
        "every page has exactly one source of its time"
    );
    let two = ok_json(&app, "/api/stats.json?published_from=fetch,text")["total"]
        .as_u64()
        .unwrap();
    let fetch = ok_json(&app, "/api/stats.json?published_from=fetch")["total"]
        .as_u64()
        .unwrap();
    let text = ok_json(&app, "/api/stats.json?published_from=text")["total"]
        .as_u64()
        .unwrap();
    assert_eq!(two, fetch + text);
    // The page detail shows it too, with the author and the media flag.
    let id = hits[0]["id"].as_str().unwrap();
    let page = ok_json(&app, &format!("/api/pages/{id}"));
    assert_eq!(page["published_from"], hits[0]["published_from"]);
    assert!(
        page.get("author").is_some() && page["media_from_host"].is_boolean(),
        "{page}"
    );
}

#[test]
fn stats_fill_empty_buckets_and_export() {
    let app = app(None);
    let f = fixture();
    let (day, _) = today();
    let from = (chrono::Utc::now().date_naive() - chrono::Duration::days(6)).to_string();
    let v = ok_json(
        &app,
        &format!("/api/stats?source={SOURCE}&from={from}&to={day}&interval=day&group_by=topic"),
    );
    let buckets = v["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 7, "a week of days, empty ones included: {v}");
    assert_eq!(buckets[6], day.as_str());
    let series = v["series"].as_array().unwrap();
    assert!(series.len() >= 2);
    let sum: u64 = series
        .iter()
        .flat_map(|s| s["counts"].as_array().unwrap().iter())
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(sum, f.pages);
    assert_eq!(v["total"].as_u64(), Some(f.pages));
    for s in series {
        let counts = s["counts"].as_array().unwrap();
        assert_eq!(counts.len(), 7);
        assert!(counts[..6].iter().all(|c| c == 0), "earlier days are empty");
    }
    // CSV: header, one row per bucket and group, same total.
    let csv = call(
        &app,
        &format!("/api/stats.csv?source={SOURCE}&from={from}&to={day}&group_by=topic"),
    );
    assert_eq!(csv.status, StatusCode::OK);
    assert!(csv.headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    assert!(csv.headers[header::CONTENT_DISPOSITION]
        .to_str()
        .unwrap()
        .contains("attachment"));
    let text = csv.text();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("bucket,group,count"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 7 * series.len());
    let csv_sum: u64 = rows
        .iter()
        .map(|r| r.rsplit(',').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(csv_sum, f.pages);
    let json = call(
        &app,
        &format!("/api/stats.json?source={SOURCE}&from={from}&to={day}"),
    );
    assert_eq!(json.status, StatusCode::OK);
    assert_eq!(json.json()["total"].as_u64(), Some(f.pages));
    // Month buckets in Shanghai time.
    let m = ok_json(
        &app,
        &format!("/api/stats?source={SOURCE}&from={from}&to={day}&interval=month&tz=Asia/Shanghai"),
    );
    assert!(m["buckets"][0].as_str().unwrap().len() == 7, "{m}");
    assert_eq!(m["tz"], "Asia/Shanghai");
}

/// Issue 10 item 7: `from=2025-01-01&to=2026-12-31&interval=day` gave 32
/// buckets (from the first counted day on) when only this year's table
/// existed; the given range is filled whole.
#[test]
fn stats_fill_out_to_given_bounds_over_years_without_a_table() {
    use chrono::Datelike;
    let app = app(None);
    let f = fixture();
    let year = chrono::Utc::now().year();
    let first = chrono::NaiveDate::from_ymd_opt(year - 1, 1, 1).unwrap();
    let last = chrono::NaiveDate::from_ymd_opt(year, 12, 31).unwrap();
    let days = usize::try_from((last - first).num_days() + 1).unwrap();
    let v = ok_json(
        &app,
        &format!("/api/stats?source={SOURCE}&from={first}&to={last}&interval=day"),
    );
    let buckets = v["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), days, "every day of both years");
    assert_eq!(buckets[0], first.to_string().as_str());
    assert_eq!(buckets[days - 1], last.to_string().as_str());
    assert_eq!(v["total"].as_u64(), Some(f.pages));
    // One bound given: filled out to it, and to the last counted day.
    let v = ok_json(
        &app,
        &format!("/api/stats?source={SOURCE}&from={first}&interval=month"),
    );
    let buckets = v["buckets"].as_array().unwrap();
    assert_eq!(buckets[0], format!("{}-01", year - 1).as_str());
    let this_month = chrono::Utc::now().format("%Y-%m").to_string();
    assert_eq!(buckets.last().unwrap(), this_month.as_str());
    // No bound: the first to the last counted bucket, as before.
    let v = ok_json(&app, &format!("/api/stats?source={SOURCE}&interval=year"));
    assert_eq!(v["buckets"], serde_json::json!([year.to_string()]));
}

/// Issue 10 item 7: a topic or media that no page has gave a silent 0; the
/// answer now says so in `warnings` (unknown sources stay a 400).
#[test]
fn unknown_topics_and_media_are_named_in_warnings() {
    let app = app(None);
    let v = ok_json(&app, "/api/search?topic=nosuchtopic&limit=5");
    assert_eq!(v["hits"].as_array().unwrap().len(), 0);
    let w = v["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{v}");
    assert_eq!(w[0]["param"], "topic");
    assert_eq!(w[0]["value"], "nosuchtopic");
    let known = ok_json(&app, "/api/topics");
    let a_topic = known["topics"][0]["name"].as_str().unwrap();
    let message = w[0]["message"].as_str().unwrap();
    assert!(
        message.contains("nosuchtopic") && message.contains(a_topic),
        "{message}"
    );

    // A known topic beside an unknown media: one warning, for the media.
    let v = ok_json(
        &app,
        &format!("/api/stats?source={SOURCE}&topic={a_topic}&media=nosuchmedia"),
    );
    let w = v["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{v}");
    assert_eq!(w[0]["param"], "media");
    assert!(w[0]["message"].as_str().unwrap().contains(SOURCE), "{v}");
    let json = call(&app, "/api/stats.json?media=nosuchmedia").json();
    assert_eq!(json["warnings"][0]["value"], "nosuchmedia");

    // Known values: an empty list.
    let v = ok_json(&app, &format!("/api/search?topic={a_topic}&limit=1"));
    assert_eq!(v["warnings"], serde_json::json!([]));
    assert_eq!(v["hits"].as_array().unwrap().len(), 1);
    let v = ok_json(&app, &format!("/api/stats?source={SOURCE}&topic={a_topic}"));
    assert_eq!(v["warnings"], serde_json::json!([]));
}

#[test]
fn page_detail_and_the_sandboxed_original() {
    let app = app(None);
    let f = fixture();
    let v = ok_json(&app, &format!("/api/search?source={SOURCE}&limit=1"));
    let hit = &v["hits"][0];
    let id = hit["id"].as_str().unwrap();
    let d = ok_json(&app, &format!("/api/pages/{id}"));
    assert_eq!(d["url"], hit["url"]);
    assert!(d["pack"]["path"].as_str().unwrap().ends_with(".warc.gz"));
    assert!(d["pack"]["length"].as_u64().unwrap() > 0);
    assert!(d["captures"]["count"].as_u64().unwrap() >= 1);
    assert!(d["captures"]["first_seen"].is_string(), "{d}");
    assert!(d["digest"].as_str().unwrap().starts_with("sha1:"));

    let raw = call(&app, &format!("/api/pages/{id}/raw"));
    assert_eq!(raw.status, StatusCode::OK);
    let csp = raw.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(csp.starts_with("sandbox"), "{csp}");
    assert!(csp.contains("default-src 'none'"));
    assert_eq!(raw.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert!(raw.headers.get(header::SET_COOKIE).is_none());
    assert!(raw.headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    // The same bytes `harvest get URL` prints.
    let original = harvest::read::capture(
        &f.stores,
        hit["url"].as_str().unwrap(),
        None,
        harvest::read::Part::Payload,
    )
    .unwrap();
    assert_eq!(raw.body, original);
    assert!(String::from_utf8_lossy(&raw.body).contains(hit["title"].as_str().unwrap()));

    // A well-formed id of no page: 404; a malformed one: 400 naming `id`.
    let mut other: Vec<char> = id.chars().collect();
    let last = other.len() - 1;
    other[last] = if other[last] == 'A' { 'B' } else { 'A' };
    let other: String = other.into_iter().collect();
    let missing = call(&app, &format!("/api/pages/{other}"));
    assert!(
        missing.status == StatusCode::NOT_FOUND || missing.status == StatusCode::BAD_REQUEST,
        "{}",
        missing.text()
    );
    let bad = call(&app, "/api/pages/not-an-id!");
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.json()["error"]["param"], "id");
}

#[test]
fn lists_health_metrics_and_openapi() {
    let app = app(None);
    let s = ok_json(&app, "/api/sources");
    assert_eq!(s["sources"][0]["name"], SOURCE);
    assert!(!s["sources"][0]["years"].as_array().unwrap().is_empty());
    let t = ok_json(&app, &format!("/api/topics?source={SOURCE}"));
    assert!(t["topics"].as_array().unwrap().len() >= 2);
    assert_eq!(call(&app, "/healthz").text(), "ok\n");
    ok_json(&app, "/api/search?limit=3");
    let m = call(&app, "/metrics");
    assert_eq!(m.status, StatusCode::OK);
    let text = m.text();
    assert!(
        text.contains(&format!("harvest_pages {}", fixture().pages)),
        "{text}"
    );
    assert!(text.contains("harvest_http_request_duration_seconds_count{route=\"search\"}"));
    let ui = call(&app, "/");
    assert_eq!(ui.status, StatusCode::OK);
    assert!(ui.text().contains("<html"));
    assert_eq!(call(&app, "/assets/app.js").status, StatusCode::OK);
    assert_eq!(call(&app, "/no/such/route").status, StatusCode::NOT_FOUND);
    // Each request is counted under its route's label: a page's id collapses into
    // its route, a path no route has is `other`.
    let hits = ok_json(&app, "/api/search?limit=1");
    let id = hits["hits"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        call(&app, &format!("/api/pages/{id}/raw")).status,
        StatusCode::OK
    );
    assert_eq!(
        call(&app, &format!("/api/pages/{id}")).status,
        StatusCode::OK
    );
    let text = call(&app, "/metrics").text();
    for (label, n) in [
        ("sources", 1),
        ("topics", 1),
        ("healthz", 1),
        ("search", 2),
        ("page_raw", 1),
        ("page", 1),
        ("metrics", 1),
        ("ui", 2),
        ("other", 1),
    ] {
        let line = format!("harvest_http_request_duration_seconds_count{{route=\"{label}\"}} {n}");
        assert!(text.contains(&line), "{line} in:\n{text}");
    }
}

/// A value the handlers accept for each documented parameter.
fn sample(param: &str) -> String {
    let (day, _) = today();
    match param {
        "source" => SOURCE.into(),
        "from" | "to" => day,
        "tz" => "Asia/Shanghai".into(),
        "topic" => "shared".into(),
        "media" | "outlet" => "127.0.0.1".into(),
        "keyword" | "any" | "text" => "%E6%95%B0%E6%8D%AE".into(),
        "min_comments" => "0".into(),
        "max_comments" => "100000".into(),
        "collapse" | "revisits" => "true".into(),
        "published_from" => "fetch,text".into(),
        "sort" => "time".into(),
        "limit" => "5".into(),
        "interval" => "week".into(),
        "group_by" => "media".into(),
        "job" => "news".into(),
        other => panic!("no sample for documented parameter {other}"),
    }
}

#[test]
fn every_documented_route_and_parameter_is_served() {
    let app = app(None);
    let doc = ok_json(&app, "/api/openapi.json");
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    let documented = serve::ROUTES.iter().filter(|r| r.doc.is_some());
    assert_eq!(paths.len(), documented.count());
    let first = ok_json(&app, "/api/search?limit=1");
    let id = first["hits"][0]["id"].as_str().unwrap().to_string();
    for (path, item) in paths {
        if item["get"].is_null() {
            // Commands (POST) need a configured server: tests/recrawl.rs.
            assert!(item["post"].is_object(), "{path} has neither GET nor POST");
            continue;
        }
        let op = &item["get"];
        let mut query = Vec::new();
        let mut takes_cursor = false;
        for p in op["parameters"].as_array().unwrap() {
            let name = p["name"].as_str().unwrap();
            if name == "cursor" {
                takes_cursor = true;
            } else if p["in"] == "query" {
                query.push(format!("{name}={}", sample(name)));
            }
        }
        let base = format!("{}?{}", path.replace("{id}", &id), query.join("&"));
        if takes_cursor {
            // A cursor is bound to its query: page on from a one-hit answer.
            let one = ok_json(&app, &format!("{base}&limit=1").replace("limit=5&", ""));
            if let Some(c) = one["next_cursor"].as_str() {
                query.push(format!("cursor={c}"));
                query.retain(|q| !q.starts_with("limit="));
                query.push("limit=1".into());
            }
        }
        let uri = format!("{}?{}", path.replace("{id}", &id), query.join("&"));
        let a = call(&app, &uri);
        assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.text());
        assert!(op["responses"]["200"].is_object());
        if path.starts_with("/api/") && a.headers[header::CONTENT_TYPE] == "application/json" {
            // Documented required properties are present.
            if let Some(r) =
                op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].as_str()
            {
                let name = r.rsplit('/').next().unwrap();
                let schema = &doc["components"]["schemas"][name];
                for req in schema["required"].as_array().into_iter().flatten() {
                    assert!(
                        a.json().get(req.as_str().unwrap()).is_some(),
                        "{uri}: missing {req}"
                    );
                }
            }
        }
    }
}

#[test]
fn bad_requests_name_the_parameter() {
    let app = app(None);
    let cases: &[(&str, &str)] = &[
        ("/api/search?topics=x", "topics"),
        ("/api/search?from=2017-02-30", "from"),
        ("/api/search?to=yesterday", "to"),
        ("/api/search?from=2017-03-01&to=2017-02-01", "from"),
        ("/api/search?limit=201", "limit"),
        ("/api/search?limit=0", "limit"),
        ("/api/search?limit=ten", "limit"),
        ("/api/search?source=nosuchsource", "source"),
        ("/api/search?source=Bad%20Name", "source"),
        ("/api/search?cursor=garbage", "cursor"),
        ("/api/search?tz=Mars/Olympus", "tz"),
        ("/api/search?sort=random", "sort"),
        ("/api/search?min_comments=5&max_comments=1", "min_comments"),
        ("/api/search?min_comments=-1", "min_comments"),
        ("/api/search?collapse=perhaps", "collapse"),
        ("/api/search?published_from=guess", "published_from"),
        ("/api/stats?published_from=meta,somewhere", "published_from"),
        ("/api/search?from=2017-01-01&from=2017-01-02", "from"),
        ("/api/stats?interval=hour", "interval"),
        ("/api/stats?group_by=colour", "group_by"),
        ("/api/stats?limit=5", "limit"),
        ("/api/stats.csv?tz=+25:00", "tz"),
        ("/api/stats.json?source=nosuchsource", "source"),
        ("/api/topics?source=nosuchsource", "source"),
        ("/api/sources?x=1", "x"),
        ("/api/openapi.json?x=1", "x"),
    ];
    for (uri, param) in cases {
        let a = call(&app, uri);
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{uri}: {}", a.text());
        let v = a.json();
        assert_eq!(v["error"]["param"], *param, "{uri}: {v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
    }
    // A cursor made for one order is refused under another.
    let first = ok_json(&app, "/api/search?limit=1&sort=time");
    let c = first["next_cursor"].as_str().unwrap();
    let a = call(
        &app,
        &format!("/api/search?limit=1&sort=comments&cursor={c}"),
    );
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert_eq!(a.json()["error"]["param"], "cursor");
}

#[test]
fn a_token_protects_the_api_but_not_health() {
    let token = "s3cret";
    let app = app(Some(token));
    let denied = call(&app, "/api/search?limit=1");
    assert_eq!(denied.status, StatusCode::UNAUTHORIZED);
    assert!(denied.headers.get(header::WWW_AUTHENTICATE).is_some());
    assert_eq!(
        call_with(&app, "/api/search?limit=1", Some("wrong")).status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        call_with(&app, "/api/search?limit=1", Some(token)).status,
        StatusCode::OK
    );
    // The scheme name is case-insensitive (RFC 9110, 11.1); another scheme
    // or an empty token is not a bearer token.
    for (value, status) in [
        ("bearer s3cret", StatusCode::OK),
        ("BEARER  s3cret ", StatusCode::OK),
        ("Basic s3cret", StatusCode::UNAUTHORIZED),
        ("Bearer  ", StatusCode::UNAUTHORIZED),
    ] {
        assert_eq!(
            call_with(&app, "/api/search?limit=1", Some(value)).status,
            status,
            "Authorization: {value:?}"
        );
    }
    assert_eq!(call(&app, "/metrics").status, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&app, "/healthz").status, StatusCode::OK);
}

/// `text=`: the headline's words find their page (ranked by relevance), the
/// stats count what the search finds, and a query that does not parse is a
/// 400 naming `text` and the character.
#[test]
fn text_search_finds_headline_words_and_refuses_bad_queries() {
    let app = app(None);
    let all = call(&app, "/api/search?limit=50").json();
    let hits = all["hits"].as_array().expect("hits");
    let title = hits
        .iter()
        .filter_map(|h| h["title"].as_str())
        .find(|t| t.chars().count() >= 4)
        .expect("a page with a headline")
        .to_owned();
    let word = tokens::tokenize(&title)
        .into_iter()
        .max_by_key(|w| w.chars().count())
        .expect("a word of the headline");
    let enc: String =
        url::form_urlencoded::byte_serialize(format!("title:{word}").as_bytes()).collect();
    let found = call(
        &app,
        &format!("/api/search?text={enc}&sort=relevance&limit=100"),
    );
    assert_eq!(found.status, StatusCode::OK, "{}", found.text());
    let found = found.json();
    let titles: Vec<&str> = found["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["title"].as_str())
        .collect();
    assert!(titles.contains(&title.as_str()), "{word:?} -> {titles:?}");
    // Each hit carries the passage holding the word, marked.
    for h in found["hits"].as_array().expect("hits") {
        let s = h["snippet"].as_str().unwrap_or_default();
        assert!(
            s.contains(&format!("<mark>{word}</mark>"))
                || s.to_lowercase().contains(&format!("<mark>{word}</mark>")),
            "{word:?}: {s:?}"
        );
    }
    // Each headline holds the word, maybe inside a longer one (`数据` in `数据库`).
    for t in &titles {
        assert!(t.to_lowercase().contains(&word), "{t:?} holds no {word:?}");
    }
    let stats = call(&app, &format!("/api/stats?text={enc}&interval=year")).json();
    assert_eq!(stats["total"].as_u64(), Some(titles.len() as u64));
    let bad = call(&app, "/api/search?text=%22unclosed");
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let err = bad.json();
    assert_eq!(err["error"]["param"], "text");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("character 1"),
        "{err}"
    );
}

/// A host name allowed when the state is set up is answered (in any case,
/// with a port); any other name is refused. The setting is made on the state
/// by value, before the router shares it, so it cannot be dropped silently.
#[test]
fn hosts_allowed_at_setup_are_answered_and_other_names_refused() {
    let app = serve::router(
        AppState::new(fixture().stores.clone(), None)
            .allowing_hosts(vec!["Archive.Example".to_string()]),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let status = |host: &str| {
        let req = Request::builder()
            .uri("/api/sources")
            .header(header::HOST, host)
            .body(Body::empty())
            .unwrap();
        rt.block_on(app.clone().oneshot(req)).unwrap().status()
    };
    assert_eq!(status("archive.example:8080"), StatusCode::OK);
    assert_eq!(status("ARCHIVE.example"), StatusCode::OK);
    assert_eq!(status("elsewhere.example"), StatusCode::FORBIDDEN);
}
