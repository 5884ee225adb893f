//! SURT keys (Sort-friendly URI Reordering Transform) as pywb and OutbackCDX
//! sort CDXJ lines by them: `http://www.Example.com:8080/A/?b=2&a=1` ->
//! `com,example:8080)/a?a=1&b=2`.
//!
//! Written here by hand, following the Python `surt` package 0.3.1 that
//! pywb's `cdxj-indexer` calls (`surt.surt(url)` with its defaults: Google's
//! canonicaliser, then the Internet Archive's; no scheme, no trailing comma,
//! IP addresses reversed like host names). The one Rust crate on crates.io
//! (`surt-rs` 0.1.3, 2024) follows other rules (it keeps the fragment,
//! decodes escapes, sorts the query before lower-casing it, panics on some
//! hosts), so its keys would not match pywb's. `tests/cdxj.rs` compares this
//! function with the Python package on a list of awkward URLs.
//!
//! Known differences: a non-ASCII host is converted with the `url` crate's
//! IDNA (UTS 46) where Python uses its IDNA 2003 codec, and a dotted
//! numeric host that is not an IPv4 address is not looked up in the DNS
//! (Python's `gethostbyname_ex`). Crawled URLs never have either (the
//! crawler normalises hosts to ASCII).

use std::sync::LazyLock;

use regex::bytes::Regex;

/// Characters `escape_once` keeps besides letters, digits and `_.-~`
/// (Python `quote`'s `safe` in surt's `escapeOnce`).
const SAFE: &[u8] = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~";

/// Session ids in a query (surt's `_RES_QUERY_SESSIONID`, case-insensitive):
/// the id is cut out, what follows its `&` is kept.
static QUERY_SESSION_IDS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$",
        r"^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$",
    ]
    .iter()
    .map(|p| Regex::new(&format!("(?i-u){p}")).expect("valid pattern"))
    .collect()
});

/// ASP.NET session ids in a path (surt's `_RES_PATH_SESSIONID`).
static PATH_SESSION_IDS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$",
        r"^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$",
    ]
    .iter()
    .map(|p| Regex::new(&format!("(?i-u){p}")).expect("valid pattern"))
    .collect()
});

/// A URL split the way surt's `handyurl.urlsplit` does (RFC 2396 regex).
struct Parts<'a> {
    scheme: &'a [u8],
    netloc: &'a [u8],
    path: &'a [u8],
    query: &'a [u8],
}

fn split(url: &[u8]) -> Parts<'_> {
    // `^(([a-zA-Z][a-zA-Z0-9+.-]*):)?((//([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$`
    let mut rest = url;
    let mut scheme: &[u8] = b"";
    if let Some(colon) = url.iter().position(|&b| b == b':') {
        let candidate = &url[..colon];
        if candidate.first().is_some_and(u8::is_ascii_alphabetic)
            && candidate
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
        {
            scheme = candidate;
            rest = &url[colon + 1..];
        }
    }
    let mut netloc: &[u8] = b"";
    if let Some(after) = rest.strip_prefix(b"//") {
        let end = after
            .iter()
            .position(|b| b"/?#".contains(b))
            .unwrap_or(after.len());
        netloc = &after[..end];
        rest = &after[end..];
    }
    let end = rest
        .iter()
        .position(|b| b"?#".contains(b))
        .unwrap_or(rest.len());
    let path = &rest[..end];
    rest = &rest[end..];
    let mut query: &[u8] = b"";
    if let Some(after) = rest.strip_prefix(b"?") {
        let end = after.iter().position(|&b| b == b'#').unwrap_or(after.len());
        query = &after[..end];
    }
    Parts {
        scheme,
        netloc,
        path,
        query,
    }
}

