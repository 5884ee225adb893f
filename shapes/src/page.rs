//! What the crawler and the extraction crate say to each other about a page: the
//! context its publish time is read in ([`TimeContext`], with the feed's or sitemap's
//! hint and its [`PublishedFrom`]), the budgets it is read under ([`Limits`]) and what
//! they did ([`LimitReport`]), and what it embeds ([`Embed`]).

use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// Where the publish time of a page came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PublishedFrom {
    /// A `<meta>` tag or microdata (`itemprop=datePublished`).
    Meta,
    /// JSON-LD `datePublished`.
    Jsonld,
    /// A `<time>` element.
    Time,
    /// A variable of the page's own scripts (`var ct = "1581517074"` on
    /// WeChat articles, `publish_time: '2019-09-08 11:42:03'`): the data a
    /// page's script renders its date from.
    Script,
    /// Visible text (near the title, labelled, or at the edges of the article).
    Text,
    /// A date in the URL path.
    Url,
    /// A feed entry's publication time (RSS `pubDate`, Atom `published`).
    Feed,
    /// A news sitemap's `publication_date`.
    Sitemap,
    /// The page states no publish time, only when it was modified or updated
    /// (meta, JSON-LD, `<time class="updated">`, an `Updated:` label).
    Modified,
    /// No publish time: the fetch time stands in for it.
    Fetch,
}

impl PublishedFrom {
    /// Every value, in the order of the docs.
    pub const ALL: [PublishedFrom; 10] = [
        Self::Meta,
        Self::Jsonld,
        Self::Time,
        Self::Script,
        Self::Text,
        Self::Url,
        Self::Feed,
        Self::Sitemap,
        Self::Modified,
        Self::Fetch,
    ];

    /// Lower-case name as stored and as filters accept it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Meta => "meta",
            Self::Jsonld => "jsonld",
            Self::Time => "time",
            Self::Script => "script",
            Self::Text => "text",
            Self::Url => "url",
            Self::Feed => "feed",
            Self::Sitemap => "sitemap",
            Self::Modified => "modified",
            Self::Fetch => "fetch",
        }
    }

    /// Parses [`PublishedFrom::as_str`] (case-insensitive).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

impl std::fmt::Display for PublishedFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the time decision knows besides the page.
#[derive(Debug, Clone)]
pub struct TimeContext {
    /// Fetch time: relative times count back from it, later times are rejected.
    pub fetched: DateTime<Utc>,
    /// Configured zone of the job or source for times without an offset.
    pub zone: Option<Tz>,
    /// Publication time from the feed or sitemap that listed the page.
    pub hint: Option<(DateTime<Utc>, PublishedFrom)>,
}

impl Default for TimeContext {
    fn default() -> Self {
        Self {
            fetched: Utc::now(),
            zone: None,
            hint: None,
        }
    }
}

/// Deepest element nesting parsed into a DOM; deeper tags are flattened.
/// Real pages stay far below it (the deepest of the test fixtures and of
/// the demo site is under 40).
pub const DEFAULT_MAX_DEPTH: usize = 256;
/// Most distinct links taken from one page: the sitemaps.org limit of URLs a
/// sitemap (Heritrix keeps 6,000 outlinks a URI, but generated index pages
/// hold more: rust-doc's `core/all.html` links 17,939 items).
pub const DEFAULT_MAX_LINKS: usize = 50_000;
/// Longest absolute URL taken from a page, bytes (the trap limit's default).
pub const DEFAULT_MAX_URL_LENGTH: usize = crate::DEFAULT_MAX_URL_LENGTH;
/// Thread CPU time the DOM parse of one page may use.
pub const DEFAULT_PARSE_CPU: Duration = Duration::from_secs(1);
/// An `href` longer than this many times `max_url_length` is dropped without
/// being resolved (it cannot shrink below the limit but by dot segments).
const RAW_HREF_FACTOR: usize = 4;

/// Budgets of one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting parsed into the DOM. Default 256.
    pub max_depth: usize,
    /// Most distinct links a page. Default 50,000.
    pub max_links: usize,
    /// Longest link URL (bytes, absolute and normalised). Default 2,048.
    pub max_url_length: usize,
    /// Thread CPU time of the DOM parse. Default 1 s.
    pub parse_cpu: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_links: DEFAULT_MAX_LINKS,
            max_url_length: DEFAULT_MAX_URL_LENGTH,
            parse_cpu: DEFAULT_PARSE_CPU,
        }
    }
}

impl Limits {
    /// No budget at all (benchmarks).
    pub fn unlimited() -> Self {
        Limits {
            max_depth: usize::MAX,
            max_links: usize::MAX,
            max_url_length: usize::MAX,
            parse_cpu: Duration::MAX,
        }
    }

    /// Whether an `href` is too long to be worth resolving.
    pub fn raw_href_too_long(&self, href: &str) -> bool {
        href.len() > self.max_url_length.saturating_mul(RAW_HREF_FACTOR)
    }
}

/// What the budgets did to one page (all zero for an ordinary page).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitReport {
    /// Deepest nesting the pre-scan saw (approximate: the parser's own
    /// rules decide the final tree).
    pub depth: usize,
    /// Tags left out of the DOM because they were deeper than
    /// [`Limits::max_depth`] (0: the page was parsed as it is).
    pub flattened_tags: u64,
    /// The parse stopped at [`Limits::parse_cpu`]: attributes come from the
    /// part of the page parsed until then.
    pub parse_truncated: bool,
    /// Links past [`Limits::max_links`] (link elements with an `href`, not
    /// resolved nor de-duplicated).
    pub links_dropped: u64,
    /// Links dropped because their URL was longer than
    /// [`Limits::max_url_length`].
    pub long_links: u64,
}

impl LimitReport {
    /// Whether the markup was flattened or cut.
    pub fn parse_limited(&self) -> bool {
        self.flattened_tags > 0 || self.parse_truncated
    }
}

/// What kind of resource a page embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EmbedKind {
    /// `<img src>` (or a lazy-loading `data-src`/`data-original`), `<video poster>`.
    Image,
    /// `<link rel=stylesheet href>`.
    Stylesheet,
    /// `<script src>`.
    Script,
    /// `<link rel=icon href>` (and its kin).
    Icon,
    /// `<video src>`, `<audio src>`, `<source src>`.
    Media,
    /// `url(...)` of a stylesheet (fonts, backgrounds).
    StyleAsset,
    /// Not embedded: a redirect (3xx) or error (4xx, 5xx) answer of a page
    /// URL, archived as fetched.
    Answer,
}

impl EmbedKind {
    pub fn label(self) -> &'static str {
        match self {
            EmbedKind::Image => "image",
            EmbedKind::Stylesheet => "stylesheet",
            EmbedKind::Script => "script",
            EmbedKind::Icon => "icon",
            EmbedKind::Media => "media",
            EmbedKind::StyleAsset => "style-asset",
            EmbedKind::Answer => "answer",
        }
    }
}

/// A resource a page embeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embed {
    pub url: String,
    pub kind: EmbedKind,
}
