//! Pages that come from a WARC record instead of the network (`harvest
//! import` of another tool's WARC, `harvest reindex` of harvest's own packs):
//! the HTTP message is brought to the form the crawler stores (body
//! de-chunked and content-decoded, `Content-Encoding` and
//! `Transfer-Encoding` dropped, `Content-Length` the body's length), then
//! decoded and extracted exactly as a fetched page is.

use std::io::Read;

use chrono::{DateTime, Utc};
use url::Url;

use crate::charset;
use crate::event::FetchedPage;
use shapes::page::{Limits, TimeContext};

use crate::fetch::{media_type, CONTENT_LENGTH, DROPPED_HEADERS};
use crate::reader::{read_page, PageLinks, PageReader};

/// An HTTP response as a WARC `response` record holds it.
#[derive(Debug, Clone)]
pub struct ArchivedResponse {
    /// `WARC-Target-URI`.
    pub url: String,
    /// `WARC-Date`.
    pub fetched_at: DateTime<Utc>,
    /// Status code of the status line.
    pub status: u16,
    /// The status line, e.g. `HTTP/1.1 200 OK`.
    pub status_line: String,
    /// Headers as recorded.
    pub headers: Vec<(String, String)>,
    /// Body bytes as recorded (maybe chunked, maybe compressed).
    pub body: Vec<u8>,
    /// `WARC-IP-Address`.
    pub ip_address: Option<String>,
}

/// Why a recorded response cannot be read as a page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchivedError {
    #[error("target URI {0:?} is not an absolute http(s) URL")]
    Url(String),
    #[error("malformed chunked body: {0}")]
    Chunked(String),
    #[error("cannot decode Content-Encoding {encoding}: {reason}")]
    ContentEncoding { encoding: String, reason: String },
    #[error("body larger than {0} bytes once decoded")]
    TooLarge(u64),
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The media type of the response (`text/html`), empty when it has none.
pub fn content_type_of(headers: &[(String, String)]) -> String {
    media_type(header(headers, "content-type").unwrap_or_default())
}

/// Undoes `Transfer-Encoding: chunked` (trailers are dropped).
pub fn dechunk(body: &[u8], max_bytes: u64) -> Result<Vec<u8>, ArchivedError> {
    let bad = |why: &str| ArchivedError::Chunked(why.to_string());
    let mut out = Vec::with_capacity(body.len());
    let mut pos = 0;
    loop {
        let nl = body[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| bad("chunk size line without end"))?;
        let line = std::str::from_utf8(&body[pos..pos + nl])
            .map_err(|_| bad("chunk size line is not text"))?;
        let size_text = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| bad(&format!("chunk size {size_text:?}")))?;
        pos += nl + 1;
        if size == 0 {
            return Ok(out);
        }
        let end = pos
            .checked_add(size)
            .filter(|&e| e <= body.len())
            .ok_or_else(|| bad("chunk longer than the body"))?;
        if (out.len() + size) as u64 > max_bytes {
            return Err(ArchivedError::TooLarge(max_bytes));
        }
        out.extend_from_slice(&body[pos..end]);
        pos = end;
        // The CRLF after the chunk data.
        if body[pos..].starts_with(b"\r\n") {
            pos += 2;
        } else if body[pos..].starts_with(b"\n") {
            pos += 1;
        } else if pos < body.len() {
            return Err(bad("no line end after chunk data"));
        }
        if pos >= body.len() {
            // Cut after a chunk (no last-chunk): keep what arrived.
            return Ok(out);
        }
    }
}

/// Reads at most `max_bytes` from `reader` (decoding bombs stop there).
fn read_limited(
    reader: impl Read,
    max_bytes: u64,
    encoding: &str,
) -> Result<Vec<u8>, ArchivedError> {
    let mut out = Vec::new();
    reader
        .take(max_bytes + 1)
        .read_to_end(&mut out)
        .map_err(|e| ArchivedError::ContentEncoding {
            encoding: encoding.to_string(),
            reason: e.to_string(),
        })?;
    if out.len() as u64 > max_bytes {
        return Err(ArchivedError::TooLarge(max_bytes));
    }
    Ok(out)
}

