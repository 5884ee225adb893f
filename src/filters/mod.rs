//! `query` and `stats`: command-line filters turned into index queries, and
//! results printed (a page's JSON is `read::PageJson`, as in the API).

use std::io::Write;

use anyhow::{Context, Result};
use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use indexer::{Interval, Query, StatsQuery, Zone};

use crate::cli::{GroupArg, IntervalArg, QueryArgs, QueryFormat, StatsArgs, StatsFormat};
use crate::stores::Stores;

pub mod defs;
pub use defs::FilterSpec;

/// Largest `--limit` accepted on the command line (`harvest query` pages
/// through the index for more than one page).
pub const MAX_LIMIT: usize = 100_000;
/// Hits fetched per index call when the command line asks for more.
const CLI_PAGE: usize = 1_000;

/// A filter parameter that is not valid. `param` is its name without dashes
/// (`min_comments`); the command line shows it as `--min-comments`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    pub param: String,
    pub message: String,
}

impl ParamError {
    pub fn new(param: &str, message: impl Into<String>) -> ParamError {
        ParamError {
            param: param.to_string(),
            message: message.into(),
        }
    }

    /// The message with the command-line spelling of the parameter.
    pub fn cli(&self) -> String {
        format!("--{}: {}", self.param.replace('_', "-"), self.message)
    }
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.param, self.message)
    }
}

impl std::error::Error for ParamError {}

impl FilterSpec {
    /// Whether the spec selects every page: no condition on which pages (the time zone, the
    /// revisit and collapse switches shape the answer, not the selection). Every field is
    /// named, so a new filter must be placed here.
    pub fn selects_everything(&self) -> bool {
        let FilterSpec {
            sources,
            from,
            to,
            tz: _,
            topics,
            media,
            outlets,
            keywords,
            any,
            text,
            min_comments,
            max_comments,
            include_revisits: _,
            collapse: _,
            published_from,
        } = self;
        sources.is_empty()
            && from.is_none()
            && to.is_none()
            && topics.is_empty()
            && media.is_empty()
            && outlets.is_empty()
            && keywords.is_empty()
            && any.is_empty()
            && text.is_none()
            && min_comments.is_none()
            && max_comments.is_none()
            && published_from.is_empty()
    }
}

/// Earliest and latest instants a query without `from`/`to` covers.
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

/// Parse a time zone: `UTC`, an offset such as `+08:00`, or an IANA name.
pub fn parse_zone(tz: &str) -> std::result::Result<Zone, ParamError> {
    if tz.is_empty() {
        return Ok(Zone::Utc);
    }
    Zone::parse(tz).map_err(|_| {
        ParamError::new(
            "tz",
            format!("{tz:?}: expected UTC, an offset such as +08:00, or an IANA name such as Asia/Shanghai"),
        )
    })
}

/// Parse `from`/`to`: a date (start of that day in `tz`, or start of the
/// next day for an end) or an RFC 3339 date-time.
fn parse_bound(
    name: &str,
    value: &str,
    tz: &Zone,
    end: bool,
) -> std::result::Result<DateTime<Utc>, ParamError> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(value) {
        return Ok(dt.with_timezone(&Utc));
    }
    let date = NaiveDate::parse_from_str(value, "%Y-%m-%d").map_err(|_| {
        ParamError::new(
            name,
            format!("{value:?}: expected YYYY-MM-DD or an RFC 3339 date-time"),
        )
    })?;
    let date = if end { date + Duration::days(1) } else { date };
    tz.start_of_day(date)
        .map_err(|e| ParamError::new(name, format!("{value:?}: {e}")))
}

impl FilterSpec {
    /// Which of `from` / `to` were given: statistics fill empty buckets out
    /// to a given bound, and only between the first and last counted bucket
    /// on an open side.
    pub fn bounds(&self) -> indexer::Bounds {
        indexer::Bounds {
            from: self.from.is_some(),
            to: self.to.is_some(),
        }
    }

