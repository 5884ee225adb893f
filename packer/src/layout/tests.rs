#[test]
fn month_pack_names_round_trip_and_are_no_day_names() {
    let name = MonthPackName {
        topic: "news".into(),
        year: 2024,
        month: 5,
        part: 3,
        origin: PackOrigin {
            created: NaiveDate::from_ymd_opt(2024, 6, 2)
                .unwrap()
                .and_hms_opt(10, 11, 12)
                .unwrap(),
            writer: "k7q2mxa4".into(),
        },
    };
    let path = name.path();
    assert_eq!(
        path,
        "news/2024/05/news-202405-20240602101112-00003-k7q2mxa4.warc.gz"
    );
    assert_eq!(MonthPackName::parse(&path), Some(name.clone()));
    assert_eq!(MonthPackName::parse(&format!("root/{path}")), Some(name));
    assert_eq!(PackName::parse(&path), None);
    let day = "news/2024/05/01/news-20240501-c3-20240502101112-00000-k7q2mxa4.warc.gz";
    assert!(PackName::parse(day).is_some());
    assert_eq!(MonthPackName::parse(day), None);
    assert_eq!(
        MonthPackName::parse("news/2024/13/news-202413-20240602101112-00003-k7q2mxa4.warc.gz"),
        None
    );
    assert_eq!(MonthPackName::parse(&format!("{path}.part")), None);
}

use super::*;
use crate::local::LocalPackStore;
use std::sync::Arc;

use chrono::{NaiveDate, Utc};

use crate::error::Error;
use crate::store::PackStore;
use crate::warc::{self, EncodedRecord};

fn date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2024, 5, 1).unwrap()
}

fn origin() -> PackOrigin {
    PackOrigin {
        created: NaiveDate::from_ymd_opt(2024, 5, 2)
            .unwrap()
            .and_hms_opt(10, 11, 12)
            .unwrap(),
        writer: "k7q2mxa4".into(),
    }
}

#[test]
fn pack_path_follows_layout() {
    assert_eq!(
        pack_path("military", date(), 3, 0, origin()),
        "military/2024/05/01/military-20240501-c3-20240502101112-00000-k7q2mxa4.warc.gz"
    );
    assert_eq!(
        pack_path("../etc/passwd", date(), 0, 123456, origin()),
        "___etc_passwd/2024/05/01/___etc_passwd-20240501-c0-20240502101112-123456-k7q2mxa4.warc.gz"
    );
    assert_eq!(
        pack_path("", date(), 1, 1, origin()),
        "_/2024/05/01/_-20240501-c1-20240502101112-00001-k7q2mxa4.warc.gz"
    );
    assert_eq!(
        pack_path("军事", date(), 1, 1, origin()),
        "军事/2024/05/01/军事-20240501-c1-20240502101112-00001-k7q2mxa4.warc.gz"
    );
    assert!(crate::store::validate_path(&pack_path("a/../b", date(), 0, 0, origin())).is_ok());
    assert_eq!(
        legacy_pack_path("military", date(), 3, 0),
        "military/2024/05/01/c3-0.warc.gz"
    );
}

#[test]
fn pack_names_parse_back_both_ways() {
    for topic in ["military", "Sports-2_x", "a-20240501-c1", "军事", "_"] {
        for cluster in [0, 1, 10, 4_000_000] {
            for part in [0, 7, 99_999, 123_456] {
                let current = pack_path(topic, date(), cluster, part, origin());
                let name = PackName::parse(&current).unwrap_or_else(|| panic!("{current}"));
                assert_eq!(
                    (name.topic.as_str(), name.date, name.cluster, name.part),
                    (topic, date(), cluster, part)
                );
                assert_eq!(name.origin, Some(origin()));
                assert_eq!(name.path(), current);
                let legacy = legacy_pack_path(topic, date(), cluster, part);
                let name = PackName::parse(&legacy).unwrap_or_else(|| panic!("{legacy}"));
                assert_eq!(
                    (name.cluster, name.part, &name.origin),
                    (cluster, part, &None)
                );
                assert_eq!(name.path(), legacy);
            }
        }
    }
    // Below a prefix (a test namespace, an HDFS root given as a path).
    let nested = PackName::parse("ns/x/military/2024/05/01/c3-0.warc.gz").unwrap();
    assert_eq!((nested.topic.as_str(), nested.cluster), ("military", 3));
}

