//! The HTTP side: a reqwest client without automatic redirects (the crawl loop
//! follows them hop by hop), retries with exponential backoff, and body reading in
//! chunks with a cap on the decoded size.

use std::time::Duration;

use reqwest::header::{
    HeaderMap, HeaderValue, ACCEPT, ACCEPT_ENCODING, HOST, IF_MODIFIED_SINCE, IF_NONE_MATCH,
    USER_AGENT,
};
use reqwest::{redirect, Client, Response};
use url::{Position, Url};

use crate::config::CrawlConfig;
use crate::error::Result;
use crate::event::{FailureKind, SentRequest, Validators};

/// `Accept` header sent with page requests.
pub const ACCEPT_HTML: &str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";
/// `Accept-Encoding` sent with every request: the codings [`build_client`] decodes. Set on
/// the request itself (the client would add its own spelling otherwise) so that the request
/// record says what was sent.
pub const ACCEPT_ENCODING_SENT: &str = "gzip, deflate, br";
/// Headers dropped from the stored response because the body is stored decoded.
pub const DROPPED_HEADERS: [&str; 3] = ["content-encoding", "transfer-encoding", "content-length"];
/// Name of the header added with the stored body length.
pub const CONTENT_LENGTH: &str = "Content-Length";

/// A failed fetch step: kind and message.
pub type Failed = (FailureKind, String);

/// Builds the crawler's HTTP client.
/// Names that resolve only to non-public addresses are refused unless
/// `allow_private` ([`crate::guard::PublicResolver`]). A proxy named by the
/// environment (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`) is used; [`send`]
/// then resolves and checks each target itself before the proxy sees it
/// ([`crate::guard::check_proxied_target`]).
pub fn build_client(cfg: &CrawlConfig) -> Result<Client> {
    let mut builder = Client::builder()
        .user_agent(cfg.user_agent.clone())
        .redirect(redirect::Policy::none())
        .timeout(cfg.request_timeout)
        .connect_timeout(cfg.connect_timeout)
        .gzip(true)
        .brotli(true)
        .deflate(true);
    if let Some(r) = crate::guard::resolver(cfg.allow_private) {
        builder = builder.dns_resolver(r);
    }
    Ok(builder.build()?)
}

/// The wait a `Retry-After` header asks for (delta-seconds or an HTTP date).
pub fn retry_after(resp: &Response) -> Option<std::time::Duration> {
    let v = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(std::time::Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
        .to_std()
        .ok()
}

/// Maps a reqwest error to a failure kind by walking its source chain.
pub fn classify(e: &reqwest::Error) -> FailureKind {
    if e.is_timeout() {
        return FailureKind::Timeout;
    }
    let chain = error_chain(e);
    if e.is_connect() {
        let lower = chain.to_ascii_lowercase();
        if lower.contains("dns error") || lower.contains("failed to lookup address") {
            return FailureKind::Dns;
        }
        return FailureKind::Connect;
    }
    if e.is_decode() {
        FailureKind::Decode
    } else if e.is_body() {
        FailureKind::Body
    } else if e.is_redirect() {
        FailureKind::TooManyRedirects
    } else {
        FailureKind::Other
    }
}

/// The error and all its sources as one line.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

/// Whether the status is worth retrying.
fn retryable_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// Whether the failure is worth retrying.
fn retryable_kind(kind: FailureKind) -> bool {
    matches!(kind, FailureKind::Connect | FailureKind::Timeout)
}

/// The header fields of a GET of `url`, as handed to the HTTP client: `Host` (with the port
/// when it is not the scheme's default, as hyper would write it), `User-Agent`, `Accept`,
/// `Accept-Encoding` and, for a conditional GET, `If-None-Match` / `If-Modified-Since`. The
/// client adds none of its own when these are set (reqwest fills only absent defaults and
/// hyper only an absent `Host`), so these are the request's headers on the wire (HTTP/1.1;
/// over HTTP/2 `Host` travels beside `:authority`, which it equals). A validator that is not
/// a valid header value is left out (an unconditional GET).
pub fn request_headers(
    cfg: &CrawlConfig,
    url: &Url,
    validators: Option<&Validators>,
    accept: &str,
) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(host) = url.host_str() {
        let host = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        if let Ok(v) = HeaderValue::from_str(&host) {
            headers.insert(HOST, v);
        }
    }
    // build_client refuses a user agent that is not a header value.
    if let Ok(v) = HeaderValue::from_str(&cfg.user_agent) {
        headers.insert(USER_AGENT, v);
    }
    if let Ok(v) = HeaderValue::from_str(accept) {
        headers.insert(ACCEPT, v);
    }
    headers.insert(
        ACCEPT_ENCODING,
        HeaderValue::from_static(ACCEPT_ENCODING_SENT),
    );
    if let Some(v) = validators {
        let valid = |s: &Option<String>| s.as_deref().and_then(|s| HeaderValue::from_str(s).ok());
        if let Some(etag) = valid(&v.etag) {
            headers.insert(IF_NONE_MATCH, etag);
        }
        if let Some(lm) = valid(&v.last_modified) {
            headers.insert(IF_MODIFIED_SINCE, lm);
        }
    }
    headers
}

