//! The web UI in a real browser: the demo site is crawled with the binary,
//! `harvest serve` answers on loopback, and Debian's headless Chromium, driven
//! over the Chrome DevTools Protocol, runs a query, pages through the results,
//! opens one (attributes + the archived page in a sandboxed iframe) and draws
//! the trend chart, whose buckets and bars are checked against /api/stats.
//! A screenshot is left at `target/browser/harvest-ui.png`.
//!
//! A second server, configured with one `[[job]]` crawling the demo site,
//! drives the crawl jobs panel: Run now, live progress, a 409 shown in the
//! panel, the finished run and its history, polling that stops when the panel
//! is folded (`target/browser/harvest-jobs.png`).
//!
//! Needs /usr/bin/chromium: `deploy/test-deps.sh` installs it (`deploy/test.sh` runs it).
//! Without it the test fails; it never skips.

mod util;

#[path = "browser/cdp.rs"]
mod cdp;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex};
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
/// The crawl job of the jobs panel test, its schedule and time zone.
const JOB: &str = "help";
const JOB_SCHEDULE: &str = "0 0 3 * * *";
const JOB_TZ: &str = "Asia/Shanghai";
/// Pages per run and delay between two requests: the run lasts several
/// seconds, long enough for the panel (polling every 3 s) to see it running.
const JOB_PAGES: u64 = 20;
const JOB_DELAY_MS: u64 = 600;
/// Poll interval of the jobs panel (web/app.js JOBS_POLL_MS).
const UI_JOBS_POLL_MS: u64 = 3000;
/// A job run of the demo site ends well within this.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);
/// The tests of this file take turns: each crawls, serves and drives a
/// Chromium, and two at once on a small machine make the timeouts flaky.
static ONE_BROWSER_AT_A_TIME: Mutex<()> = Mutex::new(());

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

    // Without [[job]] the jobs panel says so, and polls only while open.
    fold_jobs(page, false)?;
    // Opening it polls (`toggle` comes asynchronously, then a fresh call).
    page.wait_for(
        "the empty jobs panel",
        "(j => j.dataset.polling === '1' && j.dataset.status === 'done' && !document.getElementById('jobs-empty').hidden)(document.getElementById('jobs'))",
        UI_TIMEOUT,
    )?;
    let empty = text_of(page, "#jobs-empty")?;
    ensure!(
        empty == "No crawl jobs configured ([[job]] in harvest.toml)",
        "#jobs-empty says {empty:?}"
    );
    fold_jobs(page, true)?;
    page.wait_for(
        "polling to stop",
        "document.getElementById('jobs').dataset.polling === '0'",
        UI_TIMEOUT,
    )?;

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

/// Unfold (or fold) the jobs panel; returns once the UI has handled its
/// `toggle` event (it fires asynchronously).
fn fold_jobs(page: &mut Page, folded: bool) -> CdpResult<()> {
    page.eval(&format!(
        "new Promise(done => {{ const j = document.getElementById('jobs'); \
           if (j.open === {open}) return done(); \
           j.addEventListener('toggle', () => setTimeout(done, 0), {{once: true}}); j.open = {open}; }})",
        open = !folded
    ))?;
    Ok(())
}

/// A job row's value: `cell` is a selector inside `tr.job[data-job=JOB]`.
fn job_cell(page: &mut Page, cell: &str) -> CdpResult<String> {
    text_of(page, &format!("#jobs-list tr.job[data-job={JOB}] {cell}"))
}

fn job_counter(page: &mut Page, counter: &str) -> CdpResult<u64> {
    let text = job_cell(page, &format!("td[data-counter={counter}]"))?;
    text.parse()
        .map_err(|_| format!("counter {counter} of job {JOB} is {text:?}, not a number"))
}

