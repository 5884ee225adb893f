//! `harvest bench extract`: title, publish time (minute and day) and media
//! accuracy of harvest's extraction on the dev set, beside trafilatura's on
//! the same pages in the same run.
//!
//! Dev set: the newspaper4k 0.9.6 test pages that have expected metadata
//! (`deploy/data/fetch-extract-devset.sh`: 20 pages, title and publish_date;
//! media from `meta_site_name` where set) and harvest's own labelled pages
//! (`crawler/tests/fixtures/extract/labels.json`: Chinese date/title/media
//! patterns and bad input). A time metric counts the pages labelled with a
//! time; a page labelled "no date" must get none. Minute: the labelled time
//! has a time of day and the extracted one is the same to the minute (in the
//! page's own offset when the label has none). Day: the same calendar day as
//! the label, in the label's offset (or the page's, when it has none).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, NaiveDateTime, Utc};
use crawler::extract::{extract_with, TimeContext};
use serde_json::Value;

use crate::cli::BenchArgs;

/// The peer program, relative to the repository root.
const PEER_SCRIPT: &str = "deploy/bench/extract_peer.py";

/// A labelled publish time.
#[derive(Debug, Clone)]
enum Label {
    /// No label: not counted.
    Unknown,
    /// The page has no publish time: the right answer is none.
    None,
    /// With its offset, or naive (page-local); with or without a time of day.
    Time {
        local: NaiveDateTime,
        offset: Option<chrono::FixedOffset>,
        has_time: bool,
    },
}

#[derive(Debug, Clone)]
struct Page {
    name: String,
    path: PathBuf,
    url: String,
    fetched: DateTime<Utc>,
    title: Option<Option<String>>,
    published: Label,
    media: Option<String>,
}

/// One system's answers for a page.
#[derive(Debug, Clone, Default)]
struct Answer {
    title: Option<String>,
    /// Page-local time as the system states it (naive), and the UTC instant
    /// when the system knows it.
    local: Option<NaiveDateTime>,
    utc: Option<DateTime<Utc>>,
    media: Option<String>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    right: u64,
    total: u64,
}

impl Tally {
    fn add(&mut self, ok: bool) {
        self.total += 1;
        self.right += u64::from(ok);
    }

    fn show(&self) -> String {
        if self.total == 0 {
            return "-".into();
        }
        format!(
            "{}/{} = {:.1}%",
            self.right,
            self.total,
            100.0 * self.right as f64 / self.total as f64
        )
    }
}

fn parse_label(v: Option<&Value>) -> Label {
    let Some(v) = v else { return Label::Unknown };
    let Some(s) = v.as_str() else {
        return if v.is_null() {
            Label::None
        } else {
            Label::Unknown
        };
    };
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        let has_time = d.time() != chrono::NaiveTime::MIN;
        return Label::Time {
            local: d.naive_local(),
            offset: Some(*d.offset()),
            has_time,
        };
    }
    for f in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"] {
        if let Ok(n) = NaiveDateTime::parse_from_str(s, f) {
            return Label::Time {
                local: n,
                offset: None,
                has_time: n.time() != chrono::NaiveTime::MIN,
            };
        }
    }
    Label::Unknown
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The newspaper4k pages with expected metadata.
fn newspaper_pages(dir: &Path, fetched: DateTime<Utc>) -> Result<Vec<Page>> {
    let meta_dir = dir.join("metadata");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&meta_dir)
        .with_context(|| {
            format!(
                "{} missing: run deploy/data/fetch-extract-devset.sh",
                meta_dir.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    let mut pages = Vec::new();
    for m in names {
        let stem = m
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let html = dir.join("html").join(format!("{stem}.html"));
        if !html.exists() {
            continue;
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&m)?)
            .with_context(|| format!("{}", m.display()))?;
        pages.push(Page {
            name: format!("newspaper4k/{stem}"),
            path: html,
            // One page has no URL in its metadata.
            url: text(&v, "url").unwrap_or_else(|| format!("http://{stem}.invalid/")),
            fetched,
            title: Some(text(&v, "title")),
            // newspaper4k leaves publish_date empty where it found none: not a
            // label that the page has none.
            published: match v.get("publish_date") {
                Some(Value::Null) | None => Label::Unknown,
                other => parse_label(other),
            },
            media: text(&v, "meta_site_name"),
        });
    }
    if pages.len() < 20 {
        bail!(
            "{}: {} labelled pages, expected 20 (run deploy/data/fetch-extract-devset.sh)",
            dir.display(),
            pages.len()
        );
    }
    Ok(pages)
}

/// harvest's own labelled pages.
fn fixture_pages(dir: &Path) -> Result<Vec<Page>> {
    let path = dir.join("labels.json");
    let labels: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?,
    )?;
    labels
        .iter()
        .map(|l| {
            let file = text(l, "file").context("label without file")?;
            let fetched = text(l, "fetched")
                .and_then(|f| DateTime::parse_from_rfc3339(&f).ok())
                .context("label without fetched")?
                .with_timezone(&Utc);
            Ok(Page {
                name: format!("fixtures/{file}"),
                path: dir.join(&file),
                url: text(l, "url").context("label without url")?,
                fetched,
                title: l.get("title").map(|_| text(l, "title")),
                published: parse_label(l.get("published")),
                media: text(l, "media"),
            })
        })
        .collect()
}

