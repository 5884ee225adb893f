//! Issue 40 item 2: damage in the middle of a pack costs the damaged records,
//! not the rest of the pack. Bytes flipped at seeded random offsets in random
//! packs of a crawl; `fsck` names the damaged regions by offset, `fsck
//! --repair` removes only the damaged records' rows and leaves the packs as
//! they are, a second `fsck` skips the recorded regions without exit 1, and
//! `reindex --replace` indexes every intact record.

mod util;

use std::collections::{BTreeMap, BTreeSet};

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use util::{jsonl, Site, Workspace};

/// Bytes flipped in one run (the probe of issue 40 flipped 16).
const FLIPPED: usize = 16;
/// Packs damaged.
const DAMAGED_PACKS: usize = 3;

/// splitmix64: a seeded generator, enough to pick offsets.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One record of a pack as written (read before any damage).
#[derive(Debug, Clone)]
struct Written {
    offset: u64,
    length: u64,
    kind: String,
    uri: String,
    /// The HTTP body of a response record.
    body: Option<Vec<u8>>,
}

/// A pack location: store path (relative to the packs folder) and offset.
type Loc = (String, u64);

fn store_path(ws: &Workspace, pack: &std::path::Path) -> String {
    pack.strip_prefix(ws.packs_dir())
        .expect("pack under the packs folder")
        .to_string_lossy()
        .replace('\\', "/")
}

/// Every record of every pack, by store path.
fn written(ws: &Workspace) -> BTreeMap<String, Vec<Written>> {
    let mut out = BTreeMap::new();
    for pack in ws.packs() {
        let bytes = std::fs::read(&pack).expect("read pack");
        let records = packer::warc::RecordIter::new(&bytes)
            .map(|item| {
                let (offset, length, rec) =
                    item.unwrap_or_else(|e| panic!("{}: {e}", pack.display()));
                let kind = rec.record_type().unwrap_or_default().to_string();
                let body = (kind == "response")
                    .then(|| rec.http_response().ok().map(|h| h.body))
                    .flatten();
                Written {
                    offset,
                    length,
                    kind,
                    uri: rec.target_uri().unwrap_or_default().to_string(),
                    body,
                }
            })
            .collect();
        out.insert(store_path(ws, &pack), records);
    }
    out
}

/// Page rows by their record's location.
fn page_rows(ws: &Workspace) -> BTreeMap<Loc, String> {
    jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000000"]))
        .into_iter()
        .map(|row| {
            let path = row["pack_path"].as_str().expect("pack_path").to_string();
            let offset = row["offset"].as_u64().expect("offset");
            let url = row["url"].as_str().expect("url").to_string();
            ((path, offset), url)
        })
        .collect()
}

