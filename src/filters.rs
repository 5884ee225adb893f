//! `query`, `stats` and `get`: command-line filters turned into index queries,
//! and results printed.

use std::io::Write;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Duration, FixedOffset, NaiveDate, TimeZone, Utc};
use indexer::{GroupBy, Interval, Query, StatsQuery};

use crate::cli::{
    FilterArgs, GroupArg, IntervalArg, QueryArgs, QueryFormat, StatsArgs, StatsFormat,
};
use crate::stores::Stores;

/// Largest `--limit` accepted.
pub const MAX_LIMIT: usize = 100_000;

/// Earliest and latest instants a query without `--from`/`--to` covers.
fn open_range() -> (DateTime<Utc>, DateTime<Utc>) {
    let from = Utc
        .with_ymd_and_hms(1990, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default();
    let to = Utc
        .with_ymd_and_hms(2100, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default();
    (from, to)
}

fn parse_tz(tz: &str) -> Result<FixedOffset> {
    if tz.eq_ignore_ascii_case("utc") || tz == "Z" {
        return FixedOffset::east_opt(0).context("utc");
    }
    let probe = format!("2000-01-01T00:00:00{tz}");
    DateTime::parse_from_rfc3339(&probe)
        .map(|d| *d.offset())
        .with_context(|| format!("--tz {tz:?}: expected an offset such as +08:00 or UTC"))
}

/// Parse `--from`/`--to`: a date (start of that day, or start of the next day
/// for an end) or an RFC 3339 date-time.
fn parse_bound(name: &str, value: &str, tz: FixedOffset, end: bool) -> Result<DateTime<Utc>> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(value) {
        return Ok(dt.with_timezone(&Utc));
    }
    let date = NaiveDate::parse_from_str(value, "%Y-%m-%d").with_context(|| {
        format!("--{name} {value:?}: expected YYYY-MM-DD or an RFC 3339 date-time")
    })?;
    let date = if end { date + Duration::days(1) } else { date };
    let local = date
        .and_hms_opt(0, 0, 0)
        .and_then(|d| tz.from_local_datetime(&d).single())
        .with_context(|| format!("--{name} {value:?}: not a valid time"))?;
    Ok(local.with_timezone(&Utc))
}

/// The index query the filters describe.
pub fn build_query(f: &FilterArgs, limit: Option<usize>) -> Result<Query> {
    let tz = parse_tz(&f.tz)?;
    let (mut from, mut to) = open_range();
    if let Some(v) = &f.from {
        from = parse_bound("from", v, tz, false)?;
    }
    if let Some(v) = &f.to {
        to = parse_bound("to", v, tz, true)?;
    }
    if from >= to {
        bail!(
            "--from {} is not before --to {}",
            from.to_rfc3339(),
            to.to_rfc3339()
        );
    }
    if let (Some(lo), Some(hi)) = (f.min_comments, f.max_comments) {
        if lo > hi {
            bail!("--min-comments {lo} is greater than --max-comments {hi}");
        }
    }
    if let Some(l) = limit {
        if l == 0 || l > MAX_LIMIT {
            bail!("--limit {l}: must be between 1 and {MAX_LIMIT}");
        }
    }
    for s in &f.sources {
        if !crate::config::valid_source_name(s) {
            bail!("--source {s:?}: source names are lower-case letters, digits and _");
        }
    }
    Ok(Query {
        sources: f.sources.clone(),
        from,
        to,
        topics: f.topics.clone(),
        media: f.media.clone(),
        keywords: f.keywords.iter().map(|k| k.to_lowercase()).collect(),
        min_comments: f.min_comments,
        max_comments: f.max_comments,
        include_revisits: f.include_revisits,
        limit,
    })
}

pub fn run_query(stores: &Stores, args: &QueryArgs) -> Result<()> {
    let q = build_query(&args.filters, Some(args.limit))?;
    let hits = stores.index.search(&q)?;
    let mut out = std::io::stdout().lock();
    match args.format {
        QueryFormat::Jsonl => {
            for h in &hits {
                serde_json::to_writer(&mut out, &h.page)?;
                out.write_all(b"\n")?;
            }
        }
        QueryFormat::Table => {
            writeln!(
                out,
                "{:<20} {:<16} {:<12} {:>8}  {:<40}  URL",
                "TIME (UTC)", "SOURCE", "TOPIC", "COMMENTS", "TITLE"
            )?;
            for h in &hits {
                let p = &h.page;
                let t = p.published.unwrap_or(p.fetched);
                writeln!(
                    out,
                    "{:<20} {:<16} {:<12} {:>8}  {:<40}  {}",
                    t.format("%Y-%m-%d %H:%M:%S"),
                    clip(&p.source, 16),
                    clip(&p.topic, 12),
                    p.comments.map_or("-".to_string(), |c| c.to_string()),
                    clip(&p.title, 40),
                    p.url
                )?;
            }
            writeln!(out, "{} result(s)", hits.len())?;
        }
    }
    Ok(())
}

/// Cut to `n` characters (not bytes: titles are often Chinese).
fn clip(s: &str, n: usize) -> String {
    let mut c: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        c.pop();
        c.push('…');
    }
    c
}