/// Host (lower-cased, `None` if empty) and port of a netloc, as Python's
/// `SplitResult.hostname` / `.port`; `Err` for a port Python rejects.
fn host_and_port(netloc: &[u8]) -> Result<(Option<Vec<u8>>, Option<u16>), ()> {
    let info = match netloc.iter().rposition(|&b| b == b'@') {
        Some(at) => &netloc[at + 1..],
        None => netloc,
    };
    let (host, port): (&[u8], &[u8]) = match info.iter().position(|&b| b == b'[') {
        Some(open) => {
            let bracketed = &info[open + 1..];
            let close = bracketed
                .iter()
                .position(|&b| b == b']')
                .unwrap_or(bracketed.len());
            let after = bracketed.get(close + 1..).unwrap_or(b"");
            let port = match after.iter().position(|&b| b == b':') {
                Some(c) => &after[c + 1..],
                None => b"",
            };
            (&bracketed[..close], port)
        }
        None => match info.iter().position(|&b| b == b':') {
            Some(c) => (&info[..c], &info[c + 1..]),
            None => (info, b""),
        },
    };
    let port = if port.is_empty() {
        None
    } else {
        if !port.iter().all(u8::is_ascii_digit) {
            return Err(());
        }
        let n: u32 = std::str::from_utf8(port)
            .ok()
            .and_then(|p| p.parse().ok())
            .ok_or(())?;
        if n > 65535 {
            return Err(());
        }
        // `port or None`: port 0 counts as none.
        Some(n as u16).filter(|&p| p != 0)
    };
    let host = (!host.is_empty()).then(|| host.to_ascii_lowercase());
    Ok((host, port))
}

/// Python's `unquote_to_bytes`: `%XX` (two hex digits) -> the byte.
fn unquote(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'%' && i + 2 < input.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(input[i + 1]), hex(input[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(input[i]);
        i += 1;
    }
    out
}

/// surt's `unescapeRepeatedly`: unquote until nothing changes.
fn unescape_repeatedly(input: &[u8]) -> Vec<u8> {
    let mut current = input.to_vec();
    loop {
        let next = unquote(&current);
        if next == current {
            return current;
        }
        current = next;
    }
}

/// surt's `escapeOnce`: percent-encode (upper-case hex) every byte but
/// letters, digits, `_.-~` and [`SAFE`].
fn escape_once(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    for &b in input {
        if b.is_ascii_alphanumeric() || b"_.-~".contains(&b) || SAFE.contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out
}

/// One part of a dotted numeric host as `inet_aton` reads it: a leading 0
/// is octal, else decimal (the regexes that lead here allow no hex).
fn aton_part(part: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(part).ok()?;
    if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).ok()
    } else {
        text.parse().ok()
    }
}

/// surt's `attemptIPFormats`: a host of digits is a 32-bit address; a
/// dotted decimal or octal host is read like `inet_aton` (`1.2.3` =
/// `1.2.0.3`); `None` when the host is no address.
fn ip_form(host: &[u8]) -> Option<Vec<u8>> {
    let dotted = |ip: u32| {
        let [a, b, c, d] = ip.to_be_bytes();
        format!("{a}.{b}.{c}.{d}").into_bytes()
    };
    if !host.is_empty() && host.iter().all(u8::is_ascii_digit) {
        // `int(host) & 0xffffffff`: Python's integers do not overflow.
        let mut v: u32 = 0;
        for &d in host {
            v = v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
        }
        return Some(dotted(v));
    }
    let parts: Vec<&[u8]> = host.split(|&b| b == b'.').collect();
    let decimal = parts.first().is_some_and(|p| p.first() != Some(&b'0'))
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit));
    let octal = parts.first().is_some_and(|p| p.first() == Some(&b'0'))
        && parts[0].iter().all(|b| (b'0'..=b'7').contains(b))
        && parts[1..]
            .iter()
            .all(|p| !p.is_empty() && p.iter().all(|b| (b'0'..=b'7').contains(b)));
    if parts.len() > 4 || !(decimal || octal) {
        return None;
    }
    let values: Vec<u64> = parts.iter().map(|p| aton_part(p)).collect::<Option<_>>()?;
    let (last, leading) = values.split_last()?;
    if leading.iter().any(|&v| v > 255) {
        return None;
    }
    let last_bits = 8 * (4 - leading.len() as u32);
    if last_bits < 64 && *last >= 1u64 << last_bits {
        return None;
    }
    let mut ip: u64 = 0;
    for (i, v) in leading.iter().enumerate() {
        ip |= v << (24 - 8 * i);
    }
    Some(dotted((ip | last) as u32))
}

