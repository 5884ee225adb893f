//! Images and requisites archived with their pages (`[crawl] images`,
//! `requisites`): a loopback site whose two sections (two sources) use real
//! photographs (scikit-image's sample images, deploy/data/fetch-images.sh),
//! one of them re-encoded and resized by the other section, the way a
//! reposting site does. The images become response records beside their
//! pages, `harvest get` returns their bytes, and `harvest dedup` groups the
//! photo and its copy across the two sources and nothing else.

mod util;

use std::collections::BTreeSet;
use std::io::Cursor;
use std::path::PathBuf;

use harvest::site::SiteFiles;
use image::{imageops::FilterType, DynamicImage, ImageFormat};
use util::{assert_warcio_accepts, jsonl, walk_packs, Site, Workspace};

fn sample(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/cache/skimage-data")
        .join(name);
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}: run deploy/data/fetch-images.sh", path.display()))
}

/// A half-size JPEG of `png`: the copy a reposting site serves.
fn reposted(png: &[u8]) -> Vec<u8> {
    let img = image::load_from_memory(png).expect("decode sample");
    let small = img.resize_exact(img.width() / 2, img.height() / 2, FilterType::Triangle);
    let rgb = DynamicImage::ImageRgb8(small.to_rgb8());
    let mut out = Cursor::new(Vec::new());
    rgb.write_to(&mut out, ImageFormat::Jpeg).expect("encode");
    out.into_inner()
}

fn page(title: &str, body: &str) -> Vec<u8> {
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title>\
         <link rel=stylesheet href=/static/site.css></head><body><h1>{title}</h1>{body}</body></html>"
    )
    .into_bytes()
}

fn site_files() -> SiteFiles {
    let coffee = sample("coffee.png");
    SiteFiles::from_pairs([
        (
            "/a/index.html".to_string(),
            page(
                "Section A",
                r#"<p><a href="/a/1.html">one</a> <a href="/a/2.html">two</a> <a href="/b/index.html">B</a></p>
                   <img src="/static/logo.png" alt="logo">"#,
            ),
        ),
        (
            "/a/1.html".to_string(),
            page(
                "A coffee story",
                r#"<p>A long article about coffee.</p><img src="/a/img/coffee.png">
                   <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/a/img/astronaut.png">"#,
            ),
        ),
        (
            "/a/2.html".to_string(),
            page(
                "Coffee again",
                r#"<p>The same photo on another page.</p><img src="/a/img/coffee.png">"#,
            ),
        ),
        (
            "/b/index.html".to_string(),
            page(
                "Section B",
                r#"<p><a href="/b/1.html">one</a></p><img src="/static/logo.png">"#,
            ),
        ),
        (
            "/b/1.html".to_string(),
            page(
                "Reposted coffee",
                r#"<p>Reposted with a smaller photo.</p><img src="/b/pics/coffee-small.jpg">
                   <video poster="/b/pics/camera.png" src="/b/v.mp4"></video>"#,
            ),
        ),
        ("/a/img/coffee.png".to_string(), coffee.clone()),
        ("/a/img/astronaut.png".to_string(), sample("astronaut.png")),
        ("/b/pics/coffee-small.jpg".to_string(), reposted(&coffee)),
        ("/b/pics/camera.png".to_string(), sample("camera.png")),
        ("/static/logo.png".to_string(), sample("logo.png")),
        (
            "/static/site.css".to_string(),
            b"body { background: url('/static/bg.png') } @import \"extra.css\";".to_vec(),
        ),
        (
            "/static/extra.css".to_string(),
            b"h1 { color: red }".to_vec(),
        ),
        ("/static/bg.png".to_string(), sample("brick.png")),
        ("/b/v.mp4".to_string(), b"not really a video".to_vec()),
    ])
}

fn workspace(site: &Site, images: bool, requisites: bool) -> Workspace {
    let ws = Workspace::new(&site.url("/a/index.html"), "a", None);
    ws.configure(|raw| {
        raw.crawl.images = Some(images);
        raw.crawl.requisites = Some(requisites);
        raw.sources[0].hosts = vec![];
        raw.sources[0].prefixes = vec![site.url("/a/")];
        raw.sources.push(harvest::config::RawSource {
            name: "b".into(),
            prefixes: vec![site.url("/b/")],
            ..Default::default()
        });
    });
    ws
}