    /// The index query the filters describe, and the zone of their dates.
    /// `limit` is checked against `max_limit`.
    pub fn build(
        &self,
        limit: Option<usize>,
        max_limit: usize,
    ) -> std::result::Result<(Query, Zone), ParamError> {
        let tz = parse_zone(&self.tz)?;
        let (mut from, mut to) = open_range();
        if let Some(v) = &self.from {
            from = parse_bound("from", v, &tz, false)?;
        }
        if let Some(v) = &self.to {
            to = parse_bound("to", v, &tz, true)?;
        }
        if from >= to {
            return Err(ParamError::new(
                "from",
                format!("{} is not before to {}", from.to_rfc3339(), to.to_rfc3339()),
            ));
        }
        if let (Some(lo), Some(hi)) = (self.min_comments, self.max_comments) {
            if lo > hi {
                return Err(ParamError::new(
                    "min_comments",
                    format!("{lo} is greater than max_comments {hi}"),
                ));
            }
        }
        if let Some(l) = limit {
            if l == 0 || l > max_limit {
                return Err(ParamError::new(
                    "limit",
                    format!("{l}: must be between 1 and {max_limit}"),
                ));
            }
        }
        for s in &self.sources {
            if !crate::config::valid_source_name(s) {
                return Err(ParamError::new(
                    "source",
                    format!("{s:?}: source names are lower-case letters, digits and _"),
                ));
            }
        }
        let mut q = Query::new(&[], from, to);
        q.sources = self.sources.clone();
        q.topics = self.topics.clone();
        q.media = self.media.clone();
        q.outlets = self.outlets.clone();
        q.text = mentions_text(&self.keywords, &self.any, self.text.as_deref())?;
        q.min_comments = self.min_comments;
        q.max_comments = self.max_comments;
        q.include_revisits = self.include_revisits;
        q.collapse_near_duplicates = self.collapse;
        q.published_from = parse_published_from(&self.published_from)?;
        q.limit = limit;
        Ok((q, tz))
    }
}

/// A text query's error as a parameter's.
fn text_error(param: &str, e: indexer::Error) -> ParamError {
    let message = match e {
        indexer::Error::BadText { position, reason } => {
            format!("at character {position}: {reason}")
        }
        other => other.to_string(),
    };
    ParamError::new(param, message)
}

/// "Mentions": the text query that `keyword` (every one), `any` (one of them) and `text`
/// make together. Each keyword is a phrase of the headline or the text (a word, `trade war`,
/// `中美 贸易`), not one of the page's extracted keywords. Each part is checked alone first,
/// so an error names the parameter it is in.
fn mentions_text(
    keywords: &[String],
    any: &[String],
    text: Option<&str>,
) -> std::result::Result<Option<String>, ParamError> {
    let phrase = |param: &str, k: &str| -> std::result::Result<Option<String>, ParamError> {
        // Quotes would end the phrase; the tokenizer drops them anyway.
        let k = k.replace('"', " ");
        let k = k.trim();
        if k.is_empty() {
            return Ok(None);
        }
        let p = format!("\"{k}\"");
        indexer::TextQuery::parse(&p).map_err(|e| text_error(param, e))?;
        Ok(Some(p))
    };
    let mut parts = Vec::new();
    for k in keywords {
        parts.extend(phrase("keyword", k)?);
    }
    let mut one_of = Vec::new();
    for k in any {
        one_of.extend(phrase("any", k)?);
    }
    if !one_of.is_empty() {
        parts.push(one_of.join(" OR "));
    }
    if let Some(t) = text.map(str::trim).filter(|t| !t.is_empty()) {
        indexer::TextQuery::parse(t).map_err(|e| text_error("text", e))?;
        parts.push(t.to_owned());
    }
    if parts.is_empty() {
        return Ok(None);
    }
    let all = parts.join(" ");
    // Together they may pass the size limits that each part keeps.
    let param = if text.is_some_and(|t| !t.trim().is_empty()) {
        "text"
    } else if any.is_empty() {
        "keyword"
    } else {
        "any"
    };
    indexer::TextQuery::parse(&all).map_err(|e| text_error(param, e))?;
    Ok(Some(all))
}

/// Checks and lower-cases `published_from` values (`text,meta` split by the
/// caller or here).
pub fn parse_published_from(values: &[String]) -> std::result::Result<Vec<String>, ParamError> {
    let mut out = Vec::new();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let v = v.trim();
        if v.is_empty() {
            continue;
        }
        let Some(p) = extract::PublishedFrom::parse(v) else {
            let known: Vec<&str> = extract::PublishedFrom::ALL
                .iter()
                .map(|p| p.as_str())
                .collect();
            return Err(ParamError::new(
                "published_from",
                format!("{v:?}: expected one of {}", known.join(", ")),
            ));
        };
        out.push(p.as_str().to_string());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Known values listed at most in a warning (media can be many).
const MAX_KNOWN_LISTED: usize = 20;

/// A filter value the index does not know: it matches no page, so the
/// answer is empty (or narrower than asked) for that reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValue {
    /// The parameter without dashes: `source`, `topic` or `media`.
    pub param: &'static str,
    pub value: String,
    /// The values the index has (of the sources in `within` for topics and
    /// media), sorted.
    pub known: Vec<String>,
    /// The query's sources the value was looked for in (empty = all).
    pub within: Vec<String>,
}