#[test]
fn foreign_files_are_not_pack_names() {
    for path in [
        "t/2024/05/01/c1-.warc.gz",
        "t/2024/05/01/c1-+3.warc.gz",
        "t/2024/05/01/c1-3.warc.gz.tmp",
        "t/2024/05/01/c1-3.warc.gz.torn-20240501",
        "t/2024/05/01/cx-3.warc.gz",
        "t/2024/02/30/c1-3.warc.gz",
        "t/24/05/01/c1-3.warc.gz",
        "c1-3.warc.gz",
        "a b/2024/05/01/c1-3.warc.gz",
        // The name's day must be its folder's.
        "t/2024/05/01/t-20240502-c1-20240502101112-00000-k7q2mxa4.warc.gz",
        "u/2024/05/01/t-20240501-c1-20240502101112-00000-k7q2mxa4.warc.gz",
        "t/2024/05/01/t-20240501-c1-2024050210111-00000-k7q2mxa4.warc.gz",
        "t/2024/05/01/t-20240501-c1-20240502101112-0000-k7q2mxa4.warc.gz",
        "t/2024/05/01/t-20240501-c1-20240502101112-00000-.warc.gz",
        "t/2024/05/01/t-20240501-c1-20240502101112-00000-K7Q2.warc.gz",
        "t/2024/05/01/t-20240501-c1-20240502101112-00000-ab-cd.warc.gz",
    ] {
        assert_eq!(PackName::parse(path), None, "{path}");
    }
}

#[test]
fn writer_tokens_are_short_and_distinct() {
    let tokens: std::collections::HashSet<String> = (0..1000).map(|_| new_writer_token()).collect();
    assert_eq!(tokens.len(), 1000);
    for t in &tokens {
        assert_eq!(t.len(), WRITER_TOKEN_CHARS);
        assert!(t
            .bytes()
            .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b)));
    }
}

