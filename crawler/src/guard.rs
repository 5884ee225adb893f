//! What keeps an unattended crawl out of trouble: crawler-trap limits on the
//! URLs it queues, and the SSRF guard that keeps it away from private,
//! loopback and link-local addresses unless a job allows them.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use url::{Host, Url};

/// Default longest URL queued (characters).
pub const DEFAULT_MAX_URL_LENGTH: usize = 2048;
/// Default most times one path segment may repeat in a URL (`/a/b/a/b/a/b/…`).
pub const DEFAULT_MAX_REPEATED_SEGMENTS: usize = 3;
/// Default most query parameters of a URL.
pub const DEFAULT_MAX_QUERY_PARAMS: usize = 16;
/// Default most distinct query strings queued for one path (calendars,
/// session ids, sort orders).
pub const DEFAULT_MAX_QUERY_VARIANTS: u32 = 1_000;
/// Default most URLs queued per host in one run.
pub const DEFAULT_MAX_PAGES_PER_HOST: u64 = 100_000;
/// Paths whose query variants are counted; past this the counting stops
/// (memory stays bounded) and new paths are let through.
const MAX_TRACKED_PATHS: usize = 1_000_000;

/// Limits against crawler traps, applied to every discovered URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrapLimits {
    /// Longest URL (characters). Default 2048.
    pub max_url_length: usize,
    /// Most repeats of one path segment. Default 3.
    pub max_repeated_segments: usize,
    /// Most query parameters. Default 16.
    pub max_query_params: usize,
    /// Most distinct query strings per path. Default 1,000.
    pub max_query_variants: u32,
    /// Most URLs queued per host per run. Default 100,000.
    pub max_pages_per_host: u64,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            max_url_length: DEFAULT_MAX_URL_LENGTH,
            max_repeated_segments: DEFAULT_MAX_REPEATED_SEGMENTS,
            max_query_params: DEFAULT_MAX_QUERY_PARAMS,
            max_query_variants: DEFAULT_MAX_QUERY_VARIANTS,
            max_pages_per_host: DEFAULT_MAX_PAGES_PER_HOST,
        }
    }
}

/// Why a URL was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Refusal {
    /// Longer than `max_url_length`.
    UrlTooLong,
    /// A path segment repeats more than `max_repeated_segments` times.
    RepeatedSegments,
    /// More than `max_query_params` query parameters.
    TooManyParams,
    /// The path already has `max_query_variants` query strings queued.
    QueryVariants,
    /// The host already has `max_pages_per_host` URLs queued in this run.
    HostLimit,
    /// A private, loopback, link-local or otherwise non-public address.
    PrivateAddress,
}

impl Refusal {
    /// Stable label (summary key).
    pub fn label(self) -> &'static str {
        match self {
            Refusal::UrlTooLong => "url_too_long",
            Refusal::RepeatedSegments => "repeated_segments",
            Refusal::TooManyParams => "too_many_params",
            Refusal::QueryVariants => "query_variants",
            Refusal::HostLimit => "host_limit",
            Refusal::PrivateAddress => "private_address",
        }
    }
}

/// The trap limits with their per-run counters.
#[derive(Debug, Default)]
pub struct TrapFilter {
    limits: TrapLimits,
    allow_private: bool,
    variants: HashMap<String, u32>,
    per_host: HashMap<String, u64>,
}

impl TrapFilter {
    /// A filter with fresh counters.
    pub fn new(limits: TrapLimits, allow_private: bool) -> Self {
        TrapFilter {
            limits,
            allow_private,
            variants: HashMap::new(),
            per_host: HashMap::new(),
        }
    }

    /// Checks a normalised URL before it is queued: address, length,
    /// repeated segments, query parameters (no counting).
    pub fn check(&self, url: &Url) -> Result<(), Refusal> {
        let l = &self.limits;
        if !self.allow_private && !host_is_public(url) {
            return Err(Refusal::PrivateAddress);
        }
        if url.as_str().len() > l.max_url_length {
            return Err(Refusal::UrlTooLong);
        }
        if let Some(segments) = url.path_segments() {
            // Sorted, equal segments are neighbours: no hashing per URL
            // (this runs for every link of every page).
            let mut sorted: Vec<&str> = segments.filter(|s| !s.is_empty()).collect();
            if sorted.len() > l.max_repeated_segments {
                sorted.sort_unstable();
                if sorted
                    .chunk_by(|a, b| a == b)
                    .any(|run| run.len() > l.max_repeated_segments)
                {
                    return Err(Refusal::RepeatedSegments);
                }
            }
        }
        if let Some(q) = url.query() {
            if q.split('&').filter(|p| !p.is_empty()).count() > l.max_query_params {
                return Err(Refusal::TooManyParams);
            }
        }
        Ok(())
    }

