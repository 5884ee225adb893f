//! Near-duplicate pages (reposts of one story) found by the Hamming distance of
//! their 64-bit SimHash fingerprints, kept in two tables so that it works on
//! every [`crate::TableStore`] backend:
//!
//! - `simhash`: the multi-index of Manku, Jain and Das Sarma (WWW 2007). A
//!   fingerprint is cut into [`BLOCKS`] blocks of 16 bits; two fingerprints
//!   within 3 bits agree exactly on at least one block (pigeonhole), so a
//!   fingerprint is filed under each of its blocks and a lookup reads the
//!   [`BLOCKS`] rows of its own block values. Row key `[block number
//!   u8][block value u16 BE]` (4 buckets: the block number is the bucket),
//!   one cell per page: qualifier `[fingerprint u64 BE][url-hash 8B]`, then
//!   the fingerprint's recipe `[version u32 BE]` when the page records one
//!   ([`PageRecord::simhash_version`]), value = the page's story root `[root
//!   key time, 8B ordered][root url]`. Fingerprints of two recorded recipes
//!   are never compared; an unrecorded one (written before versions were
//!   kept) is compared with every version, as it was. A
//!   distance `k` of 4..=7 ([`MAX_DISTANCE`]) is served by the same rows:
//!   within 7 bits one block differs by at most one bit, so the lookup also
//!   reads the 16 one-bit neighbours of each block value (68 rows).
//! - `stories`: every page of a story, row key = the root's url-hash, one
//!   cell per copy: qualifier `[key time 8B ordered][url-hash 8B]`, value =
//!   JSON [`StoryCopy`]. The copies of a story are one row read; a page's copy
//!   count is that row's cell count.
//!
//! A page's story root is the earliest archived page of its group: a new page
//! within `k` of earlier pages joins the story of the one whose root has the
//! earliest key time (ties: URL); a page within `k` of none starts a story.
//! Roots never move afterwards (an original crawled after its reposts stays a
//! copy of the first one archived). Entries of the page's own URL (an earlier
//! version of a changed page) are never matches.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::Index;
use crate::keys::{url_hash, URL_HASH_LEN};
use crate::record::{decode_time, encode_time, PageRecord, FAMILY_ATTRS};
use crate::store::{Cell, Row};

use super::pages::PageId;
pub use super::{BLOCKS, SIMHASH_TABLE, STORIES_TABLE};

/// Default largest Hamming distance of near-duplicates.
pub const DEFAULT_DISTANCE: u32 = 3;
/// Largest distance the `simhash` table can answer (one flipped bit per
/// block probed).
pub const MAX_DISTANCE: u32 = 7;

/// Block `i` (0 = most significant 16 bits) of a fingerprint.
#[inline]
pub fn block(fingerprint: u64, i: usize) -> u16 {
    (fingerprint >> (48 - 16 * i)) as u16
}

/// Hamming distance of two fingerprints.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Row keys of the `simhash` table a lookup at distance `k` reads.
fn probe_keys(fingerprint: u64, k: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(if k <= 3 { BLOCKS } else { BLOCKS * 17 });
    for i in 0..BLOCKS {
        let b = block(fingerprint, i);
        out.push(row_key(i, b));
        if k > 3 {
            for bit in 0..16 {
                out.push(row_key(i, b ^ (1 << bit)));
            }
        }
    }
    out
}

fn row_key(i: usize, value: u16) -> Vec<u8> {
    let mut k = Vec::with_capacity(3);
    k.push(i as u8);
    k.extend_from_slice(&value.to_be_bytes());
    k
}

/// The story a page belongs to: its first archived page.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Root {
    time: DateTime<Utc>,
    url: String,
}

impl Root {
    fn encode(&self) -> Vec<u8> {
        let mut v = encode_time(self.time).to_vec();
        v.extend_from_slice(self.url.as_bytes());
        v
    }

    fn decode(v: &[u8]) -> Option<Root> {
        let (t, url) = v.split_first_chunk::<8>()?;
        Some(Root {
            time: decode_time(t)?,
            url: String::from_utf8(url.to_vec()).ok()?,
        })
    }
}

