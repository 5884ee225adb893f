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
//! A third server, on a site of dated articles from more outlets than the
//! chart stacks, checks the chart's first screen over two years of pages
//! (auto interval, every bar in view) and its colours per media
//! (`target/browser/harvest-chart.png`).
//!
//! A fourth server, on the news demo's site (3,824 real articles of nine
//! outlets), checks that the chart stacked by media names only the outlets
//! (one name each), the host of the hub pages and the agencies the articles
//! credit, and that the media filter takes an outlet's name with its space
//! (issue 42; `target/browser/harvest-news-media.png`).
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
use harvest::newssite::{self, Article};
use serde_json::{json, Value};

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
/// Most buckets the chart's auto interval gives (web/app.js MAX_BUCKETS).
const UI_MAX_BUCKETS: usize = 120;
/// Most series the chart stacks (web/app.js MAX_SERIES); with more, all
/// but `UI_MAX_SERIES - 1` are summed into one "other" series.
const UI_MAX_SERIES: usize = 10;
/// The API's intervals, finest first.
const INTERVALS: [&str; 4] = ["day", "week", "month", "year"];
/// Two series' colours must be at least this far apart (CIELAB ΔE*ab; about
/// 2 is a just noticeable difference, the old palette's closest pair was 10.5).
const MIN_COLOUR_DISTANCE: f64 = 20.0;
/// The outlets of the many-media site: more than the chart stacks. Outlet
/// `k` has `k + 1` articles, so no two have as many pages.
const OUTLETS: usize = 14;
/// Age of the newest article of the many-media site and days between two
/// articles: its 105 articles span about two years, too long for day bars.
const NEWEST_ARTICLE_DAYS: u64 = 30;
const ARTICLE_EVERY_DAYS: u64 = 7;
/// Link depth of the many-media site: root, outlet, day, article.
const NEWS_DEPTH: u32 = 3;
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

