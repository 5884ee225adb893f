//! Reading ARC files: the Internet Archive's format before WARC, which older Heritrix
//! crawls and the Wayback Machine's own collections still hold (`.arc`, `.arc.gz` with one
//! gzip member per record).
//!
//! A file is a version block, then records, each a header line of space-separated fields
//! and a block of the length its last field gives, then a newline:
//!
//! ```text
//! filedesc://NAME IP DATE text/plain LENGTH      <- version block (v1 or v2)
//! http://example.com/ 93.184.216.119 20140216050221 text/html 1591
//! HTTP/1.1 200 OK ...                             <- the whole HTTP answer, LENGTH bytes
//! ```
//!
//! Version 1 lines have five fields (URL, IP address, date, content type, length), version
//! 2 ten (result code, checksum, location, offset and file name before the length): the URL
//! comes first, the date third and the length last in both. [`reader`] gives each
//! record as the WARC record the same capture would have been ([`to_warc`]: a `response`
//! holding the HTTP answer, `warcinfo` for the version block), so what reads WARC reads ARC.

use std::io::{BufRead, Read};

use crate::error::{Error, Result};
use crate::warc::{
    read_block, RecordHead, RecordReader, Streamed, WarcRecord, MAX_HEADER_LINE_BYTES,
};

/// Whether `head` (the first bytes of a file, decompressed if it is gzipped) starts an ARC
/// file: its version block's header line.
pub fn is_arc(head: &[u8]) -> bool {
    head.starts_with(b"filedesc://")
}

/// One ARC header line, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ArcHead {
    url: String,
    ip: String,
    date: String,
    content_type: String,
    length: u64,
}

fn parse_head(line: &[u8]) -> std::result::Result<ArcHead, String> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\r', '\n']);
    let fields: Vec<&str> = text.split(' ').filter(|f| !f.is_empty()).collect();
    if fields.len() < 5 {
        return Err(format!(
            "ARC header line with {} fields (5 or more expected): {:?}",
            fields.len(),
            text.chars().take(80).collect::<String>()
        ));
    }
    let length = fields[fields.len() - 1].parse::<u64>().map_err(|_| {
        format!(
            "ARC record length is not a number: {:?}",
            fields[fields.len() - 1]
        )
    })?;
    let date = fields[2];
    if date.len() < 14 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("ARC record date is not YYYYMMDDhhmmss: {date:?}"));
    }
    Ok(ArcHead {
        url: fields[0].to_string(),
        ip: fields[1].to_string(),
        date: date[..14].to_string(),
        content_type: fields[3].to_string(),
        length,
    })
}

/// The WARC headers of an ARC record: a `warcinfo` for the version block, a `response` for
/// an HTTP capture, a `resource` for anything else (a `dns:` lookup).
fn warc_headers(head: &ArcHead, block_len: u64) -> Vec<(String, String)> {
    let date = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &head.date[0..4],
        &head.date[4..6],
        &head.date[6..8],
        &head.date[8..10],
        &head.date[10..12],
        &head.date[12..14]
    );
    let (kind, content_type) = if head.url.starts_with("filedesc:") {
        ("warcinfo", head.content_type.clone())
    } else if head.url.starts_with("http://") || head.url.starts_with("https://") {
        ("response", "application/http; msgtype=response".to_string())
    } else {
        ("resource", head.content_type.clone())
    };
    let mut headers = vec![
        ("WARC-Type".to_string(), kind.to_string()),
        ("WARC-Target-URI".to_string(), head.url.clone()),
        ("WARC-Date".to_string(), date),
    ];
    if !head.ip.is_empty() && head.ip != "-" {
        headers.push(("WARC-IP-Address".to_string(), head.ip.clone()));
    }
    headers.push(("Content-Type".to_string(), content_type));
    headers.push(("Content-Length".to_string(), block_len.to_string()));
    headers
}

/// The WARC record an ARC record stands for ([`reader`] gives these).
fn to_warc(head: &ArcHead, block: Vec<u8>) -> WarcRecord {
    WarcRecord {
        headers: warc_headers(head, block.len() as u64),
        block,
    }
}