/// One copy of a story, as listed by [`Index::story_copies`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoryCopy {
    /// Page id ([`PageId`] text form).
    pub id: String,
    /// URL of the copy.
    pub url: String,
    /// Title.
    pub title: String,
    /// Source (site group).
    pub source: String,
    /// Media (publisher) named by the page, if any.
    pub media: Option<String>,
    /// Key time: published, else first seen, else fetched.
    pub time: DateTime<Utc>,
    /// When this copy was fetched.
    pub fetched: DateTime<Utc>,
    /// Its fingerprint.
    pub simhash: u64,
    /// Hamming distance to the nearest earlier copy it was matched with when
    /// archived (0 for the story's first page).
    pub distance: u32,
    /// An identical payload of an earlier capture (a `revisit`).
    #[serde(default)]
    pub revisit: bool,
}

/// What [`Index::link_near_duplicates`] did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkSummary {
    /// Pages with a fingerprint, filed in the index.
    pub fingerprinted: u64,
    /// Of those: near-duplicates of an earlier page (`near_duplicate_of` set).
    pub near_duplicates: u64,
}

/// A fingerprint already filed: its page's URL hash and story.
struct Filed {
    fingerprint: u64,
    version: Option<u32>,
    url_hash: [u8; URL_HASH_LEN],
    root: Root,
}

/// Whether fingerprints of recipes `a` and `b` may be compared: the same
/// recipe, or one not on record.
fn comparable(a: Option<u32>, b: Option<u32>) -> bool {
    a.is_none() || b.is_none() || a == b
}

fn qualifier(fingerprint: u64, url_hash: &[u8; URL_HASH_LEN], version: Option<u32>) -> Vec<u8> {
    let mut q = Vec::with_capacity(8 + URL_HASH_LEN + 4);
    q.extend_from_slice(&fingerprint.to_be_bytes());
    q.extend_from_slice(url_hash);
    if let Some(v) = version {
        q.extend_from_slice(&v.to_be_bytes());
    }
    q
}

/// Fingerprint, URL hash and recipe of a `simhash` cell's qualifier.
fn parse_qualifier(q: &[u8]) -> Option<(u64, [u8; URL_HASH_LEN], Option<u32>)> {
    let (f, rest) = q.split_first_chunk::<8>()?;
    let (h, rest) = rest.split_first_chunk::<URL_HASH_LEN>()?;
    let version = match rest.len() {
        0 => None,
        4 => Some(u32::from_be_bytes(rest.try_into().ok()?)),
        _ => return None,
    };
    Some((u64::from_be_bytes(*f), *h, version))
}

fn story_key(root_url: &str) -> Vec<u8> {
    url_hash(root_url).to_vec()
}

/// The root URL of a page's story: the page it nearly duplicates, else itself.
pub fn story_root(page: &PageRecord) -> &str {
    page.near_duplicate_of.as_deref().unwrap_or(&page.url)
}

