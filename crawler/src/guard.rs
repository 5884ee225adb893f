//! What keeps an unattended crawl out of trouble: crawler-trap limits on the
//! URLs it queues, and the SSRF guard that keeps it away from private,
//! loopback and link-local addresses unless a job allows them.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use chrono::Datelike;
use url::{Host, Url};

pub use shapes::DEFAULT_MAX_URL_LENGTH;
/// Default most times one path segment may repeat in a URL (`/a/b/a/b/a/b/…`).
pub const DEFAULT_MAX_REPEATED_SEGMENTS: usize = 3;
/// Default most query parameters of a URL.
pub const DEFAULT_MAX_QUERY_PARAMS: usize = 16;
/// Default most distinct query strings queued for one path (calendars,
/// session ids, sort orders).
pub const DEFAULT_MAX_QUERY_VARIANTS: u32 = 1_000;
/// Default most URLs queued per host in one run.
pub const DEFAULT_MAX_PAGES_PER_HOST: u64 = 100_000;
/// Default earliest year of a calendar page crawled (a calendar that walks
/// back further is a trap: news archives on the web start after 1990).
pub const DEFAULT_CALENDAR_MIN_YEAR: i32 = 1990;
/// Default most months after the current one a calendar page may show.
pub const DEFAULT_CALENDAR_MONTHS_AHEAD: u32 = 12;
/// Default most months per host whose calendar pages were fetched although
/// no dated page (article) of that month was linked on the host.
pub const DEFAULT_MAX_EMPTY_CALENDAR_MONTHS: u32 = 24;
/// Paths whose query variants are counted; past this the counting stops
/// (memory stays bounded) and new paths are let through.
const MAX_TRACKED_PATHS: usize = 1_000_000;
/// Hosts whose calendar months are counted; past this new hosts are let
/// through (memory stays bounded).
const MAX_TRACKED_CALENDAR_HOSTS: usize = 100_000;

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
    /// Calendar pages ([`url_date`]) of a year before this are refused.
    /// Default 1990.
    pub calendar_min_year: i32,
    /// Calendar pages of a month more than this many months after the
    /// current one are refused. Default 12.
    pub calendar_months_ahead: u32,
    /// Most months per host whose calendar pages are fetched while no dated
    /// page of that month is linked on the host (the empty months of a
    /// calendar that goes on forever). Default 24.
    pub max_empty_calendar_months: u32,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            max_url_length: DEFAULT_MAX_URL_LENGTH,
            max_repeated_segments: DEFAULT_MAX_REPEATED_SEGMENTS,
            max_query_params: DEFAULT_MAX_QUERY_PARAMS,
            max_query_variants: DEFAULT_MAX_QUERY_VARIANTS,
            max_pages_per_host: DEFAULT_MAX_PAGES_PER_HOST,
            calendar_min_year: DEFAULT_CALENDAR_MIN_YEAR,
            calendar_months_ahead: DEFAULT_CALENDAR_MONTHS_AHEAD,
            max_empty_calendar_months: DEFAULT_MAX_EMPTY_CALENDAR_MONTHS,
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
    /// A calendar page ([`url_date`]) of a month before
    /// `calendar_min_year` or more than `calendar_months_ahead` months
    /// ahead, or of a new month when the host already has
    /// `max_empty_calendar_months` calendar months without a dated page.
    Calendar,
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
            Refusal::Calendar => "calendar",
        }
    }
}

/// The trap limits with their per-run counters.
#[derive(Debug)]
pub struct TrapFilter {
    limits: TrapLimits,
    allow_private: bool,
    variants: HashMap<String, u32>,
    per_host: HashMap<String, u64>,
    /// The current month ([`month_number`]), for `calendar_months_ahead`.
    this_month: i32,
    calendars: HashMap<String, CalendarMonths>,
}

impl Default for TrapFilter {
    fn default() -> Self {
        TrapFilter::new(TrapLimits::default(), false)
    }
}

/// The calendar months of one host in a run.
#[derive(Debug, Default)]
struct CalendarMonths {
    /// Months of the dated pages (articles) linked on the host.
    dated: HashSet<i32>,
    /// Months whose calendar pages were let through.
    fetched: HashSet<i32>,
    /// Months of `fetched` not in `dated`.
    empty: u32,
}

impl TrapFilter {
    /// A filter with fresh counters.
    pub fn new(limits: TrapLimits, allow_private: bool) -> Self {
        let today = chrono::Utc::now().date_naive();
        TrapFilter {
            limits,
            allow_private,
            variants: HashMap::new(),
            per_host: HashMap::new(),
            this_month: month_number(today.year(), today.month()),
            calendars: HashMap::new(),
        }
    }