/// The request `headers` sent for `url`, answered over `version`: what a `request` record
/// holds.
pub fn sent_request(url: &Url, version: reqwest::Version, headers: &HeaderMap) -> SentRequest {
    SentRequest {
        request_line: format!(
            "GET {} {version:?}",
            &url[Position::BeforePath..Position::AfterQuery]
        ),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), header_text(v)))
            .collect(),
    }
}

/// Sends GET `url` with retries; a 5xx after the last retry is returned as a
/// response, not an error. `on_request` is called before each attempt. Returns the
/// response and the request it answers, as sent ([`request_headers`]).
pub async fn send(
    client: &Client,
    cfg: &CrawlConfig,
    url: &Url,
    validators: Option<&Validators>,
    accept: &str,
    mut on_request: impl FnMut(),
) -> Result<(Response, SentRequest), Failed> {
    // Through a proxy the target's name is resolved by the proxy, past
    // the client's `PublicResolver`: it is checked here instead.
    if !cfg.allow_private && crate::guard::env_proxy(url.scheme()).is_some() {
        crate::guard::check_proxied_target(url)
            .await
            .map_err(|m| (FailureKind::Refused, m))?;
    }
    let headers = request_headers(cfg, url, validators, accept);
    let mut attempt = 0u32;
    loop {
        let req = client.get(url.clone()).headers(headers.clone());
        on_request();
        let outcome = req.send().await;
        let retry = match &outcome {
            Ok(resp) => retryable_status(resp.status().as_u16()),
            Err(e) => retryable_kind(classify(e)),
        };
        // A server that names its wait (429/503 Retry-After) gets it, up to
        // `max_retry_after`; a longer wait is not waited out here.
        let asked = outcome.as_ref().ok().and_then(retry_after);
        if !retry || attempt >= cfg.retries || asked.is_some_and(|a| a > cfg.max_retry_after) {
            return outcome
                .map(|resp| {
                    let sent = sent_request(url, resp.version(), &headers);
                    (resp, sent)
                })
                .map_err(|e| (classify(&e), error_chain(&e)));
        }
        let wait = asked.unwrap_or_else(|| backoff(cfg.retry_backoff, attempt));
        tracing::debug!(url = %url, attempt, backoff_ms = wait.as_millis() as u64, "retrying");
        drop(outcome);
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// Reads the (already content-decoded) body in chunks, failing with `TooLarge`
/// as soon as it exceeds `max_bytes`.
pub async fn read_body(mut resp: Response, max_bytes: u64) -> Result<Vec<u8>, Failed> {
    if let Some(len) = resp.content_length() {
        if len > max_bytes {
            return Err((
                FailureKind::TooLarge,
                format!("Content-Length {len} exceeds the cap of {max_bytes} bytes"),
            ));
        }
    }
    // Sized once when the server says how much comes (a decoded body may
    // still grow past it): growing by doubling copied a large page several
    // times and left it in a buffer up to twice its size.
    let expected = resp.content_length().unwrap_or(0).min(max_bytes);
    let mut body = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() as u64 + chunk.len() as u64 > max_bytes {
                    return Err((
                        FailureKind::TooLarge,
                        format!("decoded body exceeds the cap of {max_bytes} bytes"),
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err((classify(&e), error_chain(&e))),
        }
    }
}

/// Header value as text: UTF-8 when valid, else each byte as Latin-1.
fn header_text(v: &reqwest::header::HeaderValue) -> String {
    match std::str::from_utf8(v.as_bytes()) {
        Ok(s) => s.to_string(),
        Err(_) => v.as_bytes().iter().map(|&b| char::from(b)).collect(),
    }
}

/// Response headers as stored (see `FetchedPage::headers`).
pub fn stored_headers(headers: &HeaderMap, body_len: usize) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .iter()
        .filter(|(k, _)| !DROPPED_HEADERS.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str().to_string(), header_text(v)))
        .collect();
    out.push((CONTENT_LENGTH.to_string(), body_len.to_string()));
    out
}

/// The media type of a `Content-Type` value, lowercase, without parameters.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Body of a robots.txt response, or how the fetch failed.
pub enum RobotsFetch {
    /// 2xx: the file.
    Found(Vec<u8>),
    /// 4xx: no usable file.
    Unavailable(u16),
    /// 5xx or too many redirects.
    ServerError(String),
    /// Network failure (after retries).
    Network(FailureKind, String),
}

/// Fetches a robots.txt, following up to `max_redirects` redirects.
pub async fn fetch_robots(
    client: &Client,
    cfg: &CrawlConfig,
    url: &Url,
    max_redirects: u32,
    max_bytes: u64,
    mut on_request: impl FnMut(),
) -> RobotsFetch {
    let mut current = url.clone();
    for _ in 0..=max_redirects {
        let resp = match send(
            client,
            cfg,
            &current,
            None,
            "text/plain,*/*;q=0.5",
            &mut on_request,
        )
        .await
        {
            Ok((r, _)) => r,
            Err((kind, msg)) => return RobotsFetch::Network(kind, msg),
        };
        let status = resp.status().as_u16();
        if resp.status().is_redirection() {
            let next = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| current.join(l).ok());
            match next {
                Some(n) => {
                    current = n;
                    continue;
                }
                None => return RobotsFetch::Unavailable(status),
            }
        }
        if (400..500).contains(&status) {
            return RobotsFetch::Unavailable(status);
        }
        if !resp.status().is_success() {
            return RobotsFetch::ServerError(format!("robots.txt status {status}"));
        }
        // Read at most max_bytes; a longer file is truncated (RFC 9309 2.5).
        let mut resp = resp;
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(c)) => {
                    body.extend_from_slice(&c);
                    if body.len() as u64 >= max_bytes {
                        body.truncate(max_bytes as usize);
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => return RobotsFetch::Network(classify(&e), error_chain(&e)),
            }
        }
        return RobotsFetch::Found(body);
    }
    RobotsFetch::ServerError("too many robots.txt redirects".into())
}