/// The crawl jobs panel against a server with one job: schedule shown, Run
/// now starts a run, the row shows it running with live counters and a
/// disabled button, a second start is refused (409) in the panel, the
/// finished run's counters are those of `/api/jobs`, the history lists it, and
/// polling stops once the panel is folded with nothing running.
fn drive_jobs(page: &mut Page, base: &str, token: &str, shot: &Path) -> CdpResult<()> {
    page.navigate(&format!("{base}/"), UI_TIMEOUT)?;
    page.wait_for(
        "the UI to start",
        "document.body.dataset.ready === '1' && document.getElementById('jobs').dataset.status === 'done'",
        UI_TIMEOUT,
    )?;
    // Folded and idle: one call for the title, no polling.
    ensure!(
        page.eval("document.getElementById('jobs').open")? == Value::Bool(false),
        "the jobs panel starts unfolded"
    );
    ensure!(
        page.eval("document.getElementById('jobs').dataset.polling")? == "0",
        "the folded panel polls with no job running"
    );
    ensure!(
        text_of(page, "#jobs-info")? == "(1 job)",
        "#jobs-info: {:?}",
        text_of(page, "#jobs-info")?
    );

    fold_jobs(page, false)?;
    page.wait_for(
        "the job row",
        &format!(
            "document.getElementById('jobs').dataset.polling === '1' && !!document.querySelector('#jobs-list tr.job[data-job={JOB}]')"
        ),
        UI_TIMEOUT,
    )?;
    let schedule = job_cell(page, ".schedule")?;
    ensure!(
        schedule == format!("{JOB_SCHEDULE} ({JOB_TZ})"),
        "schedule cell {schedule:?}"
    );
    let next = job_cell(page, ".next")?;
    ensure!(
        next.len() > 10 && next.ends_with(" UTC"),
        "next run cell {next:?} (a time in the form's time zone, UTC)"
    );
    ensure!(
        job_cell(page, ".state")? == "never run",
        "state before any run: {:?}",
        job_cell(page, ".state")?
    );
    ensure!(
        text_of(page, &format!("#jobs-list tr.job-runs[data-job={JOB}]"))? == "never run",
        "the history of a job never run"
    );

    // Run now acts on the host: a server started without --token asks for
    // the token it keeps in its serve file, and the run starts once given.
    page.eval(&format!(
        "document.querySelector('#jobs-list button.run-now[data-job={JOB}]').click()"
    ))?;
    let why = page.wait_for(
        "the token prompt for Run now",
        "document.getElementById('auth').hidden ? '' : document.getElementById('auth-why').textContent",
        UI_TIMEOUT,
    )?;
    ensure!(
        why.as_str().is_some_and(|t| t.contains("serve file")),
        "the prompt does not say where the token is: {why}"
    );
    ensure!(
        job_cell(page, ".state")? == "never run",
        "the job ran without the token"
    );
    page.eval(&format!(
        "(() => {{ document.getElementById('token').value = {}; \
           document.getElementById('token-save').click(); }})()",
        js(token)
    ))?;
    page.wait_for(
        "Run now enabled again",
        &format!(
            "document.getElementById('auth').hidden && !document.querySelector('#jobs-list button.run-now[data-job={JOB}]').disabled"
        ),
        UI_TIMEOUT,
    )?;

    // Run now: the button is disabled at once, then the row shows the run.
    let clicked = page.eval(&format!(
        "(b => {{ b.click(); return {{disabled: b.disabled, text: b.textContent}}; }})         (document.querySelector('#jobs-list button.run-now[data-job={JOB}]'))"
    ))?;
    ensure!(
        clicked["disabled"] == Value::Bool(true),
        "Run now stays enabled after the click: {clicked}"
    );
    page.wait_for(
        "the job running",
        &format!(
            "(r => r && (r.dataset.running === '1' || r.dataset.state === 'finished'))             (document.querySelector('#jobs-list tr.job[data-job={JOB}]'))"
        ),
        RUN_TIMEOUT,
    )?;
    let seen_running = page.eval(&format!(
        "document.querySelector('#jobs-list tr.job[data-job={JOB}]').dataset.running === '1'"
    ))? == Value::Bool(true);
    ensure!(
        seen_running,
        "the run of {JOB_PAGES} pages {JOB_DELAY_MS} ms apart finished before the panel showed it running"
    );
    let row = page.eval(&format!(
        "(r => ({{disabled: r.querySelector('button.run-now').disabled,                   live: r.querySelectorAll('td.live[data-counter]').length,                   state: r.querySelector('.state').textContent}}))         (document.querySelector('#jobs-list tr.job[data-job={JOB}]'))"
    ))?;
    ensure!(
        row["disabled"] == Value::Bool(true) && row["state"] == "running",
        "a running job's row: {row}"
    );
    ensure!(
        row["live"] == 6,
        "a running job shows its 6 live counters: {row}"
    );

    // A second start while it runs: the 409 is shown in the panel.
    page.eval(&format!(
        "(b => {{ b.disabled = false; b.click(); }})         (document.querySelector('#jobs-list button.run-now[data-job={JOB}]'))"
    ))?;
    let refused = page.wait_for(
        "the 409 in the panel",
        "document.getElementById('jobs-error').hidden ? '' : document.getElementById('jobs-error').textContent",
        UI_TIMEOUT,
    )?;
    ensure!(
        refused
            .as_str()
            .is_some_and(|t| t.contains("409") && t.contains(JOB)),
        "#jobs-error after a second start: {refused}"
    );

    // Folded while the job runs: still polling (the title counts running jobs).
    fold_jobs(page, true)?;
    let folded = page.eval(
        "({polling: document.getElementById('jobs').dataset.polling, running: document.getElementById('jobs').dataset.running})",
    )?;
    ensure!(
        folded["polling"] == "1" || folded["running"] == "0",
        "the folded panel stopped polling while a job runs: {folded}"
    );
    fold_jobs(page, false)?;

    // The finished run, with the counters of /api/jobs.
    page.wait_for(
        "the finished run",
        &format!(
            "(r => r && r.dataset.state === 'finished')(document.querySelector('#jobs-list tr.job[data-job={JOB}]'))"
        ),
        RUN_TIMEOUT,
    )?;
    let api = page.eval("fetch('/api/jobs').then(r => r.json())")?;
    let last = &api["jobs"][0]["last_runs"][0];
    ensure!(last["status"] == "finished", "/api/jobs: {api}");
    let pages = job_counter(page, "pages")?;
    ensure!(pages > 0, "the finished run shows no pages");
    ensure!(
        pages <= JOB_PAGES,
        "the run stored {pages} pages, more than max_pages {JOB_PAGES}"
    );
    for counter in ["pages", "new", "changed", "unchanged", "not_modified"] {
        let shown = job_counter(page, counter)?;
        ensure!(
            Some(shown) == last["summary"][counter].as_u64(),
            "{counter}: the panel shows {shown}, /api/jobs says {}",
            last["summary"][counter]
        );
    }
    ensure!(
        job_counter(page, "new")? == pages,
        "a first run into an empty archive: every page is new"
    );
    ensure!(
        job_cell(page, ".state")? == "finished" && job_cell(page, ".when")?.contains(" – "),
        "state {:?}, started – ended {:?}",
        job_cell(page, ".state")?,
        job_cell(page, ".when")?
    );
    let button = page.eval(&format!(
        "(b => ({{disabled: b.disabled, text: b.textContent}}))(document.querySelector('#jobs-list button.run-now[data-job={JOB}]'))"
    ))?;
    ensure!(
        button["disabled"] == Value::Bool(false) && button["text"] == "Run now",
        "Run now after the run: {button}"
    );

    // The history: unfolded, it lists the run, and stays unfolded across polls.
    page.eval(&format!(
        "document.querySelector('#jobs-list tr.job-runs[data-job={JOB}] details.runs').open = true"
    ))?;
    let history = format!("#jobs-list tr.job-runs[data-job={JOB}] details.runs tr.run");
    ensure!(
        count(page, &history)? == 1,
        "the history lists {} runs, not 1",
        count(page, &history)?
    );
    ensure!(
        text_of(page, &format!("{history} td[data-counter=pages]"))? == pages.to_string(),
        "the history's pages differ from the row's"
    );
    let polling = page.eval("document.getElementById('jobs').dataset.polling")?;
    ensure!(polling == "1", "the open panel does not poll");
    page.eval(&format!(
        "new Promise(r => setTimeout(r, {}))",
        UI_JOBS_POLL_MS + 500
    ))?;
    ensure!(
        page.eval(&format!(
            "document.querySelector('#jobs-list tr.job-runs[data-job={JOB}] details.runs').open"
        ))? == Value::Bool(true),
        "a poll folded the run history"
    );
    page.screenshot(shot)?;
    eprintln!(
        "browser: job {JOB} ran {pages} pages, screenshot {}",
        shot.display()
    );

    // Folded with nothing running: polling stops.
    fold_jobs(page, true)?;
    page.wait_for(
        "polling to stop",
        "document.getElementById('jobs').dataset.polling === '0'",
        UI_TIMEOUT,
    )?;
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
    let _turn = ONE_BROWSER_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let chromium = PathBuf::from(CHROMIUM);
    assert!(
        chromium.exists(),
        "{CHROMIUM} is missing: run deploy/test-deps.sh (installs Debian's chromium)"
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

#[test]
fn jobs_panel_runs_a_job_and_shows_its_progress_and_last_runs() {
    let _turn = ONE_BROWSER_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let chromium = PathBuf::from(CHROMIUM);
    assert!(
        chromium.exists(),
        "{CHROMIUM} is missing: run deploy/test-deps.sh (installs Debian's chromium)"
    );

    let site = Site::demo();
    let seed = site.url(DEMO_ENTRY);
    let ws = Workspace::new(&seed, DEMO_SOURCE, Some(DEMO_DEPTH));
    ws.configure(|raw| {
        raw.jobs = vec![harvest::jobs::RawJob {
            name: JOB.into(),
            seeds: vec![seed.clone()],
            max_pages: Some(JOB_PAGES),
            politeness_delay_ms: Some(JOB_DELAY_MS),
            schedule: Some(JOB_SCHEDULE.into()),
            timezone: Some(JOB_TZ.into()),
            ..Default::default()
        }];
    });

    let browser = Chromium::launch(&chromium, WINDOW.0, WINDOW.1).unwrap_or_else(|e| panic!("{e}"));
    let mut page = browser.open_page().unwrap_or_else(|e| panic!("{e}"));
    let shot = target_dir().join("browser").join("harvest-jobs.png");
    let serve = Serve::start(&ws, &[]);
    let info: Value = serde_json::from_slice(
        &std::fs::read(ws.path().join("serve.json")).expect("the serve file"),
    )
    .expect("serve file JSON");
    let token = info["token"]
        .as_str()
        .expect("the server's token")
        .to_string();
    run_or_panic("harvest-jobs", &mut page, &serve, &browser, |page| {
        drive_jobs(page, &serve.base, &token, &shot)
    });
}
