//! The crawl state check: the frontier and runs tables on a store.

use super::super::api::TableStore;
use super::fixture::check;
use crate::error::Result;

/// The crawl state on a store: a job run's queue survives a reopen (a crash),
/// hands out each URL once, keeps a page's links once the page is finished,
/// is cleared for a new run; runs come back newest first. `job` names the
/// jobs used (unique per call on a shared store).
pub fn crawl_state(store: std::sync::Arc<dyn TableStore>, job: &str) -> Result<()> {
    use crate::tables::crawlstate::{
        FrontierEntry, FrontierTable, RunRecord, RunStatus, RunsTable,
    };
    let e = |url: &str, depth: u32| FrontierEntry {
        url: url.to_owned(),
        depth,
        uncaptured: false,
    };
    let other = format!("{job}-other");
    {
        let q = FrontierTable::open(store.clone(), job)?;
        check(q.push(&[e("http://a/", 0)], &[])? == 1, "seed queued")?;
        check(q.take(10)? == vec![e("http://a/", 0)], "seed taken")?;
        let links = [e("http://a/2", 2), e("http://a/1", 1), e("http://a/1", 1)];
        check(q.push(&links, &["http://a/old"])? == 2, "links queued once")?;
        check(!q.mark_seen("http://a/old")?, "skipped URLs count as seen")?;
        q.finish(&["http://a/".to_owned()])?;
        check(q.take(1)? == vec![e("http://a/1", 1)], "lowest depth first")?;
        let o = FrontierTable::open(store.clone(), &other)?;
        check(
            o.push(&[e("http://a/1", 1)], &[])? == 1,
            "jobs are separate",
        )?;
        o.flush()?;
        // "crash": http://a/1 is in flight, http://a/2 queued
    }
    let q = FrontierTable::open(store.clone(), job)?;
    check(q.pending() == 2, "two URLs left after the crash")?;
    check(q.seen_count() == 4, "seen URLs survive")?;
    let mut left: Vec<String> = q.take(10)?.into_iter().map(|x| x.url).collect();
    left.sort();
    check(
        left == ["http://a/1", "http://a/2"],
        "in-flight and queued URLs come back",
    )?;
    check(
        q.push(&[e("http://a/", 0)], &[])? == 0,
        "a finished URL is not queued again",
    )?;
    check(
        FrontierTable::clear(&store, job)? == 6,
        "clear removes the run's rows",
    )?;
    check(
        FrontierTable::open(store.clone(), job)?.seen_count() == 0,
        "cleared",
    )?;
    check(
        FrontierTable::open(store.clone(), &other)?.pending() == 1,
        "the other job stays",
    )?;
    FrontierTable::clear(&store, &other)?;

    let runs = RunsTable::open(store)?;
    let t0 = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
    for (secs, status) in [(0, RunStatus::Finished), (60, RunStatus::Running)] {
        runs.put(&RunRecord {
            job: job.to_owned(),
            started: t0 + chrono::Duration::seconds(secs),
            ended: None,
            status,
            heartbeat: t0,
            pid: 1,
            host: "h".into(),
            resumed: 0,
            error: None,
            summary: serde_json::json!({ "pages": secs }),
            writers: if secs == 0 {
                Vec::new()
            } else {
                vec!["abcd2345".into(), "efgh6712".into()]
            },
            appended: Vec::new(),
        })?;
    }
    let running = t0 + chrono::Duration::seconds(60);
    runs.note_appended(job, running, "news/2024/05/01/a.warc.gz", 4096)?;
    // A later put of the record (a heartbeat) keeps what was noted beside it.
    let mut again = runs.list(Some(job), 1)?.remove(0);
    again.appended.clear();
    again.heartbeat = running;
    runs.put(&again)?;
    let listed = runs.list(Some(job), 10)?;
    check(
        listed.len() == 2 && listed[0].status == RunStatus::Running,
        "runs newest first",
    )?;
    check(
        listed[0].writers == ["abcd2345", "efgh6712"] && listed[1].writers.is_empty(),
        "a run's pack writers are kept",
    )?;
    check(
        listed[0].appended == [("news/2024/05/01/a.warc.gz".to_string(), 4096)]
            && listed[1].appended.is_empty(),
        "a run's appended packs are kept beside its record",
    )?;
    Ok(())
}