/// Backoff before retry `attempt` (0-based), for documentation and tests.
pub fn backoff(base: Duration, attempt: u32) -> Duration {
    base.saturating_mul(1u32 << attempt.min(16))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    #[test]
    fn stored_headers_drop_encoding_and_fix_length() {
        let mut h = HeaderMap::new();
        h.insert(
            HeaderName::from_static("content-type"),
            HeaderValue::from_static("text/html"),
        );
        h.insert(
            HeaderName::from_static("content-encoding"),
            HeaderValue::from_static("gzip"),
        );
        h.insert(
            HeaderName::from_static("content-length"),
            HeaderValue::from_static("12"),
        );
        h.append(
            HeaderName::from_static("set-cookie"),
            HeaderValue::from_static("a=1"),
        );
        h.append(
            HeaderName::from_static("set-cookie"),
            HeaderValue::from_static("b=2"),
        );
        let s = stored_headers(&h, 345);
        assert!(!s
            .iter()
            .any(|(k, _)| k == "content-encoding" || k == "content-length"));
        assert_eq!(s.iter().filter(|(k, _)| k == "set-cookie").count(), 2);
        assert_eq!(
            s.last().map(|(k, v)| (k.as_str(), v.as_str())),
            Some(("Content-Length", "345"))
        );
    }

    #[test]
    fn request_headers_are_the_ones_sent() {
        let cfg = CrawlConfig {
            user_agent: "harvest-test/1 (+https://example.org/bot)".into(),
            ..CrawlConfig::default()
        };
        let url = Url::parse("http://127.0.0.1:8080/a/b.html?x=1&y=2#frag").unwrap();
        let validators = Validators {
            etag: Some("\"v1\"".into()),
            last_modified: Some("Wed, 01 May 2024 12:00:00 GMT".into()),
        };
        let headers = request_headers(&cfg, &url, Some(&validators), ACCEPT_HTML);
        let sent = sent_request(&url, reqwest::Version::HTTP_11, &headers);
        assert_eq!(sent.request_line, "GET /a/b.html?x=1&y=2 HTTP/1.1");
        let pairs: Vec<(&str, &str)> = sent
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("host", "127.0.0.1:8080"),
                ("user-agent", "harvest-test/1 (+https://example.org/bot)"),
                ("accept", ACCEPT_HTML),
                ("accept-encoding", ACCEPT_ENCODING_SENT),
                ("if-none-match", "\"v1\""),
                ("if-modified-since", "Wed, 01 May 2024 12:00:00 GMT"),
            ]
        );
        // The default port is not written; no validators, no conditional headers.
        let url = Url::parse("https://example.org:443/").unwrap();
        let headers = request_headers(&cfg, &url, None, ACCEPT_HTML);
        assert_eq!(headers.get(HOST).unwrap(), "example.org");
        assert!(headers.get(IF_NONE_MATCH).is_none());
        let sent = sent_request(&url, reqwest::Version::HTTP_2, &headers);
        assert_eq!(sent.request_line, "GET / HTTP/2.0");
    }

    #[test]
    fn media_type_strips_parameters() {
        assert_eq!(media_type("Text/HTML; charset=GBK"), "text/html");
        assert_eq!(media_type(""), "");
    }

    #[test]
    fn backoff_doubles() {
        let b = Duration::from_millis(100);
        assert_eq!(backoff(b, 0), Duration::from_millis(100));
        assert_eq!(backoff(b, 2), Duration::from_millis(400));
    }
}
