//! The word lists and meta keys the media and author rules match against, as
//! data: the meta keys that name a media, a site or an author, and the lists
//! of sources, agencies, credits and words that are no names or outlets.

use std::sync::LazyLock;

use crate::lists::{self, List};

/// Meta keys naming the originating media, by priority.
pub const MEDIA_META_KEYS: [&str; 6] = [
    "source",
    // TRS, the CMS of many Chinese government and press sites.
    "contentsource",
    "article:source",
    "og:article:source",
    "mediaid",
    "dc.source",
];

/// Meta keys naming the site (`og:site_name` is also asked before JSON-LD publisher).
pub const SITE_META_KEYS: [&str; 4] = [
    "og:site_name",
    "application-name",
    "publisher",
    "dc.publisher",
];

/// Meta keys naming the author, by priority.
pub const AUTHOR_META_KEYS: [&str; 8] = [
    "author",
    "article:author",
    "og:article:author",
    "dc.creator",
    "parsely-author",
    "sailthru.author",
    "byl",
    "citation_author",
];

/// Words a source label names that are no outlet: `Source: News agencies`,
/// `Source: Agencies`, `Source: Staff`.
/// Photo credits too: `Source: Supplied`, `Handout`, `File`.
pub(super) static GENERIC_SOURCES: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/generic_sources.txt")));

/// Forum and CMS software that signs the `author` meta of every page it
/// serves.
pub(super) static SOFTWARE_CREDITS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/software_credits.txt")));

/// Words an outlet adds to its name in some places and not in others (`Al
/// Jazeera News` beside `Al Jazeera`, `BBC News` beside `BBC`): the name
/// without them is the same outlet.
pub(super) static NAME_EXTENSIONS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/name_extensions.txt")));

/// The news agencies that file stories other outlets run under their name:
/// an author who is one of them is the story's source.
pub(super) static WIRE_AGENCIES: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/wire_agencies.txt")));

/// Words that end a list of names: the roles and labels that follow a byline
/// (`作者：王希 编辑 李明`, `记者 王希 摄影 张三`).
pub(super) static NOT_NAMES: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/not_names.txt")));

/// Endings of a desk or an outlet in a byline's place (`國際中心`, `中央社`).
pub(super) const NOT_REPORTERS: [&str; 10] =
    ["中心", "组", "組", "社", "部", "台", "网", "报", "室", "处"];

/// Capitalised words that open a sentence, not words of an outlet's name:
/// a Latin name ([`super::patterns::RE_MEDIA_LABEL`] runs over capitalised words) ends before
/// one (`Source: Gov.UK However, Sir James added`).
pub(super) static SENTENCE_OPENERS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/sentence_openers.txt")));

/// Link shorteners: a host of theirs in a credit is a link to follow, not the
/// outlet (`Source: bit.ly`, `via t.co`).
pub(super) static LINK_SHORTENERS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/link_shorteners.txt")));

/// Words beside the date on a portal's byline line that name no outlet.
pub(super) static NOT_OUTLETS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/not_outlets.txt")));

/// Follow buttons: what a self-media platform (Toutiao, Baijiahao, Sohu,
/// NetEase, ifeng, The Paper's accounts, Weibo) prints beside the account
/// that published the article.
pub(super) const FOLLOW_BUTTONS: [&str; 6] =
    ["关注", "+关注", "＋关注", "+ 关注", "加关注", "订阅"];

/// The places a Chinese platform shows as a post's IP location (its
/// province-level region, or abroad).
pub(super) static IP_PLACES: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/ip_places.txt")));

/// Who `本报记者`, `本台记者` and the like write for: the page's own outlet,
/// not named.
pub(super) static SELF_OUTLETS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/self_outlets.txt")));