impl UnknownValue {
    /// `no page has topic "x" (known: a, b)`, at most
    /// [`MAX_KNOWN_LISTED`] known values named.
    pub fn message(&self) -> String {
        let mut known: Vec<&str> = self
            .known
            .iter()
            .take(MAX_KNOWN_LISTED)
            .map(String::as_str)
            .collect();
        let more = self.known.len().saturating_sub(MAX_KNOWN_LISTED);
        let more = format!("and {more} more");
        if self.known.len() > MAX_KNOWN_LISTED {
            known.push(&more);
        }
        let known = if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        };
        let within = match self.within.as_slice() {
            [] => String::new(),
            [one] => format!(" in source {one}"),
            many => format!(" in sources {}", many.join(", ")),
        };
        format!(
            "no page has {} {:?}{within} (known: {known})",
            self.param, self.value
        )
    }

    /// The message with the command-line spelling of the parameter.
    pub fn cli(&self) -> String {
        format!("--{}: {}", self.param, self.message())
    }
}

/// The `--source` (when `sources` is set), `--topic` and `--media` values
/// of `q` that no page of the index has. Each list of known values is read
/// only when the query filters on that attribute (topics and media by a
/// skip scan over their index rows, see [`indexer::Index::topics`]).
pub fn unknown_values(
    index: &indexer::Index,
    q: &Query,
    sources: bool,
) -> Result<Vec<UnknownValue>> {
    let mut out: Vec<UnknownValue> = Vec::new();
    let mut check = |param: &'static str, wanted: &[String], known: Vec<String>| {
        for v in wanted {
            let reported = out.iter().any(|u| u.param == param && u.value == *v);
            if known.binary_search(v).is_err() && !reported {
                out.push(UnknownValue {
                    param,
                    value: v.clone(),
                    within: if param == "source" {
                        Vec::new()
                    } else {
                        q.sources.clone()
                    },
                    known: known.clone(),
                });
            }
        }
    };
    if sources && !q.sources.is_empty() {
        check("source", &q.sources, index.sources()?);
    }
    if !q.topics.is_empty() {
        check("topic", &q.topics, index.topics(&q.sources)?);
    }
    if !q.media.is_empty() {
        check("media", &q.media, index.media(&q.sources)?);
    }
    Ok(out)
}

/// Print the unknown filter values of `q` on `err` (the answer goes on).
fn warn_unknown_values(stores: &Stores, q: &Query, err: &mut dyn Write) -> Result<()> {
    for u in unknown_values(&stores.index, q, true)? {
        writeln!(err, "harvest: warning: {}", u.cli())?;
    }
    Ok(())
}

/// The index query the command-line filters describe.
pub fn build_query(f: &FilterSpec, limit: Option<usize>) -> Result<Query> {
    f.clone()
        .build(limit, MAX_LIMIT)
        .map(|(q, _)| q)
        .map_err(|e| anyhow::anyhow!(e.cli()))
}

/// Up to `limit` hits in `sort` order, paging through the index.
pub fn search_all(stores: &Stores, mut q: Query, limit: usize) -> Result<Vec<indexer::PageHit>> {
    let mut hits = Vec::new();
    loop {
        q.limit = Some((limit - hits.len()).min(CLI_PAGE));
        let page = stores.index.search_page(&q)?;
        hits.extend(page.hits);
        match page.next_cursor {
            Some(c) if hits.len() < limit => {
                q.cursor = Some(indexer::Cursor::decode(&c)?);
            }
            _ => break,
        }
    }
    Ok(hits)
}

/// Default `--limit` of the table format.
pub const TABLE_DEFAULT_LIMIT: usize = 50;

