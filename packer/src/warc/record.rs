//! A parsed record ([`WarcRecord`]), the HTTP response in its block ([`HttpResponse`]), and
//! the parsing of header lines that the reader of bytes in memory and the streaming reader
//! share.

use crate::error::{Error, Result};

use super::spec::header;

/// One parsed WARC record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcRecord {
    /// WARC headers in file order (names as written).
    pub headers: Vec<(String, String)>,
    /// The record block (`Content-Length` bytes).
    pub block: Vec<u8>,
}

/// An HTTP response parsed from a `response` or `revisit` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code, e.g. 200.
    pub status: u16,
    /// The whole status line, e.g. `HTTP/1.1 200 OK`.
    pub status_line: String,
    /// HTTP headers in order.
    pub headers: Vec<(String, String)>,
    /// Everything after the empty line (empty for revisits).
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// First value of an HTTP header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

impl WarcRecord {
    /// First value of a WARC header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// `WARC-Type`.
    pub fn record_type(&self) -> Option<&str> {
        self.header(header::WARC_TYPE)
    }

    /// `WARC-Target-URI`.
    pub fn target_uri(&self) -> Option<&str> {
        self.header(header::TARGET_URI)
    }

    /// `WARC-Record-ID`.
    pub fn record_id(&self) -> Option<&str> {
        self.header(header::RECORD_ID)
    }

    /// `WARC-Payload-Digest`.
    pub fn payload_digest(&self) -> Option<&str> {
        self.header(header::PAYLOAD_DIGEST)
    }

    /// Parses the block as an HTTP response (status line, headers, body).
    pub fn http_response(&self) -> Result<HttpResponse> {
        let malformed = |reason: &str| Error::MalformedHttp {
            reason: reason.to_string(),
        };
        // A block that ends inside its HTTP head (a Content-Length counted with other line
        // ends than the head has) is read as a head without a body, as warcio reads it.
        let (head_lines, body_start) = split_head(&self.block)
            .or_else(|| whole_head(&self.block))
            .ok_or_else(|| malformed("no end of HTTP headers"))?;
        let mut lines = head_lines.into_iter();
        let status_line = lines
            .next()
            .ok_or_else(|| malformed("missing status line"))?;
        let status_line = String::from_utf8_lossy(status_line).into_owned();
        let mut parts = status_line.split_ascii_whitespace();
        let proto = parts.next().unwrap_or_default();
        if !proto.starts_with("HTTP/") {
            return Err(malformed("status line does not start with HTTP/"));
        }
        let status = parts
            .next()
            .and_then(|code| code.parse::<u16>().ok())
            .filter(|code| (100..1000).contains(code))
            .ok_or_else(|| malformed("missing or invalid status code"))?;
        let headers = parse_header_lines(lines).map_err(|reason| malformed(&reason))?;
        Ok(HttpResponse {
            status,
            status_line,
            headers,
            body: self.block[body_start..].to_vec(),
        })
    }
}

pub(super) fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Splits `data` at the first empty line. Returns the lines before it (without line
/// endings; LF, CRLF or CR CR LF) and the index of the first byte after the empty line.
pub(super) fn split_head(data: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let mut lines = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let nl = data[pos..].iter().position(|&b| b == b'\n')? + pos;
        let mut line = &data[pos..nl];
        // CRLF, LF, and the CR CR LF some tools write (warcio reads it too).
        while let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        pos = nl + 1;
        if line.is_empty() {
            return Some((lines, pos));
        }
        lines.push(line);
    }
    None
}

/// The lines of `data` when it holds no empty line (a head cut before its end), each
/// without its line end, with `data.len()` as where the body starts; `None` for no line.
fn whole_head(data: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .map(|l| {
            let mut l = l;
            while let Some(s) = l.strip_suffix(b"\r") {
                l = s;
            }
            l
        })
        .filter(|l| !l.is_empty())
        .collect();
    (!lines.is_empty()).then_some((lines, data.len()))
}

/// Parses `Name: value` lines, joining folded continuation lines.
pub(super) fn parse_header_lines<'a>(
    lines: impl Iterator<Item = &'a [u8]>,
) -> std::result::Result<Vec<(String, String)>, String> {
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        let text = String::from_utf8_lossy(line);
        if text.starts_with([' ', '\t']) {
            match headers.last_mut() {
                Some((_, value)) => {
                    value.push(' ');
                    value.push_str(text.trim());
                }
                None => return Err("continuation line before any header".to_string()),
            }
            continue;
        }
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| format!("header line without ':': {:?}", truncate(&text)))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    Ok(headers)
}

fn truncate(s: &str) -> String {
    s.chars().take(80).collect()
}