/// Python's `bytes.replace(b"..", b".")`: one pass, left to right.
fn replace_double_dots(host: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(host.len());
    let mut i = 0;
    while i < host.len() {
        if host[i..].starts_with(b"..") {
            out.push(b'.');
            i += 2;
        } else {
            out.push(host[i]);
            i += 1;
        }
    }
    out
}

/// surt's `normalizePath`: `.` and `..` resolved, empty segments dropped
/// (but a trailing `/` kept), always starting with `/`.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for segment in path.split(|&b| b == b'/').skip(1) {
        match segment {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(segment);
                }
            }
            _ => kept.push(segment),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, leading)) = kept.split_last() {
        for segment in leading.iter().filter(|s| !s.is_empty()) {
            out.extend_from_slice(segment);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

/// Apply session-id patterns: `group1 + group(last)` of the first match of
/// each pattern, in turn.
fn strip_session_ids(mut text: Vec<u8>, patterns: &[Regex], keep: &[usize]) -> Vec<u8> {
    for p in patterns {
        if let Some(c) = p.captures(&text) {
            let mut out = Vec::new();
            for &g in keep {
                if let Some(m) = c.get(g) {
                    out.extend_from_slice(m.as_bytes());
                }
            }
            text = out;
        }
    }
    text
}

/// surt's `alphaReorderQuery`: arguments sorted as (name, value) tuples, an
/// argument without `=` before the same name with one.
fn alpha_reorder_query(query: &[u8]) -> Vec<u8> {
    if query.len() <= 1 {
        return query.to_vec();
    }
    let mut args: Vec<(&[u8], Option<&[u8]>)> = query
        .split(|&b| b == b'&')
        .map(|a| match a.iter().position(|&b| b == b'=') {
            Some(eq) => (&a[..eq], Some(&a[eq + 1..])),
            None => (a, None),
        })
        .collect();
    args.sort();
    let mut out = Vec::with_capacity(query.len());
    for (i, (name, value)) in args.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(name);
        if let Some(v) = value {
            out.push(b'=');
            out.extend_from_slice(v);
        }
    }
    out
}

/// The SURT key of `url` as pywb's `cdxj-indexer` writes it (no scheme).
/// A URL Python's surt cannot parse (a bad port) is its own key, as
/// `cdxj-indexer` does.
pub fn surt(url: &str) -> String {
    if url.is_empty() {
        return "-".into();
    }
    if url.starts_with("filedesc") {
        return url.into();
    }
    match canonical_key(url) {
        Some(key) => String::from_utf8_lossy(&key).into_owned(),
        None => url.into(),
    }
}

fn canonical_key(url: &str) -> Option<Vec<u8>> {
    let mut u = HandyUrl::parse(url)?;
    u.google_canonicalize();
    u.ia_canonicalize();
    Some(u.surt_bytes())
}

/// A URL as surt's `handyurl` holds it, parsed and canonicalized in place.
struct HandyUrl {
    scheme: Vec<u8>,
    host: Option<Vec<u8>>,
    port: Option<u16>,
    path: Option<Vec<u8>>,
    query: Option<Vec<u8>>,
}

impl HandyUrl {
    /// `handyurl.parse`: whitespace trimmed, a missing scheme made `http`, repeated
    /// schemes collapsed, a host found in the path of a URL without one.
    fn parse(url: &str) -> Option<HandyUrl> {
        let ascii_space = |b: &u8| b" \t\n\r\x0b\x0c".contains(b);
        let bytes = url.as_bytes();
        let start = bytes
            .iter()
            .position(|b| !ascii_space(b))
            .unwrap_or(bytes.len());
        let end = bytes
            .iter()
            .rposition(|b| !ascii_space(b))
            .map_or(start, |e| e + 1);
        let cleaned: Vec<u8> = bytes[start..end]
            .iter()
            .copied()
            .filter(|b| !b"\n\r\t".contains(b))
            .collect();
        let mut url = cleaned;
        let has_scheme = {
            let p = split(&url);
            !p.scheme.is_empty()
        };
        if !has_scheme {
            url.splice(0..0, b"http://".iter().copied());
        }
        // `^(https?://)+` -> the first one.
        for scheme in [&b"http://"[..], b"https://"] {
            if url.starts_with(scheme) {
                let mut rest = &url[scheme.len()..];
                loop {
                    if let Some(r) = rest.strip_prefix(b"http://") {
                        rest = r;
                    } else if let Some(r) = rest.strip_prefix(b"https://") {
                        rest = r;
                    } else {
                        break;
                    }
                }
                let mut collapsed = scheme.to_vec();
                collapsed.extend_from_slice(rest);
                url = collapsed;
                break;
            }
        }
        let parts = split(&url);
        let scheme = parts.scheme.to_vec();
        let mut netloc = parts.netloc;
        while let Some(n) = netloc.strip_suffix(b":") {
            netloc = n;
        }
        let (mut host, port) = host_and_port(netloc).ok()?;
        let mut path: Option<Vec<u8>> = (!parts.path.is_empty()).then(|| parts.path.to_vec());
        let query: Option<Vec<u8>> = (!parts.query.is_empty()).then(|| parts.query.to_vec());
        if scheme.starts_with(b"http") && host.is_none() {
            if let Some(p) = &path {
                let trimmed: &[u8] = {
                    let mut t = &p[..];
                    while let Some(r) = t.strip_prefix(b"/") {
                        t = r;
                    }
                    t
                };
                let (h, rest) = match trimmed.iter().position(|&b| b == b'/') {
                    Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
                    None => (trimmed, &b""[..]),
                };
                host = Some(h.to_vec());
                let mut np = b"/".to_vec();
                np.extend_from_slice(rest);
                path = Some(np);
            }
        }
        Some(HandyUrl {
            scheme,
            host,
            port,
            path,
            query,
        })
    }

    /// `GoogleURLCanonicalizer`: escapes normalised, the host in IDNA and IP forms,
    /// dot segments of the path resolved.
    fn google_canonicalize(&mut self) {
        let (mut host, path, query) = (self.host.take(), self.path.take(), self.query.take());
        let query = query.map(|q| escape_once(&unescape_repeatedly(&q)));
        if let Some(h) = host.take() {
            let mut h = unescape_repeatedly(&h);
            if !h.is_ascii() {
                let text = String::from_utf8_lossy(&h).into_owned();
                if let Ok(ascii) = url::Host::parse(&text) {
                    h = ascii.to_string().into_bytes();
                }
            }
            h = replace_double_dots(&h);
            let start = h.iter().position(|&b| b != b'.').unwrap_or(h.len());
            let end = h.iter().rposition(|&b| b != b'.').map_or(start, |e| e + 1);
            let h = h[start..end].to_vec();
            host = Some(match ip_form(&h) {
                Some(ip) => ip,
                None => escape_once(&h.to_ascii_lowercase()),
            });
        }
        let mut path = path.map(|p| unescape_repeatedly(&p));
        if host.is_some() {
            path = Some(normalize_path(path.as_deref().unwrap_or(b"")));
        }
        let path = path.map(|p| escape_once(&p));
        self.host = host;
        self.path = path;
        self.query = query;
    }

    /// `IAURLCanonicalizer`: lowercased, `www` prefix, default port, session ids and a
    /// trailing slash dropped, the query's arguments sorted.
    fn ia_canonicalize(&mut self) {
        let scheme = &self.scheme;
        let (mut host, mut port, path, query) = (
            self.host.take(),
            self.port,
            self.path.take(),
            self.query.take(),
        );
        if let Some(h) = &mut host {
            h.make_ascii_lowercase();
            // massageHost: a leading `www\d*.` goes.
            if scheme != b"dns" && h.starts_with(b"www") {
                let digits = h[3..].iter().take_while(|b| b.is_ascii_digit()).count();
                if h.get(3 + digits) == Some(&b'.') {
                    h.drain(..3 + digits + 1);
                }
            }
        }
        let default_port = match scheme.to_ascii_lowercase().as_slice() {
            b"http" => Some(80),
            b"https" => Some(443),
            _ => None,
        };
        if port == default_port {
            port = None;
        }
        let path = path.map(|p| {
            let p = p.to_ascii_lowercase();
            let mut p = strip_session_ids(p, &PATH_SESSION_IDS, &[1, 3]);
            if p.len() > 1 && p.ends_with(b"/") {
                p.pop();
            }
            p
        });
        let query = match query {
            Some(q) if !q.is_empty() => {
                let q = strip_session_ids(q, &QUERY_SESSION_IDS, &[1, 2]);
                let q = alpha_reorder_query(&q.to_ascii_lowercase());
                (!q.is_empty()).then_some(q)
            }
            _ => None,
        };
        self.host = host;
        self.port = port;
        self.path = path;
        self.query = query;
    }

    /// `geturl_bytes(surt=True, with_scheme=False)`: the SURT form.
    fn surt_bytes(&self) -> Vec<u8> {
        let (scheme, host, port, path, query) =
            (&self.scheme, &self.host, self.port, &self.path, &self.query);
        let mut out = Vec::new();
        match &host {
            Some(h) if !h.is_empty() => {
                let mut labels: Vec<&[u8]> = h.split(|&b| b == b'.').collect();
                labels.reverse();
                out.extend_from_slice(&labels.join(&b","[..]));
                if let Some(p) = port {
                    out.extend_from_slice(format!(":{p}").as_bytes());
                }
                out.push(b')');
            }
            _ => {
                out.extend_from_slice(scheme);
                out.push(b':');
            }
        }
        match &path {
            Some(p) if !p.is_empty() => out.extend_from_slice(p),
            _ if query.is_some() => out.push(b'/'),
            _ => {}
        }
        if let Some(q) = &query {
            out.push(b'?');
            out.extend_from_slice(q);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_of_the_python_package() {
        // From surt 0.3.1's README and tests.
        assert_eq!(
            surt("http://archive.org/goo/?a=2&b&a=1"),
            "org,archive)/goo?a=1&a=2&b"
        );
        assert_eq!(surt("http://www.example.com/"), "com,example)/");
        assert_eq!(surt("http://www.example.com"), "com,example)/");
        assert_eq!(surt("http://Example.COM:80/A/B/"), "com,example)/a/b");
        assert_eq!(surt("https://example.com:443/x"), "com,example)/x");
        assert_eq!(surt("https://example.com:8443/x"), "com,example:8443)/x");
        assert_eq!(surt("http://127.0.0.1:8080/a"), "1,0,0,127:8080)/a");
        assert_eq!(surt("http://example.com/a#frag"), "com,example)/a");
        assert_eq!(surt("http://example.com/?"), "com,example)/");
        assert_eq!(surt("example.com/a b"), "com,example)/a%20b");
        assert_eq!(surt(""), "-");
    }

    #[test]
    fn paths_are_normalised() {
        assert_eq!(normalize_path(b"/a/./b/../c//d/"), b"/a/c/d/");
        assert_eq!(normalize_path(b"/../a"), b"/../a");
        assert_eq!(normalize_path(b""), b"/");
    }

    #[test]
    fn numeric_hosts_read_like_inet_aton() {
        assert_eq!(ip_form(b"127.1").as_deref(), Some(&b"127.0.0.1"[..]));
        assert_eq!(ip_form(b"3232235777").as_deref(), Some(&b"192.168.1.1"[..]));
        assert_eq!(ip_form(b"0177.0.0.1").as_deref(), Some(&b"127.0.0.1"[..]));
        assert_eq!(ip_form(b"256.1.1.1"), None);
        assert_eq!(ip_form(b"example.com"), None);
    }
}