    /// The same filter with `year`-`month` as the current month (tests).
    pub fn with_current_month(mut self, year: i32, month: u32) -> Self {
        self.this_month = month_number(year, month);
        self
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
        if let Some(d) = url_date(url).filter(|d| d.calendar) {
            let month = month_number(d.year, d.month);
            if d.year < l.calendar_min_year
                || i64::from(month)
                    > i64::from(self.this_month) + i64::from(l.calendar_months_ahead)
            {
                return Err(Refusal::Calendar);
            }
        }
        Ok(())
    }

    /// Notes a URL found on a page and admitted by [`TrapFilter::check`]:
    /// the month of a dated page (an article, [`url_date`]) makes the host's
    /// calendar pages of that month not empty.
    pub fn note_link(&mut self, url: &Url) {
        let Some(d) = url_date(url).filter(|d| !d.calendar) else {
            return;
        };
        let month = month_number(d.year, d.month);
        let host = crate::normalize::host_key(url);
        let tracked = self.calendars.len() < MAX_TRACKED_CALENDAR_HOSTS;
        let months = match self.calendars.get_mut(&host) {
            Some(m) => m,
            None if tracked => self.calendars.entry(host).or_default(),
            None => return,
        };
        if months.dated.insert(month) && months.fetched.contains(&month) {
            months.empty = months.empty.saturating_sub(1);
        }
    }

    /// The calendar count of [`TrapFilter::dispatch`]: a calendar page of a
    /// month the host already had, or one with dated pages, passes; a new
    /// empty month passes while the host has fewer than
    /// `max_empty_calendar_months`.
    fn dispatch_calendar(&mut self, host: &str, url: &Url) -> Result<(), Refusal> {
        let Some(d) = url_date(url).filter(|d| d.calendar) else {
            return Ok(());
        };
        let month = month_number(d.year, d.month);
        let tracked = self.calendars.len() < MAX_TRACKED_CALENDAR_HOSTS;
        let months = match self.calendars.get_mut(host) {
            Some(m) => m,
            None if tracked => self.calendars.entry(host.to_string()).or_default(),
            None => return Ok(()),
        };
        if months.fetched.contains(&month) {
            return Ok(());
        }
        if !months.dated.contains(&month) {
            if months.empty >= self.limits.max_empty_calendar_months {
                return Err(Refusal::Calendar);
            }
            months.empty += 1;
        }
        months.fetched.insert(month);
        Ok(())
    }