/// Undoes `Content-Encoding` (gzip, deflate — zlib or raw —, br; identity).
pub fn content_decode(
    body: Vec<u8>,
    encoding: &str,
    max_bytes: u64,
) -> Result<Vec<u8>, ArchivedError> {
    let mut body = body;
    // Codings are listed in the order applied: undo the last one first.
    for coding in encoding.rsplit(',').map(|c| c.trim().to_ascii_lowercase()) {
        body = match coding.as_str() {
            "" | "identity" => body,
            "gzip" | "x-gzip" => read_limited(
                flate2::read::MultiGzDecoder::new(&body[..]),
                max_bytes,
                &coding,
            )?,
            "deflate" => {
                // Servers send zlib-wrapped or raw deflate under this name.
                let zlib = read_limited(
                    flate2::read::ZlibDecoder::new(&body[..]),
                    max_bytes,
                    &coding,
                );
                match zlib {
                    Ok(b) => b,
                    Err(ArchivedError::TooLarge(n)) => return Err(ArchivedError::TooLarge(n)),
                    Err(_) => read_limited(
                        flate2::read::DeflateDecoder::new(&body[..]),
                        max_bytes,
                        &coding,
                    )?,
                }
            }
            "br" => read_limited(
                brotli::Decompressor::new(&body[..], 8192),
                max_bytes,
                &coding,
            )?,
            other => {
                return Err(ArchivedError::ContentEncoding {
                    encoding: other.to_string(),
                    reason: "unknown coding".to_string(),
                })
            }
        };
    }
    Ok(body)
}