/// `harvest query`: results on `out`, warnings on `err`. The table holds at
/// most [`MAX_LIMIT`] rows; JSON lines are streamed page by page, every
/// matching row unless `--limit` says otherwise.
pub fn run_query(
    stores: &Stores,
    args: &QueryArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    if args.format == QueryFormat::Jsonl {
        let mut q = args
            .filters
            .clone()
            .build(args.limit, usize::MAX)
            .map(|(q, _)| q)
            .map_err(|e| anyhow::anyhow!(e.cli()))?;
        q.sort = args.sort.into();
        warn_unknown_values(stores, &q, err)?;
        stream_jsonl(stores, q, args.limit, out)?;
        out.flush()?;
        return Ok(());
    }
    let limit = args.limit.unwrap_or(TABLE_DEFAULT_LIMIT);
    let mut q = build_query(&args.filters, Some(limit))?;
    q.sort = args.sort.into();
    warn_unknown_values(stores, &q, err)?;
    let q_text = q.text_query()?;
    let hits = search_all(stores, q, limit)?;
    let pages: Vec<&indexer::PageRecord> = hits.iter().map(|h| &h.page).collect();
    let copies = stores.index.copy_counts(&pages)?;
    // A text query's hits: the passage that holds its words, under each row.
    let snippets = match q_text {
        Some(tq) => crate::snippet::snippets(&pages, &tq, |p| crate::read::page_text(stores, p)),
        None => Vec::new(),
    };
    // FROM: where the time came from (`fetch`: the page gave none).
    writeln!(
        out,
        "{:<20} {:<7} {:<16} {:<12} {:>8} {:>6}  {:<40}  URL",
        "TIME (UTC)", "FROM", "SOURCE", "TOPIC", "COMMENTS", "COPIES", "TITLE"
    )?;
    for (i, (h, copies)) in hits.iter().zip(&copies).enumerate() {
        let p = &h.page;
        let t = p.published.unwrap_or(p.fetched);
        writeln!(
            out,
            "{:<20} {:<7} {:<16} {:<12} {:>8} {:>6}  {:<40}  {}",
            t.format("%Y-%m-%d %H:%M:%S"),
            p.published_source().unwrap_or("-"),
            clip(&p.source, 16),
            clip(&p.topic, 12),
            p.comments.map_or("-".to_string(), |c| c.to_string()),
            copies,
            clip(&p.title, 40),
            p.url
        )?;
        if let Some(s) = snippets.get(i).and_then(Option::as_ref) {
            writeln!(out, "    {}", crate::snippet::to_plain(s))?;
        }
    }
    writeln!(out, "{} result(s)", hits.len())?;
    Ok(())
}

/// Every hit of `q` (up to `limit`) as one JSON object a line (the API's
/// page shape, `read::PageJson`), written as each page of [`CLI_PAGE`] hits
/// arrives: memory is one page.
pub fn stream_jsonl(
    stores: &Stores,
    mut q: Query,
    limit: Option<usize>,
    out: &mut dyn Write,
) -> Result<u64> {
    let mut written = 0u64;
    loop {
        let left = limit.map_or(usize::MAX, |l| l.saturating_sub(written as usize));
        if left == 0 {
            return Ok(written);
        }
        q.limit = Some(left.min(CLI_PAGE));
        let page = stores.index.search_page(&q)?;
        // No snippets: a stream may hold every page of the archive, each re-extracted.
        for p in crate::read::pages_json(stores, &page.hits, None)? {
            serde_json::to_writer(&mut *out, &p)?;
            out.write_all(b"\n")?;
            written += 1;
        }
        match page.next_cursor {
            Some(c) => q.cursor = Some(indexer::Cursor::decode(&c)?),
            None => return Ok(written),
        }
    }
}

/// Cut to `n` characters (not bytes: titles are often Chinese).
pub fn clip(s: &str, n: usize) -> String {
    let mut c: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        c.pop();
        c.push('…');
    }
    c
}

pub fn stats_query(args: &StatsArgs) -> Result<StatsQuery> {
    let spec = args.filters.clone();
    let (query, tz) = spec
        .build(None, MAX_LIMIT)
        .map_err(|e| anyhow::anyhow!(e.cli()))?;
    Ok(StatsQuery {
        query,
        interval: match args.interval {
            IntervalArg::Day => Interval::Day,
            IntervalArg::Week => Interval::Week,
            IntervalArg::Month => Interval::Month,
            IntervalArg::Year => Interval::Year,
        },
        group_by: args.group_by.map(GroupArg::group_by),
        tz,
        fill_empty: !args.no_fill,
        bounds: spec.bounds(),
    })
}

