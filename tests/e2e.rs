//! End-to-end tests of the `harvest` binary on the embedded default: a real
//! site served on loopback is crawled, classified, packed and indexed, and
//! every answer is checked against a brute-force walk over the packs.

mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harvest::demo::{manifest_labels, DEMO_DEPTH, DEMO_ENTRY};
use harvest::site::{SiteFiles, DEMO_SITE};
use util::{
    assert_records_linked, assert_warcio_accepts, count_by, http_get, jsonl, walk_packs,
    warcinfo_fields, Mount, Site, Workspace,
};

/// Pages of the demo manifest a robots-obeying crawl must archive.
fn allowed_demo_paths() -> BTreeSet<String> {
    harvest::demo::DEMO_MANIFEST
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c.len() >= 5 && c[4] == "allow").then(|| format!("/{}", c[0]))
        })
        .collect()
}

fn urls_of(rows: &[serde_json::Value]) -> BTreeSet<String> {
    rows.iter()
        .map(|r| r["url"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn demo_site_is_archived_once_and_answers_match_the_packs() {
    let site = Site::demo();
    let files = SiteFiles::from_tar_gz(DEMO_SITE).unwrap();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "lohelp", Some(DEMO_DEPTH));
    ws.train_demo_model();
    const AGENT: &str = "harvest-e2e/1.0 (+https://example.invalid/e2e)";
    const OPERATOR: &str = "E2E archive team <archive@example.invalid>";
    ws.configure(|raw| {
        raw.crawl.user_agent = Some(AGENT.into());
        raw.storage.operator = Some(OPERATOR.into());
    });

    let summary = ws.crawl();
    let expected = allowed_demo_paths();
    assert_eq!(expected.len(), 377, "manifest changed");
    assert_eq!(
        summary["pages"].as_u64(),
        Some(expected.len() as u64),
        "{summary}"
    );
    assert_eq!(summary["duplicates"].as_u64(), Some(0), "{summary}");

    // Brute force: every reachable page archived exactly once, nothing else
    // (the links to missing pages are archived as their 404 answers).
    let records = walk_packs(&ws);
    let responses: Vec<_> = records
        .iter()
        .filter(|r| r.kind == "response" && r.is_page_answer())
        .collect();
    let per_uri = count_by(responses.iter().map(|r| r.uri.clone()));
    let want: BTreeSet<String> = expected.iter().map(|p| site.url(p)).collect();
    let got: BTreeSet<String> = per_uri.keys().cloned().collect();
    assert_eq!(got, want, "archived URLs differ from the reachable pages");
    assert!(
        per_uri.values().all(|&n| n == 1),
        "a page was archived twice"
    );
    assert!(
        !got.iter().any(|u| u.contains("/shared/autopi/")),
        "robots.txt disallows /zh-CN/text/shared/autopi/"
    );
    // Stored bodies are the served bytes.
    for r in &responses {
        let path = r.uri.strip_prefix(&site.url("")).unwrap();
        assert_eq!(r.body.as_slice(), files.get(path).unwrap(), "{}", r.uri);
    }
    for pack in ws.packs() {
        assert_warcio_accepts(&pack);
    }
    // Issue 14: each capture is followed by the request harvest sent for it, and every
    // record names its pack's warcinfo, which says who wrote the pack and how.
    let links = assert_records_linked(&ws);
    assert_eq!(links.captures, records.len());
    let entry = links
        .headers_of(&site.url(DEMO_ENTRY))
        .expect("entry request");
    assert_eq!(entry["accept-encoding"], "gzip, deflate, br");
    assert!(entry["accept"].starts_with("text/html"), "{entry:?}");
    assert!(
        !entry.contains_key("if-none-match"),
        "a first crawl is unconditional"
    );
    for pack in ws.packs() {
        let info = warcinfo_fields(&pack);
        assert!(info["software"].starts_with("harvest/"), "{info:?}");
        assert_eq!(info["format"], "WARC File Format 1.1");
        assert!(info["conformsTo"].contains("warc-1.1"), "{info:?}");
        assert!(!info["hostname"].is_empty(), "{info:?}");
        assert_eq!(info["operator"], OPERATOR);
        assert_eq!(info["isPartOf"], "crawl");
        assert_eq!(info["robots"], "obey");
        assert_eq!(info["http-header-user-agent"], AGENT);
    }

    // `get` returns byte-identical bodies.
    for path in expected.iter().step_by(37) {
        let out = ws.harvest(&["get", &site.url(path)]);
        assert_eq!(
            out.stdout.as_slice(),
            files.get(path).unwrap(),
            "get {path}"
        );
    }

    // Every page is indexed: an open query lists them all.
    let all = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    assert_eq!(urls_of(&all), want);

    // Query and stats answers equal brute-force counts over the same pages.
    let by_topic = count_by(all.iter().map(|r| r["topic"].as_str().unwrap().to_string()));
    assert!(
        by_topic.len() >= 3,
        "the model should find several topics: {by_topic:?}"
    );
    let stats: Vec<serde_json::Value> = serde_json::from_slice(
        &ws.harvest(&[
            "stats",
            "--group-by",
            "topic",
            "--interval",
            "day",
            "--format",
            "json",
        ])
        .stdout,
    )
    .unwrap();
    let stats_by_topic: BTreeMap<String, u64> = stats
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
            )
        })
        .fold(BTreeMap::new(), |mut m, (k, v)| {
            *m.entry(k).or_insert(0) += v;
            m
        });
    assert_eq!(stats_by_topic, by_topic);

    let labels = manifest_labels();
    let mut agree = 0;
    for row in &all {
        let path = row["url"]
            .as_str()
            .unwrap()
            .strip_prefix(&site.url(""))
            .unwrap();
        agree += u64::from(labels.get(path).map(String::as_str) == row["topic"].as_str());
    }
    // The model was trained on other pages of the package; it must beat the
    // majority class (swriter, 122/377 = 32 %) by a wide margin.
    assert!(
        agree * 100 >= 55 * all.len() as u64,
        "topic accuracy {agree}/{}",
        all.len()
    );

    for (topic, n) in &by_topic {
        let rows = jsonl(&ws.harvest(&[
            "query", "--format", "jsonl", "--limit", "100000", "--topic", topic,
        ]));
        assert_eq!(rows.len() as u64, *n, "query --topic {topic}");
        // A keyword condition, against the rows' extracted keyword lists.
        let kw_counts = count_by(rows.iter().flat_map(|r| {
            r["keywords"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string())
        }));
        if let Some((kw, _)) = kw_counts.iter().max_by_key(|(_, c)| **c) {
            // Keyword conditions are case-insensitive (the index lowercases).
            let want: BTreeSet<String> = rows
                .iter()
                .filter(|r| {
                    r["keywords"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k.as_str().unwrap().to_lowercase() == kw.to_lowercase())
                })
                .map(|r| r["url"].as_str().unwrap().to_string())
                .collect();
            let got = urls_of(&jsonl(&ws.harvest(&[
                "query",
                "--format",
                "jsonl",
                "--limit",
                "100000",
                "--topic",
                topic,
                "--keyword",
                kw,
            ])));
            // "Mentions K" is the text: every page K was extracted from mentions it, and
            // `--keyword K` is the text query `"K"`.
            assert!(
                want.is_subset(&got),
                "query --topic {topic} --keyword {kw}: pages with the keyword left out: {:?}",
                want.difference(&got).take(3).collect::<Vec<_>>()
            );
            let quoted = format!("\"{kw}\"");
            let as_text = urls_of(&jsonl(&ws.harvest(&[
                "query", "--format", "jsonl", "--limit", "100000", "--topic", topic, "--text",
                &quoted,
            ])));
            assert_eq!(got, as_text, "--keyword {kw} vs --text {quoted}");
        }
    }
}

