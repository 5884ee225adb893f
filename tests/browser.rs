//! The web UI in a real browser: the demo site is crawled with the binary,
//! `harvest serve` answers on loopback, and Debian's headless Chromium, driven
//! over the Chrome DevTools Protocol, runs a query, pages through the results,
//! opens one (attributes + the archived page in a sandboxed iframe) and draws
//! the trend chart, whose buckets and bars are checked against /api/stats.
//! A screenshot is left at `target/browser/harvest-ui.png`.
//!
//! Needs /usr/bin/chromium: `.ci/browser-deps.sh` installs it. Without it the
//! test fails; it never skips.

mod util;

#[path = "browser/cdp.rs"]
mod cdp;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY, DEMO_SOURCE};
use serde_json::Value;

use cdp::{CdpResult, Chromium, Page, CHROMIUM};
use util::{Site, Workspace};

/// The line `harvest serve` prints on stdout once it accepts connections.
const READY_PREFIX: &str = "harvest serve: listening on ";
const SERVE_TIMEOUT: Duration = Duration::from_secs(120);
const UI_TIMEOUT: Duration = Duration::from_secs(30);
/// Days in the queried range: the day chart must have this many buckets.
const RANGE_DAYS: i64 = 7;
/// A keyword on many pages of the demo site (more than one page of results).
const KEYWORD: &str = "文档";
/// Results per page in the UI (web/app.js PAGE_LIMIT).
const UI_PAGE_LIMIT: usize = 20;
const WINDOW: (u32, u32) = (1366, 1000);
/// Bearer token of the second server.
const TOKEN: &str = "browser-test-token";

/// `harvest -c CONFIG serve --listen 127.0.0.1:0`, killed on drop.
struct Serve {
    child: Child,
    base: String,
    log: PathBuf,
}

impl Serve {
    fn start(ws: &Workspace, extra: &[&str]) -> Serve {
        let log = ws.path().join("serve.log");
        let stderr = std::fs::File::create(&log).expect("serve log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_harvest"))
            .arg("-c")
            .arg(&ws.config)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start harvest serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        // Reads the ready line, then keeps draining stdout so the server never blocks on it.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.trim().strip_prefix(READY_PREFIX) {
                    let _ = tx.send(url.trim_end_matches('/').to_string());
                }
            }
        });
        let mut serve = Serve {
            child,
            base: String::new(),
            log,
        };
        match rx.recv_timeout(SERVE_TIMEOUT) {
            Ok(base) => serve.base = base,
            Err(e) => panic!(
                "harvest serve printed no {READY_PREFIX:?} line ({e}):\n{}",
                serve.stderr()
            ),
        }
        serve
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `target/` of this build (the binary lives in `target/<profile>/`).
fn target_dir() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_harvest"));
    bin.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// A Rust string as a JavaScript string literal.
fn js(s: &str) -> String {
    serde_json::to_string(s).expect("string to JSON")
}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// The query the test types into the form.
struct Query {
    from: String,
    to: String,
    source: String,
    keyword: String,
}

impl Query {
    /// The filter parameters as the API takes them (JavaScript expression).
    fn filters_js(&self) -> String {
        format!(
            "new URLSearchParams([['from', {}], ['to', {}], ['tz', 'UTC'], ['source', {}], ['keyword', {}]])",
            js(&self.from),
            js(&self.to),
            js(&self.source),
            js(&self.keyword)
        )
    }
}

/// GET `path?params` from inside the page (same origin, same headers as the UI).
fn fetch_json(page: &mut Page, path: &str, params_js: &str) -> CdpResult<Value> {
    page.eval(&format!(
        "(async () => {{ const r = await fetch({} + '?' + {params_js}); \
         if (!r.ok) throw new Error('HTTP ' + r.status + ': ' + await r.text()); return r.json(); }})()",
        js(path)
    ))
}

/// Number of `selector` matches in the page.
fn count(page: &mut Page, selector: &str) -> CdpResult<u64> {
    let v = page.eval(&format!(
        "document.querySelectorAll({}).length",
        js(selector)
    ))?;
    v.as_u64().ok_or_else(|| format!("count {selector}: {v}"))
}

