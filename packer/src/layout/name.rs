//! Pack names: where a pack of a (topic, day, cluster) lives and what it is called, the
//! month packs of `harvest compact`, and the writer tokens that keep names unique.
//!
//! # Pack names
//!
//! `{topic}/{yyyy}/{mm}/{dd}/{topic}-{yyyymmdd}-c{cluster}-{created}-{part}-{writer}.warc.gz`
//! ([`PackName`]), e.g. `news/2024/05/01/news-20240501-c3-20240502101112-00000-k7q2mxa4.warc.gz`:
//!
//! - `{topic}` the sanitised topic ([`sanitize_topic`]) and `{yyyymmdd}` the day: the name
//!   repeats its folder, so two packs in different folders never share a file name;
//! - `c{cluster}` the K-means cluster of the (topic, day);
//! - `{created}` when the pack was created (UTC, `yyyymmddhhmmss`);
//! - `{part}` the part of the family, 5 digits or more: one more than the highest part of the
//!   family already in the store when a `Packer` first writes to it, then one more per rollover or
//!   reopening after the pack was closed for room
//!   ([`PackerOptions::max_open_packs`](super::PackerOptions::max_open_packs));
//! - `{writer}` 8 characters (`a-z2-7`, 40 random bits) drawn once per [`Packer`](super::Packer),
//!   so two processes (or two `Packer`s) writing the same family at once make distinct names.
//!
//! Within a folder a name is unique because the store's `create` never overwrites (on
//! `AlreadyExists` the next part is tried); across folders because the name contains its
//! folder. A name never changes once written (no renaming), so a CDXJ `filename` or a replay
//! tool's collection stays valid. Packs written before this scheme are named
//! `{topic}/{yyyy}/{mm}/{dd}/c{cluster}-{part}.warc.gz` ([`legacy_pack_path`]):
//! [`PackName::parse`] reads both, the index keeps each page's pack path as it was written, and
//! a new part follows the highest part of either kind.

use chrono::{Datelike, NaiveDate, NaiveDateTime};

/// File name extension of packs.
pub const PACK_EXTENSION: &str = ".warc.gz";

/// Longest topic segment (in characters) after sanitising.
const MAX_TOPIC_CHARS: usize = 100;
/// Segment used for a topic that sanitises to nothing.
const EMPTY_TOPIC: &str = "_";

/// Characters of a writer token ([`PackName::writer`]).
pub const WRITER_TOKEN_CHARS: usize = 8;
/// Format of the creation time in a pack name (UTC).
const CREATED_FORMAT: &str = "%Y%m%d%H%M%S";
/// Digits a part number is zero-padded to in a pack name (so names list in part order).
const PART_DIGITS: usize = 5;

/// Turns a topic label into one safe path segment: letters and digits (any script), `-` and
/// `_` are kept, everything else becomes `_`; at most 100 characters; never empty.
pub fn sanitize_topic(topic: &str) -> String {
    let cleaned: String = topic
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOPIC_CHARS)
        .collect();
    if cleaned.is_empty() {
        EMPTY_TOPIC.to_string()
    } else {
        cleaned
    }
}

/// Folder of all parts of (topic, date): `{topic}/{yyyy}/{mm}/{dd}`.
pub(super) fn day_dir(topic: &str, date: NaiveDate) -> String {
    format!(
        "{}/{:04}/{:02}/{:02}",
        sanitize_topic(topic),
        date.year(),
        date.month(),
        date.day()
    )
}

/// Who wrote a pack named the current way, and when it was created.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackOrigin {
    /// Creation time (UTC, whole seconds).
    pub created: NaiveDateTime,
    /// The writer token of the [`Packer`](super::Packer) that created it (`a-z2-7`).
    pub writer: String,
}

/// The parts of a pack path (see the module docs for the scheme).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackName {
    /// Sanitised topic (the first path segment).
    pub topic: String,
    /// Day of the pages.
    pub date: NaiveDate,
    /// Cluster within (topic, day).
    pub cluster: u32,
    /// Part within (topic, day, cluster).
    pub part: u32,
    /// `None` for a pack named the old way (`c{cluster}-{part}.warc.gz`).
    pub origin: Option<PackOrigin>,
}

impl PackName {
    /// Store-relative path: `{topic}/{yyyy}/{mm}/{dd}/{file_name}`.
    pub fn path(&self) -> String {
        format!("{}/{}", day_dir(&self.topic, self.date), self.file_name())
    }

    /// The file name alone: unique across folders for a current name.
    pub fn file_name(&self) -> String {
        let (topic, cluster, part) = (sanitize_topic(&self.topic), self.cluster, self.part);
        match &self.origin {
            Some(o) => format!(
                "{topic}-{}-c{cluster}-{}-{part:0width$}-{}{PACK_EXTENSION}",
                self.date.format("%Y%m%d"),
                o.created.format(CREATED_FORMAT),
                o.writer,
                width = PART_DIGITS
            ),
            None => format!("c{cluster}-{part}{PACK_EXTENSION}"),
        }
    }