pub fn stats_query(args: &StatsArgs) -> Result<StatsQuery> {
    Ok(StatsQuery {
        query: build_query(&args.filters, None)?,
        interval: match args.interval {
            IntervalArg::Day => Interval::Day,
            IntervalArg::Week => Interval::Week,
            IntervalArg::Month => Interval::Month,
            IntervalArg::Year => Interval::Year,
        },
        group_by: args.group_by.map(|g| match g {
            GroupArg::Topic => GroupBy::Topic,
            GroupArg::Media => GroupBy::Media,
            GroupArg::Source => GroupBy::Source,
        }),
    })
}

pub fn run_stats(stores: &Stores, args: &StatsArgs) -> Result<()> {
    let q = stats_query(args)?;
    let rows = stores.index.stats(&q)?;
    let mut out = std::io::stdout().lock();
    match args.format {
        StatsFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &rows)?;
            out.write_all(b"\n")?;
        }
        StatsFormat::Csv => {
            writeln!(out, "bucket,group,count")?;
            for r in &rows {
                writeln!(
                    out,
                    "{},{},{}",
                    csv_field(&r.bucket),
                    csv_field(r.group.as_deref().unwrap_or("")),
                    r.count
                )?;
            }
        }
    }
    Ok(())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The original bytes of the page captured at `url` (its latest capture):
/// the HTTP body, or the whole WARC record. A revisit is followed to the
/// record that holds the payload.
pub fn get_original(stores: &Stores, url: &str, whole_record: bool) -> Result<Vec<u8>> {
    let state = stores
        .index
        .get_url(url)?
        .with_context(|| format!("{url} is not in the archive (try the URL exactly as crawled)"))?;
    let page = stores
        .index
        .get_page(&state.table, &state.row_key)?
        .with_context(|| format!("the index row of {url} is missing from {}", state.table))?;
    let mut loc = packer::Location {
        path: page.pack_path.clone(),
        offset: page.offset,
        length: page.length,
    };
    if page.revisit && !whole_record {
        let first = stores
            .index
            .get_digest(&page.digest)?
            .with_context(|| format!("revisit of {url}: digest {} is not indexed", page.digest))?;
        loc = packer::Location {
            path: first.first_location.path,
            offset: first.first_location.offset,
            length: first.first_location.length,
        };
    }
    let raw = stores
        .packs
        .read_range(&loc.path, loc.offset, loc.length)
        .with_context(|| format!("reading {} at {}+{}", loc.path, loc.offset, loc.length))?;
    let record = packer::warc::read_record(&raw).with_context(|| {
        format!(
            "the record at {}+{} is not valid WARC",
            loc.path, loc.offset
        )
    })?;
    if whole_record {
        let mut out = Vec::new();
        out.extend_from_slice(b"WARC/1.1\r\n");
        for (k, v) in &record.headers {
            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&record.block);
        return Ok(out);
    }
    let http = record.http_response().with_context(|| {
        format!(
            "the record at {}+{} has no HTTP response",
            loc.path, loc.offset
        )
    })?;
    Ok(http.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_to_date_covers_the_whole_day_in_its_zone() {
        let f = FilterArgs {
            from: Some("2017-01-01".into()),
            to: Some("2017-01-31".into()),
            tz: "+08:00".into(),
            ..Default::default()
        };
        let q = build_query(&f, Some(10)).unwrap();
        assert_eq!(q.from.to_rfc3339(), "2016-12-31T16:00:00+00:00");
        assert_eq!(q.to.to_rfc3339(), "2017-01-31T16:00:00+00:00");
    }

    #[test]
    fn bad_filters_name_the_parameter() {
        let cases = [
            (
                FilterArgs {
                    from: Some("2017-13-01".into()),
                    tz: "+00:00".into(),
                    ..Default::default()
                },
                "--from",
            ),
            (
                FilterArgs {
                    from: Some("2017-02-01".into()),
                    to: Some("2017-01-01".into()),
                    tz: "+00:00".into(),
                    ..Default::default()
                },
                "is not before",
            ),
            (
                FilterArgs {
                    tz: "Mars/Olympus".into(),
                    ..Default::default()
                },
                "--tz",
            ),
            (
                FilterArgs {
                    min_comments: Some(9),
                    max_comments: Some(1),
                    tz: "+00:00".into(),
                    ..Default::default()
                },
                "--min-comments",
            ),
            (
                FilterArgs {
                    sources: vec!["Bad Name".into()],
                    tz: "+00:00".into(),
                    ..Default::default()
                },
                "--source",
            ),
        ];
        for (f, needle) in cases {
            let err = build_query(&f, Some(10)).unwrap_err().to_string();
            assert!(err.contains(needle), "{err} should mention {needle}");
        }
        let ok = FilterArgs {
            tz: "+00:00".into(),
            ..Default::default()
        };
        assert!(build_query(&ok, Some(MAX_LIMIT + 1))
            .unwrap_err()
            .to_string()
            .contains("--limit"));
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("排序与筛选数据", 4), "排序与…");
        assert_eq!(clip("abc", 4), "abc");
    }
}