/// Every record names the warcinfo record of the pack it landed in (records are
/// compressed before that is known), and a response and its request stay in one pack when
/// the pack rolls over.
#[test]
fn records_name_their_packs_warcinfo_and_pairs_never_split() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
    let mut packer = Packer::new(
        store.clone(),
        PackerOptions {
            max_pack_bytes: 3000,
            ..PackerOptions::default()
        },
    );
    let key = PackKey {
        topic: "news".into(),
        date: date(),
        cluster: 0,
    };
    let mut pairs = Vec::new();
    for i in 0..40 {
        let response = page(i, 37);
        let request = warc::encode_request(&warc::RequestInput {
            target_uri: "http://example.com/",
            date: Utc::now(),
            concurrent_to: &response.record_id,
            request_line: "GET / HTTP/1.1",
            headers: &[],
        });
        let locs = packer.write_all(&key, &[&response, &request]).unwrap();
        assert_eq!(locs.len(), 2);
        assert_eq!(locs[0].path, locs[1].path, "pair {i} split");
        assert_eq!(locs[0].offset + locs[0].length, locs[1].offset);
        pairs.push((response.record_id.clone(), locs));
    }
    packer.close_all().unwrap();
    let listed = store.list("").unwrap();
    assert!(listed.len() > 3, "rolled over: {listed:?}");
    let mut seen = 0;
    for entry in &listed {
        let bytes = store.read_range(&entry.path, 0, entry.len).unwrap();
        let mut records = warc::RecordIter::new(&bytes).map(|r| r.unwrap().2);
        let info = records.next().unwrap();
        assert_eq!(info.record_type(), Some("warcinfo"));
        assert_eq!(info.header("WARC-Warcinfo-ID"), None);
        for rec in records {
            assert_eq!(
                rec.header("WARC-Warcinfo-ID"),
                info.record_id(),
                "{}",
                entry.path
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 80);
    for (id, locs) in &pairs {
        assert_eq!(
            packer.read(&locs[0]).unwrap().record_id(),
            Some(id.as_str())
        );
        let request = packer.read(&locs[1]).unwrap();
        assert_eq!(request.header("WARC-Concurrent-To"), Some(id.as_str()));
    }
}

/// A response record of `http://example.com/` whose page grows by `pad` bytes with `i`.
fn page(i: usize, pad: usize) -> EncodedRecord {
    let body = format!("<p>page {i} {}</p>", "y".repeat(i * pad));
    warc::encode_response(&warc::ResponseInput {
        target_uri: "http://example.com/",
        date: Utc::now(),
        ip_address: None,
        concurrent_to: None,
        status_line: "HTTP/1.1 200 OK",
        headers: &[],
        payload: body.as_bytes(),
    })
}

fn appending(store: &Arc<dyn PackStore>, max_pack_bytes: u64) -> Packer {
    Packer::new(
        store.clone(),
        PackerOptions {
            max_pack_bytes,
            append_to_existing: true,
            ..PackerOptions::default()
        },
    )
}

/// Runs of a day fill its pack: a later packer appends to the family's last part after a
/// warcinfo record of its own, is told where (the note), and every record reads back,
/// each naming its run's warcinfo.
#[test]
fn a_later_packer_appends_to_the_last_part_after_its_own_warcinfo() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
    let key = PackKey {
        topic: "news".into(),
        date: date(),
        cluster: 0,
    };
    let mut locations = Vec::new();
    let noted: Arc<std::sync::Mutex<Vec<(String, u64)>>> = Arc::default();
    for run in 0..3 {
        let mut packer = appending(&store, 1 << 20);
        let seen = noted.clone();
        packer.set_append_note(Arc::new(move |path, from| {
            seen.lock().unwrap().push((path.to_string(), from));
            Ok(())
        }));
        for i in 0..5 {
            locations.push(packer.write(&key, &page(run * 10 + i, 11)).unwrap());
        }
        packer.close_all().unwrap();
        let stats = packer.stats();
        assert_eq!(
            (stats.opened, stats.appended),
            (u64::from(run == 0), u64::from(run > 0))
        );
    }
    let listed = store.list("").unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let path = &listed[0].path;
    let noted = noted.lock().unwrap().clone();
    assert_eq!(noted.len(), 2);
    // Each note names where the earlier runs ended: the next run's warcinfo.
    for (p, from) in &noted {
        assert_eq!(p, path);
        let info = store.read_range(path, *from, 2).unwrap();
        assert_eq!(info, [0x1f, 0x8b]);
    }
    let bytes = store.read_range(path, 0, listed[0].len).unwrap();
    let mut infos = Vec::new();
    let mut current = None;
    let mut records = 0;
    for (offset, _, rec) in warc::RecordIter::new(&bytes).map(|r| r.unwrap()) {
        if rec.record_type() == Some("warcinfo") {
            assert_eq!(
                rec.header("WARC-Filename"),
                path.rsplit('/').next(),
                "each run's warcinfo names the pack"
            );
            current = rec.record_id().map(str::to_string);
            infos.push(offset);
            continue;
        }
        assert_eq!(rec.header("WARC-Warcinfo-ID"), current.as_deref());
        records += 1;
    }
    assert_eq!(records, 15);
    assert_eq!(infos.len(), 3);
    assert_eq!(
        &infos[1..],
        &noted.iter().map(|n| n.1).collect::<Vec<_>>()[..]
    );
    let reader = Packer::new(store.clone(), PackerOptions::default());
    for loc in &locations {
        assert_eq!(reader.read(loc).unwrap().record_type(), Some("response"));
    }
    assert!(warc::Resync::for_pack(path, &bytes).all(|r| r.is_ok()));
}

/// A last part that is full, torn by a crash, or held by a live writer is not appended
/// to: a new part follows it. Without the option nothing is appended to.
#[test]
fn full_torn_held_or_unasked_last_parts_get_a_new_part() {
    let key = PackKey {
        topic: "news".into(),
        date: date(),
        cluster: 0,
    };
    let parts = |store: &Arc<dyn PackStore>| store.list("").unwrap().len();
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        let mut first = appending(&store, 1 << 20);
        first.write(&key, &page(1, 11)).unwrap();
        first.close_all().unwrap();
        (dir, store)
    };

    // Full: as large as the limit allows.
    let (_d, store) = fresh();
    let len = store.list("").unwrap()[0].len;
    let mut p = appending(&store, len);
    p.write(&key, &page(2, 11)).unwrap();
    p.close_all().unwrap();
    assert_eq!((parts(&store), p.stats().appended), (2, 0), "full");

    // Torn: a record cut in half at the end.
    let (d, store) = fresh();
    let path = store.list("").unwrap()[0].path.clone();
    let half = page(3, 11).member(None);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(d.path().join(&path))
        .unwrap();
    std::io::Write::write_all(&mut f, &half[..half.len() / 2]).unwrap();
    drop(f);
    let torn_len = store.len(&path).unwrap();
    let mut p = appending(&store, 1 << 20);
    p.write(&key, &page(4, 11)).unwrap();
    p.close_all().unwrap();
    assert_eq!((parts(&store), p.stats().appended), (2, 0), "torn");
    assert_eq!(
        store.len(&path).unwrap(),
        torn_len,
        "the torn pack is left as it is"
    );

    // Held: another writer still has it open.
    let (_d, store) = fresh();
    let path = store.list("").unwrap()[0].path.clone();
    let held = store.append(&path).unwrap();
    let mut p = appending(&store, 1 << 20);
    p.write(&key, &page(5, 11)).unwrap();
    p.close_all().unwrap();
    held.close().unwrap();
    assert_eq!((parts(&store), p.stats().appended), (2, 0), "held");

    // Not asked for.
    let (_d, store) = fresh();
    let mut p = Packer::new(store.clone(), PackerOptions::default());
    p.write(&key, &page(6, 11)).unwrap();
    p.close_all().unwrap();
    assert_eq!((parts(&store), p.stats().appended), (2, 0), "off");

    // A note that fails stops the write; nothing is appended.
    let (_d, store) = fresh();
    let before = store.list("").unwrap()[0].len;
    let mut p = appending(&store, 1 << 20);
    p.set_append_note(Arc::new(|path, _| {
        Err(Error::Busy {
            path: path.to_string(),
        })
    }));
    assert!(p.write(&key, &page(7, 11)).is_err());
    p.close_all().unwrap();
    assert_eq!(store.list("").unwrap()[0].len, before);
}