    /// Reads a pack path named either way. Only the last five segments are read
    /// (`{topic}/{yyyy}/{mm}/{dd}/{file}`), so a path below a prefix parses too. `None` for
    /// anything else (a `.tmp` file, a torn-pack copy, another cluster's digits...).
    pub fn parse(path: &str) -> Option<PackName> {
        let mut segments = path.rsplit('/');
        let file = segments.next()?;
        let day: u32 = digits(segments.next()?, 2)?;
        let month: u32 = digits(segments.next()?, 2)?;
        let year: i32 = digits(segments.next()?, 4)?;
        let topic = segments.next()?;
        if topic.is_empty() || sanitize_topic(topic) != topic {
            return None;
        }
        let date = NaiveDate::from_ymd_opt(year, month, day)?;
        let stem = file.strip_suffix(PACK_EXTENSION)?;
        let name = |cluster, part, origin| PackName {
            topic: topic.to_string(),
            date,
            cluster,
            part,
            origin,
        };
        if let Some(rest) = stem.strip_prefix(&format!("{topic}-{}-c", date.format("%Y%m%d"))) {
            let (cluster, rest) = rest.split_once('-')?;
            let cluster = digits(cluster, 0)?;
            let (part, origin) = origin_fields(rest)?;
            return Some(name(cluster, part, Some(origin)));
        }
        let (cluster, part) = stem.strip_prefix('c')?.split_once('-')?;
        Some(name(digits(cluster, 0)?, digits(part, 0)?, None))
    }
}

/// The name of a pack made by merging a (topic, month)'s packs (`harvest compact`):
/// `{topic}/{yyyy}/{mm}/{topic}-{yyyymm}-{created}-{part}-{writer}.warc.gz`, in the month's
/// folder beside its day folders. It holds whole packs of that month one after the other
/// (each with its own warcinfo first), so it carries no single day or cluster; a `Packer`
/// never writes to it (its families live in the day folders). [`PackName::parse`] does not
/// read it (the month folder is no day folder); [`MonthPackName::parse`] does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MonthPackName {
    /// Sanitised topic (the first path segment).
    pub topic: String,
    /// Year of the month.
    pub year: i32,
    /// Month (1..=12).
    pub month: u32,
    /// Part: distinguishes the packs one writer makes for a month.
    pub part: u32,
    /// Creation time and writer token, as in [`PackOrigin`].
    pub origin: PackOrigin,
}

impl MonthPackName {
    /// Store-relative path: `{topic}/{yyyy}/{mm}/{file_name}`.
    pub fn path(&self) -> String {
        format!(
            "{}/{:04}/{:02}/{}",
            sanitize_topic(&self.topic),
            self.year,
            self.month,
            self.file_name()
        )
    }

    /// The file name alone (unique across folders: it repeats topic and month).
    pub fn file_name(&self) -> String {
        format!(
            "{}-{:04}{:02}-{}-{:0width$}-{}{PACK_EXTENSION}",
            sanitize_topic(&self.topic),
            self.year,
            self.month,
            self.origin.created.format(CREATED_FORMAT),
            self.part,
            self.origin.writer,
            width = PART_DIGITS
        )
    }

    /// Reads a month pack path (only the last four segments are read, so a path below a
    /// prefix parses too). `None` for anything else (day packs included).
    pub fn parse(path: &str) -> Option<MonthPackName> {
        let mut segments = path.rsplit('/');
        let file = segments.next()?;
        let month: u32 = digits(segments.next()?, 2)?;
        let year: i32 = digits(segments.next()?, 4)?;
        let topic = segments.next()?;
        if topic.is_empty() || sanitize_topic(topic) != topic || !(1..=12).contains(&month) {
            return None;
        }
        let stem = file.strip_suffix(PACK_EXTENSION)?;
        let rest = stem.strip_prefix(&format!("{topic}-{year:04}{month:02}-"))?;
        let (part, origin) = origin_fields(rest)?;
        Some(MonthPackName {
            topic: topic.to_string(),
            year,
            month,
            part,
            origin,
        })
    }
}

/// The last fields of a pack name, `{created}-{part}-{writer}`: the part and the origin.
fn origin_fields(rest: &str) -> Option<(u32, PackOrigin)> {
    let mut fields = rest.split('-');
    let created = fields.next()?;
    if created.len() != 14 || !created.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let created = NaiveDateTime::parse_from_str(created, CREATED_FORMAT).ok()?;
    let part_field = fields.next()?;
    if part_field.len() < PART_DIGITS {
        return None;
    }
    let part = digits(part_field, 0)?;
    let writer = fields.next()?;
    if writer.is_empty()
        || !writer
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        || fields.next().is_some()
    {
        return None;
    }
    Some((
        part,
        PackOrigin {
            created,
            writer: writer.to_string(),
        },
    ))
}

/// `text` as a number if it is all ASCII digits (and exactly `len` of them, unless 0).
fn digits<T: std::str::FromStr>(text: &str, len: usize) -> Option<T> {
    if text.is_empty()
        || (len > 0 && text.len() != len)
        || !text.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    text.parse().ok()
}

/// Path of a pack named the current way (see the module docs).
pub fn pack_path(
    topic: &str,
    date: NaiveDate,
    cluster: u32,
    part: u32,
    origin: PackOrigin,
) -> String {
    PackName {
        topic: sanitize_topic(topic),
        date,
        cluster,
        part,
        origin: Some(origin),
    }
    .path()
}

/// Path of a pack named the old way, `{topic}/{yyyy}/{mm}/{dd}/c{cluster}-{part}.warc.gz` (packs
/// written before unique names; tests make such archives with it).
pub fn legacy_pack_path(topic: &str, date: NaiveDate, cluster: u32, part: u32) -> String {
    PackName {
        topic: sanitize_topic(topic),
        date,
        cluster,
        part,
        origin: None,
    }
    .path()
}

/// A fresh writer token: 40 random bits (UUID v4) as 8 lower-case base32 characters.
pub fn new_writer_token() -> String {
    let id = uuid::Uuid::new_v4();
    let token = data_encoding::BASE32_NOPAD
        .encode(&id.as_bytes()[..5])
        .to_ascii_lowercase();
    debug_assert_eq!(token.len(), WRITER_TOKEN_CHARS);
    token
}