impl ArchivedResponse {
    /// [`ArchivedResponse::normalise`], except that a body its headers call chunked but
    /// that is not chunked is kept as it was sent (its `Transfer-Encoding` dropped), as
    /// warcio and pywb read it; the flag says it was kept so.
    pub fn normalise_or_raw(
        mut self,
        max_bytes: u64,
    ) -> Result<(ArchivedResponse, bool), ArchivedError> {
        let chunked = header(&self.headers, "transfer-encoding")
            .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
        if !chunked {
            return self.normalise(max_bytes).map(|r| (r, false));
        }
        // De-chunked once, here; `normalise` then sees a plain body.
        let raw = match dechunk(&self.body, max_bytes) {
            Ok(body) => {
                self.body = body;
                // What a chunked answer's Content-Length says is not its body's length.
                self.headers
                    .retain(|(k, _)| !k.eq_ignore_ascii_case("content-length"));
                false
            }
            Err(ArchivedError::Chunked(_)) => true,
            Err(e) => return Err(e),
        };
        self.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("transfer-encoding"));
        self.normalise(max_bytes).map(|r| (r, raw))
    }

    /// Body and headers as the crawler stores them (see
    /// [`FetchedPage::headers`]).
    pub fn normalise(mut self, max_bytes: u64) -> Result<ArchivedResponse, ArchivedError> {
        let chunked = header(&self.headers, "transfer-encoding")
            .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
        if chunked {
            self.body = dechunk(&self.body, max_bytes)?;
        } else if let Some(len) =
            header(&self.headers, "content-length").and_then(|v| v.trim().parse::<usize>().ok())
        {
            // A recorded body longer than its Content-Length carries junk.
            self.body.truncate(len);
        }
        if let Some(ce) = header(&self.headers, "content-encoding").map(str::to_string) {
            self.body = content_decode(std::mem::take(&mut self.body), &ce, max_bytes)?;
        }
        if self.body.len() as u64 > max_bytes {
            return Err(ArchivedError::TooLarge(max_bytes));
        }
        let len = self.body.len();
        self.headers
            .retain(|(k, _)| !DROPPED_HEADERS.contains(&k.to_ascii_lowercase().as_str()));
        self.headers
            .push((CONTENT_LENGTH.to_string(), len.to_string()));
        Ok(self)
    }

    /// The page a crawl would have produced from this answer: charset
    /// decoding (the `Content-Type` charset first) and `reader`'s reading under
    /// `limits`, with `ctx` for the publish time. The body must already be
    /// in stored form ([`ArchivedResponse::normalise`]).
    pub fn into_page<R: PageReader>(
        self,
        reader: &R,
        depth: u32,
        ctx: &TimeContext,
        limits: &Limits,
    ) -> Result<(FetchedPage<R::Read>, PageLinks), ArchivedError> {
        let url = Url::parse(&self.url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| ArchivedError::Url(self.url.clone()))?;
        let content_type_header = header(&self.headers, "content-type")
            .unwrap_or_default()
            .to_string();
        let header_charset = charset::charset_from_content_type(&content_type_header);
        let page = FetchedPage {
            requested_url: url.to_string(),
            url: url.to_string(),
            fetched_at: self.fetched_at,
            status: self.status,
            status_line: self.status_line,
            content_type: media_type(&content_type_header),
            headers: self.headers,
            body: self.body,
            charset: String::new(),
            charset_source: crate::reader::UNDECODED,
            ip_address: self.ip_address,
            depth,
            extract: (),
            request: None,
        };
        Ok(read_page(
            reader,
            page,
            &url,
            header_charset.as_deref(),
            ctx,
            limits,
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn response(headers: &[(&str, &str)], body: &[u8]) -> ArchivedResponse {
        ArchivedResponse {
            url: "http://example.com/a".into(),
            fetched_at: Utc::now(),
            status: 200,
            status_line: "HTTP/1.1 200 OK".into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.to_vec(),
            ip_address: None,
        }
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn chunked_gzip_body_is_brought_to_stored_form() {
        let html = b"<html><head><title>T</title></head><body>hello</body></html>";
        let z = gzip(html);
        let (a, b) = z.split_at(10);
        let mut chunked = Vec::new();
        write!(chunked, "{:x};ext=1\r\n", a.len()).unwrap();
        chunked.extend_from_slice(a);
        write!(chunked, "\r\n{:X}\r\n", b.len()).unwrap();
        chunked.extend_from_slice(b);
        chunked.extend_from_slice(b"\r\n0\r\nX-Trailer: 1\r\n\r\n");
        let r = response(
            &[
                ("Content-Type", "text/html; charset=utf-8"),
                ("Transfer-Encoding", "chunked"),
                ("Content-Encoding", "gzip"),
            ],
            &chunked,
        )
        .normalise(1 << 20)
        .unwrap();
        assert_eq!(r.body, html);
        assert_eq!(
            r.headers,
            vec![
                (
                    "Content-Type".to_string(),
                    "text/html; charset=utf-8".to_string()
                ),
                ("Content-Length".to_string(), html.len().to_string()),
            ]
        );
        let (page, _) = r
            .into_page(
                &crate::test_reader::Extracting,
                1,
                &TimeContext::default(),
                &Limits::default(),
            )
            .unwrap();
        assert_eq!(page.extract.title.as_deref(), Some("T"));
        assert_eq!(page.content_type, "text/html");
        assert_eq!(page.charset, "UTF-8");
    }

    #[test]
    fn deflate_raw_and_zlib_and_brotli_decode() {
        let data = b"some page text, some page text".repeat(20);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&data).unwrap();
        assert_eq!(
            content_decode(z.finish().unwrap(), "deflate", 1 << 20).unwrap(),
            data
        );
        let mut raw =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        raw.write_all(&data).unwrap();
        assert_eq!(
            content_decode(raw.finish().unwrap(), "deflate", 1 << 20).unwrap(),
            data
        );
        let mut br = Vec::new();
        {
            let mut w = brotli::CompressorWriter::new(&mut br, 4096, 5, 22);
            w.write_all(&data).unwrap();
        }
        assert_eq!(content_decode(br, "br", 1 << 20).unwrap(), data);
        assert!(matches!(
            content_decode(data.clone(), "zstd", 1 << 20),
            Err(ArchivedError::ContentEncoding { .. })
        ));
    }

    #[test]
    fn decoding_bombs_and_bad_chunks_are_refused() {
        let bomb = gzip(&vec![0u8; 10 << 20]);
        assert_eq!(
            content_decode(bomb, "gzip", 1 << 20),
            Err(ArchivedError::TooLarge(1 << 20))
        );
        assert!(matches!(
            dechunk(b"zz\r\nabc", 100),
            Err(ArchivedError::Chunked(_))
        ));
        assert!(matches!(
            dechunk(b"10\r\nabc", 100),
            Err(ArchivedError::Chunked(_))
        ));
        // A body cut after a whole chunk keeps what arrived.
        assert_eq!(dechunk(b"3\r\nabc\r\n", 100).unwrap(), b"abc");
        // Called chunked but not chunked: kept as sent, and said so.
        let r = |body: &[u8]| ArchivedResponse {
            url: "http://x/".into(),
            fetched_at: chrono::Utc::now(),
            status: 200,
            status_line: "HTTP/1.1 200 OK".into(),
            headers: vec![("Transfer-Encoding".into(), "chunked".into())],
            body: body.to_vec(),
            ip_address: None,
        };
        let (raw, kept) = r(b"/* a style sheet */").normalise_or_raw(100).unwrap();
        assert!(kept);
        assert_eq!(raw.body, b"/* a style sheet */");
        assert!(header(&raw.headers, "transfer-encoding").is_none());
        let (ok, kept) = r(b"3\r\nabc\r\n0\r\n\r\n").normalise_or_raw(100).unwrap();
        assert!(!kept);
        assert_eq!(ok.body, b"abc");
    }

    #[test]
    fn a_body_longer_than_its_content_length_is_cut() {
        let r = response(&[("Content-Length", "5")], b"hello, junk")
            .normalise(100)
            .unwrap();
        assert_eq!(r.body, b"hello");
    }

    #[test]
    fn non_http_targets_are_refused() {
        let mut r = response(&[], b"x");
        r.url = "dns:example.com".into();
        assert!(matches!(
            r.into_page(
                &crate::test_reader::Extracting,
                0,
                &TimeContext::default(),
                &Limits::default()
            ),
            Err(ArchivedError::Url(_))
        ));
    }
}