/// What the UI's `element` (`list` or `chart`) shows, fetched again from `path` with the
/// parameters it was drawn with: (those parameters, the answer).
fn fetch_shown(page: &mut Page, element: &str, path: &str) -> CdpResult<(String, Value)> {
    let params = page.eval(&format!(
        "document.getElementById({}).dataset.params",
        js(element)
    ))?;
    let params = params.as_str().unwrap_or_default().to_string();
    let answer = fetch_json(page, path, &format!("new URLSearchParams({})", js(&params)))?;
    Ok((params, answer))
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

/// One series as the chart draws it.
struct Drawn {
    name: String,
    counts: Vec<u64>,
    /// The sum of the series beyond the chart's `UI_MAX_SERIES`: their names.
    folded: Option<Vec<String>>,
}

/// The series the chart draws for `stats`: all of them when there are at
/// most `UI_MAX_SERIES`; else the `UI_MAX_SERIES - 1` with the most pages
/// (ties: the API's order), in the API's order, then "other (N series)"
/// summing the others.
fn drawn_series(stats: &Value) -> CdpResult<Vec<Drawn>> {
    let series = stats["series"]
        .as_array()
        .ok_or(format!("/api/stats: no series: {stats}"))?;
    let all: Vec<Drawn> = series
        .iter()
        .map(|s| Drawn {
            name: s["name"].as_str().unwrap_or_default().to_string(),
            counts: s["counts"]
                .as_array()
                .map(|c| c.iter().map(|n| n.as_u64().unwrap_or(0)).collect())
                .unwrap_or_default(),
            folded: None,
        })
        .collect();
    if all.len() <= UI_MAX_SERIES {
        return Ok(all);
    }
    let mut by_pages: Vec<(usize, u64)> = all
        .iter()
        .enumerate()
        .map(|(i, s)| (i, s.counts.iter().sum()))
        .collect();
    by_pages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let kept: std::collections::HashSet<usize> = by_pages
        .iter()
        .take(UI_MAX_SERIES - 1)
        .map(|(i, _)| *i)
        .collect();
    let buckets = all.first().map_or(0, |s| s.counts.len());
    let mut other = vec![0; buckets];
    let mut folded = Vec::new();
    let mut out = Vec::new();
    for (i, s) in all.into_iter().enumerate() {
        if kept.contains(&i) {
            out.push(s);
        } else {
            for (o, c) in other.iter_mut().zip(&s.counts) {
                *o += c;
            }
            folded.push(s.name);
        }
    }
    out.push(Drawn {
        name: format!("other ({} series)", folded.len()),
        counts: other,
        folded: Some(folded),
    });
    Ok(out)
}

/// The chart must draw exactly the buckets of `stats` and one bar per
/// non-zero cell of its drawn series (bucket, series and count), and list
/// the drawn series in the legend.
fn check_chart(page: &mut Page, stats: &Value) -> CdpResult<u64> {
    let buckets: Vec<&str> = stats["buckets"]
        .as_array()
        .ok_or(format!("/api/stats: no buckets: {stats}"))?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let series = drawn_series(stats)?;
    let mut cells = Vec::new();
    for (b, bucket) in buckets.iter().enumerate() {
        for s in &series {
            let c = s.counts.get(b).copied().unwrap_or(0);
            if c > 0 {
                cells.push(json!([bucket, s.name, c, s.folded.is_some()]));
            }
        }
    }
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
    let bars = page.eval(
        "[...document.querySelectorAll('#chart svg rect.bar')].map(r => \
           [r.parentNode.dataset.bucket, r.dataset.series, Number(r.dataset.count), r.dataset.other === '1'])",
    )?;
    let bars = bars.as_array().cloned().unwrap_or_default();
    ensure!(!bars.is_empty(), "the chart has no bars");
    ensure!(
        bars == cells,
        "the chart's bars (bucket, series, count, other) {bars:?} differ from /api/stats's non-zero cells {cells:?}"
    );
    let legend = page.eval(
        "[...document.querySelectorAll('#legend li')].map(li => [li.dataset.series, li.dataset.other === '1', li.title])",
    )?;
    let expected: Vec<Value> = series
        .iter()
        .map(|s| {
            json!([
                s.name,
                s.folded.is_some(),
                s.folded.as_ref().map(|f| f.join(", ")).unwrap_or_default()
            ])
        })
        .collect();
    ensure!(
        legend.as_array() == Some(&expected),
        "legend (series, other, title) {legend} differs from the drawn series {expected:?}"
    );
    Ok(bars.len() as u64)
}

/// An sRGB colour as CIELAB (D65).
fn lab(rgb: [u8; 3]) -> [f64; 3] {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let [r, g, b] = rgb.map(lin);
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| {
        if t > 0.008856 {
            t.cbrt()
        } else {
            7.787 * t + 16.0 / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// A computed CSS colour, `rgb(r, g, b)`.
fn parse_rgb(css: &str) -> Option<[u8; 3]> {
    let inner = css.strip_prefix("rgb(")?.strip_suffix(')')?;
    let parts: Vec<u8> = inner
        .split(',')
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    parts.try_into().ok()
}

/// Each drawn series has one colour (all its bars and its legend swatch),
/// and any two series' colours are at least `MIN_COLOUR_DISTANCE` apart.
/// Returns the number of colours.
fn check_colours(page: &mut Page) -> CdpResult<usize> {
    let seen = page.eval(
        "(() => { const out = {}; const add = (name, c) => (out[name] = out[name] || []).push(c); \
           for (const r of document.querySelectorAll('#chart rect.bar')) add(r.dataset.series, getComputedStyle(r).fill); \
           for (const li of document.querySelectorAll('#legend li')) \
             add(li.dataset.series, getComputedStyle(li.querySelector('.swatch')).backgroundColor); \
           return out; })()",
    )?;
    let seen = seen
        .as_object()
        .ok_or(format!("colours by series: {seen}"))?;
    let mut colours: Vec<(String, [u8; 3])> = Vec::new();
    for (name, list) in seen {
        let list: Vec<&str> = list
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        ensure!(
            list.windows(2).all(|w| w[0] == w[1]),
            "series {name:?} is drawn in several colours: {list:?}"
        );
        let css = list.first().copied().unwrap_or_default();
        let rgb = parse_rgb(css).ok_or(format!("series {name:?}: colour {css:?}"))?;
        colours.push((name.clone(), rgb));
    }
    for (i, (a, ca)) in colours.iter().enumerate() {
        for (b, cb) in &colours[i + 1..] {
            let (la, lb) = (lab(*ca), lab(*cb));
            let d = la
                .iter()
                .zip(&lb)
                .map(|(p, q)| (p - q).powi(2))
                .sum::<f64>()
                .sqrt();
            ensure!(
                d.total_cmp(&MIN_COLOUR_DISTANCE).is_ge(),
                "series {a:?} {ca:?} and {b:?} {cb:?} look alike (ΔE {d:.1} < {MIN_COLOUR_DISTANCE})"
            );
        }
    }
    Ok(colours.len())
}

/// Every bar of the chart is in view: the drawing is no wider than its box
/// (no horizontal scrolling) and each bar lies inside the box.
fn check_in_view(page: &mut Page) -> CdpResult<()> {
    let v = page.eval(
        "(() => { const c = document.getElementById('chart'); const box = c.getBoundingClientRect(); \
           const bars = [...c.querySelectorAll('rect.bar')].map(r => r.getBoundingClientRect()); \
           return {scroll: c.scrollWidth, client: c.clientWidth, bars: bars.length, \
                   outside: bars.filter(b => b.left < box.left - 0.5 || b.right > box.right + 0.5).length}; })()",
    )?;
    ensure!(
        v["bars"].as_u64().unwrap_or(0) > 0,
        "the chart has no bars: {v}"
    );
    ensure!(
        v["outside"] == 0 && v["scroll"].as_u64() <= v["client"].as_u64(),
        "bars of the chart are out of view (scrolled away): {v}"
    );
    Ok(())
}

/// The chart as it opens (interval on auto, no from/to): the buckets run
/// from the first to the last one with pages, at the finest interval that
/// has at most `UI_MAX_BUCKETS` of them, drawn as /api/stats answers and
/// all in view. Returns that answer.
fn check_auto_chart(page: &mut Page) -> CdpResult<Value> {
    wait_chart(page, "interval=")?;
    // The interval of the call drawn (`data-params`), checked before `data-auto`.
    let chart = page.eval(
        "(c => ({auto: c.dataset.auto, interval: new URLSearchParams(c.dataset.params).get('interval'), \
                 shown: c.dataset.interval, params: c.dataset.params}))(document.getElementById('chart'))",
    )?;
    let params = chart["params"].as_str().unwrap_or_default().to_string();
    ensure!(
        !params.contains("from=") && !params.contains("to="),
        "the first chart has dates: {chart}"
    );
    let interval = chart["interval"].as_str().unwrap_or_default().to_string();
    let at = |i: &str| {
        format!(
            "(p => (p.set('interval', {}), p))(new URLSearchParams({}))",
            js(i),
            js(&params)
        )
    };
    let stats = fetch_json(page, "/api/stats", &at(&interval))?;
    ensure!(
        stats["interval"] == interval.as_str(),
        "the chart says {interval}, /api/stats {stats}"
    );
    check_in_view(page)?;
    let n = stats["buckets"].as_array().map_or(0, Vec::len);
    ensure!(
        (1..=UI_MAX_BUCKETS).contains(&n),
        "{n} {interval} buckets (at most {UI_MAX_BUCKETS} wanted)"
    );
    let pos = INTERVALS
        .iter()
        .position(|i| *i == interval)
        .ok_or(format!("unknown interval {interval:?}"))?;
    if pos > 0 {
        let finer = fetch_json(page, "/api/stats", &at(INTERVALS[pos - 1]))?;
        let m = finer["buckets"].as_array().map_or(0, Vec::len);
        ensure!(
            m > UI_MAX_BUCKETS,
            "the chart opened on {n} {interval} buckets where {m} {} buckets fit",
            INTERVALS[pos - 1]
        );
    }
    let totals: Vec<u64> = (0..n)
        .map(|b| {
            stats["series"].as_array().map_or(0, |a| {
                a.iter().map(|s| s["counts"][b].as_u64().unwrap_or(0)).sum()
            })
        })
        .collect();
    ensure!(
        totals.first() > Some(&0) && totals.last() > Some(&0),
        "the first or last {interval} bucket has no pages: the span is not the data's ({:?})",
        stats["buckets"]
    );
    check_chart(page, &stats)?;
    ensure!(
        chart["auto"] == "1" && chart["shown"] == interval.as_str(),
        "the chart's interval is not marked auto: {chart}"
    );
    Ok(stats)
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

/// Every field the hash keeps, as the form shows it (selects with several
/// values as the number selected), the hash and whether the URL has a `#`.
const FORM_STATE_JS: &str = "(() => { const $ = id => document.getElementById(id); \
    const out = {}; \
    for (const id of ['from', 'to', 'tz', 'source', 'media', 'keyword', 'any', 'text', \
                      'min_comments', 'max_comments', 'sort', 'interval', 'group_by']) out[id] = $(id).value; \
    for (const id of ['collapse', 'revisits']) out[id] = $(id).checked; \
    for (const id of ['topic', 'published_from']) out[id] = $(id).selectedOptions.length; \
    out.hash = location.hash; out.fragment = location.href.includes('#'); return out; })()";

/// The first screen of the demo archive, then Clear: the chart opens on
/// the span of the pages at an interval that fits it, all bars in view.
/// Clear after a search with every filter and chart setting changed brings
/// that first screen back (form, URL, results, chart) without a JavaScript
/// error (it used to throw `$(...).reset is not a function`: the button's id
/// `reset` hid the form's `reset()`).
fn drive_first_screen(page: &mut Page, base: &str, q: &Query) -> CdpResult<()> {
    page.navigate(&format!("{base}/"), UI_TIMEOUT)?;
    page.wait_for(
        "the UI to start",
        "document.body.dataset.ready === '1'",
        UI_TIMEOUT,
    )?;
    let stats = check_auto_chart(page)?;
    let defaults = page.eval(FORM_STATE_JS)?;
    ensure!(
        defaults["hash"] == "" && defaults["interval"] == "" && defaults["group_by"] == "",
        "the first screen is not at its defaults: {defaults}"
    );
    let first_ids = listed_ids(page)?;
    ensure!(!first_ids.is_empty(), "the first screen lists no pages");
    let first_chart = page.eval("document.getElementById('chart').dataset.params")?;
    let errors = page.take_js_errors()?;
    ensure!(
        errors.is_empty(),
        "JavaScript errors on the first screen: {errors:?}"
    );

    // Every field away from its default, then Search.
    page.eval(&format!(
        "(() => {{ const $ = id => document.getElementById(id); \
           $('from').value = {from}; $('to').value = {to}; $('tz').value = 'Asia/Shanghai'; \
           $('source').value = {source}; $('topic').options[0].selected = true; $('media').value = '127.0.0.1'; \
           $('keyword').value = {keyword}; $('any').value = {keyword}; $('text').value = {keyword}; \
           $('min_comments').value = '0'; $('max_comments').value = '1000'; $('sort').value = 'time_asc'; \
           $('collapse').checked = true; $('revisits').checked = true; $('published_from').options[0].selected = true; \
           $('interval').value = 'week'; $('group_by').value = 'topic'; $('search').click(); }})()",
        from = js(&q.from),
        to = js(&q.to),
        source = js(&q.source),
        keyword = js(&q.keyword),
    ))?;
    page.wait_for(
        "the search with every filter",
        "(l => l.dataset.params.includes('published_from=') && l.dataset.status !== 'loading')(document.getElementById('list'))",
        UI_TIMEOUT,
    )?;
    wait_chart(page, "group_by=topic")?;
    let changed = page.eval(FORM_STATE_JS)?;
    for (field, default) in defaults.as_object().into_iter().flatten() {
        if field != "fragment" {
            ensure!(
                &changed[field] != default,
                "{field} was not changed for the test: {changed}"
            );
        }
    }

    page.eval("document.getElementById('clear').click()")?;
    page.wait_for(
        "the results after Clear",
        "(l => !l.dataset.params.includes('published_from=') && l.dataset.status === 'done')(document.getElementById('list'))",
        UI_TIMEOUT,
    )?;
    page.wait_for(
        "the chart after Clear",
        "(c => c.dataset.auto === '1' && c.dataset.status === 'done')(document.getElementById('chart'))",
        UI_TIMEOUT,
    )?;
    let errors = page.take_js_errors()?;
    ensure!(errors.is_empty(), "JavaScript errors on Clear: {errors:?}");
    let cleared = page.eval(FORM_STATE_JS)?;
    ensure!(
        cleared == defaults,
        "Clear left the form at {cleared}, not at its defaults {defaults}"
    );
    ensure!(
        listed_ids(page)? == first_ids,
        "after Clear the list is not the first screen's"
    );
    ensure!(
        page.eval("document.getElementById('chart').dataset.params")? == first_chart,
        "after Clear the chart is not the first screen's {first_chart}"
    );
    ensure!(
        page.eval("document.getElementById('form-error').hidden")? == Value::Bool(true),
        "an error is shown after Clear: {}",
        text_of(page, "#form-error")?
    );
    check_chart(page, &stats)?;
    check_in_view(page)?;
    Ok(())
}

/// The many-media site: outlet `k` (`Gazette-KK`, its `og:site_name`; not a
/// host name, which the extractor does not take for a media name) has `k + 1` articles, one every `ARTICLE_EVERY_DAYS` days back from
/// `NEWEST_ARTICLE_DAYS` before `today`, with index pages per outlet and day.
fn many_media_site(today: chrono::NaiveDate) -> harvest::site::SiteFiles {
    let mut articles = Vec::new();
    for k in 0..OUTLETS {
        for _ in 0..=k {
            let id = articles.len() as u64 + 1;
            let host = format!("Gazette-{k:02}");
            let date = today - chrono::Days::new(NEWEST_ARTICLE_DAYS + id * ARTICLE_EVERY_DAYS);
            articles.push(Article {
                id,
                date: Some(date),
                source_url: format!("https://gazette-{k:02}.example/news/{id}.html"),
                host,
                section: None,
                title: format!("Outlet {k} report number {id}"),
                subtitle: String::new(),
                text: format!(
                    "Report {id} of outlet {k}, filed on {date}.\n\
                     The council met on {date} and agreed on the budget for the harbour.\n\
                     Outlet {k} will follow the story in its next report."
                ),
            });
        }
    }
    newssite::news_site(&articles)
}

/// The chart over two years of pages of more outlets than it stacks: it
/// opens on the span of the pages at a coarser interval than day, all bars
/// in view; stacked by media it keeps `UI_MAX_SERIES` series in colours far
/// apart, the smaller media summed into "other".
fn drive_many_media(page: &mut Page, base: &str, shot: &Path) -> CdpResult<()> {
    page.navigate(&format!("{base}/"), UI_TIMEOUT)?;
    page.wait_for(
        "the UI to start",
        "document.body.dataset.ready === '1'",
        UI_TIMEOUT,
    )?;
    let stats = check_auto_chart(page)?;
    ensure!(
        stats["interval"] != "day",
        "two years of pages open on day buckets"
    );
    ensure!(
        page.eval("document.getElementById('interval-auto').textContent")?
            == format!("auto ({})", stats["interval"].as_str().unwrap_or_default()).as_str(),
        "the auto option does not name the interval drawn"
    );

    page.eval(
        "(s => { s.value = 'media'; s.dispatchEvent(new Event('change', {bubbles: true})); })(document.getElementById('group_by'))",
    )?;
    wait_chart(page, "group_by=media")?;
    let (params, grouped) = fetch_shown(page, "chart", "/api/stats")?;
    ensure!(
        params.contains(&format!(
            "interval={}",
            stats["interval"].as_str().unwrap_or_default()
        )),
        "stacking changed the interval: {params}"
    );
    let media = grouped["series"].as_array().map_or(0, Vec::len);
    ensure!(
        media > UI_MAX_SERIES,
        "the site has {media} media, not more than the chart stacks ({UI_MAX_SERIES}): {grouped}"
    );
    ensure!(
        grouped["total"] == stats["total"],
        "stacking by media changed the total"
    );
    let bars = check_chart(page, &grouped)?;
    let colours = check_colours(page)?;
    ensure!(
        colours == UI_MAX_SERIES,
        "{colours} colours for {media} media (the chart stacks {UI_MAX_SERIES})"
    );
    check_in_view(page)?;
    let errors = page.take_js_errors()?;
    ensure!(errors.is_empty(), "JavaScript errors: {errors:?}");
    page.screenshot(shot)?;
    eprintln!(
        "browser: {media} media in {colours} colours, {bars} bars, screenshot {}",
        shot.display()
    );
    Ok(())
}

/// Wire agencies a news demo article may be credited to (its dateline or
/// source line names them: the agency that filed the story is its media).
const NEWS_AGENCIES: [&str; 2] = ["Reuters", "AFP"];

/// The names the chart stacked by media shows: each legend entry's series,
/// and the names an "other" entry sums (its title).
fn legend_names(page: &mut Page) -> CdpResult<Vec<String>> {
    let legend = page.eval(
        "[...document.querySelectorAll('#legend li')].map(li => li.dataset.other === '1' ? li.title : li.dataset.series)",
    )?;
    Ok(legend
        .as_array()
        .ok_or(format!("legend: {legend}"))?
        .iter()
        .filter_map(Value::as_str)
        .flat_map(|s| s.split(", "))
        .map(String::from)
        .collect())
}

/// Types `value` into the filter input `param` and searches: the number of pages listed
/// once the list and the chart show the filter.
fn filter_on(page: &mut Page, param: &str, value: &str) -> CdpResult<u64> {
    page.eval(&format!(
        "(() => {{ const m = document.getElementById({}); m.value = {}; \
           m.dispatchEvent(new Event('input', {{bubbles: true}})); \
           document.getElementById('search').click(); }})()",
        js(param),
        js(value)
    ))?;
    let marker = page.eval(&format!(
        "new URLSearchParams([[{}, {}]]).toString()",
        js(param),
        js(value)
    ))?;
    let marker = marker.as_str().unwrap_or_default().to_string();
    let listed = wait_results(page, &marker)?;
    wait_chart(page, &marker)?;
    Ok(listed)
}

/// Issue 42 item 5: the news demo's pages stacked by media are the nine
/// outlets, each under one name, the host of the hub pages and the agencies
/// the articles credit; nothing else (no `Al Jazeera News` beside `Al
/// Jazeera`, no `Gov.UK However`, no person, no `bit.ly`). The media filter
/// takes an outlet's name with its space (`Al Jazeera`, not `Al` and
/// `Jazeera`) and gives that outlet's pages.
fn drive_news_media(
    page: &mut Page,
    base: &str,
    outlets: &[String],
    host: &str,
    shot: &Path,
) -> CdpResult<()> {
    page.navigate(&format!("{base}/"), UI_TIMEOUT)?;
    page.wait_for(
        "the UI to start",
        "document.body.dataset.ready === '1'",
        UI_TIMEOUT,
    )?;
    wait_chart(page, "interval=")?;
    page.eval(
        "(s => { s.value = 'media'; s.dispatchEvent(new Event('change', {bubbles: true})); })(document.getElementById('group_by'))",
    )?;
    wait_chart(page, "group_by=media")?;
    let (_, grouped) = fetch_shown(page, "chart", "/api/stats")?;
    check_chart(page, &grouped)?;
    let shown = legend_names(page)?;
    let allowed =
        |n: &str| outlets.iter().any(|o| o == n) || n == host || NEWS_AGENCIES.contains(&n);
    let strays: Vec<&String> = shown.iter().filter(|n| !allowed(n)).collect();
    ensure!(
        strays.is_empty(),
        "the chart by media shows names that are no outlet, host or credited agency: {strays:?} (all: {shown:?})"
    );
    let missing: Vec<&String> = outlets.iter().filter(|o| !shown.contains(o)).collect();
    ensure!(
        missing.is_empty() && shown.iter().any(|n| n == host),
        "the chart by media lacks {missing:?} or the host {host} (all: {shown:?})"
    );
    let pages_of = |stats: &Value, name: &str| -> u64 {
        stats["series"].as_array().map_or(0, |a| {
            a.iter()
                .filter(|s| s["name"] == name)
                .flat_map(|s| s["counts"].as_array().cloned().unwrap_or_default())
                .map(|c| c.as_u64().unwrap_or(0))
                .sum()
        })
    };

    // The media filter with each outlet whose name holds a space.
    let spaced: Vec<&String> = outlets.iter().filter(|o| o.contains(' ')).collect();
    ensure!(
        !spaced.is_empty(),
        "no outlet name with a space: {outlets:?}"
    );
    for outlet in spaced {
        let expected = pages_of(&grouped, outlet);
        ensure!(expected > 0, "{outlet:?} has no pages: {grouped}");
        let listed = filter_on(page, "media", outlet)?;
        ensure!(listed > 0, "the media filter {outlet:?} lists no page");
        let legend = legend_names(page)?;
        ensure!(
            legend == vec![outlet.clone()],
            "filtered on {outlet:?}, the chart shows {legend:?}"
        );
        let (_, hits) = fetch_shown(page, "list", "/api/search")?;
        let media: Vec<&str> = hits["hits"]
            .as_array()
            .map(|a| a.iter().filter_map(|h| h["media"].as_str()).collect())
            .unwrap_or_default();
        ensure!(
            !media.is_empty() && media.iter().all(|m| m == outlet),
            "the list filtered on {outlet:?} holds media {media:?}"
        );
        let (_, filtered) = fetch_shown(page, "chart", "/api/stats")?;
        ensure!(
            filtered["total"] == expected,
            "filtered on {outlet:?} the chart counts {} pages, the chart by media {expected}",
            filtered["total"]
        );
    }

    // Stacked by outlet: the nine outlets and the host, no agency; the outlet filter
    // takes a spaced name and lists that site's pages only.
    page.eval(
        "(() => { const m = document.getElementById('media'); m.value = ''; \
           m.dispatchEvent(new Event('input', {bubbles: true})); \
           const s = document.getElementById('group_by'); s.value = 'outlet'; \
           s.dispatchEvent(new Event('change', {bubbles: true})); })()",
    )?;
    wait_chart(page, "group_by=outlet")?;
    let (_, by_outlet) = fetch_shown(page, "chart", "/api/stats")?;
    let sites = legend_names(page)?;
    let mut expected_sites: Vec<String> = outlets.to_vec();
    expected_sites.push(host.to_string());
    expected_sites.sort();
    let mut sorted_sites = sites.clone();
    sorted_sites.sort();
    ensure!(
        sorted_sites == expected_sites,
        "the chart by outlet shows {sites:?}, expected the outlets and the host {expected_sites:?}"
    );
    let site = outlets
        .iter()
        .find(|o| o.contains(' '))
        .ok_or("no spaced outlet")?;
    let expected = pages_of(&by_outlet, site);
    let listed = filter_on(page, "outlet", site)?;
    let (_, hits) = fetch_shown(page, "list", "/api/search")?;
    let named: Vec<&str> = hits["hits"]
        .as_array()
        .map(|a| a.iter().filter_map(|h| h["outlet"].as_str()).collect())
        .unwrap_or_default();
    ensure!(
        listed > 0 && !named.is_empty() && named.iter().all(|o| o == site),
        "the list filtered on outlet {site:?} holds outlets {named:?}"
    );
    let (_, filtered) = fetch_shown(page, "chart", "/api/stats")?;
    ensure!(
        filtered["total"] == expected && expected > 0,
        "filtered on outlet {site:?} the chart counts {} pages, the chart by outlet {expected}",
        filtered["total"]
    );
    let errors = page.take_js_errors()?;
    ensure!(errors.is_empty(), "JavaScript errors: {errors:?}");
    page.screenshot(shot)?;
    eprintln!(
        "browser: news demo by media {shown:?}, by outlet {sites:?}, screenshot {}",
        shot.display()
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
    run_or_panic(
        "harvest-ui-first-screen",
        &mut page,
        &serve,
        &browser,
        |page| drive_first_screen(page, &serve.base, &q),
    );
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
            job: harvest::jobs::JobKeys {
                name: JOB.into(),
                schedule: Some(JOB_SCHEDULE.into()),
                timezone: Some(JOB_TZ.into()),
                ..Default::default()
            },
            crawl: harvest::config::RawCrawl {
                seeds: vec![seed.clone()],
                max_pages: Some(JOB_PAGES),
                politeness_delay_ms: Some(JOB_DELAY_MS),
                ..Default::default()
            },
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

#[test]
fn chart_opens_on_years_of_pages_at_a_fitting_interval_and_keeps_many_media_apart() {
    let _turn = ONE_BROWSER_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let chromium = PathBuf::from(CHROMIUM);
    assert!(
        chromium.exists(),
        "{CHROMIUM} is missing: run deploy/test-deps.sh (installs Debian's chromium)"
    );

    let site = Site::serve(many_media_site(chrono::Utc::now().date_naive()));
    let ws = Workspace::new(&site.url("/index.html"), "outlets", Some(NEWS_DEPTH));
    let summary = ws.crawl();
    let articles = (OUTLETS * (OUTLETS + 1) / 2) as u64;
    assert!(
        summary["pages"].as_u64().unwrap_or(0) > articles,
        "{summary}"
    );

    let browser = Chromium::launch(&chromium, WINDOW.0, WINDOW.1).unwrap_or_else(|e| panic!("{e}"));
    let mut page = browser.open_page().unwrap_or_else(|e| panic!("{e}"));
    let shot = target_dir().join("browser").join("harvest-chart.png");
    let serve = Serve::start(&ws, &[]);
    run_or_panic("harvest-chart", &mut page, &serve, &browser, |page| {
        drive_many_media(page, &serve.base, &shot)
    });
}

#[test]
fn news_demo_media_are_its_outlets_its_host_and_credited_agencies() {
    let _turn = ONE_BROWSER_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let chromium = PathBuf::from(CHROMIUM);
    assert!(
        chromium.exists(),
        "{CHROMIUM} is missing: run deploy/test-deps.sh (installs Debian's chromium)"
    );
    let csv = util::news_csv();
    let articles = newssite::read_articles(&csv).expect("the news corpus");
    let mut outlets: Vec<String> = articles
        .iter()
        .map(|a| newssite::outlet_name(&a.host).to_string())
        .collect();
    outlets.sort();
    outlets.dedup();
    assert_eq!(outlets.len(), 9, "{outlets:?}");

    let site = Site::serve(newssite::news_site(&articles));
    let ws = Workspace::new(&site.url("/index.html"), "news", Some(NEWS_DEPTH));
    let summary = ws.crawl();
    assert!(
        summary["pages"].as_u64().unwrap_or(0) > articles.len() as u64,
        "{summary}"
    );
    let seed = site.url("/index.html");
    let host = crawler::Url::parse(&seed)
        .ok()
        .and_then(|u| u.host_str().map(String::from))
        .expect("the site's host");

    let browser = Chromium::launch(&chromium, WINDOW.0, WINDOW.1).unwrap_or_else(|e| panic!("{e}"));
    let mut page = browser.open_page().unwrap_or_else(|e| panic!("{e}"));
    let shot = target_dir().join("browser").join("harvest-news-media.png");
    let serve = Serve::start(&ws, &[]);
    run_or_panic("harvest-news-media", &mut page, &serve, &browser, |page| {
        drive_news_media(page, &serve.base, &outlets, &host, &shot)
    });
}