impl Index {
    /// Finds, for every page of `pages` with a `simhash`, the earlier pages
    /// within `max_distance` bits (in the `simhash` table, and fetched before
    /// it among `pages`), sets its `near_duplicate_of` to the first page of their
    /// story (or clears it: the page starts a story), and files the page in
    /// the `simhash` and `stories` tables. Call it before
    /// [`Index::index_pages`] so that the index entries carry the
    /// near-duplicate flag, and only for pages whose records are durable.
    /// Pages without a fingerprint are left as they are.
    pub fn link_near_duplicates(
        &self,
        pages: &mut [PageRecord],
        max_distance: u32,
    ) -> Result<LinkSummary> {
        if max_distance > MAX_DISTANCE {
            return Err(Error::Invalid(format!(
                "near-duplicate distance {max_distance} is over the maximum {MAX_DISTANCE}"
            )));
        }
        let mut todo: Vec<usize> = (0..pages.len())
            .filter(|&i| pages[i].simhash.is_some())
            .collect();
        // A batch is linked in fetch order, not in the order its pages were
        // handed in: a rebuild from the packs (`harvest reindex`, capture
        // order) then makes the same links as the crawl did.
        todo.sort_by(|&a, &b| {
            (pages[a].fetched, &pages[a].url).cmp(&(pages[b].fetched, &pages[b].url))
        });
        if todo.is_empty() {
            return Ok(LinkSummary::default());
        }
        // One read of every block row the batch needs.
        let mut keys: Vec<Vec<u8>> = todo
            .iter()
            .flat_map(|&i| probe_keys(pages[i].simhash.unwrap_or(0), max_distance))
            .collect();
        keys.sort();
        keys.dedup();
        let rows = self.store.get(SIMHASH_TABLE, &keys, &[FAMILY_ATTRS])?;
        let mut stored: HashMap<Vec<u8>, Vec<Filed>> = HashMap::new();
        for row in rows.into_iter().flatten() {
            let filed = row
                .family(FAMILY_ATTRS)
                .filter_map(|c| {
                    let (fingerprint, url_hash, version) = parse_qualifier(&c.qualifier)?;
                    Some(Filed {
                        fingerprint,
                        version,
                        url_hash,
                        root: Root::decode(&c.value)?,
                    })
                })
                .collect();
            stored.insert(row.key, filed);
        }
        let mut batch: Vec<Filed> = Vec::with_capacity(todo.len());
        let mut summary = LinkSummary::default();
        let mut index_rows: HashMap<Vec<u8>, Row> = HashMap::new();
        let mut story_rows: HashMap<Vec<u8>, Row> = HashMap::new();
        for &i in &todo {
            let page = &mut pages[i];
            let fingerprint = page.simhash.unwrap_or(0);
            let version = page.simhash_version;
            let own = url_hash(&page.url);
            let mut best: Option<Root> = None;
            let mut nearest = u32::MAX;
            let mut consider = |f: &Filed| {
                let d = hamming(f.fingerprint, fingerprint);
                if f.url_hash != own && d <= max_distance && comparable(f.version, version) {
                    nearest = nearest.min(d);
                    if best.as_ref().is_none_or(|b| f.root < *b) {
                        best = Some(f.root.clone());
                    }
                }
            };
            for key in probe_keys(fingerprint, max_distance) {
                for f in stored.get(&key).into_iter().flatten() {
                    consider(f);
                }
            }
            for f in &batch {
                consider(f);
            }
            let root = match best {
                Some(r) => r,
                None => Root {
                    time: page.key_time(),
                    url: page.url.clone(),
                },
            };
            page.near_duplicate_of = (root.url != page.url).then(|| root.url.clone());
            summary.fingerprinted += 1;
            summary.near_duplicates += u64::from(page.near_duplicate_of.is_some());
            let qualifier = qualifier(fingerprint, &own, version);
            let value = root.encode();
            for b in 0..BLOCKS {
                let key = row_key(b, block(fingerprint, b));
                index_rows
                    .entry(key.clone())
                    .or_insert_with(|| Row::new(key))
                    .cells
                    .push(Cell::new(FAMILY_ATTRS, qualifier.clone(), value.clone()));
            }
            let key = self.page_key(page)?;
            let copy = StoryCopy {
                id: PageId {
                    table: key.table,
                    row_key: key.row_key,
                }
                .to_string(),
                url: page.url.clone(),
                title: page.title.clone(),
                source: page.source.clone(),
                media: page.media.clone(),
                time: page.key_time(),
                fetched: page.fetched,
                simhash: fingerprint,
                distance: if nearest == u32::MAX { 0 } else { nearest },
                revisit: page.revisit,
            };
            let skey = story_key(&root.url);
            let mut cq = encode_time(copy.time).to_vec();
            cq.extend_from_slice(&own);
            story_rows
                .entry(skey.clone())
                .or_insert_with(|| Row::new(skey))
                .cells
                .push(Cell::new(FAMILY_ATTRS, cq, serde_json::to_vec(&copy)?));
            batch.push(Filed {
                fingerprint,
                version,
                url_hash: own,
                root,
            });
        }
        let index_rows: Vec<Row> = index_rows.into_values().collect();
        self.store.put(SIMHASH_TABLE, &index_rows)?;
        let story_rows: Vec<Row> = story_rows.into_values().collect();
        self.store.put(STORIES_TABLE, &story_rows)?;
        Ok(summary)
    }

