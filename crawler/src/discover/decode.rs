//! From the fetched bytes to a document to parse: the size limit, gzip
//! (sniffed by its magic bytes, inflated under the limit), the JSON sniff, the
//! text encoding, the root element, and XML errors located by line and column.

use std::borrow::Cow;
use std::io::Read;

use quick_xml::events::Event;
use quick_xml::NsReader;

use super::model::Limits;
use crate::error::DiscoverError;

/// The first two bytes of every gzip stream (RFC 1952).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Byte-order mark in UTF-8.
const UTF8_BOM: &str = "\u{feff}";

/// The decompressed document (or `bytes` itself when it is not gzip), and
/// whether it was gzip.
pub(super) fn gunzip<'a>(
    bytes: &'a [u8],
    limits: &Limits,
) -> Result<(Cow<'a, [u8]>, bool), DiscoverError> {
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limits.max_bytes {
        return Err(DiscoverError::TooLarge {
            limit: limits.max_bytes,
            decompressed: false,
        });
    }
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok((Cow::Borrowed(bytes), false));
    }
    Ok((Cow::Owned(inflate_capped(bytes, limits.max_bytes)?), true))
}

/// Decompresses gzip data (one or more members) from `gz`, reading no further
/// than needed to produce `max_bytes + 1` bytes.
fn inflate_capped(gz: impl Read, max_bytes: u64) -> Result<Vec<u8>, DiscoverError> {
    let mut out = Vec::new();
    // One byte over the limit tells "exactly at the limit" from "over it".
    flate2::read::MultiGzDecoder::new(gz)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| DiscoverError::Gzip(e.to_string()))?;
    if u64::try_from(out.len()).unwrap_or(u64::MAX) > max_bytes {
        return Err(DiscoverError::TooLarge {
            limit: max_bytes,
            decompressed: true,
        });
    }
    Ok(out)
}