fn text_of(page: &mut Page, selector: &str) -> CdpResult<String> {
    let v = page.eval(&format!(
        "(document.querySelector({}) || {{}}).textContent || ''",
        js(selector)
    ))?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// Ids of the listed results, in order.
fn listed_ids(page: &mut Page) -> CdpResult<Vec<String>> {
    let v = page.eval("[...document.querySelectorAll('#results li')].map(li => li.dataset.id)")?;
    Ok(v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default())
}

/// Wait until the result list shows an answer whose request contained `marker`.
fn wait_results(page: &mut Page, marker: &str) -> CdpResult<u64> {
    let expr = format!(
        "(() => {{ const l = document.getElementById('list'); \
          if (!(l.dataset.params || '').includes({})) return 0; \
          if (l.dataset.status === 'error') return 'error'; \
          return l.dataset.status === 'done' ? document.querySelectorAll('#results li').length + 1 : 0; }})()",
        js(marker)
    );
    let v = page.wait_for("the result list", &expr, UI_TIMEOUT)?;
    ensure!(
        v != "error",
        "the search failed: {}",
        text_of(page, "#form-error")?
    );
    Ok(v.as_u64().unwrap_or(1) - 1)
}

/// Wait until the chart shows an answer whose request contained `marker`.
fn wait_chart(page: &mut Page, marker: &str) -> CdpResult<()> {
    let expr = format!(
        "(() => {{ const c = document.getElementById('chart'); \
          if (!(c.dataset.params || '').includes({})) return false; \
          if (c.dataset.status === 'error') return 'error'; \
          return c.dataset.status === 'done'; }})()",
        js(marker)
    );
    let v = page.wait_for("the chart", &expr, UI_TIMEOUT)?;
    ensure!(
        v != "error",
        "the stats call failed: {}",
        text_of(page, "#form-error")?
    );
    Ok(())
}

/// The chart must draw exactly the buckets and non-zero cells of `stats`.
fn check_chart(page: &mut Page, stats: &Value) -> CdpResult<u64> {
    let buckets: Vec<&str> = stats["buckets"]
        .as_array()
        .ok_or(format!("/api/stats: no buckets: {stats}"))?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let series = stats["series"]
        .as_array()
        .ok_or(format!("/api/stats: no series: {stats}"))?;
    let nonzero = series
        .iter()
        .flat_map(|s| s["counts"].as_array().cloned().unwrap_or_default())
        .filter(|c| c.as_u64().unwrap_or(0) > 0)
        .count() as u64;
    let drawn = page
        .eval("[...document.querySelectorAll('#chart svg g.bucket')].map(g => g.dataset.bucket)")?;
    let drawn: Vec<&str> = drawn
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    ensure!(
        drawn == buckets,
        "chart buckets {drawn:?} differ from /api/stats buckets {buckets:?}"
    );
    let bars = count(page, "#chart svg rect.bar")?;
    ensure!(bars > 0, "the chart has no bars");
    ensure!(
        bars == nonzero,
        "the chart has {bars} bars, /api/stats has {nonzero} non-zero bucket×series cells"
    );
    let legend = count(page, "#legend li")?;
    ensure!(
        legend == series.len() as u64,
        "legend has {legend} entries for {} series",
        series.len()
    );
    Ok(bars)
}

/// Everything the test does in the browser; `Err` is a failure message.
fn drive_query(page: &mut Page, base: &str, q: &Query, shot: &Path) -> CdpResult<()> {
    page.navigate(&format!("{base}/"), UI_TIMEOUT)?;
    page.wait_for(
        "the UI to start",
        "document.body.dataset.ready === '1'",
        UI_TIMEOUT,
    )?;
    ensure!(
        page.eval("document.characterSet")? == "UTF-8",
        "the page is not UTF-8"
    );

    // The facets come from the API.
    let sources =
        page.eval("[...document.querySelectorAll('#source option')].map(o => o.value)")?;
    ensure!(
        sources
            .as_array()
            .is_some_and(|a| a.contains(&Value::from(q.source.as_str()))),
        "#source does not offer {:?}: {sources}",
        q.source
    );
    ensure!(count(page, "#topic option")? > 0, "#topic lists no topics");

    // Fill the form and search.
    let filled = page.eval(&format!(
        "(() => {{ const set = (id, v) => {{ const e = document.getElementById(id); e.value = v; \
            e.dispatchEvent(new Event('input', {{bubbles: true}})); \
            e.dispatchEvent(new Event('change', {{bubbles: true}})); return e.value === v; }}; \
          const ok = set('from', {}) && set('to', {}) && set('tz', 'UTC') && set('source', {}) && set('keyword', {}); \
          if (ok) document.getElementById('search').click(); return ok; }})()",
        js(&q.from),
        js(&q.to),
        js(&q.source),
        js(&q.keyword)
    ))?;
    ensure!(filled == Value::Bool(true), "could not fill the form");
    let marker = format!(
        "keyword={}",
        page.eval(&format!("encodeURIComponent({})", js(&q.keyword)))?
            .as_str()
            .unwrap_or_default()
    );
    let shown = wait_results(page, &marker)?;
    ensure!(shown > 0, "the query shows no results");
    let hash = page.eval("decodeURIComponent(location.hash)")?;
    ensure!(
        hash.as_str()
            .is_some_and(|h| h.contains(&q.keyword) && h.contains(&q.from)),
        "the filters are not in the URL: {hash}"
    );

    // The list is the API's first page.
    let api = fetch_json(
        page,
        "/api/search",
        &format!(
            "(p => (p.set('limit', '{UI_PAGE_LIMIT}'), p))({})",
            q.filters_js()
        ),
    )?;
    let api_ids: Vec<String> = api["hits"]
        .as_array()
        .ok_or(format!("/api/search: no hits: {api}"))?
        .iter()
        .filter_map(|h| h["id"].as_str().map(String::from))
        .collect();
    let first_page = listed_ids(page)?;
    ensure!(
        first_page == api_ids,
        "the list {first_page:?} is not /api/search's first page {api_ids:?}"
    );
    let title = api["hits"][0]["title"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    ensure!(
        text_of(page, "#results li .title")? == title,
        "the first result's title is not {title:?}"
    );

    // Paging: Next shows other pages, Prev returns to the first.
    if api["next_cursor"].is_string() {
        page.eval("document.getElementById('next').click()")?;
        page.wait_for(
            "the second page",
            "document.getElementById('list').dataset.params.includes('cursor=') && document.getElementById('list').dataset.status === 'done'",
            UI_TIMEOUT,
        )?;
        let second = listed_ids(page)?;
        ensure!(
            !second.is_empty() && second.iter().all(|id| !first_page.contains(id)),
            "the second page {second:?} repeats the first {first_page:?}"
        );
        ensure!(
            text_of(page, "#page-info")? == "page 2",
            "page counter not at 2"
        );
        page.eval("document.getElementById('prev').click()")?;
        page.wait_for(
            "the first page again",
            "!document.getElementById('list').dataset.params.includes('cursor=') && document.getElementById('list').dataset.status === 'done'",
            UI_TIMEOUT,
        )?;
        ensure!(
            listed_ids(page)? == first_page,
            "Prev did not return to the first page"
        );
    } else {
        ensure!(
            page.eval("document.getElementById('next').disabled")? == Value::Bool(true),
            "Next is enabled on the only page"
        );
    }

    // Open the first result: attributes + the archived page in a sandboxed iframe.
    page.eval("document.querySelector('#results li').click()")?;
    page.wait_for(
        "the detail pane",
        "document.getElementById('detail').dataset.status === 'done' && document.getElementById('detail-frame').dataset.loaded === '1'",
        UI_TIMEOUT,
    )?;
    let shown_title = text_of(page, "#detail-attrs td[data-attr=title]")?;
    ensure!(
        shown_title == title,
        "detail title {shown_title:?}, API title {title:?}"
    );
    ensure!(
        count(page, "#detail-attrs tr")? >= 10,
        "the detail pane shows few attributes"
    );
    let frame = page.eval(
        "(f => ({sandbox: f.getAttribute('sandbox'), src: f.getAttribute('src'), hidden: f.hidden}))(document.querySelector('#detail iframe'))",
    )?;
    ensure!(
        frame["sandbox"] == "" && frame["hidden"] == Value::Bool(false),
        "the iframe is not a visible sandbox=\"\" frame: {frame}"
    );
    let src = frame["src"].as_str().unwrap_or_default().to_string();
    ensure!(
        src.starts_with("/api/pages/") && src.ends_with("/raw"),
        "iframe src {src:?}"
    );
    let raw = page.eval(&format!(
        "(async () => {{ const r = await fetch({}); const text = await r.text(); \
          return {{status: r.status, csp: r.headers.get('content-security-policy') || '', \
                   title: new DOMParser().parseFromString(text, 'text/html').title}}; }})()",
        js(&src)
    ))?;
    ensure!(raw["status"] == 200, "raw page: {raw}");
    ensure!(
        raw["csp"].as_str().is_some_and(|c| c.contains("sandbox")),
        "the raw page is served without a sandbox CSP: {raw}"
    );
    let raw_title = raw["title"].as_str().unwrap_or_default().trim().to_string();
    ensure!(
        !raw_title.is_empty() && (raw_title.contains(title.trim()) || title.contains(&raw_title)),
        "the archived page's <title> {raw_title:?} does not match {title:?}"
    );
    ensure!(
        page.eval("location.hash.includes('page=')")? == Value::Bool(true),
        "the open page is not in the URL"
    );

    // The chart: one bucket per day, bars as /api/stats says, then stacked by topic.
    wait_chart(page, &marker)?;
    let stats = fetch_json(page, "/api/stats", &q.filters_js())?;
    ensure!(
        stats["buckets"].as_array().map(Vec::len) == Some(RANGE_DAYS as usize),
        "/api/stats has not {RANGE_DAYS} day buckets: {stats}"
    );
    check_chart(page, &stats)?;
    page.eval(
        "(s => { s.value = 'topic'; s.dispatchEvent(new Event('change', {bubbles: true})); })(document.getElementById('group_by'))",
    )?;
    wait_chart(page, "group_by=topic")?;
    let grouped = fetch_json(
        page,
        "/api/stats",
        &format!("(p => (p.set('group_by', 'topic'), p))({})", q.filters_js()),
    )?;
    let bars = check_chart(page, &grouped)?;
    ensure!(
        grouped["total"] == stats["total"],
        "grouping changed the total"
    );

    // CSV export of the same numbers.
    let csv = page.eval(
        "(async () => { const a = document.getElementById('csv'); const r = await fetch(a.getAttribute('href')); \
          return {href: a.getAttribute('href'), text: await r.text()}; })()",
    )?;
    let csv_text = csv["text"].as_str().unwrap_or_default();
    let mut lines = csv_text.lines();
    ensure!(
        lines.next() == Some("bucket,group,count"),
        "CSV header: {csv}"
    );
    let cells = RANGE_DAYS as usize * grouped["series"].as_array().map(Vec::len).unwrap_or(0);
    ensure!(
        lines.count() == cells,
        "CSV rows differ from {cells} bucket×group cells: {csv}"
    );

    page.screenshot(shot)?;
    eprintln!(
        "browser: {shown} results, {bars} bars, screenshot {}",
        shot.display()
    );

    // An API error is shown next to the form, naming the parameter.
    page.eval("location.hash = '#tz=' + encodeURIComponent('Mars/Olympus')")?;
    let error = page.wait_for(
        "the error message",
        "document.getElementById('form-error').hidden ? '' : document.getElementById('form-error').textContent",
        UI_TIMEOUT,
    )?;
    ensure!(
        error.as_str().is_some_and(|e| e.contains("tz")),
        "the error does not name the parameter tz: {error}"
    );
    Ok(())
}

/// Against a server started with `--token`: the UI asks for the token, keeps
/// it, and sends it on every call, including the archived page in the iframe.
fn drive_token(page: &mut Page, base: &str) -> CdpResult<()> {
    page.navigate(&format!("{base}/"), UI_TIMEOUT)?;
    page.wait_for(
        "the token prompt",
        "!document.getElementById('auth').hidden",
        UI_TIMEOUT,
    )?;
    let anonymous = page.eval("fetch('/api/topics').then(r => r.status)")?;
    ensure!(
        anonymous == 401,
        "/api/topics without a token answered {anonymous}"
    );
    page.eval(&format!(
        "(() => {{ document.getElementById('token').value = {}; \
           document.getElementById('token-save').click(); }})()",
        js(TOKEN)
    ))?;
    let shown = page.wait_for(
        "results with the token",
        "document.getElementById('list').dataset.status === 'done' && document.querySelectorAll('#results li').length",
        UI_TIMEOUT,
    )?;
    ensure!(
        shown.as_u64().unwrap_or(0) > 0,
        "no results after giving the token"
    );
    ensure!(
        page.eval("document.getElementById('auth').hidden")? == Value::Bool(true),
        "the token prompt stays open"
    );
    ensure!(
        count(page, "#topic option")? > 0,
        "the topics were not reloaded with the token"
    );
    page.eval("document.querySelector('#results li').click()")?;
    page.wait_for(
        "the detail pane",
        "document.getElementById('detail').dataset.status === 'done' && document.getElementById('detail-frame').dataset.loaded === '1'",
        UI_TIMEOUT,
    )?;
    let src = page.eval("document.getElementById('detail-frame').getAttribute('src')")?;
    ensure!(
        src.as_str().is_some_and(|s| s.starts_with("blob:")),
        "with a token the archived page must be fetched with it (blob), iframe src {src}"
    );
    Ok(())
}

/// Run `steps`; on failure save a screenshot and panic with the server's and
/// the browser's logs.
fn run_or_panic(
    name: &str,
    page: &mut Page,
    serve: &Serve,
    browser: &Chromium,
    steps: impl FnOnce(&mut Page) -> CdpResult<()>,
) {
    if let Err(e) = steps(page) {
        let failure = target_dir()
            .join("browser")
            .join(format!("{name}-failure.png"));
        let saved = page
            .screenshot(&failure)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|e| format!("no screenshot: {e}"));
        panic!(
            "{name}: {e}\nscreenshot: {saved}\nharvest serve stderr:\n{}\nchromium stderr:\n{}",
            serve.stderr(),
            browser.log()
        );
    }
}

#[test]
fn ui_queries_opens_a_page_and_charts_the_demo_crawl() {
    let chromium = PathBuf::from(CHROMIUM);
    assert!(
        chromium.exists(),
        "{CHROMIUM} is missing: run .ci/browser-deps.sh (installs Debian's chromium)"
    );

    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), DEMO_SOURCE, Some(DEMO_DEPTH));
    ws.train_demo_model();
    let summary = ws.crawl();
    assert!(
        summary["pages"].as_u64().unwrap_or(0) > UI_PAGE_LIMIT as u64,
        "{summary}"
    );

    let today = chrono::Utc::now().date_naive();
    let q = Query {
        from: (today - chrono::Days::new(RANGE_DAYS as u64 - 1)).to_string(),
        to: today.to_string(),
        source: DEMO_SOURCE.to_string(),
        keyword: KEYWORD.to_string(),
    };
    let browser = Chromium::launch(&chromium, WINDOW.0, WINDOW.1).unwrap_or_else(|e| panic!("{e}"));
    let mut page = browser.open_page().unwrap_or_else(|e| panic!("{e}"));
    let shot = target_dir().join("browser").join("harvest-ui.png");

    let serve = Serve::start(&ws, &[]);
    run_or_panic("harvest-ui", &mut page, &serve, &browser, |page| {
        drive_query(page, &serve.base, &q, &shot)
    });
    drop(serve);

    // One server at a time: both would open the same index.
    let serve = Serve::start(&ws, &["--token", TOKEN]);
    run_or_panic("harvest-ui-token", &mut page, &serve, &browser, |page| {
        drive_token(page, &serve.base)
    });
}