/// Pack file names repeated across folders (`c0-0.warc.gz` in many days), so
/// pywb renamed them and CDXJ `filename` fields were ambiguous.
#[test]
fn two_writers_and_many_folders_make_distinct_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
    let rec = warc::encode_warcinfo("x", &[]);
    // Two processes writing the same families at the same time, each rolling over.
    let options = PackerOptions {
        max_pack_bytes: 1,
        ..PackerOptions::default()
    };
    let mut a = Packer::new(store.clone(), options.clone());
    let mut b = Packer::new(store.clone(), options);
    assert_ne!(a.writer(), b.writer());
    let mut written = std::collections::BTreeSet::new();
    for topic in ["news", "sports", "军事"] {
        for day in [1, 2] {
            for cluster in [0, 1] {
                let key = PackKey {
                    topic: topic.into(),
                    date: NaiveDate::from_ymd_opt(2024, 5, day).unwrap(),
                    cluster,
                };
                for _ in 0..2 {
                    written.insert(a.write(&key, &rec).unwrap().path);
                    written.insert(b.write(&key, &rec).unwrap().path);
                }
            }
        }
    }
    a.close_all().unwrap();
    b.close_all().unwrap();
    let listed = store.list("").unwrap();
    assert_eq!(listed.len(), 3 * 2 * 2 * 2 * 2);
    assert_eq!(listed.len(), written.len());
    let mut file_names = std::collections::HashSet::new();
    for entry in &listed {
        let file_name = entry.path.rsplit('/').next().unwrap();
        assert!(
            file_names.insert(file_name.to_string()),
            "{file_name} twice"
        );
        let name = PackName::parse(&entry.path).unwrap();
        let origin = name.origin.as_ref().unwrap();
        assert!(origin.writer == a.writer() || origin.writer == b.writer());
        // The warcinfo record names the file.
        let bytes = store.read_range(&entry.path, 0, entry.len).unwrap();
        let (_, _, info) = warc::RecordIter::new(&bytes).next().unwrap().unwrap();
        assert_eq!(info.header("WARC-Filename"), Some(file_name));
    }
    // Concurrent writers may reach the same part of a family: the writer token keeps
    // their names apart.
    let news: Vec<PackName> = store
        .list("news/2024/05/01/")
        .unwrap()
        .iter()
        .filter_map(|e| PackName::parse(&e.path))
        .filter(|n| n.cluster == 0)
        .collect();
    assert!(
        news.iter().any(|x| news
            .iter()
            .any(|y| x.part == y.part && x.origin != y.origin)),
        "{news:?}"
    );
}

#[test]
fn a_restart_continues_after_old_and_new_names() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
    for path in [
        legacy_pack_path("news", date(), 2, 4),
        pack_path("news", date(), 2, 6, origin()),
        // Other clusters and days do not count.
        pack_path("news", date(), 3, 9, origin()),
        legacy_pack_path("news", date(), 20, 9),
        pack_path("news", date().succ_opt().unwrap(), 2, 9, origin()),
    ] {
        store.create(&path).unwrap().close().unwrap();
    }
    let mut packer = Packer::new(store.clone(), PackerOptions::default());
    let key = PackKey {
        topic: "news".into(),
        date: date(),
        cluster: 2,
    };
    let loc = packer
        .write(&key, &warc::encode_warcinfo("x", &[]))
        .unwrap();
    packer.close_all().unwrap();
    let name = PackName::parse(&loc.path).unwrap();
    assert_eq!((name.cluster, name.part), (2, 7));
    assert_eq!(name.origin.unwrap().writer, packer.writer());
}