/// The parameter an indexer error of a statistics query is the asker's
/// fault of, for a usage error (HTTP 400, `--from: ...`) rather than a
/// server error: too many buckets names `from` / `to` when the asker gave a
/// bound (the range is too long for the interval), else `interval`. `None`
/// for every other error.
pub fn stats_param_error(e: &indexer::Error, sq: &StatsQuery) -> Option<ParamError> {
    let indexer::Error::TooManyBuckets { limit } = e else {
        return None;
    };
    let interval = match sq.interval {
        Interval::Day => "day",
        Interval::Week => "week",
        Interval::Month => "month",
        Interval::Year => "year",
    };
    let shorter = "use a longer interval (week, month or year) or a shorter range";
    let fmt = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let (param, range) = match (sq.bounds.from, sq.bounds.to) {
        (true, true) => (
            "from",
            format!("from {} to {}", fmt(sq.query.from), fmt(sq.query.to)),
        ),
        (true, false) => (
            "from",
            format!("from {} to the archive's last year", fmt(sq.query.from)),
        ),
        (false, true) => (
            "to",
            format!("from the archive's first year to {}", fmt(sq.query.to)),
        ),
        (false, false) => ("interval", "of the archive's years".to_string()),
    };
    Some(ParamError::new(
        param,
        format!("the range {range} needs more than {limit} {interval} buckets; {shorter}"),
    ))
}

/// `harvest stats`: the table on `out`, warnings on `err`.
pub fn run_stats(
    stores: &Stores,
    args: &StatsArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    files: &crate::outfile::Files,
) -> Result<()> {
    let q = stats_query(args)?;
    warn_unknown_values(stores, &q.query, err)?;
    let rows = stores
        .index
        .stats(&q)
        .map_err(|e| match stats_param_error(&e, &q) {
            Some(p) => anyhow::anyhow!(p.cli()),
            None => anyhow::Error::new(e),
        })?;
    if let Some(path) = &args.plot {
        let table = crate::plot::StatsTable::from_rows(&rows, q.group_by.is_some());
        let title = format!(
            "pages per {}{} ({} total, {})",
            args.interval.label(),
            args.group_by
                .map_or(String::new(), |g| format!(" by {}", g.label())),
            table.pages(q.group_by),
            q.tz
        );
        let chart = crate::plot::chart_bytes(&table, &title, path)?;
        let mut file = files.create(path)?;
        file.write_all(&chart)
            .with_context(|| format!("cannot write {}", path.display()))?;
        file.commit()?;
        writeln!(err, "chart written to {}", path.display())?;
    }
    match args.format {
        StatsFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &rows)?;
            out.write_all(b"\n")?;
        }
        StatsFormat::Csv => out.write_all(stats_csv(&rows).as_bytes())?,
    }
    Ok(())
}