/// Real LibreOffice pages, the first one also under a second URL.
fn duplicate_site() -> (SiteFiles, Vec<u8>) {
    let demo = SiteFiles::from_tar_gz(DEMO_SITE).unwrap();
    let mut paths: Vec<&str> = demo.html_paths().collect();
    paths.sort();
    let a = demo.get(paths[0]).unwrap().to_vec();
    let b = demo.get(paths[1]).unwrap().to_vec();
    let index = b"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>index</title></head><body>\
        <a href=\"/a.html\">a</a> <a href=\"/copy/a.html\">a again</a> <a href=\"/b.html\">b</a></body></html>"
        .to_vec();
    let files = SiteFiles::from_pairs([
        ("/index.html".to_string(), index),
        ("/a.html".to_string(), a.clone()),
        ("/copy/a.html".to_string(), a.clone()),
        ("/b.html".to_string(), b),
    ]);
    (files, a)
}

#[test]
fn same_page_under_two_urls_is_one_response_and_one_revisit() {
    let (files, a) = duplicate_site();
    let site = Site::serve(files);
    let ws = Workspace::new(&site.url("/index.html"), "dups", None);
    let summary = ws.crawl();
    assert_eq!(summary["pages"].as_u64(), Some(4), "{summary}");
    assert_eq!(summary["duplicates"].as_u64(), Some(1), "{summary}");

    let records = walk_packs(&ws);
    let digest = packer::warc::payload_digest(&a);
    let same: Vec<_> = records.iter().filter(|r| r.digest == digest).collect();
    let kinds = count_by(same.iter().map(|r| r.kind.as_str()));
    assert_eq!(
        kinds,
        BTreeMap::from([("response", 1), ("revisit", 1)]),
        "{same:?}"
    );
    // The revisit stores no payload: the bytes are in the packs once.
    let stored: usize = records.iter().filter(|r| r.body == a).count();
    assert_eq!(stored, 1);
    // The revisit has its own request record, as the response has.
    let links = assert_records_linked(&ws);
    assert_eq!(links.captures, records.len());
    assert!(links.headers_of(&site.url("/copy/a.html")).is_some());

    let cfg = harvest::config::Config::load(Some(&ws.config)).unwrap();
    let stores = harvest::stores::Stores::open(&cfg).unwrap();
    let entry = stores
        .index
        .get_digest(&digest)
        .unwrap()
        .expect("digest indexed");
    assert_eq!(entry.captures, 2);
    drop(stores);

    // Both URLs give the original bytes back.
    for path in ["/a.html", "/copy/a.html"] {
        assert_eq!(
            ws.harvest(&["get", &site.url(path)]).stdout,
            a,
            "get {path}"
        );
    }
    for pack in ws.packs() {
        assert_warcio_accepts(&pack);
    }
    // Revisits are left out of queries unless asked for.
    let plain = jsonl(&ws.harvest(&["query", "--format", "jsonl"]));
    let with = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--include-revisits"]));
    assert_eq!((plain.len(), with.len()), (3, 4));
}

