//! Real Chinese pages (LibreOffice help, zh-CN and zh-TW) re-encoded to GBK,
//! GB18030 and Big5 and served with a correct header label, a wrong one, none,
//! or only a `<meta>` declaration: the crawler must decode the original text.

mod util;

use crawler::{CharsetSource, Url};
use encoding_rs::{Encoding, BIG5, GB18030, GBK};
use util::{pages, run, test_config, Reply, TestServer};

const ZH_CN_PAGE: &str = "site/zh-CN/text/shared/01/securitywarning.html";
const ZH_TW_PAGE: &str = "site/zh-TW/text/shared/optionen/macrosecurity.html";
const UTF8_META: &str = r#"<meta http-equiv="Content-Type" content="text/html; charset=utf-8">"#;

/// How the test page announces its encoding.
#[derive(Clone, Copy, Debug)]
enum Label {
    /// Correct charset parameter in Content-Type, meta removed.
    Header,
    /// `charset=utf-8` in the header (wrong), meta removed.
    WrongHeader,
    /// No label anywhere.
    Missing,
    /// Header without charset, correct `<meta>` only.
    MetaOnly,
}

/// The fixture text limited to what `enc` can represent (the pages contain an
/// emoji that GBK and Big5 lack), with the meta tag adapted to `label`.
fn page_text(fixture: &str, enc: &'static Encoding, label: Label) -> String {
    let raw = std::fs::read_to_string(util::fixtures().join(fixture)).expect("fixture");
    assert!(
        raw.contains(UTF8_META),
        "fixture declares utf-8 in a meta tag"
    );
    let meta = match label {
        Label::MetaOnly => UTF8_META.replace("utf-8", enc.name()),
        _ => String::new(),
    };
    raw.replace(UTF8_META, &meta)
        .chars()
        .filter(|c| {
            let mut b = [0u8; 4];
            !enc.encode(c.encode_utf8(&mut b)).2
        })
        .collect()
}

async fn fetch_as(
    fixture: &str,
    enc: &'static Encoding,
    label: Label,
) -> (String, crawler::FetchedPage<extract::Extracted>) {
    let original = page_text(fixture, enc, label);
    let (bytes, _, had_errors) = enc.encode(&original);
    assert!(!had_errors);
    let bytes = bytes.into_owned();
    let content_type = match label {
        Label::Header => format!("text/html; charset={}", enc.name()),
        Label::WrongHeader => "text/html; charset=utf-8".to_string(),
        Label::Missing | Label::MetaOnly => "text/html".to_string(),
    };
    let server = TestServer::start(move |req| match req.path.as_str() {
        "/page.html" => Reply::with_type(&content_type, bytes.clone()),
        _ => Reply::status(404),
    })
    .await;
    let mut cfg = test_config(vec![server.url("/page.html")]);
    cfg.respect_robots = false;
    cfg.max_depth = Some(0);
    let (_, events) = run(cfg).await;
    let page = pages(&events)
        .first()
        .map(|p| (*p).clone())
        .expect("page fetched");
    (original, page)
}

async fn check(
    fixture: &str,
    enc: &'static Encoding,
    label: Label,
    source: CharsetSource,
    title: &str,
) {
    let (original, page) = fetch_as(fixture, enc, label).await;
    assert_eq!(page.charset_source, source, "{} {label:?}", enc.name());
    assert_eq!(
        page.text(),
        original,
        "{} {label:?}: decoded text differs",
        enc.name()
    );
    assert_eq!(page.extract.title.as_deref(), Some(title));
    assert_eq!(page.extract.language.as_deref(), Some("zh"));
    let _ = Url::parse(&page.url).expect("url");
}

#[tokio::test]
async fn gbk_with_every_kind_of_label() {
    for (label, source) in [
        (Label::Header, CharsetSource::Header),
        (Label::WrongHeader, CharsetSource::Detected),
        (Label::Missing, CharsetSource::Detected),
        (Label::MetaOnly, CharsetSource::Meta),
    ] {
        check(ZH_CN_PAGE, GBK, label, source, "安全警告").await;
    }
}

#[tokio::test]
async fn gb18030_with_every_kind_of_label() {
    for (label, source) in [
        (Label::Header, CharsetSource::Header),
        (Label::WrongHeader, CharsetSource::Detected),
        (Label::Missing, CharsetSource::Detected),
        (Label::MetaOnly, CharsetSource::Meta),
    ] {
        check(ZH_CN_PAGE, GB18030, label, source, "安全警告").await;
    }
    // The emoji survives only in GB18030 (four-byte sequence): reported as gb18030.
    let (original, page) = fetch_as(ZH_CN_PAGE, GB18030, Label::Missing).await;
    assert!(original.contains('🔎'));
    assert_eq!(page.charset, "gb18030");
}

#[tokio::test]
async fn big5_with_every_kind_of_label() {
    for (label, source) in [
        (Label::Header, CharsetSource::Header),
        (Label::WrongHeader, CharsetSource::Detected),
        (Label::Missing, CharsetSource::Detected),
        (Label::MetaOnly, CharsetSource::Meta),
    ] {
        check(ZH_TW_PAGE, BIG5, label, source, "巨集安全性").await;
    }
    let (_, page) = fetch_as(ZH_TW_PAGE, BIG5, Label::Missing).await;
    assert_eq!(page.charset, "Big5");
}