/// Statistics rows as CSV: `bucket,group,count`.
pub fn stats_csv(rows: &[indexer::StatsRow]) -> String {
    let mut out = String::from("bucket,group,count\n");
    for r in rows {
        out.push_str(&format!(
            "{},{},{}\n",
            csv_field(&r.bucket),
            csv_field(r.group.as_deref().unwrap_or("")),
            r.count
        ));
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_from_values_are_checked_and_normalised() {
        let v =
            |s: &[&str]| parse_published_from(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(
            v(&["text,meta", "TEXT", " fetch "]).unwrap(),
            ["fetch", "meta", "text"]
        );
        assert_eq!(v(&[]).unwrap(), Vec::<String>::new());
        let e = v(&["text,guess"]).unwrap_err();
        assert_eq!(e.param, "published_from");
        assert!(
            e.message.contains("guess") && e.message.contains("sitemap"),
            "{}",
            e.message
        );
        assert!(e.cli().starts_with("--published-from"));
    }

    #[test]
    fn plain_to_date_covers_the_whole_day_in_its_zone() {
        let f = FilterSpec {
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
                FilterSpec {
                    from: Some("2017-13-01".into()),
                    tz: "+00:00".into(),
                    ..Default::default()
                },
                "--from",
            ),
            (
                FilterSpec {
                    from: Some("2017-02-01".into()),
                    to: Some("2017-01-01".into()),
                    tz: "+00:00".into(),
                    ..Default::default()
                },
                "is not before",
            ),
            (
                FilterSpec {
                    tz: "Mars/Olympus".into(),
                    ..Default::default()
                },
                "--tz",
            ),
            (
                FilterSpec {
                    min_comments: Some(9),
                    max_comments: Some(1),
                    tz: "+00:00".into(),
                    ..Default::default()
                },
                "--min-comments",
            ),
            (
                FilterSpec {
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
        let ok = FilterSpec {
            tz: "+00:00".into(),
            ..Default::default()
        };
        assert!(build_query(&ok, Some(MAX_LIMIT + 1))
            .unwrap_err()
            .to_string()
            .contains("--limit"));
    }

    /// Issue 41 item 1: `--keyword` and `--any` are words or phrases of the text, one text
    /// query with `--text`; an error names the option it is in.
    #[test]
    fn keywords_are_phrases_of_the_text_query() {
        let text = |k: &[&str], a: &[&str], t: Option<&str>| {
            let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            mentions_text(&v(k), &v(a), t)
        };
        assert_eq!(text(&[], &[], None).unwrap(), None);
        assert_eq!(text(&[" "], &[], Some(" ")).unwrap(), None);
        assert_eq!(
            text(
                &["trade war", "军事"],
                &["中美 贸易", "tariff"],
                Some("title:china -sport")
            )
            .unwrap()
            .as_deref(),
            Some(r#""trade war" "军事" "中美 贸易" OR "tariff" title:china -sport"#)
        );
        // Query syntax inside a keyword is only words: no OR, no exclusion, no field.
        let q = text(&["a OR -b title:c \"d"], &[], None).unwrap().unwrap();
        assert_eq!(q, r#""a OR -b title:c  d""#);
        let parsed = indexer::TextQuery::parse(&q).unwrap();
        assert_eq!(parsed.clauses.len(), 1, "{parsed:?}");
        for (k, a, t, param) in [
            (&["the"][..], &[][..], None, "keyword"),
            (&[][..], &["of", "and"][..], None, "any"),
            (&["war"][..], &[][..], Some("\"open"), "text"),
        ] {
            let e = text(k, a, t).unwrap_err();
            assert_eq!(e.param, param, "{e}");
        }
        let f = FilterSpec {
            keywords: vec!["Trade War".into()],
            any: vec!["tariff".into(), "sanction".into()],
            tz: "+00:00".into(),
            ..Default::default()
        };
        let q = build_query(&f, Some(10)).unwrap();
        assert!(q.keywords.is_empty() && q.keywords_any.is_empty());
        assert_eq!(
            q.text.as_deref(),
            Some(r#""Trade War" "tariff" OR "sanction""#)
        );
    }

    /// Issue 40 item 6: statistics over more than 100,000 buckets were an
    /// internal error (HTTP 500); they name the asker's parameter.
    #[test]
    fn too_many_buckets_names_the_bound_given_or_the_interval() {
        let spec = |from: Option<&str>, to: Option<&str>| FilterSpec {
            from: from.map(str::to_string),
            to: to.map(str::to_string),
            ..FilterSpec::default()
        };
        let sq = |spec: FilterSpec| {
            let (query, tz) = spec.build(None, MAX_LIMIT).unwrap();
            StatsQuery {
                query,
                interval: Interval::Week,
                group_by: None,
                tz,
                fill_empty: true,
                bounds: spec.bounds(),
            }
        };
        let too_many = indexer::Error::TooManyBuckets { limit: 100_000 };
        for (spec, param, range) in [
            (
                spec(Some("1000-01-01"), Some("9000-01-01")),
                "from",
                "from 1000-01-01T00:00:00Z to 9000-01-02T00:00:00Z",
            ),
            (spec(Some("1000-01-01"), None), "from", "from 1000-01-01"),
            (spec(None, Some("9000-01-01")), "to", "to 9000-01-02"),
            (spec(None, None), "interval", "archive's years"),
        ] {
            let e = stats_param_error(&too_many, &sq(spec)).unwrap();
            assert_eq!(e.param, param, "{e}");
            assert!(
                e.message.contains(range) && e.message.contains("100000 week buckets"),
                "{e}"
            );
        }
        let other = indexer::Error::Invalid("x".into());
        assert_eq!(stats_param_error(&other, &sq(spec(None, None))), None);
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("排序与筛选数据", 4), "排序与…");
        assert_eq!(clip("abc", 4), "abc");
    }
}
