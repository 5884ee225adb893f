//! Fetching what a page embeds (`[crawl] images` / `requisites`): each
//! embed URL once a crawl, from any host, under the same robots.txt rules,
//! SSRF guard and per-host politeness as pages; stylesheets are read for the
//! `url(...)` and `@import` references (fonts, backgrounds, imported sheets),
//! two levels deep. Every fetched embed is reported as
//! [`CrawlEvent::Embed`]; what could not be fetched is counted by reason in
//! [`crate::CrawlSummary::embed_failures`] (it is no page failure).

use std::collections::HashSet;
use std::sync::Mutex;

use regex::Regex;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use std::sync::LazyLock;
use url::Url;

use crate::event::FetchedEmbed;
use crate::fetch;
use crate::normalize::{host_key, parse_normalized};
use shapes::page::{Embed, EmbedKind};

/// Accept header of embed requests.
const ACCEPT_ANY: &str = "*/*";
/// Most distinct embed URLs remembered in a crawl (then forgotten: a
/// resource may then be fetched again, and deduplicated by its digest).
const MAX_REMEMBERED: usize = 1_000_000;
/// How deep stylesheets are followed (a sheet, the sheets it imports).
const MAX_STYLE_DEPTH: u32 = 2;
/// Most references read from one stylesheet.
const MAX_STYLE_REFS: usize = 200;

static CSS_URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')"#,
    )
    .expect("CSS url regex")
});

/// The URLs a stylesheet references: `url(...)` values and `@import`
/// strings (imports as stylesheets), resolved against `base`, `data:` left out.
pub fn stylesheet_refs(css: &str, base: &Url) -> Vec<Embed> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for c in CSS_URL.captures_iter(css) {
        let (raw, kind) = if let Some(m) = c.get(1).or(c.get(2)).or(c.get(3)) {
            (m.as_str(), EmbedKind::StyleAsset)
        } else if let Some(m) = c.get(4).or(c.get(5)) {
            (m.as_str(), EmbedKind::Stylesheet)
        } else {
            continue;
        };
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with("data:") || raw.starts_with('#') {
            continue;
        }
        if let Some(u) = parse_normalized(raw, Some(base)) {
            let s = u.to_string();
            if seen.insert(s.clone()) {
                out.push(Embed { url: s, kind });
            }
        }
        if out.len() >= MAX_STYLE_REFS {
            break;
        }
    }
    out
}

/// The embed URLs fetched so far in a crawl.
#[derive(Default)]
pub(crate) struct Seen(Mutex<HashSet<String>>);

impl Seen {
    /// True the first time `url` is offered.
    pub(crate) fn first(&self, url: &str) -> bool {
        let mut set = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if set.len() >= MAX_REMEMBERED {
            set.clear();
        }
        set.insert(url.to_string())
    }
}

/// What fetching one embed needs from the crawl.
pub(crate) trait EmbedHost {
    fn cfg(&self) -> &crate::CrawlConfig;
    fn client(&self) -> &reqwest::Client;
    fn politeness(&self) -> &crate::politeness::Politeness;
    fn count_request(&self);
    fn robots_allows(&self, url: &Url) -> impl std::future::Future<Output = bool> + Send;
}

/// Fetches one embed, following redirects; the reason when it cannot.
pub(crate) async fn fetch_embed<H: EmbedHost + Sync>(
    host: &H,
    url: &Url,
    kind: EmbedKind,
    page_url: &str,
) -> Result<FetchedEmbed, String> {
    let cfg = host.cfg();
    let mut current = url.clone();
    let mut hops = 0u32;
    loop {
        if !matches!(current.scheme(), "http" | "https") {
            return Err("not http(s)".into());
        }
        if !cfg.allow_private && !crate::guard::host_is_public(&current) {
            return Err("refused (private address)".into());
        }
        if cfg.respect_robots && !host.robots_allows(&current).await {
            return Err("robots.txt disallows".into());
        }
        let host_name = host_key(&current);
        let permit = host.politeness().acquire(&host_name).await;
        let (resp, request) = fetch::send(host.client(), cfg, &current, None, ACCEPT_ANY, || {
            host.count_request()
        })
        .await
        .map_err(|(kind, _)| kind.label().to_string())?;
        host.politeness().answered(&host_name);
        let fetched_at = crate::event::now_micros();
        let status = resp.status();
        if status.is_redirection() {
            let location = resp
                .headers()
                .get(LOCATION)
                .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
            drop(resp);
            drop(permit);
            let next = location
                .and_then(|l| parse_normalized(&l, Some(&current)))
                .ok_or_else(|| format!("http_{} without a usable Location", status.as_u16()))?;
            hops += 1;
            if hops > cfg.max_redirects {
                return Err("too many redirects".into());
            }
            current = next;
            continue;
        }
        if !status.is_success() {
            return Err(format!("http_{}", status.as_u16()));
        }
        let content_type = content_type_of(&resp);
        if kind == EmbedKind::Image && !cfg.embeds.requisites && !content_type.starts_with("image/")
        {
            return Err("not an image".into());
        }
        let mut embed = read_record(
            resp,
            request,
            &current,
            kind,
            fetched_at,
            cfg.embeds.max_bytes,
        )
        .await
        .map_err(|kind| kind.label().to_string())?;
        drop(permit);
        embed.page_url = page_url.to_string();
        return Ok(embed);
    }
}