    /// Every recorded copy of the story `page` belongs to (the page itself
    /// included), oldest key time first. Empty when the page has no
    /// fingerprint on record.
    pub fn story_copies(&self, page: &PageRecord) -> Result<Vec<StoryCopy>> {
        let root = story_root(page);
        let rows = self
            .store
            .get(STORIES_TABLE, &[story_key(root)], &[FAMILY_ATTRS])?;
        let mut out = Vec::new();
        for row in rows.into_iter().flatten() {
            for c in row.family(FAMILY_ATTRS) {
                let copy: StoryCopy = serde_json::from_slice(&c.value)?;
                out.push(copy);
            }
        }
        out.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.url.cmp(&b.url)));
        Ok(out)
    }

    /// The recorded copies of each story named by its root URL (the URL of
    /// the story's first archived page, [`story_root`]), oldest key time
    /// first; an unknown root gives no copies. One read for all roots.
    pub fn stories(&self, roots: &[&str]) -> Result<Vec<Vec<StoryCopy>>> {
        if roots.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<Vec<u8>> = roots.iter().map(|r| story_key(r)).collect();
        let rows = self.store.get(STORIES_TABLE, &keys, &[FAMILY_ATTRS])?;
        rows.into_iter()
            .map(|row| {
                let mut copies = Vec::new();
                for c in row.iter().flat_map(|r| r.family(FAMILY_ATTRS)) {
                    copies.push(serde_json::from_slice::<StoryCopy>(&c.value)?);
                }
                copies.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.url.cmp(&b.url)));
                Ok(copies)
            })
            .collect()
    }

    /// The number of recorded copies of each page's story (1 for a page
    /// without a fingerprint on record: it is its only copy). One read for
    /// all pages.
    pub fn copy_counts(&self, pages: &[&PageRecord]) -> Result<Vec<u64>> {
        let keys: Vec<Vec<u8>> = pages.iter().map(|p| story_key(story_root(p))).collect();
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.store.get(STORIES_TABLE, &keys, &[FAMILY_ATTRS])?;
        Ok(rows
            .iter()
            .map(|r| {
                r.as_ref()
                    .map_or(1, |r| r.family(FAMILY_ATTRS).count().max(1) as u64)
            })
            .collect())
    }
}

/// Every pair `(i, j)`, `i < j`, of `fingerprints` within `k` bits, found with
/// the multi-index in memory: the fingerprints are cut into `k + 1` blocks
/// (pigeonhole: a pair within `k` agrees on one block), sorted by each block
/// in turn, and only fingerprints sharing a block value are compared. A pair
/// is reported under the first block it agrees on, so once.
pub fn all_pairs(fingerprints: &[u64], k: u32) -> Vec<(u32, u32)> {
    let parts = (k as usize + 1).min(64);
    // (shift, width) of each block, widths as equal as possible.
    let mut blocks = Vec::with_capacity(parts);
    let mut shift = 64usize;
    for p in 0..parts {
        let width = 64 / parts + usize::from(p < 64 % parts);
        shift -= width;
        blocks.push((shift as u32, width as u32));
    }
    let value = |f: u64, (s, w): (u32, u32)| -> u64 {
        if w == 64 {
            f
        } else {
            (f >> s) & ((1u64 << w) - 1)
        }
    };
    let mut pairs = Vec::new();
    let mut order: Vec<(u64, u32)> = Vec::with_capacity(fingerprints.len());
    for (bi, &b) in blocks.iter().enumerate() {
        order.clear();
        order.extend(
            fingerprints
                .iter()
                .enumerate()
                .map(|(i, &f)| (value(f, b), i as u32)),
        );
        order.sort_unstable();
        let mut start = 0;
        while start < order.len() {
            let v = order[start].0;
            let mut end = start + 1;
            while end < order.len() && order[end].0 == v {
                end += 1;
            }
            for x in start..end {
                let (i, fi) = (order[x].1, fingerprints[order[x].1 as usize]);
                for y in &order[x + 1..end] {
                    let (j, fj) = (y.1, fingerprints[y.1 as usize]);
                    if hamming(fi, fj) <= k
                        && blocks[..bi].iter().all(|&e| value(fi, e) != value(fj, e))
                    {
                        pairs.push((i.min(j), i.max(j)));
                    }
                }
            }
            start = end;
        }
    }
    pairs
}