/// GET `uri` on the API router without a server: status and body.
fn api_get(app: &axum::Router, uri: &str) -> (axum::http::StatusCode, Vec<u8>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let req = axum::http::Request::builder()
            .uri(uri)
            .body(axum::body::Body::empty())
            .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, body.to_vec())
    })
}

fn api_json(app: &axum::Router, uri: &str) -> serde_json::Value {
    let (status, body) = api_get(app, uri);
    assert_eq!(
        status,
        axum::http::StatusCode::OK,
        "{uri}: {}",
        String::from_utf8_lossy(&body)
    );
    serde_json::from_slice(&body).unwrap()
}

fn keys(v: &serde_json::Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// The fields of a page, one shape (`harvest::read::PageJson`) in `harvest query --format
/// jsonl` and in `/api/search` hits. Before it the JSON lines had the index row's fields
/// (no `id`, `near_duplicate`, `copies`, `links`, `pack`; `simhash` a number) and the hits
/// had `id` … `links` and none of the row's location, digest or record fields.
const PAGE_FIELDS: &[&str] = &[
    "id",
    "url",
    "title",
    "published",
    "published_from",
    "fetched",
    "first_seen",
    "source",
    "media",
    "media_from_host",
    "outlet",
    "author",
    "topic",
    "topic_score",
    "comments",
    "participants",
    "keywords",
    "cluster",
    "revisit",
    "near_duplicate",
    "near_duplicate_of",
    "copies",
    "language",
    "charset",
    "status",
    "digest",
    "record_id",
    "simhash",
    "simhash_version",
    "pack",
    "pack_path",
    "offset",
    "length",
    "links",
];
/// What `/api/pages/{id}` adds to a page.
const DETAIL_EXTRA_FIELDS: &[&str] = &["captures", "history", "payload_captures"];

/// The read path, through the command line and the API on the same pages: a page and its
/// revisit (the same payload under a second URL) read back by URL (`get`, `get --record`)
/// and by id (`/api/pages/{id}`, `/raw`), the revisit followed to its payload; and the
/// JSON of a page as `query --format jsonl` and the API show it.
#[test]
fn a_page_and_its_revisit_read_the_same_through_the_cli_and_the_api() {
    let (files, a) = duplicate_site();
    let site = Site::serve(files);
    let ws = Workspace::new(&site.url("/index.html"), "reads", None);
    // A real model: a topic score that is not 0 (an f32 must print alike on both sides).
    ws.train_demo_model();
    ws.crawl();
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--include-revisits"]));
    let row_of = |url: &str| {
        rows.iter()
            .find(|r| r["url"] == url)
            .unwrap_or_else(|| panic!("no row of {url}"))
            .clone()
    };
    // Which URL the crawl reached first holds the payload; the other is its revisit.
    let (mut original, mut copy) = (site.url("/a.html"), site.url("/copy/a.html"));
    if row_of(&original)["revisit"] == true {
        std::mem::swap(&mut original, &mut copy);
    }
    assert_eq!(row_of(&original)["revisit"], false);
    assert_eq!(row_of(&copy)["revisit"], true);

    // By URL: the payload, and each capture's own record.
    for url in [&original, &copy] {
        assert_eq!(ws.harvest(&["get", url]).stdout, a, "get {url}");
    }
    let record = |url: &str| {
        String::from_utf8_lossy(&ws.harvest(&["get", "--record", url]).stdout).into_owned()
    };
    assert!(record(&original).contains("WARC-Type: response"));
    let revisit = record(&copy);
    assert!(revisit.contains("WARC-Type: revisit"), "{revisit}");
    assert!(revisit.contains(&copy), "{revisit}");

    let cfg = harvest::config::Config::load(Some(&ws.config)).unwrap();
    let stores = harvest::stores::Stores::open(&cfg).unwrap();
    let app = harvest::serve::router(harvest::serve::AppState::new(stores, None));
    let hits = api_json(&app, "/api/search?revisits=true&limit=200");
    let hits = hits["hits"].as_array().unwrap();
    assert_eq!(hits.len(), rows.len());
    for url in [&original, &copy] {
        let hit = hits
            .iter()
            .find(|h| h["url"] == url.as_str())
            .unwrap_or_else(|| panic!("no hit of {url}"));
        let id = hit["id"].as_str().unwrap();
        let row = row_of(url);
        let detail = api_json(&app, &format!("/api/pages/{id}"));

        // By id: the same bytes as by URL, a revisit followed to its payload.
        let (status, raw) = api_get(&app, &format!("/api/pages/{id}/raw"));
        assert_eq!(status, axum::http::StatusCode::OK);
        assert_eq!(raw, a, "/api/pages/{id}/raw of {url}");
        assert_eq!(hit["revisit"], row["revisit"], "{hit}");

        // One shape: the JSON line is the hit; the detail adds the capture history.
        let want: BTreeSet<&str> = PAGE_FIELDS.iter().copied().collect();
        assert_eq!(keys(&row), want, "query --format jsonl");
        assert_eq!(&row, hit, "query --format jsonl and /api/search");
        assert!(
            row["topic_score"].as_f64().is_some_and(|s| s > 0.0),
            "{row}"
        );
        let want: BTreeSet<&str> = PAGE_FIELDS
            .iter()
            .chain(DETAIL_EXTRA_FIELDS)
            .copied()
            .collect();
        assert_eq!(keys(&detail), want, "/api/pages/{{id}}");
        for (k, v) in hit.as_object().unwrap() {
            assert_eq!(
                &detail[k], v,
                "{k} of {url}: hit {v}, /api/pages {}",
                detail[k]
            );
        }
        assert_eq!(detail["pack"]["path"], row["pack_path"]);
        assert_eq!(detail["pack"]["offset"], row["offset"]);
        assert_eq!(detail["pack"]["length"], row["length"]);
        assert!(
            row["simhash"].as_str().is_some_and(|s| s.len() == 16),
            "{row}"
        );
        assert_eq!(
            row["simhash_version"],
            classifier::simhash::FINGERPRINT_VERSION,
            "{row}"
        );
    }
}

#[test]
fn a_second_crawl_stores_revisits_and_loses_nothing() {
    let (files, _) = duplicate_site();
    let site = Site::serve(files);
    let ws = Workspace::new(&site.url("/index.html"), "again", None);
    ws.crawl();
    let first = walk_packs(&ws);
    let summary = ws.crawl();
    assert_eq!(summary["duplicates"].as_u64(), Some(4), "{summary}");
    let second = walk_packs(&ws);
    // Every record of the first crawl is still there, byte for byte.
    for r in &first {
        assert!(
            second
                .iter()
                .any(|s| s.uri == r.uri && s.kind == r.kind && s.body == r.body),
            "{} lost",
            r.uri
        );
    }
    let kinds = count_by(
        second
            .iter()
            .filter(|r| r.is_page_answer())
            .map(|r| r.kind.as_str()),
    );
    assert_eq!(kinds, BTreeMap::from([("response", 3), ("revisit", 5)]));
    // The cluster centres survived the restart: the second crawl read them and
    // added its pages to them (sizes = both crawls' records), no new cluster.
    let cfg = harvest::config::Config::load(Some(&ws.config)).unwrap();
    let stores = harvest::stores::Stores::open(&cfg).unwrap();
    let mut sizes = 0u64;
    let mut rows = 0usize;
    for pack in ws.packs() {
        let rel = pack
            .strip_prefix(ws.packs_dir())
            .unwrap()
            .to_string_lossy()
            .to_string();
        let parts: Vec<&str> = rel.split('/').collect();
        let day = chrono::NaiveDate::from_ymd_opt(
            parts[1].parse().unwrap(),
            parts[2].parse().unwrap(),
            parts[3].parse().unwrap(),
        )
        .unwrap();
        for r in stores.index.clusters(parts[0], day).unwrap() {
            assert!(r.pack.ends_with(".warc.gz"), "{r:?}");
            assert!(!r.centre.is_empty());
            let name = packer::PackName::parse(&rel).expect("a pack name");
            if name.part == 0 && (name.cluster == 0 || name.cluster == r.cluster) {
                sizes += r.size;
                rows += 1;
            }
        }
    }
    assert!(rows > 0);
    assert_eq!(
        sizes,
        second.iter().filter(|r| r.is_page_answer()).count() as u64,
        "centre sizes count every record of both crawls"
    );
    drop(stores);
    let plain = jsonl(&ws.harvest(&["query", "--format", "jsonl"]));
    assert_eq!(plain.len(), 3);
}

/// Run the binary in `cwd`, asserting success.
fn harvest_in(cwd: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_harvest"))
        .current_dir(cwd)
        .env_remove("HARVEST_CONFIG")
        .args(args)
        .output()
        .expect("run harvest");
    assert!(
        out.status.success(),
        "harvest {args:?} in {} failed: {}",
        cwd.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Issue 10 item 7: the demo's `harvest.toml` used from another folder
/// opened an empty store: relative paths were taken from the working
/// directory. They are the config file's folder's now; `config check`
/// prints them resolved.
#[test]
fn relative_config_paths_follow_the_config_file() {
    let (files, _) = duplicate_site();
    let site = Site::serve(files);
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let conf = root.join("conf");
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let config = conf.join("harvest.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = \"store\"\n[storage]\npacks = \"warc\"\n[index]\npath = \"store/idx\"\n\
             [classifier]\nmodel = \"models/none.model\"\n\
             [crawl]\nseeds = [\"{}\"]\npoliteness_delay_ms = 0\nallow_private = true\n\
             [[sources]]\nname = \"rel\"\nhosts = [\"127.0.0.1\"]\n",
            site.url("/index.html")
        ),
    )
    .unwrap();
    let config_arg = config.to_str().unwrap();
    harvest_in(
        &elsewhere,
        &["-c", config_arg, "crawl", "--quiet", "--json"],
    );
    assert!(
        std::fs::read_dir(&elsewhere).unwrap().next().is_none(),
        "nothing is written to the working directory"
    );
    assert!(conf.join("warc").is_dir(), "packs beside the config");
    assert!(
        conf.join("store").join("idx").is_dir(),
        "index beside the config"
    );
    // The same store from the config's folder, its parent, and elsewhere.
    for (cwd, args) in [
        (&conf, vec!["query", "--format", "jsonl"]),
        (
            &conf,
            vec!["-c", "harvest.toml", "query", "--format", "jsonl"],
        ),
        (
            &root.to_path_buf(),
            vec!["-c", "conf/harvest.toml", "query", "--format", "jsonl"],
        ),
        (
            &elsewhere,
            vec!["-c", config_arg, "query", "--format", "jsonl"],
        ),
    ] {
        let out = harvest_in(cwd, &args);
        assert_eq!(jsonl(&out).len(), 3, "{args:?} in {}", cwd.display());
    }
    let out = harvest_in(&elsewhere, &["config", "check", config_arg]);
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        format!("data dir {}", conf.join("store").display()),
        format!("packs    {}", conf.join("warc").display()),
        format!(
            "index    embedded {}",
            conf.join("store").join("idx").display()
        ),
        format!(
            "model    {}",
            conf.join("models").join("none.model").display()
        ),
    ] {
        assert!(text.contains(&line), "{line:?} missing from:\n{text}");
    }
}

/// Issue 10 item 7: statistics over an explicit range stopped at the years
/// that have tables (`--from 2025-01-01 --to 2026-12-31 --interval day` gave
/// 32 rows in December 2026), and unknown filter values gave a silent 0.
#[test]
fn stats_fill_the_given_range_and_unknown_values_are_warned_about() {
    use chrono::Datelike;
    let (files, _) = duplicate_site();
    let site = Site::serve(files);
    let ws = Workspace::new(&site.url("/index.html"), "ranges", None);
    ws.crawl();
    let year = chrono::Utc::now().year();
    let first = chrono::NaiveDate::from_ymd_opt(year - 1, 1, 1).unwrap();
    let last = chrono::NaiveDate::from_ymd_opt(year, 12, 31).unwrap();
    let stats = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec!["stats", "--format", "json"];
        args.extend_from_slice(extra);
        serde_json::from_slice(&ws.harvest(&args).stdout).unwrap()
    };
    let (from, to) = (first.to_string(), last.to_string());
    let rows = stats(&["--from", &from, "--to", &to]);
    assert_eq!(rows.len() as i64, (last - first).num_days() + 1);
    assert_eq!(rows[0]["bucket"], from.as_str());
    assert_eq!(rows[rows.len() - 1]["bucket"], to.as_str());
    let total: u64 = rows.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(total, 3);
    // --no-fill: the counted buckets only; no bound: first to last counted.
    let counted = stats(&["--from", &from, "--to", &to, "--no-fill"]);
    assert!(counted.iter().all(|r| r["count"].as_u64() > Some(0)));
    assert_eq!(stats(&["--interval", "year"]).len(), 1);

    // Unknown values: a warning on stderr naming the known ones, exit 0.
    for (args, needle, known) in [
        (
            vec!["query", "--source", "nosuch"],
            "--source: no page has source \"nosuch\"",
            "ranges",
        ),
        (
            vec!["query", "--topic", "nosuch"],
            "--topic: no page has topic \"nosuch\"",
            "unclassified",
        ),
        (
            vec!["stats", "--source", "ranges", "--media", "nosuch"],
            "--media: no page has media \"nosuch\" in source ranges",
            "known:",
        ),
    ] {
        let out = ws.harvest(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("warning") && err.contains(needle) && err.contains(known),
            "{args:?}: {err}"
        );
    }
    let out = ws.harvest(&["query", "--source", "ranges", "--topic", "unclassified"]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_config_and_bad_filters_get_clear_errors() {
    let ws = Workspace::new("http://127.0.0.1:9/", "bad", None);
    let bad = ws.path().join("bad.toml");
    std::fs::write(&bad, "[crawl]\npoliteness = 3\n").unwrap();
    let out = ws.harvest_raw(&["config", "check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("politeness"), "{err}");

    // An archive (empty: its one seed is unreachable); without one, read
    // commands stop at "no archive" (a_read_only_archive_answers_and_…).
    ws.crawl();
    let out = ws.harvest_raw(&["query", "--from", "2017-02-30"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--from"));

    let out = ws.harvest_raw(&["get", "http://127.0.0.1:9/never-crawled"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in the archive"));
}

#[test]
fn unreachable_seed_is_a_counted_failure_not_a_crash() {
    // Port 9 (discard) is closed on loopback.
    let ws = Workspace::new("http://127.0.0.1:9/", "down", None);
    let summary = ws.crawl();
    assert_eq!(summary["pages"].as_u64(), Some(0));
    let failures: u64 = summary["failures"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(failures, 1, "{summary}");
}

/// The temporary copies of read-only indexes in the temp folder.
fn read_only_copies() -> Vec<String> {
    std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("harvest-read-only-index-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Issue 13 item 7: an archive on read-only media answers query, stats, get
/// and serve (its index is opened from a temporary copy); a missing data dir
/// is an error naming the path, and nothing is created.
#[test]
fn a_read_only_archive_answers_and_a_missing_one_is_an_error() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(1));
    ws.crawl();
    let before = jsonl(&ws.harvest(&["query", "--format", "jsonl"]));
    assert!(!before.is_empty() && before.len() < 200, "{}", before.len());
    let url = before[0]["url"].as_str().unwrap().to_string();
    let body = ws.harvest(&["get", &url]).stdout;

    // The archive (data dir) mounted read-only somewhere else, and a config
    // that points at it.
    let mnt = tempfile::tempdir().unwrap();
    let ro = mnt.path().join("archive");
    let _mount = Mount::read_only(ws.path(), &ro);
    assert!(
        std::fs::write(ro.join("probe"), b"x").is_err(),
        "the mount is writable"
    );
    let config = mnt.path().join("ro.toml");
    let text = std::fs::read_to_string(&ws.config).unwrap();
    let text = text.replace(ws.path().to_str().unwrap(), ro.to_str().unwrap());
    std::fs::write(&config, text).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_harvest"))
            .arg("-c")
            .arg(&config)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "harvest {args:?} on a read-only archive failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let copies_before = read_only_copies();
    let out = run(&["query", "--format", "jsonl"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("read-only media"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(urls_of(&jsonl(&out)), urls_of(&before));
    let stats = String::from_utf8(run(&["stats", "--format", "csv"]).stdout).unwrap();
    let total: u64 = stats
        .lines()
        .skip(1)
        .filter_map(|l| l.rsplit(',').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(total, before.len() as u64, "{stats}");
    assert_eq!(run(&["get", &url]).stdout, body);

    // serve on the read-only archive: answers, leaves no file behind.
    let (mut server, addr) = util::start_serve(&config, &[]);
    let search = http_get(&addr, "/api/search?limit=200");
    // Stopped as an operator does (SIGTERM): it removes its copy of the index.
    let _ = Command::new("kill").arg(server.id().to_string()).status();
    let _ = server.wait();
    let left: Vec<String> = read_only_copies()
        .into_iter()
        .filter(|c| !copies_before.contains(c))
        .collect();
    assert!(
        left.is_empty(),
        "temporary index copies left behind: {left:?}"
    );
    let hits: serde_json::Value = serde_json::from_str(&search).expect(&search);
    assert_eq!(
        hits["hits"].as_array().unwrap().len(),
        before.len(),
        "{search}"
    );

    // A data dir that does not exist: an error naming it, nothing created.
    let missing = mnt.path().join("no-such-archive");
    std::fs::write(
        &config,
        format!("data_dir = {:?}\n", missing.to_str().unwrap()),
    )
    .unwrap();
    for args in [&["query"][..], &["stats"], &["get", &url]] {
        let out = Command::new(env!("CARGO_BIN_EXE_harvest"))
            .arg("-c")
            .arg(&config)
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("no archive at") && err.contains("no-such-archive"),
            "{err}"
        );
    }
    assert!(
        !missing.exists(),
        "a read command created {}",
        missing.display()
    );
}

/// Issue 13 item 6: idle and half-sent connections neither exhaust the
/// server nor keep `/healthz` out; a connection that sends no whole request
/// is closed after the header timeout.
#[test]
fn idle_connections_do_not_starve_the_server() {
    use std::io::{Read, Write};
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(0));
    ws.crawl();
    let (mut server, base) = util::start_serve(
        &ws.config,
        &[
            "--max-connections",
            "200",
            "--header-timeout",
            "2",
            // All come from 127.0.0.1: the per-client cap is the next test's.
            "--max-idle-per-client",
            "100000",
        ],
    );
    let addr = base.trim_start_matches("http://").to_string();
    // Five times the connection cap, each with half a request.
    let mut idle = Vec::new();
    for _ in 0..1000 {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n");
        idle.push(s);
    }
    let t0 = std::time::Instant::now();
    let health = http_get(&addr, "/healthz");
    let waited = t0.elapsed();
    assert_eq!(health.trim(), "ok");
    assert!(
        waited < std::time::Duration::from_secs(1),
        "healthz took {waited:?} beside 1,000 idle connections"
    );
    // The newest idle connection is closed by the server after the header
    // timeout (2 s): reading it ends instead of blocking.
    let last = idle.last_mut().unwrap();
    last.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let t0 = std::time::Instant::now();
    let mut buf = Vec::new();
    let _ = last.read_to_end(&mut buf);
    let closed_after = t0.elapsed();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        closed_after < std::time::Duration::from_secs(5),
        "an idle connection stayed open {closed_after:?}"
    );
}

/// Issue 13 item 6, per-client limits: one address holds at most
/// `--max-idle-per-client` connections that have not sent a request; one
/// more closes that address's oldest at once (not after the header
/// timeout), and the newer ones stay open.
#[test]
fn one_client_cycles_its_own_idle_connections() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    const CAP: usize = 40;
    const EXTRA: usize = 10;
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(0));
    ws.crawl();
    let (mut server, base) = util::start_serve(
        &ws.config,
        &[
            "--header-timeout",
            "60",
            "--max-idle-per-client",
            &CAP.to_string(),
        ],
    );
    let addr = base.trim_start_matches("http://").to_string();
    let mut idle = Vec::new();
    for _ in 0..CAP + EXTRA {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n");
        idle.push(s);
    }
    // The oldest EXTRA were closed for the newer ones: reading them ends
    // (long before the 60 s header timeout).
    let t0 = Instant::now();
    for (i, s) in idle.iter_mut().take(EXTRA).enumerate() {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = Vec::new();
        // A close with the unread half request may arrive as a reset.
        let ended = match s.read_to_end(&mut buf) {
            Ok(_) => true,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        };
        assert!(
            ended && t0.elapsed() < Duration::from_secs(5),
            "idle connection {i} over the cap was not closed ({:?})",
            t0.elapsed()
        );
    }
    // The newest CAP are still open: a read waits.
    for (i, s) in idle.iter_mut().skip(EXTRA).enumerate() {
        s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let mut byte = [0u8; 1];
        let err = s
            .read(&mut byte)
            .expect_err("an idle connection within the cap must stay open");
        assert!(
            matches!(
                err.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "idle connection {} within the cap: {err}",
            i + EXTRA
        );
    }
    assert_eq!(http_get(&addr, "/healthz").trim(), "ok");
    let _ = server.kill();
    let _ = server.wait();
}

/// Issue 13 items 1 and 3: the index runs out of disk in the middle of a
/// crawl. The crawl stops with the error; every page the archive answers
/// for is whole (`get` returns it); after more space a second crawl
/// completes it and no URL has two rows.
#[test]
fn a_full_index_disk_stops_the_crawl_and_leaves_the_archive_consistent() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", None);
    let mnt = tempfile::tempdir().unwrap();
    let small = mnt.path().join("index");
    let full = {
        let _fs = Mount::tmpfs(&small, "1m");
        ws.configure(|raw| {
            raw.index.path = Some(small.clone());
            // Many small batches: the disk fills between two of them or
            // inside one.
            raw.packing.batch_pages = Some(8);
        });
        let out = ws.harvest_raw(&["crawl", "--quiet", "--json"]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !out.status.success(),
            "the crawl must fail on a 1 MB index disk: {err}"
        );
        assert!(
            err.contains("No space left") || err.contains("space"),
            "{err}"
        );
        // More space: the index moves to a roomy folder (what an operator
        // does), byte for byte.
        let roomy = ws.path().join("index-moved");
        let status = Command::new("cp")
            .arg("-a")
            .arg(&small)
            .arg(&roomy)
            .status()
            .unwrap();
        assert!(status.success());
        roomy
    };
    ws.configure(|raw| raw.index.path = Some(full.clone()));
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    assert!(
        !rows.is_empty(),
        "some batches were indexed before the disk filled"
    );
    let urls = urls_of(&rows);
    assert_eq!(urls.len(), rows.len(), "no URL twice after the failure");
    for u in &urls {
        let got = ws.harvest_raw(&["get", u]);
        assert!(
            got.status.success() && !got.stdout.is_empty(),
            "{u} is listed but not whole: {}",
            String::from_utf8_lossy(&got.stderr)
        );
    }
    let second = ws.harvest_raw(&["crawl", "--quiet", "--json"]);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let after = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let after_urls = urls_of(&after);
    assert_eq!(
        after_urls.len(),
        after.len(),
        "no URL twice after the second crawl"
    );
    assert!(
        after.len() > rows.len(),
        "the second crawl completed the archive: {} rows before, {} after; {}",
        rows.len(),
        after.len(),
        String::from_utf8_lossy(&second.stdout)
    );
    for u in &urls {
        assert!(after_urls.contains(u), "{u} was lost");
    }
    let fsck = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
    let report: serde_json::Value = serde_json::from_slice(&fsck.stdout).expect("fsck json");
    assert!(fsck.status.success(), "{report}");
    assert!(
        report["verified"].as_u64() >= Some(after.len() as u64),
        "{report}"
    );
}

/// Issue 13 item 3: the packs run out of disk in the middle of a crawl. The
/// crawl stops with the error; no page is indexed whose record did not reach
/// its pack whole (every listed page reads back, fsck finds no missing or
/// wrong record); with the packs moved to a roomy disk the next crawl
/// completes the archive, no URL twice.
#[test]
fn a_full_pack_disk_stops_the_crawl_and_indexes_nothing_unstored() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", None);
    let mnt = tempfile::tempdir().unwrap();
    let small = mnt.path().join("packs");
    let fsck = |ws: &Workspace| -> serde_json::Value {
        serde_json::from_slice(&ws.harvest_raw(&["fsck", "--json", "--quiet"]).stdout)
            .expect("fsck json")
    };
    let (rows, roomy) = {
        let _fs = Mount::tmpfs(&small, "1m");
        ws.configure(|raw| {
            raw.storage.packs = Some(small.to_string_lossy().into_owned());
            raw.packing.batch_pages = Some(8);
        });
        let out = ws.harvest_raw(&["crawl", "--quiet", "--json"]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !out.status.success(),
            "the crawl must fail on a 1 MB pack disk: {err}"
        );
        assert!(err.contains("No space left"), "{err}");
        let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
        assert!(
            !rows.is_empty(),
            "some batches were stored before the disk filled"
        );
        for u in urls_of(&rows) {
            let got = ws.harvest_raw(&["get", &u]);
            assert!(
                got.status.success() && !got.stdout.is_empty(),
                "{u} is indexed but its record is not whole: {}",
                String::from_utf8_lossy(&got.stderr)
            );
        }
        let report = fsck(&ws);
        assert_eq!(report["missing"], 0, "{report}");
        assert_eq!(report["mismatched"], 0, "{report}");
        assert_eq!(report["verified"], report["captures"], "{report}");
        // More space: the packs move to a roomy folder, byte for byte.
        let roomy = ws.path().join("packs-moved");
        let status = Command::new("cp")
            .arg("-a")
            .arg(&small)
            .arg(&roomy)
            .status()
            .unwrap();
        assert!(status.success());
        (rows, roomy)
    };
    ws.configure(|raw| raw.storage.packs = Some(roomy.to_string_lossy().into_owned()));
    let second = ws.harvest_raw(&["crawl", "--quiet", "--json"]);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let after = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let after_urls = urls_of(&after);
    assert_eq!(after_urls.len(), after.len(), "no URL twice");
    assert!(
        after.len() > rows.len(),
        "the second crawl completed the archive: {} rows before, {} after",
        rows.len(),
        after.len()
    );
    for u in urls_of(&rows) {
        assert!(after_urls.contains(&u), "{u} was lost");
    }
    // What the full disk may have left: a torn last record in a pack (a write cut
    // short), records of the failed batch not indexed. Repaired, the archive checks clean.
    ws.harvest(&["fsck", "--repair", "--json", "--quiet"]);
    let report = fsck(&ws);
    for field in ["missing", "mismatched", "torn", "unindexed"] {
        assert_eq!(report[field], 0, "{field} after the repair: {report}");
    }
    assert!(
        report["verified"].as_u64() >= Some(after.len() as u64),
        "{report}"
    );
}

/// A crawl's log holds the crawl's own warnings, not the HTML parser's: a
/// misnested table (common on real pages) makes html5ever log "foster
/// parenting not implemented" for every cell.
#[test]
fn the_html_parser_logs_nothing_into_a_crawl() {
    let page = "<html><head><title>t</title></head><body><table><div>a</div><div>b</div>\
                <tr><td>c</td></tr></table><p>text</p></body></html>";
    let site = Site::serve(harvest::site::SiteFiles::from_pairs([(
        "/index.html".to_string(),
        page.as_bytes().to_vec(),
    )]));
    let ws = Workspace::new(&site.url("/index.html"), "demo", Some(0));
    let out = ws.harvest(&["crawl", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("html5ever"), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(summary["pages"], 1, "{summary}");
}

/// Issue 13 item 2: `harvest fsck` on a sound archive exits 0 having
/// verified every row's record; a torn pack tail and a pack gone are
/// found, named and make it exit 1.
#[test]
fn fsck_verifies_every_record_and_finds_torn_and_missing_packs() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(1));
    ws.crawl();
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let run = |ws: &Workspace| {
        let out = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fsck json");
        (out.status.code(), report)
    };
    let (code, report) = run(&ws);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        report["pages"].as_u64(),
        Some(rows.len() as u64),
        "{report}"
    );
    assert!(
        report["verified"].as_u64() >= Some(rows.len() as u64),
        "{report}"
    );
    assert_eq!(report["unindexed"], 0, "{report}");
    let text = String::from_utf8(ws.harvest(&["fsck", "--quiet"]).stdout).unwrap();
    assert!(text.contains("archive consistent"), "{text}");

    // Packs that hold pages (not only redirect and error answers).
    let page_packs: BTreeSet<PathBuf> = walk_packs(&ws)
        .into_iter()
        .filter(|r| r.kind == "response" && r.is_page_answer())
        .map(|r| r.pack)
        .collect();
    // A torn tail: the biggest pack cut in the middle of its last capture record (the
    // request record after it goes too).
    let mut packs = ws.packs();
    packs.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let torn = packs.last().unwrap().clone();
    let bytes = std::fs::read(&torn).unwrap();
    let (offset, length) = packer::warc::RecordIter::new(&bytes)
        .map(|r| r.unwrap())
        .filter(|(_, _, rec)| rec.record_type() == Some("response"))
        .map(|(offset, length, _)| (offset, length))
        .last()
        .expect("a response record");
    let f = std::fs::OpenOptions::new().write(true).open(&torn).unwrap();
    f.set_len(offset + length / 2).unwrap();
    let (code, report) = run(&ws);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["torn"], 1, "{report}");
    assert!(
        report["missing"].as_u64() >= Some(1),
        "the cut record's row: {report}"
    );
    // A pack of pages gone: every row pointing into it is missing.
    if let Some(gone) = packs
        .iter()
        .take(packs.len() - 1)
        .find(|p| page_packs.contains(*p))
    {
        std::fs::remove_file(gone).unwrap();
        let (code, report) = run(&ws);
        assert_eq!(code, Some(1), "{report}");
        let gone = report["problems"].as_array().unwrap().iter().any(|p| {
            p["detail"]
                .as_str()
                .is_some_and(|d| d.contains("does not exist"))
        });
        assert!(gone, "{report}");
    }

    // --repair: the torn pack is cut to its last whole record (the original
    // kept beside it), the rows of the records that are gone are removed,
    // and a crawl fetches those pages again.
    let repaired = ws.harvest_raw(&["fsck", "--repair", "--json", "--quiet"]);
    let report: serde_json::Value = serde_json::from_slice(&repaired.stdout).expect("fsck json");
    assert_eq!(repaired.status.code(), Some(0), "{report}");
    assert_eq!(report["repaired_torn"], 1, "{report}");
    assert_eq!(report["dropped_missing"], report["missing"], "{report}");
    let repair_report = report.clone();
    let kept = std::fs::read_dir(torn.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().contains(".torn-"));
    assert!(kept, "the torn original is kept");
    let (code, report) = run(&ws);
    assert_eq!(code, Some(0), "clean after the repair: {report}");
    let after = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    // (The cut record may be a page or the 404 answer of a missing page.)
    assert!(
        after.len() <= rows.len(),
        "rows of lost records removed: {} rows before, {} after; {repair_report}",
        rows.len(),
        after.len()
    );
    let lost: Vec<String> = repair_report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let d = p["detail"].as_str()?;
            let url = d.split(" row of ").nth(1)?.trim_end_matches(')');
            Some(url.to_string())
        })
        .collect();
    assert!(!lost.is_empty(), "{repair_report}");
    for url in &lost {
        assert!(
            !ws.harvest_raw(&["get", url]).status.success(),
            "{url} is no longer in the archive after the repair"
        );
    }
    ws.crawl();
    let again = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    assert_eq!(
        urls_of(&again),
        urls_of(&rows),
        "the lost pages were fetched again"
    );
    for url in &lost {
        assert!(
            ws.harvest_raw(&["get", url]).status.success(),
            "{url} archived again by the next crawl"
        );
    }
    let (code, report) = run(&ws);
    assert_eq!(code, Some(0), "{report}");
}