    /// Counts a URL about to be fetched (each URL is fetched once a run):
    /// pages per host, query strings per path, empty calendar months per host.
    pub fn dispatch(&mut self, url: &Url) -> Result<(), Refusal> {
        let l = self.limits;
        let host = crate::normalize::host_key(url);
        if self.per_host.get(&host).copied().unwrap_or(0) >= l.max_pages_per_host {
            return Err(Refusal::HostLimit);
        }
        self.dispatch_calendar(&host, url)?;
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

/// The date a URL carries in its path or query, and whether the URL is a
/// calendar page or a dated page (an article).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlDate {
    /// Year (four digits).
    pub year: i32,
    /// Month, 1 to 12.
    pub month: u32,
    /// Day of the month, when the URL names one.
    pub day: Option<u32>,
    /// A calendar (archive) page: the date ends the path (`/2024/11/`,
    /// `/archive/2024-11-25/`, `/2024/11/index.html`, `/2024/11/page/2/`) or
    /// comes from the query (`?year=2024&month=11`, `?date=2024-11-25`).
    /// False for a dated page: a name follows the date
    /// (`/2024/11/25/story.html`).
    pub calendar: bool,
}

/// Query keys of a year, a month and a day (`?year=2024&month=11&day=25`).
const YEAR_KEYS: [&str; 4] = ["year", "yr", "y", "yyyy"];
const MONTH_KEYS: [&str; 5] = ["month", "mon", "mo", "m", "mm"];
const DAY_KEYS: [&str; 3] = ["day", "dd", "d"];
/// Query keys whose value may be a whole date (`?date=2024-11`, `?ym=202411`).
const DATE_KEYS: [&str; 10] = [
    "date", "day", "month", "ym", "ymd", "d", "m", "cal", "calendar", "archive",
];

/// The date of a URL (see [`UrlDate`]): the first date in the path, as
/// `YYYY/MM[/DD]`, `YYYY-MM[-DD]` or `YYYY-MM/DD` segments, else one in the
/// query. `None` for a URL without one (a lone `/2024/` is not taken for a
/// date: it is as often an id).
pub fn url_date(url: &Url) -> Option<UrlDate> {
    let segments: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    for i in 0..segments.len() {
        let Some((year, month, day, used)) = date_at(&segments[i..]) else {
            continue;
        };
        let rest = &segments[i + used..];
        let calendar = match rest {
            [] => true,
            [last] => last.starts_with("index.") || last.starts_with("default."),
            ["page", n] => n.bytes().all(|b| b.is_ascii_digit()),
            _ => false,
        };
        return Some(UrlDate {
            year,
            month,
            day,
            calendar,
        });
    }
    query_date(url)
}

/// A date at the start of `segments`: year, month, day and the segments it
/// takes.
fn date_at(segments: &[&str]) -> Option<(i32, u32, Option<u32>, usize)> {
    let first = *segments.first()?;
    // Most segments are not dates: four leading digits or nothing.
    if !first.as_bytes().get(..4)?.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let (year, month, day, used) = match first.split('-').collect::<Vec<_>>()[..] {
        [y, m] => (year_of(y)?, month_of(m)?, None, 1),
        [y, m, d] => (year_of(y)?, month_of(m)?, Some(day_of(d)?), 1),
        [y] => (year_of(y)?, month_of(segments.get(1)?)?, None, 2),
        _ => return None,
    };
    if day.is_some() {
        return Some((year, month, day, used));
    }
    match segments.get(used).and_then(|s| day_of(s)) {
        Some(d) => Some((year, month, Some(d), used + 1)),
        None => Some((year, month, None, used)),
    }
}

/// A date given in the query (a calendar page whatever its path).
fn query_date(url: &Url) -> Option<UrlDate> {
    url.query()?;
    let (mut year, mut month, mut day) = (None, None, None);
    for (k, v) in url.query_pairs() {
        let k = k.to_ascii_lowercase();
        let v = v.trim();
        if YEAR_KEYS.contains(&k.as_str()) {
            year = year.or_else(|| year_of(v));
        }
        if MONTH_KEYS.contains(&k.as_str()) {
            month = month.or_else(|| month_of(v));
        }
        if DAY_KEYS.contains(&k.as_str()) {
            day = day.or_else(|| day_of(v));
        }
        if DATE_KEYS.contains(&k.as_str()) {
            if let Some((y, m, d)) = whole_date(v) {
                return Some(UrlDate {
                    year: y,
                    month: m,
                    day: d,
                    calendar: true,
                });
            }
        }
    }
    Some(UrlDate {
        year: year?,
        month: month?,
        day,
        calendar: true,
    })
}

/// `2024-11`, `2024-11-25`, `2024/11`, `202411`, `20241125`.
fn whole_date(v: &str) -> Option<(i32, u32, Option<u32>)> {
    let parts: Vec<&str> = v.split(['-', '/', '.']).collect();
    match parts[..] {
        [y, m] => Some((year_of(y)?, month_of(m)?, None)),
        [y, m, d] => Some((year_of(y)?, month_of(m)?, Some(day_of(d)?))),
        [compact] if compact.len() == 6 || compact.len() == 8 => {
            let y = year_of(compact.get(..4)?)?;
            let m = month_of(compact.get(4..6)?)?;
            let d = match compact.get(6..8) {
                Some(d) if !d.is_empty() => Some(day_of(d)?),
                _ => None,
            };
            Some((y, m, d))
        }
        _ => None,
    }
}

fn digits(s: &str, lens: std::ops::RangeInclusive<usize>) -> Option<u32> {
    (lens.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn year_of(s: &str) -> Option<i32> {
    digits(s, 4..=4)
        .filter(|y| *y >= 1000)
        .and_then(|y| i32::try_from(y).ok())
}

fn month_of(s: &str) -> Option<u32> {
    digits(s, 1..=2).filter(|m| (1..=12).contains(m))
}

fn day_of(s: &str) -> Option<u32> {
    digits(s, 1..=2).filter(|d| (1..=31).contains(d))
}

/// Months since year 0: `year * 12 + month - 1`.
fn month_number(year: i32, month: u32) -> i32 {
    year * 12 + i32::try_from(month).unwrap_or(1) - 1
}

/// Whether an address is one a public crawl may reach: not loopback,
/// private (RFC 1918, unique local), link-local, unspecified, multicast,
/// broadcast, documentation, shared (CGNAT), benchmarking, reserved, IETF
/// protocol assignments (192.0.0.0/24), and not an IPv6 form that carries one
/// of those IPv4 addresses: IPv4-mapped (`::ffff:a.b.c.d`), NAT64 (the
/// well-known prefix `64:ff9b::/96`, whose gateway forwards to the embedded
/// address), 6to4 (`2002:AABB:CCDD::/48`), Teredo (`2001:0::/32`, the client
/// address inverted in the last 32 bits). The local-use NAT64 prefix
/// `64:ff9b:1::/48`, IPv4-compatible (`::a.b.c.d`), discard-only (`100::/64`),
/// benchmarking (`2001:2::/48`) and site-local (`fec0::/10`) addresses are
/// never public.
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
                || (o[0] == 192 && o[1] == 0 && o[2] == 0) // 192.0.0/24 IETF protocol assignments
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) // benchmarking
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_ip(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            let low32 = Ipv4Addr::from((u32::from(seg[6]) << 16) | u32::from(seg[7]));
            if seg[..6] == [0x0064, 0xff9b, 0, 0, 0, 0] {
                return is_public_ip(IpAddr::V4(low32)); // NAT64 64:ff9b::/96
            }
            if seg[0] == 0x2002 {
                let v4 = Ipv4Addr::from((u32::from(seg[1]) << 16) | u32::from(seg[2]));
                return is_public_ip(IpAddr::V4(v4)); // 6to4 2002::/16
            }
            if seg[0] == 0x2001 && seg[1] == 0 {
                // Teredo 2001::/32: the server's address, then the client's inverted.
                let server = Ipv4Addr::from((u32::from(seg[2]) << 16) | u32::from(seg[3]));
                return is_public_ip(IpAddr::V4(server))
                    && is_public_ip(IpAddr::V4(Ipv4Addr::from(!u32::from(low32))));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || seg[..6] == [0, 0, 0, 0, 0, 0] // IPv4-compatible ::/96 (deprecated)
                || (seg[0] == 0x0064 && seg[1] == 0xff9b && seg[2] == 0x0001) // local-use NAT64
                || (seg[0] == 0x0100 && seg[1..4] == [0, 0, 0]) // discard-only 100::/64
                || (seg[0] == 0x2001 && seg[1] == 0x0002 && seg[2] == 0) // benchmarking
                || (seg[0] & 0xfe00) == 0xfc00 // unique local
                || (seg[0] & 0xffc0) == 0xfe80 // link-local
                || (seg[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
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

/// The proxy the HTTP client sends `scheme` requests to, from the
/// environment as reqwest reads it (`HTTP_PROXY` / `HTTPS_PROXY` /
/// `ALL_PROXY`, upper or lower case); `None` when requests go out directly.
pub fn env_proxy(scheme: &str) -> Option<String> {
    let names: &[&str] = match scheme {
        "http" => &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"],
        "https" => &["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"],
        _ => &["ALL_PROXY", "all_proxy"],
    };
    names
        .iter()
        .filter_map(|n| std::env::var(n).ok())
        .map(|v| v.trim().to_string())
        .find(|v| !v.is_empty())
}

/// The SSRF check of a request handed to a proxy. A proxy resolves the
/// target's name itself, so [`PublicResolver`] never sees it: the crawler
/// resolves the name here first and refuses the URL unless every address
/// it finds is public (one private answer is enough to refuse: which one
/// the proxy would use is not ours to pick), and refuses a name it cannot
/// resolve (it cannot check it). A proxy that resolves the name to another
/// address later (DNS rebinding between the two lookups) is beyond this
/// check; a proxy that itself refuses private targets closes that gap.
pub async fn check_proxied_target(url: &Url) -> Result<(), String> {
    let host = match url.host() {
        Some(Host::Ipv4(ip)) => return public_or_refused(url, IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => return public_or_refused(url, IpAddr::V6(ip)),
        Some(Host::Domain(d)) => d.to_string(),
        None => return Err(format!("{url} has no host")),
    };
    if !host_is_public(url) {
        return Err(format!(
            "{host} always means this machine; refused (allow_private = true allows it)"
        ));
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = match tokio::net::lookup_host((host.as_str(), port)).await {
        Ok(a) => a.collect(),
        Err(e) => {
            return Err(format!(
                "cannot resolve {host} to check it before handing it to the proxy ({e}); refused: \
                 with a proxy the crawler only sends names it resolved to public addresses \
                 (allow_private = true sends it unchecked)"
            ))
        }
    };
    if addrs.is_empty() {
        return Err(format!("{host} resolves to no address; refused"));
    }
    for a in &addrs {
        public_or_refused(url, a.ip())?;
    }
    Ok(())
}

fn public_or_refused(url: &Url, ip: IpAddr) -> Result<(), String> {
    if is_public_ip(ip) {
        Ok(())
    } else {
        Err(format!(
            "{} resolves to the non-public address {ip}; refused (allow_private = true allows it)",
            url.host_str().unwrap_or_default()
        ))
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

    /// Issue 40 item 6: 192.0.0.0/24 and IPv6 forms that carry a private
    /// IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible) passed the guard.
    #[test]
    fn ipv4_carried_in_ipv6_and_protocol_assignments_are_refused() {
        let ip = |s: &str| {
            s.parse::<IpAddr>()
                .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        };
        for bad in [
            "192.0.0.1",
            "192.0.0.170",
            "64:ff9b::10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe", // 169.254.169.254
            "64:ff9b:1::93.184.216.34",
            "2002:0a00:0001::1",                    // 6to4 of 10.0.0.1
            "2002:7f00:0001::",                     // 6to4 of 127.0.0.1
            "2002:c0a8:0101:5::1",                  // 6to4 of 192.168.1.1
            "2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo client 10.0.0.1
            "::10.0.0.1",
            "::127.0.0.1",
            "100::1",
            "2001:2::1",
            "fec0::1",
        ] {
            assert!(!is_public_ip(ip(bad)), "{bad} must be refused");
            let url = if bad.contains(':') {
                format!("http://[{bad}]/")
            } else {
                format!("http://{bad}/")
            };
            assert!(!host_is_public(&u(&url)), "{url} must be refused");
        }
        for good in [
            "93.184.216.34",
            "192.0.1.1",
            "64:ff9b::93.184.216.34",
            "2002:5db8:d822::1",                    // 6to4 of 93.184.216.34
            "2001:0:4136:e378:8000:63bf:a247:27dd", // Teredo client 93.184.216.34
            "2606:4700::1",
        ] {
            assert!(is_public_ip(ip(good)), "{good} is public");
        }
        assert!(!is_public_ip(ip("192.0.2.1")), "documentation");
    }

    #[tokio::test]
    async fn a_proxied_target_is_resolved_and_checked_here() {
        for bad in [
            "http://127.0.0.1/",
            "http://[64:ff9b::10.0.0.1]/",
            "http://localhost/",
            "http://no-such-host.invalid/",
        ] {
            let r = check_proxied_target(&u(bad)).await;
            assert!(r.is_err(), "{bad}: {r:?}");
        }
        assert_eq!(
            check_proxied_target(&u("http://93.184.216.34/")).await,
            Ok(())
        );
    }

    #[test]
    fn url_dates_tell_calendar_pages_from_dated_pages() {
        let d = |s: &str| url_date(&u(&format!("http://news.example{s}")));
        let cal = |y, m, day| {
            Some(UrlDate {
                year: y,
                month: m,
                day,
                calendar: true,
            })
        };
        let dated = |y, m, day| {
            Some(UrlDate {
                year: y,
                month: m,
                day,
                calendar: false,
            })
        };
        assert_eq!(d("/2024/11/"), cal(2024, 11, None));
        assert_eq!(d("/2024/11"), cal(2024, 11, None));
        assert_eq!(d("/archive/2024/11/25/"), cal(2024, 11, Some(25)));
        assert_eq!(d("/archive/2024-11/"), cal(2024, 11, None));
        assert_eq!(d("/day/2024-11-25"), cal(2024, 11, Some(25)));
        assert_eq!(d("/2024-11/25/"), cal(2024, 11, Some(25)));
        assert_eq!(d("/2024/11/page/3/"), cal(2024, 11, None));
        assert_eq!(d("/2024/11/index.html"), cal(2024, 11, None));
        assert_eq!(d("/cal?year=2024&month=11"), cal(2024, 11, None));
        assert_eq!(d("/cal?y=2024&m=1&d=31"), cal(2024, 1, Some(31)));
        assert_eq!(d("/?m=202411"), cal(2024, 11, None));
        assert_eq!(d("/events?date=2024-11-25"), cal(2024, 11, Some(25)));
        assert_eq!(d("/2024/11/25/story.html"), dated(2024, 11, Some(25)));
        assert_eq!(d("/news/2024-11-25/story"), dated(2024, 11, Some(25)));
        assert_eq!(d("/2024/11/25/12345"), dated(2024, 11, Some(25)));
        assert_eq!(d("/2024/11/sports/match.html"), dated(2024, 11, None));
        assert_eq!(
            d("/2024/11/25/story.html?year=2099&month=1"),
            dated(2024, 11, Some(25))
        );
        for none in [
            "/2024/",
            "/item/12345",
            "/p/2024/13/",
            "/about",
            "/0999/01/",
            "/20241/11/",
            "/cal?year=2024",
            "/list?page=2&d=5",
            "/",
        ] {
            assert_eq!(d(none), None, "{none}");
        }
    }

    /// Issue 40 item 6: a `/YYYY/MM/` calendar ran to the per-host cap.
    #[test]
    fn calendar_pages_far_ahead_or_long_ago_are_refused_but_articles_are_not() {
        let f = TrapFilter::new(TrapLimits::default(), false).with_current_month(2025, 6);
        let check = |s: &str| f.check(&u(&format!("http://news.example{s}")));
        assert_eq!(check("/2099/01/"), Err(Refusal::Calendar));
        assert_eq!(check("/calendar?year=3012&month=2"), Err(Refusal::Calendar));
        assert_eq!(check("/1989/12/31/"), Err(Refusal::Calendar));
        assert_eq!(
            check("/2026/07/"),
            Err(Refusal::Calendar),
            "13 months ahead"
        );
        assert_eq!(check("/2026/06/"), Ok(()), "12 months ahead");
        assert_eq!(check("/1990/01/"), Ok(()));
        assert_eq!(check("/2024/11/25/"), Ok(()));
        // Dated pages are never refused for their date.
        assert_eq!(check("/1985/03/04/old-story.html"), Ok(()));
        assert_eq!(check("/2099/01/01/story.html"), Ok(()));
        assert_eq!(Refusal::Calendar.label(), "calendar");
    }

    #[test]
    fn empty_calendar_months_per_host_are_limited() {
        let limits = TrapLimits {
            max_empty_calendar_months: 3,
            ..TrapLimits::default()
        };
        let mut f = TrapFilter::new(limits, false).with_current_month(2025, 6);
        let url = |s: &str| u(&format!("http://cal.example{s}"));
        for m in 1..=3 {
            assert_eq!(f.admit(&url(&format!("/2025/{m:02}/"))), Ok(()));
        }
        assert_eq!(f.admit(&url("/2025/04/")), Err(Refusal::Calendar));
        // More pages of a month already fetched pass (its days).
        assert_eq!(f.admit(&url("/2025/02/14/")), Ok(()));
        assert_eq!(f.admit(&url("/2025/02/15/")), Ok(()));
        // A month with a dated page linked on the host is not empty.
        f.note_link(&url("/2025/05/20/story.html"));
        assert_eq!(f.admit(&url("/2025/05/")), Ok(()));
        // A dated page found later for a fetched month frees one.
        f.note_link(&url("/2025/01/09/story.html"));
        assert_eq!(f.admit(&url("/2024/12/")), Ok(()));
        assert_eq!(f.admit(&url("/2024/11/")), Err(Refusal::Calendar));
        // Per host; pages without a date are not counted.
        assert_eq!(f.admit(&u("http://other.example/2024/11/")), Ok(()));
        assert_eq!(f.admit(&url("/about")), Ok(()));
        assert_eq!(f.admit(&url("/2024/11/26/story.html")), Ok(()));
    }

    /// A real archive read month by month back from today: each month page
    /// links that month's articles before the page of the month before is
    /// fetched, so no month is refused however far back it goes (1990).
    #[test]
    fn a_news_archive_with_articles_every_month_is_crawled_whole() {
        let mut f = TrapFilter::new(TrapLimits::default(), false).with_current_month(2025, 6);
        let url = |s: String| u(&format!("http://news.example{s}"));
        let mut admitted = 0;
        for back in 0..(35 * 12) {
            let (y, m) = (2025 - back / 12, 12 - back % 12);
            let page = url(format!("/archive/{y}/{m:02}/"));
            if f.check(&page).is_ok() && f.dispatch(&page).is_ok() {
                admitted += 1;
            }
            f.note_link(&url(format!("/{y}/{m:02}/15/story-{back}.html")));
        }
        assert_eq!(admitted, 35 * 12, "1991-01 to 2025-12");
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