/// Every pair within `k` bits by comparing all pairs (the reference).
pub fn all_pairs_brute_force(fingerprints: &[u64], k: u32) -> Vec<(u32, u32)> {
    let mut pairs = Vec::new();
    for (i, &a) in fingerprints.iter().enumerate() {
        for (j, &b) in fingerprints.iter().enumerate().skip(i + 1) {
            if hamming(a, b) <= k {
                pairs.push((i as u32, j as u32));
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64: a fixed pseudo-random sequence for the tests.
    fn rng(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[test]
    fn all_pairs_equals_brute_force() {
        let mut seed = 7;
        let mut fps: Vec<u64> = (0..3000).map(|_| rng(&mut seed)).collect();
        // Plant near copies at distances 0..=8.
        for i in 0..600 {
            let base = fps[i];
            let mut f = base;
            for _ in 0..(i % 9) {
                f ^= 1 << (rng(&mut seed) % 64);
            }
            fps.push(f);
        }
        for k in [0, 1, 3, 5, 7] {
            let mut fast = all_pairs(&fps, k);
            fast.sort_unstable();
            let before = fast.len();
            fast.dedup();
            assert_eq!(before, fast.len(), "k={k}: a pair reported twice");
            let mut slow = all_pairs_brute_force(&fps, k);
            slow.sort_unstable();
            assert_eq!(fast, slow, "k={k}");
            assert!(!slow.is_empty(), "k={k}: planted pairs");
        }
    }

    #[test]
    fn probes_cover_every_fingerprint_within_k() {
        let mut seed = 11;
        for k in [3u32, 7] {
            for _ in 0..2000 {
                let a = rng(&mut seed);
                let mut b = a;
                let flips = rng(&mut seed) % u64::from(k + 1);
                for _ in 0..flips {
                    b ^= 1 << (rng(&mut seed) % 64);
                }
                let probes = probe_keys(a, k);
                let filed: Vec<Vec<u8>> = (0..BLOCKS).map(|i| row_key(i, block(b, i))).collect();
                assert!(
                    filed.iter().any(|f| probes.contains(f)),
                    "k={k}: {a:016x} vs {b:016x} not probed"
                );
            }
        }
    }

    #[test]
    fn qualifiers_carry_the_recipe_when_the_page_records_one() {
        let h = [7u8; URL_HASH_LEN];
        let legacy = qualifier(42, &h, None);
        assert_eq!(
            legacy.len(),
            8 + URL_HASH_LEN,
            "the layout of rows written before versions"
        );
        assert_eq!(parse_qualifier(&legacy), Some((42, h, None)));
        assert_eq!(
            parse_qualifier(&qualifier(42, &h, Some(2))),
            Some((42, h, Some(2)))
        );
        assert_eq!(parse_qualifier(&legacy[..12]), None);
        assert_eq!(parse_qualifier(&[legacy.as_slice(), &[1]].concat()), None);
        assert!(
            comparable(Some(2), Some(2)) && comparable(None, Some(3)) && comparable(Some(1), None)
        );
        assert!(!comparable(Some(1), Some(2)));
    }

    #[test]
    fn root_round_trips() {
        let r = Root {
            time: DateTime::from_timestamp(1_500_000_000, 0).unwrap(),
            url: "https://news.example.cn/a/1.html".into(),
        };
        assert_eq!(Root::decode(&r.encode()), Some(r));
        assert_eq!(Root::decode(b"short"), None);
    }
}