fn content_type_of(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .map(|v| fetch::media_type(&String::from_utf8_lossy(v.as_bytes())))
        .unwrap_or_default()
}

/// An answer as a record to archive: status, stored headers and the body
/// (read up to `max_bytes`); the page it belongs to is left empty.
pub(crate) async fn read_record(
    resp: reqwest::Response,
    request: crate::event::SentRequest,
    url: &Url,
    kind: EmbedKind,
    fetched_at: chrono::DateTime<chrono::Utc>,
    max_bytes: u64,
) -> Result<FetchedEmbed, crate::FailureKind> {
    let status = resp.status();
    let status_line = format!("{:?} {}", resp.version(), status);
    let ip_address = resp.remote_addr().map(|a| a.ip().to_string());
    let headers = resp.headers().clone();
    let content_type = content_type_of(&resp);
    let body = fetch::read_body(resp, max_bytes)
        .await
        .map_err(|(kind, _)| kind)?;
    Ok(FetchedEmbed {
        url: url.to_string(),
        page_url: String::new(),
        kind,
        fetched_at,
        status: status.as_u16(),
        status_line,
        headers: fetch::stored_headers(&headers, body.len()),
        body,
        content_type,
        ip_address,
        request: Some(request),
    })
}

/// The embeds of a page worth fetching under the crawl's policy, at most
/// `max_per_page`, each URL once a crawl.
pub(crate) fn wanted(cfg: &crate::CrawlConfig, seen: &Seen, embeds: &[Embed]) -> Vec<Embed> {
    embeds
        .iter()
        .filter(|e| cfg.embeds.wants(e.kind))
        .take(cfg.embeds.max_per_page)
        .filter(|e| seen.first(&e.url))
        .cloned()
        .collect()
}

/// Whether the references of an embed of `kind`, reached `depth` stylesheets
/// deep from its page, are followed (a stylesheet's `url(...)` and `@import`,
/// up to a fixed depth).
pub fn follow_style(kind: EmbedKind, depth: u32) -> bool {
    kind == EmbedKind::Stylesheet && depth < MAX_STYLE_DEPTH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stylesheet_references_are_found_and_resolved() {
        let base = Url::parse("http://e.com/css/site.css").unwrap();
        let css = r#"
            @import "print.css"; @import 'http://cdn.e.com/x.css';
            @font-face { src: url(../fonts/a.woff2) format("woff2"), url( "b.woff" ); }
            body { background: URL('/img/bg.png') } .x { background: url(data:image/png;base64,AA) }
            .y { background: url(#frag) } .z { background: url(../fonts/a.woff2) }"#;
        let refs = stylesheet_refs(css, &base);
        let got: Vec<(&str, EmbedKind)> = refs.iter().map(|e| (e.url.as_str(), e.kind)).collect();
        assert_eq!(
            got,
            vec![
                ("http://e.com/css/print.css", EmbedKind::Stylesheet),
                ("http://cdn.e.com/x.css", EmbedKind::Stylesheet),
                ("http://e.com/fonts/a.woff2", EmbedKind::StyleAsset),
                ("http://e.com/css/b.woff", EmbedKind::StyleAsset),
                ("http://e.com/img/bg.png", EmbedKind::StyleAsset),
            ]
        );
    }

    #[test]
    fn policy_picks_images_or_every_requisite() {
        let mut cfg = crate::CrawlConfig::default();
        let embeds = vec![
            Embed {
                url: "http://e.com/a.png".into(),
                kind: EmbedKind::Image,
            },
            Embed {
                url: "http://e.com/s.css".into(),
                kind: EmbedKind::Stylesheet,
            },
        ];
        assert!(wanted(&cfg, &Seen::default(), &embeds).is_empty());
        cfg.embeds.images = true;
        let seen = Seen::default();
        assert_eq!(wanted(&cfg, &seen, &embeds).len(), 1);
        assert!(wanted(&cfg, &seen, &embeds).is_empty(), "each URL once");
        cfg.embeds.requisites = true;
        assert_eq!(wanted(&cfg, &Seen::default(), &embeds).len(), 2);
    }
}