fn ours(page: &Page) -> Result<Answer> {
    let bytes = std::fs::read(&page.path)?;
    let decoded = crawler::charset::decode(&bytes, None);
    let url = url::Url::parse(&page.url)?;
    let ctx = TimeContext {
        fetched: page.fetched,
        zone: None,
        hint: None,
    };
    let x = extract_with(&decoded.text, &url, &ctx);
    Ok(Answer {
        title: x.title,
        local: x.published_local.map(|d| d.naive_local()),
        utc: x.published,
        media: if x.media_from_host { None } else { x.media },
    })
}

fn peer(python: &Path, pages: &[Page]) -> Result<(Vec<Answer>, f64)> {
    let input: Vec<Value> = pages
        .iter()
        .map(|p| serde_json::json!({"path": p.path, "url": p.url}))
        .collect();
    let mut child = Command::new(python)
        .arg(PEER_SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {} {PEER_SCRIPT}", python.display()))?;
    {
        let stdin = child.stdin.take().context("peer stdin")?;
        serde_json::to_writer(stdin, &input)?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("{PEER_SCRIPT} failed: {}", out.status);
    }
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).context("peer output")?;
    if answers.len() != pages.len() {
        bail!(
            "{PEER_SCRIPT}: {} answers for {} pages",
            answers.len(),
            pages.len()
        );
    }
    let mut seconds = 0.0;
    let parsed = answers
        .iter()
        .map(|a| {
            seconds += a.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
            Answer {
                title: text(a, "title"),
                local: text(a, "date")
                    .and_then(|d| NaiveDateTime::parse_from_str(&d, "%Y-%m-%d %H:%M").ok()),
                utc: None,
                media: text(a, "sitename"),
            }
        })
        .collect();
    Ok((parsed, seconds))
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One row of the table: a name and how to read it from [`Scores`].
type Metric = fn(&Scores) -> Tally;

#[derive(Default)]
struct Scores {
    title: Tally,
    minute: Tally,
    day: Tally,
    no_date: Tally,
    media: Tally,
}

/// Scores `a` on `page`; returns the mistakes.
fn score(page: &Page, a: &Answer, s: &mut Scores) -> Vec<String> {
    let mut wrong = Vec::new();
    if let Some(want) = &page.title {
        let ok = want.as_deref().map(squash) == a.title.as_deref().map(squash);
        s.title.add(ok);
        if !ok {
            let clip = |t: &Option<String>| {
                t.as_deref().map(|t| {
                    let mut c: String = t.chars().take(100).collect();
                    if t.chars().count() > 100 {
                        c.push('…');
                    }
                    c
                })
            };
            wrong.push(format!(
                "title {:?} (want {:?})",
                clip(&a.title),
                clip(want)
            ));
        }
    }
    match &page.published {
        Label::Unknown => {}
        Label::None => {
            s.no_date.add(a.local.is_none());
            if a.local.is_some() {
                wrong.push(format!("date {:?} (want none)", a.local));
            }
        }
        Label::Time {
            local,
            offset,
            has_time,
        } => {
            // The answer at the label's offset when both know the instant.
            let got = match (offset, a.utc) {
                (Some(o), Some(u)) => Some(u.with_timezone(o).naive_local()),
                _ => a.local,
            };
            let day_ok = got.is_some_and(|g| g.date() == local.date());
            s.day.add(day_ok);
            if *has_time {
                let minute = |t: NaiveDateTime| t.format("%Y-%m-%d %H:%M").to_string();
                let ok = got.is_some_and(|g| minute(g) == minute(*local));
                s.minute.add(ok);
                if !ok {
                    wrong.push(format!("time {got:?} (want {local})"));
                }
            } else if !day_ok {
                wrong.push(format!("day {got:?} (want {})", local.date()));
            }
        }
    }
    if let Some(want) = &page.media {
        let ok = a
            .media
            .as_deref()
            .is_some_and(|m| squash(m).to_lowercase() == squash(want).to_lowercase());
        s.media.add(ok);
        if !ok {
            wrong.push(format!("media {:?} (want {want:?})", a.media));
        }
    }
    wrong
}

/// Runs the benchmark and prints the table.
pub fn run(args: &BenchArgs) -> Result<()> {
    let fetched = Utc::now();
    let mut pages = newspaper_pages(&args.devset, fetched)?;
    pages.extend(fixture_pages(&args.fixtures)?);
    let start = Instant::now();
    let mine: Vec<Answer> = pages.iter().map(ours).collect::<Result<_>>()?;
    let our_secs = start.elapsed().as_secs_f64();
    let theirs = if args.python.exists() {
        Some(peer(&args.python, &pages)?)
    } else {
        eprintln!(
            "harvest: {} missing: the trafilatura peer is skipped (deploy/data/setup-peers.sh sets it up)",
            args.python.display()
        );
        None
    };
    let (mut s_ours, mut s_peer) = (Scores::default(), Scores::default());
    println!("mistakes (harvest | trafilatura):");
    for (i, page) in pages.iter().enumerate() {
        let w_ours = score(page, &mine[i], &mut s_ours);
        let w_peer = theirs
            .as_ref()
            .map(|(t, _)| score(page, &t[i], &mut s_peer))
            .unwrap_or_default();
        if !w_ours.is_empty() || !w_peer.is_empty() {
            println!(
                "  {:<36} {} | {}",
                page.name,
                if w_ours.is_empty() {
                    "ok".to_string()
                } else {
                    w_ours.join("; ")
                },
                if w_peer.is_empty() {
                    "ok".to_string()
                } else {
                    w_peer.join("; ")
                }
            );
        }
    }
    let newspaper = pages
        .iter()
        .filter(|p| p.name.starts_with("newspaper4k"))
        .count();
    println!(
        "\ndev set: {} pages ({} newspaper4k 0.9.6, {} harvest fixtures)",
        pages.len(),
        newspaper,
        pages.len() - newspaper
    );
    println!(
        "{:<34} {:>22} {:>22}",
        "metric", "harvest", "trafilatura 2.3.1"
    );
    let rows: [(&str, Metric); 5] = [
        ("title", |s| s.title),
        ("publish time (minute)", |s| s.minute),
        ("publish time (day)", |s| s.day),
        ("no date where the page has none", |s| s.no_date),
        ("media (named outlet)", |s| s.media),
    ];
    for (name, get) in rows {
        println!(
            "{:<34} {:>22} {:>22}",
            name,
            get(&s_ours).show(),
            if theirs.is_some() {
                get(&s_peer).show()
            } else {
                "-".into()
            }
        );
    }
    println!(
        "{:<34} {:>22} {:>22}",
        "extraction time (all pages)",
        format!("{:.3} s", our_secs),
        theirs
            .as_ref()
            .map(|(_, s)| format!("{s:.3} s"))
            .unwrap_or_else(|| "-".into())
    );
    Ok(())
}