#[test]
fn topics_that_sanitise_alike_share_a_family() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
    let mut packer = Packer::new(store, PackerOptions::default());
    let rec = warc::encode_warcinfo("x", &[]);
    let a = PackKey {
        topic: "a/b".into(),
        date: date(),
        cluster: 0,
    };
    let b = PackKey {
        topic: "a_b".into(),
        ..a.clone()
    };
    let la = packer.write(&a, &rec).unwrap();
    let lb = packer.write(&b, &rec).unwrap();
    assert_eq!(la.path, lb.path);
    assert_eq!(lb.offset, la.offset + la.length);
    packer.close_all().unwrap();
}

/// A long run meets ever new (topic, day, cluster) families: the parts of closed ones are
/// forgotten past a bound, and such a family reopened later still starts a new part.
#[test]
fn closed_families_are_forgotten_and_continue_after_their_last_part() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
    let mut packer = Packer::new(
        store.clone(),
        PackerOptions {
            max_open_packs: 1,
            ..PackerOptions::default()
        },
    );
    packer.remembered_limit = 3;
    let rec = warc::encode_warcinfo("x", &[]);
    let key = |cluster| PackKey {
        topic: "news".into(),
        date: date(),
        cluster,
    };
    let mut paths = std::collections::BTreeSet::new();
    for round in 0..3 {
        for cluster in 0..5 {
            let loc = packer.write(&key(cluster), &rec).unwrap();
            assert!(packer.last_part.len() <= 3, "{:?}", packer.last_part);
            let name = PackName::parse(&loc.path).unwrap();
            assert_eq!((name.cluster, name.part), (cluster, round));
            assert!(paths.insert(loc.path), "a pack was reused");
        }
    }
    packer.close_all().unwrap();
    assert_eq!(store.list("").unwrap().len(), paths.len());
}

/// A batch's packs opened ahead are the ones its writes then use: the parts a write
/// would have chosen (after the store's highest, after this process's last), no pack
/// opened twice, and never more open than the cap (the rest open as they are written).
#[test]
fn packs_opened_ahead_are_the_ones_written_and_respect_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
    store
        .create(&pack_path("news", date(), 1, 4, origin()))
        .unwrap()
        .close()
        .unwrap();
    let mut packer = Packer::new(
        store.clone(),
        PackerOptions {
            max_open_packs: 3,
            ..PackerOptions::default()
        },
    );
    let rec = warc::encode_warcinfo("x", &[]);
    let key = |cluster| PackKey {
        topic: "news".into(),
        date: date(),
        cluster,
    };
    let keys: Vec<PackKey> = [0, 1, 0, 2, 3, 4].into_iter().map(key).collect();
    packer.open_ahead(&keys).unwrap();
    assert_eq!(packer.open.len(), 3, "{:?}", packer.open_paths());
    assert_eq!(packer.stats().opened, 3);
    let mut parts = Vec::new();
    for k in &keys {
        let loc = packer.write(k, &rec).unwrap();
        let name = PackName::parse(&loc.path).unwrap();
        parts.push((name.cluster, name.part));
    }
    assert_eq!(parts, [(0, 0), (1, 5), (0, 0), (2, 0), (3, 0), (4, 0)]);
    assert_eq!(packer.stats().opened, 5);
    assert!(packer.stats().peak_open <= 3);
    // The next batch's families were closed for room: the two packs written least
    // recently (clusters 2 and 3, not 4) are closed to open theirs, which continue after
    // their last parts.
    let closed = packer.stats().closed_for_room;
    packer.open_ahead(&[key(0), key(1)]).unwrap();
    assert_eq!(packer.stats().closed_for_room, closed + 2);
    let mut open: Vec<(u32, u32)> = packer
        .open_paths()
        .iter()
        .map(|p| PackName::parse(p).map(|n| (n.cluster, n.part)).unwrap())
        .collect();
    open.sort();
    assert_eq!(open, [(0, 1), (1, 6), (4, 0)]);
    let loc = packer.write(&key(0), &rec).unwrap();
    assert_eq!(PackName::parse(&loc.path).unwrap().part, 1);
    packer.close_all().unwrap();
    assert_eq!(store.list("").unwrap().len(), 8);
}