fn count(report: &serde_json::Value, key: &str) -> u64 {
    report[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
}

#[test]
fn damage_in_the_middle_of_packs_costs_only_the_damaged_records() {
    let seed = std::env::var("HARVEST_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(40, |d| d.as_nanos() as u64)
        });
    eprintln!("damage seed {seed} (HARVEST_TEST_SEED={seed} repeats this run)");
    let mut rng = Rng(seed);

    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(DEMO_DEPTH));
    // Small packs, so that there are several to damage.
    ws.configure(|raw| raw.storage.max_pack_bytes = Some(64 * 1024));
    ws.crawl();
    let (code, sound) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{sound}");
    let records = written(&ws);
    let rows_before = page_rows(&ws);
    let captures: u64 = records
        .values()
        .flatten()
        .filter(|r| r.kind == "response" || r.kind == "revisit")
        .count() as u64;
    assert_eq!(
        count(&sound, "captures"),
        captures,
        "one capture row a capture record: {sound}"
    );

    // Flip FLIPPED bytes in the middle of random packs: after the warcinfo,
    // before the last record (so that a readable record follows).
    let candidates: Vec<&String> = records
        .iter()
        .filter(|(_, recs)| recs.len() >= 4)
        .map(|(path, _)| path)
        .collect();
    assert!(
        candidates.len() >= DAMAGED_PACKS,
        "the crawl made {} packs of 4 records or more",
        candidates.len()
    );
    let mut chosen: BTreeSet<&String> = BTreeSet::new();
    while chosen.len() < DAMAGED_PACKS {
        chosen.insert(candidates[rng.below(candidates.len() as u64) as usize]);
    }
    // Damaged records (by location) and the first offset of each damaged region.
    let mut damaged: BTreeSet<Loc> = BTreeSet::new();
    let mut regions: BTreeSet<Loc> = BTreeSet::new();
    let mut originals: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for path in &chosen {
        let recs = &records[*path];
        let file = ws.packs_dir().join(path);
        let mut bytes = std::fs::read(&file).expect("read pack");
        originals.insert(path.to_string(), bytes.clone());
        let from = recs[1].offset;
        let to = recs[recs.len() - 1].offset - FLIPPED as u64;
        let start = from + rng.below(to - from + 1);
        for b in &mut bytes[start as usize..start as usize + FLIPPED] {
            *b ^= 1 + rng.below(255) as u8;
        }
        std::fs::write(&file, &bytes).expect("write damaged pack");
        let hit: Vec<&Written> = recs
            .iter()
            .filter(|r| start < r.offset + r.length && r.offset < start + FLIPPED as u64)
            .collect();
        eprintln!(
            "{path}: flipped {start}..+{FLIPPED}, records at {:?}",
            hit.iter().map(|r| r.offset).collect::<Vec<_>>()
        );
        regions.insert((path.to_string(), hit[0].offset));
        damaged.extend(hit.iter().map(|r| (path.to_string(), r.offset)));
    }
    let damaged_rows: BTreeSet<&Loc> = rows_before
        .keys()
        .filter(|loc| damaged.contains(*loc))
        .collect();
    let possible = rows_before.len() - damaged_rows.len();
    // What cutting each damaged pack at its damage (the behaviour before
    // issue 40) would have kept.
    let cut_keeps = rows_before
        .keys()
        .filter(|(path, offset)| {
            regions
                .iter()
                .find(|(p, _)| p == path)
                .is_none_or(|(_, at)| offset < at)
        })
        .count();

    // fsck names each damaged region by its offset, and each row pointing into one.
    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        count(&report, "torn"),
        0,
        "mid-pack damage is no torn tail: {report}"
    );
    assert_eq!(count(&report, "damaged"), regions.len() as u64, "{report}");
    let named: BTreeSet<Loc> = report["damaged_regions"]
        .as_array()
        .expect("damaged_regions")
        .iter()
        .map(|r| {
            assert_eq!(r["recorded"], false, "{r}");
            (
                r["pack"].as_str().unwrap().to_string(),
                r["offset"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(named, regions, "{report}");
    let problems = report["problems"].as_array().expect("problems");
    for (path, offset) in &regions {
        assert!(
            problems.iter().any(|p| p["kind"] == "damaged"
                && p["pack"] == path.as_str()
                && p["offset"] == *offset),
            "region {path} @ {offset} not named: {report}"
        );
    }
    let missing: BTreeSet<Loc> = problems
        .iter()
        .filter(|p| p["kind"] == "missing")
        .map(|p| {
            (
                p["pack"].as_str().unwrap().to_string(),
                p["offset"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        missing.iter().all(|loc| damaged.contains(loc)),
        "only damaged records are missing: {report}"
    );
    assert!(
        damaged_rows.iter().all(|loc| missing.contains(*loc)),
        "every page row of a damaged record is named: {report}"
    );
    let text = String::from_utf8_lossy(&ws.harvest_raw(&["fsck", "--quiet"]).stdout).to_string();
    for (path, offset) in &regions {
        assert!(
            text.contains(&format!("damaged  {path} @ {offset}:")),
            "{text}"
        );
    }

    // --repair removes only the damaged records' rows and leaves the packs alone.
    let (code, repaired) = ws.fsck_json(true);
    assert_eq!(code, Some(0), "{repaired}");
    assert_eq!(
        count(&repaired, "repaired_damaged"),
        regions.len() as u64,
        "{repaired}"
    );
    assert_eq!(count(&repaired, "repaired_torn"), 0, "{repaired}");
    assert_eq!(
        count(&repaired, "dropped_missing"),
        count(&repaired, "missing"),
        "{repaired}"
    );
    for (path, original) in &originals {
        let now = std::fs::read(ws.packs_dir().join(path)).expect("pack kept");
        assert_eq!(now.len(), original.len(), "{path} is not rewritten");
        assert!(
            ws.packs_dir().join(format!("{path}.damaged")).exists(),
            "{path}.damaged records the region"
        );
    }
    let rows_after = page_rows(&ws);
    let kept = rows_before
        .keys()
        .filter(|loc| !damaged.contains(*loc) && rows_after.contains_key(*loc))
        .count();
    eprintln!(
        "page rows kept {kept} of {possible} possible ({} before the damage; cutting each damaged pack at its damage would keep {cut_keeps})",
        rows_before.len()
    );
    assert_eq!(kept, possible, "every intact record keeps its row");
    assert_eq!(
        rows_after.len(),
        possible,
        "the damaged records' rows are gone"
    );

    // Every intact page of the damaged packs reads back; the damaged ones are gone.
    for path in &chosen {
        for rec in &records[*path] {
            let loc = (path.to_string(), rec.offset);
            let Some(url) = rows_before.get(&loc) else {
                continue;
            };
            let got = ws.harvest_raw(&["get", url]);
            if damaged.contains(&loc) {
                assert!(
                    !got.status.success(),
                    "{url} was damaged, yet `get` answers"
                );
            } else if let Some(body) = &rec.body {
                assert!(
                    got.status.success(),
                    "{url} (intact) unreadable after the repair"
                );
                assert!(got.stdout == *body, "{url}: `get` is not the record's body");
            }
        }
    }

    // A second fsck: the recorded regions are skipped, no problem.
    let (code, again) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{again}");
    assert_eq!(count(&again, "damaged"), 0, "{again}");
    assert_eq!(
        count(&again, "skipped_damaged"),
        regions.len() as u64,
        "{again}"
    );
    assert_eq!(count(&again, "missing"), 0, "{again}");
    let intact_captures = records
        .iter()
        .flat_map(|(path, recs)| recs.iter().map(move |r| (path, r)))
        .filter(|(path, r)| {
            (r.kind == "response" || r.kind == "revisit")
                && !damaged.contains(&(path.to_string(), r.offset))
        })
        .count() as u64;
    assert_eq!(count(&again, "captures"), intact_captures, "{again}");
    let text = String::from_utf8_lossy(&ws.harvest(&["fsck", "--quiet"]).stdout).to_string();
    assert!(text.contains("archive consistent"), "{text}");
    for (path, offset) in &regions {
        assert!(
            text.contains(&format!("skipped  {path} @ {offset}:")),
            "{text}"
        );
    }

    // reindex reads past the damage: every intact record is indexed again.
    let out = ws.harvest(&["reindex", "--replace", "--json", "--quiet"]);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("reindex json");
    assert_eq!(
        summary["skipped"]["damaged region read past (see harvest fsck)"],
        regions.len() as u64,
        "{summary}"
    );
    let rows_reindexed = page_rows(&ws);
    assert!(
        rows_reindexed.keys().all(|loc| !damaged.contains(loc)),
        "no row points at a damaged record"
    );
    let missed: Vec<&Loc> = rows_after
        .keys()
        .filter(|loc| !rows_reindexed.contains_key(*loc))
        .collect();
    assert!(
        missed.is_empty(),
        "intact pages reindex did not index: {missed:?}"
    );
    let intact_pages: BTreeSet<&String> = records
        .iter()
        .flat_map(|(path, recs)| recs.iter().map(move |r| (path, r)))
        .filter(|(path, r)| {
            r.kind == "response" && !damaged.contains(&(path.to_string(), r.offset))
        })
        .map(|(_, r)| &r.uri)
        .collect();
    let reindexed_urls: BTreeSet<&String> = rows_reindexed.values().collect();
    let before_urls: BTreeSet<&String> = rows_before.values().collect();
    for url in intact_pages.iter().filter(|u| before_urls.contains(**u)) {
        assert!(reindexed_urls.contains(*url), "{url} not reindexed");
    }
    let (code, last) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{last}");
}