    /// Counts a URL about to be fetched (each URL is fetched once a run):
    /// pages per host, query strings per path.
    pub fn dispatch(&mut self, url: &Url) -> Result<(), Refusal> {
        let l = &self.limits;
        let host = crate::normalize::host_key(url);
        if self.per_host.get(&host).copied().unwrap_or(0) >= l.max_pages_per_host {
            return Err(Refusal::HostLimit);
        }
        if url.query().is_some() {
            let mut path = host.clone();
            path.push_str(url.path());
            let tracked = self.variants.len() < MAX_TRACKED_PATHS;
            match self.variants.get_mut(&path) {
                Some(n) if *n >= l.max_query_variants => return Err(Refusal::QueryVariants),
                Some(n) => *n += 1,
                None if tracked => {
                    self.variants.insert(path, 1);
                }
                None => {}
            }
        }
        *self.per_host.entry(host).or_default() += 1;
        Ok(())
    }

    /// [`TrapFilter::check`] then [`TrapFilter::dispatch`].
    pub fn admit(&mut self, url: &Url) -> Result<(), Refusal> {
        self.check(url)?;
        self.dispatch(url)
    }
}

/// Whether an address is one a public crawl may reach: not loopback,
/// private (RFC 1918, unique local), link-local, unspecified, multicast,
/// broadcast, documentation, shared (CGNAT) or an IPv4-mapped one of those.
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1])) // 100.64/10 shared
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_ip(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg[0] & 0xfe00) == 0xfc00 // unique local
                || (seg[0] & 0xffc0) == 0xfe80 // link-local
                || (seg[0] == 0x2001 && seg[1] == 0x0db8)) // documentation
        }
    }
}

/// Whether the URL's host is not a non-public address literal or a name that
/// always means this machine (`localhost`). Other names are checked when
/// they are resolved ([`PublicResolver`]).
pub fn host_is_public(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => is_public_ip(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => is_public_ip(IpAddr::V6(ip)),
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            !(d == "localhost" || d.ends_with(".localhost"))
        }
        None => false,
    }
}

/// A DNS resolver for reqwest that drops non-public addresses, so a public
/// name that resolves to a private address (or is re-bound to one) is
/// refused at connect time.
#[derive(Debug, Default, Clone, Copy)]
pub struct PublicResolver;

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = addrs
                .iter()
                .copied()
                .filter(|a| is_public_ip(a.ip()))
                .collect();
            if public.is_empty() && !addrs.is_empty() {
                let err: Box<dyn std::error::Error + Send + Sync> = format!(
                    "{host} resolves to a non-public address ({}); refused (allow_private = true allows it)",
                    addrs[0].ip()
                )
                .into();
                return Err(err);
            }
            let iter: reqwest::dns::Addrs = Box::new(public.into_iter());
            Ok(iter)
        })
    }
}

/// The resolver to give reqwest (none when private addresses are allowed).
pub fn resolver(allow_private: bool) -> Option<Arc<PublicResolver>> {
    (!allow_private).then(|| Arc::new(PublicResolver))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|_| Url::parse("http://invalid.invalid/").expect("url"))
    }

    #[test]
    fn private_loopback_and_link_local_addresses_are_refused() {
        for bad in [
            "http://127.0.0.1/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://172.16.5.5/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://0.0.0.0/",
            "http://localhost:8080/",
            "http://100.64.0.1/",
        ] {
            assert!(!host_is_public(&u(bad)), "{bad}");
        }
        for good in [
            "http://93.184.216.34/",
            "https://news.sina.com.cn/",
            "http://[2606:4700::1]/",
        ] {
            assert!(host_is_public(&u(good)), "{good}");
        }
        let mut f = TrapFilter::new(TrapLimits::default(), false);
        assert_eq!(
            f.admit(&u("http://127.0.0.1/a")),
            Err(Refusal::PrivateAddress)
        );
        let mut f = TrapFilter::new(TrapLimits::default(), true);
        assert_eq!(f.admit(&u("http://127.0.0.1/a")), Ok(()));
    }

    #[test]
    fn trap_limits_stop_calendars_loops_and_long_urls() {
        let limits = TrapLimits {
            max_query_variants: 3,
            max_pages_per_host: 6,
            ..TrapLimits::default()
        };
        let mut f = TrapFilter::new(limits, false);
        for day in 1..=3 {
            assert_eq!(f.admit(&u(&format!("http://e.com/cal?d={day}"))), Ok(()));
        }
        assert_eq!(
            f.admit(&u("http://e.com/cal?d=4")),
            Err(Refusal::QueryVariants)
        );
        assert_eq!(
            f.admit(&u("http://e.com/a/b/a/b/a/b/a/")),
            Err(Refusal::RepeatedSegments)
        );
        assert_eq!(f.admit(&u("http://e.com/a/b/a/b/a/b/")), Ok(()));
        let many: Vec<String> = (0..17).map(|i| format!("p{i}=1")).collect();
        assert_eq!(
            f.admit(&u(&format!("http://e.com/x?{}", many.join("&")))),
            Err(Refusal::TooManyParams)
        );
        let long = format!("http://e.com/{}", "x".repeat(DEFAULT_MAX_URL_LENGTH));
        assert_eq!(f.admit(&u(&long)), Err(Refusal::UrlTooLong));
        assert_eq!(f.admit(&u("http://e.com/1")), Ok(()));
        assert_eq!(f.admit(&u("http://e.com/2")), Ok(()));
        assert_eq!(f.admit(&u("http://e.com/3")), Err(Refusal::HostLimit));
        assert_eq!(f.admit(&u("http://other.com/3")), Ok(()), "per host");
    }
}
