//! URL normalisation used for frontier de-duplication.
//!
//! The rules are deliberately conservative (RFC 3986 section 6.2.2 "syntax-based"
//! normalisation only): lowercase scheme and host, drop the default port, resolve
//! dot segments, drop the fragment, drop an empty query (`?`). Nothing is sorted,
//! no query parameters are removed, percent-encoding is left as the `url` crate
//! (WHATWG URL parser) produces it.

use url::Url;

/// Schemes the crawler follows.
pub const CRAWLABLE_SCHEMES: [&str; 2] = ["http", "https"];

/// Returns the normalised form of `url` (see the module docs).
///
/// The WHATWG parser already lowercases scheme and host, removes default ports
/// and resolves `.`/`..` segments while parsing; this adds the fragment and
/// empty-query rules.
pub fn normalize(url: &Url) -> Url {
    normalize_owned(url.clone())
}

/// [`normalize`] of a URL the caller owns (no copy).
fn normalize_owned(mut url: Url) -> Url {
    if url.fragment().is_some() {
        url.set_fragment(None);
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    url
}

/// Parses `input` (absolute, or relative to `base`) and normalises it.
///
/// Returns `None` for unparsable input and for schemes other than http/https
/// (`mailto:`, `javascript:`, `data:`, ...).
pub fn parse_normalized(input: &str, base: Option<&Url>) -> Option<Url> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let parsed = match base {
        Some(b) => b.join(trimmed).ok()?,
        None => Url::parse(trimmed).ok()?,
    };
    if !CRAWLABLE_SCHEMES.contains(&parsed.scheme()) || parsed.host_str().is_none() {
        return None;
    }
    Some(normalize_owned(parsed))
}

/// The `host[:port]` key used for politeness and robots.txt caching.
pub fn host_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        parse_normalized(s, None)
            .map(|u| u.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn lowercases_scheme_and_host_but_not_path() {
        assert_eq!(
            norm("HTTP://WWW.Example.COM/A/B"),
            "http://www.example.com/A/B"
        );
    }

    #[test]
    fn drops_default_port_keeps_others() {
        assert_eq!(norm("http://example.com:80/x"), "http://example.com/x");
        assert_eq!(norm("https://example.com:443/x"), "https://example.com/x");
        assert_eq!(
            norm("http://example.com:8080/x"),
            "http://example.com:8080/x"
        );
    }

    #[test]
    fn drops_fragment_and_empty_query() {
        assert_eq!(norm("http://example.com/a?#frag"), "http://example.com/a");
        assert_eq!(
            norm("http://example.com/a?b=1#frag"),
            "http://example.com/a?b=1"
        );
    }

    #[test]
    fn resolves_dot_segments_and_adds_root_path() {
        assert_eq!(
            norm("http://example.com/a/./b/../c"),
            "http://example.com/a/c"
        );
        assert_eq!(norm("http://example.com"), "http://example.com/");
    }

    #[test]
    fn keeps_query_order() {
        assert_eq!(
            norm("http://example.com/?b=2&a=1"),
            "http://example.com/?b=2&a=1"
        );
    }

    #[test]
    fn rejects_non_http_schemes() {
        assert!(parse_normalized("mailto:someone@example.com", None).is_none());
        assert!(parse_normalized("javascript:void(0)", None).is_none());
        let base = Url::parse("http://example.com/dir/page.html").ok();
        assert!(parse_normalized("javascript:alert(1)", base.as_ref()).is_none());
        assert!(parse_normalized("   ", base.as_ref()).is_none());
    }

    #[test]
    fn resolves_relative_against_base() {
        let base = Url::parse("http://example.com/dir/page.html").ok();
        let got = parse_normalized("../other.html#x", base.as_ref()).map(|u| u.to_string());
        assert_eq!(got.as_deref(), Some("http://example.com/other.html"));
    }

    #[test]
    fn host_key_includes_explicit_port() {
        let u = Url::parse("http://127.0.0.1:3000/a").ok();
        assert_eq!(
            u.as_ref().map(host_key).as_deref(),
            Some("http://127.0.0.1:3000")
        );
        let u = Url::parse("https://Example.com/a").ok();
        assert_eq!(
            u.as_ref().map(host_key).as_deref(),
            Some("https://example.com")
        );
    }
}