#[test]
fn images_are_archived_beside_their_pages_and_reposted_photos_group() {
    let site = Site::serve(site_files());
    let ws = workspace(&site, true, false);
    let summary = ws.crawl();
    assert_eq!(summary["pages"].as_u64(), Some(5), "{summary}");
    // logo, coffee (once for two pages), astronaut (lazy data-src), the
    // reposted copy, the video poster; no stylesheet, no video.
    assert_eq!(summary["embeds"].as_u64(), Some(5), "{summary}");
    assert_eq!(summary["images_hashed"].as_u64(), Some(5), "{summary}");

    // Pages are rows; images are not.
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    assert_eq!(rows.len(), 5);
    // An image reads back byte for byte.
    let got = ws.harvest(&["get", &site.url("/a/img/coffee.png")]).stdout;
    assert_eq!(got, sample("coffee.png"));

    // Each image record is a response linked to the record of the page that
    // embeds it.
    let records = walk_packs(&ws);
    let ids: BTreeSet<&str> = records.iter().map(|r| r.record_id.as_str()).collect();
    let image_records: Vec<_> = records
        .iter()
        .filter(|r| r.uri.contains("/img/") || r.uri.contains("/pics/") || r.uri.contains("logo"))
        .collect();
    assert_eq!(image_records.len(), 5);
    for r in &image_records {
        assert_eq!(r.kind, "response", "{}", r.uri);
        let page = r.concurrent_to.as_deref().expect("WARC-Concurrent-To");
        assert!(ids.contains(page), "{} points at {page}", r.uri);
    }
    for pack in ws.packs() {
        assert_warcio_accepts(&pack);
    }

    // The photo and its half-size JPEG copy, across the two sources, are one
    // group; the other photos are in none.
    let report: serde_json::Value =
        serde_json::from_slice(&ws.harvest(&["dedup", "--format", "json"]).stdout).unwrap();
    assert_eq!(report["totals"]["images"].as_u64(), Some(5), "{report}");
    let groups = report["images"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{report}");
    let members: BTreeSet<&str> = groups[0]["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["url"].as_str().unwrap())
        .collect();
    let expected: BTreeSet<String> = [
        site.url("/a/img/coffee.png"),
        site.url("/b/pics/coffee-small.jpg"),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        members,
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    assert_eq!(groups[0]["sources"], serde_json::json!(["a", "b"]));
    assert_eq!(groups[0]["digests"].as_u64(), Some(2));

    // A second run fetches the images again: same payloads, revisit records,
    // the same single group.
    let again = ws.crawl();
    assert_eq!(again["embeds"].as_u64(), Some(5), "{again}");
    assert_eq!(again["embed_duplicates"].as_u64(), Some(5), "{again}");
    assert_eq!(again["images_hashed"].as_u64(), Some(0), "{again}");
    let report = ws.harvest(&["dedup", "--format", "json"]).stdout;
    let parsed: serde_json::Value = serde_json::from_slice(&report).unwrap();
    assert_eq!(parsed["images"].as_array().unwrap().len(), 1, "{parsed}");
    let fsck: serde_json::Value =
        serde_json::from_slice(&ws.harvest(&["fsck", "--json", "--quiet"]).stdout).unwrap();
    assert_eq!(fsck["unindexed"].as_u64(), Some(0), "{fsck}");

    // A rebuilt index knows the images again: captures, digests, hashes.
    ws.harvest(&["reindex", "--replace", "--quiet"]);
    assert_eq!(
        String::from_utf8_lossy(&ws.harvest(&["dedup", "--format", "json"]).stdout),
        String::from_utf8_lossy(&report)
    );
    assert_eq!(
        ws.harvest(&["get", &site.url("/b/pics/camera.png")]).stdout,
        sample("camera.png")
    );
    let fsck: serde_json::Value =
        serde_json::from_slice(&ws.harvest(&["fsck", "--json", "--quiet"]).stdout).unwrap();
    assert_eq!(fsck["unindexed"].as_u64(), Some(0), "{fsck}");
}

#[test]
fn requisites_bring_stylesheets_what_they_reference_scripts_and_media() {
    let site = Site::serve(site_files());
    let ws = workspace(&site, false, true);
    let summary = ws.crawl();
    // 5 images + site.css + its background + the sheet it imports + the video.
    assert_eq!(summary["embeds"].as_u64(), Some(9), "{summary}");
    for path in [
        "/static/site.css",
        "/static/bg.png",
        "/static/extra.css",
        "/b/v.mp4",
    ] {
        let url = site.url(path);
        let files = site_files();
        assert_eq!(
            ws.harvest(&["get", &url]).stdout,
            files.get(path).unwrap(),
            "{path}"
        );
    }
    let out = ws.harvest_raw(&["get", &site.url("/static/missing.png")]);
    assert!(!out.status.success());

    // A filtered export holds the selected pages and their requisites (so
    // they replay), and not the requisites of pages left out.
    let urls = |args: &[&str]| -> BTreeSet<String> {
        let out = String::from_utf8(ws.harvest(args).stdout).unwrap();
        out.lines()
            .map(|l| {
                let json = &l[l.find('{').unwrap()..];
                let v: serde_json::Value = serde_json::from_str(json).unwrap();
                v["url"].as_str().unwrap().to_string()
            })
            .collect()
    };
    let b = urls(&["export", "cdxj", "--source", "b"]);
    let want: BTreeSet<String> = [
        "/b/index.html",
        "/b/1.html",
        "/static/logo.png",
        "/b/pics/coffee-small.jpg",
        "/b/pics/camera.png",
        "/b/v.mp4",
        "/static/site.css",
        "/static/bg.png",
        "/static/extra.css",
    ]
    .iter()
    .map(|p| site.url(p))
    .collect();
    assert_eq!(b, want);
    let everything = urls(&["export", "cdxj"]);
    assert!(everything.contains(&site.url("/a/img/coffee.png")));
    assert!(everything.is_superset(&b));
}