/// One uncompressed ARC record from `input`: header line, block, closing newline.
fn read_arc_record(
    input: &mut impl BufRead,
    max_block: u64,
    unreadable: &str,
) -> std::result::Result<Streamed, String> {
    let io = |e: std::io::Error| format!("{unreadable}: {e}");
    let mut line = Vec::new();
    let n = input
        .by_ref()
        .take(MAX_HEADER_LINE_BYTES)
        .read_until(b'\n', &mut line)
        .map_err(io)?;
    if n == 0 || !line.ends_with(b"\n") {
        return Err("ARC header line not terminated".to_string());
    }
    let head = parse_head(&line)?;
    let length = head.length;
    Ok(
        match read_block(input, length, max_block, "ARC length", unreadable)? {
            None => Streamed::Oversized(RecordHead {
                headers: warc_headers(&head, length),
                block_len: length,
            }),
            Some(block) => Streamed::Record(to_warc(&head, block)),
        },
    )
}

/// The records of an ARC file (plain, or one gzip member per record), each with its offset
/// and stored length, as WARC records ([`to_warc`]), read as
/// [`crate::warc::RecordReader`] reads WARC files (the same contract: blocks over the limit
/// come as [`Streamed::Oversized`], blank lines between records are read past, one
/// [`Error::CorruptRecord`] at the first unreadable record ends the reading).
pub fn reader<R: BufRead>(input: R) -> RecordReader<R> {
    RecordReader::with_parser(input, parse_arc)
}

fn parse_arc(
    input: &mut dyn BufRead,
    max_block: u64,
    unreadable: &str,
) -> std::result::Result<Streamed, String> {
    let mut input = input;
    read_arc_record(&mut input, max_block, unreadable)
}

/// The record stored at the start of `bytes` (one ARC record, gzipped or not), as
/// [`reader`] gives it.
pub fn read_arc_at(bytes: &[u8]) -> Result<WarcRecord> {
    match reader(bytes).next() {
        Some(Ok((_, _, Streamed::Record(r)))) => Ok(r),
        Some(Ok((_, _, Streamed::Oversized(_)))) => {
            Err(Error::corrupt(0, "ARC record larger than a record may be"))
        }
        Some(Err(e)) => Err(e),
        None => Err(Error::corrupt(0, "no ARC record")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const FILE: &[u8] = b"filedesc://x.arc 0.0.0.0 20140216050221 text/plain 76\n\
1 0 LiveWeb Capture\n\
URL IP-address Archive-date Content-type Archive-length\n\
\n\
http://example.com/ 93.184.216.119 20140216050221 text/html 41\n\
HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc\n\
\n";

    fn records(r: impl Iterator<Item = Result<(u64, u64, Streamed)>>) -> Vec<WarcRecord> {
        r.map(|x| match x.expect("record") {
            (_, _, Streamed::Record(r)) => r,
            other => panic!("{other:?}"),
        })
        .collect()
    }

    #[test]
    fn v1_records_read_as_warc_records() {
        assert!(is_arc(FILE));
        let got = records(reader(FILE));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].record_type(), Some("warcinfo"));
        assert_eq!(got[1].record_type(), Some("response"));
        assert_eq!(got[1].target_uri(), Some("http://example.com/"));
        assert_eq!(got[1].header("WARC-Date"), Some("2014-02-16T05:02:21Z"));
        let http = got[1].http_response().expect("http");
        assert_eq!((http.status, http.body.as_slice()), (200, &b"abc"[..]));
    }

    #[test]
    fn gzip_members_and_v2_lines_read_too() {
        let mut gz = Vec::new();
        for part in [
            &b"filedesc://x.arc 0.0.0.0 20140216050221 text/plain 3\nabc\n"[..],
            &b"http://example.com/a 1.2.3.4 20150101000000 text/html 200 - - 0 x.arc 19\nHTTP/1.0 200 OK\r\n\r\n\n"[..],
        ] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(part).unwrap();
            gz.extend(e.finish().unwrap());
        }
        let got = records(reader(gz.as_slice()));
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].target_uri(), Some("http://example.com/a"));
        assert_eq!(got[1].http_response().unwrap().status, 200);
    }

    #[test]
    fn a_bad_length_is_a_corrupt_record_at_its_offset() {
        let bad = b"filedesc://x.arc 0.0.0.0 20140216050221 text/plain 3\nabc\n\
http://example.com/ 1.2.3.4 20140101000000 text/html abc\n\n";
        let mut r = reader(&bad[..]);
        assert!(matches!(r.next(), Some(Ok(_))));
        match r.next() {
            Some(Err(Error::CorruptRecord { offset, reason })) => {
                assert_eq!(offset, 57);
                assert!(reason.contains("not a number"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(r.next().is_none());
    }
}