/// True when the first significant character is `{` (a JSON Feed).
pub(super) fn looks_like_json(data: &[u8]) -> bool {
    let data = data.strip_prefix(UTF8_BOM.as_bytes()).unwrap_or(data);
    data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The document as UTF-8 text: as is when it is UTF-8, else decoded (invalid
/// sequences replaced) with the non-UTF-8 encoding its XML declaration names.
/// A byte-order mark is removed.
pub(super) fn xml_text(data: &[u8]) -> Result<Cow<'_, str>, DiscoverError> {
    let utf8_error = match std::str::from_utf8(data) {
        Ok(s) => return Ok(Cow::Borrowed(s.strip_prefix(UTF8_BOM).unwrap_or(s))),
        Err(e) => e,
    };
    let mut reader = quick_xml::Reader::from_reader(data);
    let declared = match reader.read_event() {
        Ok(Event::Decl(decl)) => decl.encoder(),
        _ => None,
    };
    match declared {
        Some(encoding) if encoding != encoding_rs::UTF_8 => {
            let (text, _, _) = encoding.decode(data);
            Ok(Cow::Owned(text.into_owned()))
        }
        _ => Err(DiscoverError::Encoding(format!(
            "not UTF-8 and no other encoding declared: {utf8_error}"
        ))),
    }
}

/// A [`DiscoverError::Xml`] at byte `pos` of `text`.
pub(super) fn xml_error(text: &str, pos: u64, message: impl std::fmt::Display) -> DiscoverError {
    let pos = usize::try_from(pos).unwrap_or(usize::MAX).min(text.len());
    let before = &text.as_bytes()[..pos];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = pos - line_start + 1;
    DiscoverError::Xml {
        line: u64::try_from(line).unwrap_or(u64::MAX),
        column: u64::try_from(column).unwrap_or(u64::MAX),
        message: message.to_string(),
    }
}

/// Local name of the root element.
pub(super) fn root_name(text: &str) -> Result<String, DiscoverError> {
    let mut reader = NsReader::from_str(text);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => {
                return Ok(e.name().local_name().as_ref().to_string())
            }
            Ok(Event::Eof) => return Err(DiscoverError::Empty),
            Ok(_) => {}
            Err(e) => return Err(xml_error(text, reader.error_position(), e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;
    use url::Url;

    use super::*;
    use crate::discover::test_support::{base, now, parse, urls, urlset};
    use crate::discover::{parse_document_at, DEFAULT_MAX_BYTES};

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn gzip_is_detected_by_magic_bytes_not_by_name() {
        let doc = urlset("<url><loc>https://news.example/z</loc></url>");
        let gz_url = Url::parse("https://news.example/sitemap.xml.gz").unwrap();
        let plain_under_gz_name =
            parse_document_at(doc.as_bytes(), &gz_url, &Limits::default(), now()).unwrap();
        assert!(!plain_under_gz_name.report.gzipped);
        let gz_under_xml_name = parse(&gzip(doc.as_bytes())).unwrap();
        assert!(gz_under_xml_name.report.gzipped);
        assert_eq!(
            urls(&gz_under_xml_name.document),
            ["https://news.example/z"]
        );
        assert_eq!(plain_under_gz_name.document, gz_under_xml_name.document);
    }

    #[test]
    fn gzip_bomb_stops_at_the_decompressed_limit() {
        // 256 gzip members of 1 MiB of zeros each: 256 MiB once inflated, about
        // 256 KiB compressed. Decompression must stop at the 50 MiB default.
        let member = gzip(&vec![0u8; 1 << 20]);
        let bomb: Vec<u8> = member
            .iter()
            .copied()
            .cycle()
            .take(member.len() * 256)
            .collect();
        assert!((bomb.len() as u64) < DEFAULT_MAX_BYTES);
        let err = parse(&bomb).unwrap_err();
        assert_eq!(
            err,
            DiscoverError::TooLarge {
                limit: DEFAULT_MAX_BYTES,
                decompressed: true
            }
        );
        assert!(
            err.to_string().contains("after gzip decompression"),
            "{err}"
        );

        // It stops early: most of the compressed input is never read.
        let mut rest: &[u8] = &bomb;
        let err = inflate_capped(&mut rest, DEFAULT_MAX_BYTES).unwrap_err();
        assert!(matches!(err, DiscoverError::TooLarge { .. }));
        assert!(
            rest.len() > bomb.len() / 2,
            "read {} of {} compressed bytes",
            bomb.len() - rest.len(),
            bomb.len()
        );
    }

    #[test]
    fn decompressed_limit_is_inclusive() {
        let doc = urlset("<url><loc>https://news.example/z</loc></url>");
        let gz = gzip(doc.as_bytes());
        let exact = Limits {
            max_bytes: doc.len() as u64,
            ..Limits::default()
        };
        assert!(parse_document_at(&gz, &base(), &exact, now()).is_ok());
        let one_less = Limits {
            max_bytes: doc.len() as u64 - 1,
            ..Limits::default()
        };
        assert_eq!(
            parse_document_at(&gz, &base(), &one_less, now()).unwrap_err(),
            DiscoverError::TooLarge {
                limit: doc.len() as u64 - 1,
                decompressed: true
            }
        );
    }

    #[test]
    fn raw_document_over_the_limit_is_refused_before_parsing() {
        let doc = urlset("<url><loc>https://news.example/z</loc></url>");
        let limits = Limits {
            max_bytes: 64,
            ..Limits::default()
        };
        assert_eq!(
            parse_document_at(doc.as_bytes(), &base(), &limits, now()).unwrap_err(),
            DiscoverError::TooLarge {
                limit: 64,
                decompressed: false
            }
        );
    }

    #[test]
    fn corrupt_gzip_is_an_error() {
        let mut gz = gzip(urlset("<url><loc>https://news.example/z</loc></url>").as_bytes());
        gz.truncate(gz.len() / 2);
        assert!(matches!(parse(&gz), Err(DiscoverError::Gzip(_))));
        let garbage = [0x1f, 0x8b, 0xff, 0xff, 0xff, 0xff];
        assert!(matches!(parse(&garbage), Err(DiscoverError::Gzip(_))));
    }

    #[test]
    fn malformed_xml_names_line_and_column() {
        let doc = "<urlset>\n  <url><loc>https://news.example/a</loc></url>\n  <url><loc>x</lastmod></url>\n</urlset>";
        let err = parse(doc.as_bytes()).unwrap_err();
        let DiscoverError::Xml {
            line,
            column,
            message,
        } = &err
        else {
            panic!("expected an XML error, got {err:?}");
        };
        assert_eq!(*line, 3);
        assert_eq!(*column, 14, "{err}");
        assert!(message.contains("lastmod"), "{message}");
    }

    #[test]
    fn sitemap_in_a_declared_legacy_encoding_is_decoded() {
        let mut doc = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<urlset><url><loc>https://news.example/cafe</loc><news:news><news:title>Caf".to_vec();
        doc.push(0xE9); // e acute in Latin-1, not valid UTF-8 on its own
        doc.extend_from_slice(b"</news:title></news:news></url></urlset>");
        let out = parse(&doc).unwrap();
        assert_eq!(out.document.urls()[0].title.as_deref(), Some("Caf\u{e9}"));
    }

    #[test]
    fn invalid_utf8_without_declared_encoding_is_an_error() {
        let doc = b"<urlset><url><loc>https://news.example/\xff</loc></url></urlset>";
        let err = parse(doc).unwrap_err();
        assert!(matches!(err, DiscoverError::Encoding(_)), "{err:?}");
    }
}
