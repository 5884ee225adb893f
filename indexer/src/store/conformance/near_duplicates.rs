//! The near-duplicate check: the `simhash` and `stories` tables on a store,
//! through the index's linking, copies, queries and statistics.

use chrono::TimeZone;

use super::super::api::TableStore;
use super::fixture::check;
use crate::error::Result;
use crate::query::{GroupBy, Interval, Query, StatsQuery, GROUP_COPIES, GROUP_STORIES};
use crate::record::PageRecord;

/// Near-duplicate linking on a store (the `simhash` and `stories` tables):
/// pages within `k` bits of an earlier page get the earliest page of its story
/// (across batches and inside one), the near-duplicate flag in their index
/// entries (`collapse` leaves them out), copy counts and the story's copies;
/// a page is never a near-duplicate of its own URL; distances 4..=7 are
/// found through the one-bit probes; statistics by story agree with the full
/// scan. `tag` names the source and URLs used (unique per call on a shared
/// store); the fingerprints are derived from it. The pages are dated March
/// 1999, before the years other tests on a shared store query.
pub fn near_duplicates(store: std::sync::Arc<dyn TableStore>, tag: &str) -> Result<()> {
    let nd = Stories::new(store, tag)?;
    let first = nd.link_first_batch()?;
    let second = nd.link_second_batch()?;
    nd.never_its_own_url()?;
    nd.identical_fingerprint_of_another_url()?;
    nd.linked_in_fetch_order()?;
    nd.distances_up_to_k()?;
    nd.copies_and_counts(&first, &second)?;
    nd.collapse_leaves_copies_out()?;
    nd.stats_by_story()?;
    nd.recipes_kept_apart()
}

/// A day of March 1999 at an hour.
fn day(d: u32, h: u32) -> chrono::DateTime<chrono::Utc> {
    chrono::Utc
        .with_ymd_and_hms(1999, 3, d, h, 0, 0)
        .single()
        .unwrap_or_default()
}

/// The check's index, the source and URLs its tag names and the fingerprints
/// derived from the tag, shared by its steps.
struct Stories {
    index: crate::Index,
    tag: String,
    source: String,
    // a: first; d: far from everything; b: 2 bits from a; c: 2 bits from b,
    // 4 from a (linked through b); e: 5 bits from a (k = 3: new story).
    a: u64,
    b: u64,
    c: u64,
    e: u64,
    far: u64,
    /// Where the fingerprints of the later steps are derived from.
    base: u64,
}

impl Stories {
    fn new(store: std::sync::Arc<dyn TableStore>, tag: &str) -> Result<Stories> {
        let index = crate::Index::new(store, crate::IndexOptions { buckets: 4 })?;
        let source = format!("nd_{}", tag.replace('-', "_"));
        let base = u64::from_be_bytes(crate::keys::url_hash(tag)) | 1;
        let far = base.rotate_left(32) ^ 0x5555_5555_5555_5555;
        let a = base;
        let b = a ^ 0b11;
        let c = b ^ (0b11 << 40);
        let e = a ^ 0b1_1111 << 20;
        Ok(Stories {
            index,
            tag: tag.to_owned(),
            source,
            a,
            b,
            c,
            e,
            far,
            base,
        })
    }

    fn page(&self, name: &str, fingerprint: Option<u64>, d: u32, h: u32) -> PageRecord {
        let tag = &self.tag;
        PageRecord {
            url: format!("http://{tag}.example/{name}"),
            title: format!("story {name}"),
            published: Some(day(d, h)),
            fetched: day(d, h),
            first_seen: None,
            media: Some(format!("media-{name}")),
            comments: None,
            participants: None,
            keywords: vec!["repost".into()],
            topic: "news".into(),
            topic_score: 0.5,
            cluster: 0,
            pack_path: "news/2019/03/01/c0-0.warc.gz".into(),
            offset: 0,
            length: 100,
            digest: format!("sha1:{name}"),
            record_id: format!("<urn:uuid:{name}>"),
            simhash: fingerprint,
            simhash_version: fingerprint.map(|_| 2),
            near_duplicate_of: Some("stale".into()),
            published_from: Some("meta".into()),
            author: None,
            media_from_host: false,
            outlet: None,
            language: Some("en".into()),
            charset: None,
            status: 200,
            source: self.source.clone(),
            revisit: false,
        }
    }

    fn url(&self, name: &str) -> String {
        let tag = &self.tag;
        format!("http://{tag}.example/{name}")
    }

    /// A first batch: `a` and `d`, two stories, indexed.
    fn link_first_batch(&self) -> Result<Vec<PageRecord>> {
        let mut first = vec![
            self.page("a", Some(self.a), 1, 8),
            self.page("d", Some(self.far), 1, 9),
        ];
        let s = self.index.link_near_duplicates(&mut first, 3)?;
        check(
            s.fingerprinted == 2 && s.near_duplicates == 0,
            "two stories",
        )?;
        check(
            first.iter().all(|p| p.near_duplicate_of.is_none()),
            "first pages are no near-duplicates",
        )?;
        self.index.index_pages(&first)?;
        Ok(first)
    }

    /// A second batch: `b` and `c` join `a`'s story, `x` (no fingerprint)
    /// is left alone; indexed.
    fn link_second_batch(&self) -> Result<Vec<PageRecord>> {
        let url = |name: &str| self.url(name);
        let mut second = vec![
            self.page("b", Some(self.b), 2, 8),
            self.page("c", Some(self.c), 2, 9),
            self.page("x", None, 2, 10),
        ];
        let s = self.index.link_near_duplicates(&mut second, 3)?;
        check(
            s.fingerprinted == 2 && s.near_duplicates == 2,
            "b and c linked",
        )?;
        check(
            second[0].near_duplicate_of.as_deref() == Some(url("a").as_str()),
            "b nearly duplicates a",
        )?;
        check(
            second[1].near_duplicate_of.as_deref() == Some(url("a").as_str()),
            "c (within 3 of b, in the same batch) gets b's story root a",
        )?;
        check(
            second[2].near_duplicate_of.as_deref() == Some("stale"),
            "a page without fingerprint is left alone",
        )?;
        second[2].near_duplicate_of = None;
        self.index.index_pages(&second)?;
        Ok(second)
    }

    /// A new version of a: 1 bit from its own old entry, nothing else near.
    fn never_its_own_url(&self) -> Result<()> {
        let mut again = vec![self.page("a", Some(self.a ^ 1 << 63), 1, 8)];
        self.index.link_near_duplicates(&mut again, 3)?;
        check(
            again[0].near_duplicate_of.as_deref() != Some(self.url("a").as_str()),
            "a page is never a near-duplicate of its own URL",
        )
    }

    fn identical_fingerprint_of_another_url(&self) -> Result<()> {
        let k3 = vec![self.page("e", Some(self.e), 3, 8)];
        self.index.link_near_duplicates(&mut k3.clone(), 3)?;
        check(
            {
                let mut t = k3.clone();
                t[0].url = self.url("e3");
                self.index.link_near_duplicates(&mut t, 3)?;
                t[0].near_duplicate_of.as_deref() == Some(self.url("e").as_str())
            },
            "an identical fingerprint of another URL is a near-duplicate",
        )
    }

    /// Two copies handed in later-fetched first: linked in fetch order, as a
    /// rebuild from the packs (capture order) would link them.
    fn linked_in_fetch_order(&self) -> Result<()> {
        let q = self.base.rotate_left(16) ^ 0x0f0f_3c3c_0f0f_3c3c;
        let mut pair = vec![
            self.page("q2", Some(q), 4, 10),
            self.page("q1", Some(q), 4, 9),
        ];
        self.index.link_near_duplicates(&mut pair, 3)?;
        check(
            pair[1].near_duplicate_of.is_none()
                && pair[0].near_duplicate_of.as_deref() == Some(self.url("q1").as_str()),
            "a batch is linked in fetch order, not in the order handed in",
        )
    }

    /// Distances 4..=7 through the one-bit probes, and no further than `k`.
    fn distances_up_to_k(&self) -> Result<()> {
        let a = self.a;
        let mut far_k = vec![self.page("f", Some(a ^ 0b111_1111 << 10), 3, 9)];
        self.index.link_near_duplicates(&mut far_k, 7)?;
        check(
            far_k[0].near_duplicate_of.as_deref() == Some(self.url("a").as_str()),
            "7 bits away is found with k = 7",
        )?;
        let mut g = vec![self.page("g", Some(a ^ 0b111_1111 << 30), 3, 10)];
        self.index.link_near_duplicates(&mut g, 3)?;
        check(
            g[0].near_duplicate_of.is_none(),
            "7 bits away is not within 3",
        )?;
        check(
            self.index.link_near_duplicates(&mut g, 8).is_err(),
            "k over the maximum is refused",
        )
    }

    /// Copies and counts.
    fn copies_and_counts(&self, first: &[PageRecord], second: &[PageRecord]) -> Result<()> {
        let url = |name: &str| self.url(name);
        let copies = self.index.story_copies(&second[1])?;
        let names: Vec<&str> = copies.iter().map(|c| c.url.as_str()).collect();
        check(
            names.first() == Some(&url("a").as_str())
                && names.contains(&url("b").as_str())
                && names.contains(&url("c").as_str())
                && names.contains(&url("f").as_str()),
            "the story's copies: a, b, c, f",
        )?;
        check(
            copies.iter().any(|c| {
                c.url == url("b")
                    && c.media.as_deref() == Some("media-b")
                    && c.source == self.source
                    && c.distance == 2
            }),
            "a copy lists source, media and distance",
        )?;
        let counts = self
            .index
            .copy_counts(&[&first[0], &first[1], &second[0], &second[2]])?;
        check(counts[1] == 1 && counts[3] == 1, "a lone page is one copy")?;
        check(
            counts[0] == counts[2] && counts[0] >= 4,
            "a and b count the same story",
        )
    }

    /// Queries: collapse leaves the near-duplicates out.
    fn collapse_leaves_copies_out(&self) -> Result<()> {
        let url = |name: &str| self.url(name);
        let mut q = Query::new(&[self.source.as_str()], day(1, 0), day(4, 0));
        let all = self.index.search(&q)?;
        check(all.len() == 5, "five indexed pages")?;
        q.collapse_near_duplicates = true;
        let collapsed: Vec<String> = self
            .index
            .search(&q)?
            .into_iter()
            .map(|h| h.page.url)
            .collect();
        check(
            collapsed == [url("a"), url("d"), url("x")],
            "collapse keeps a, d and x",
        )?;
        let full: Vec<String> = self
            .index
            .full_scan_search(&q)?
            .into_iter()
            .map(|h| h.page.url)
            .collect();
        check(full == collapsed, "collapse == full scan")
    }

    /// Statistics by story: day 1 a, d (2 stories); day 2 b, c (story a), x.
    fn stats_by_story(&self) -> Result<()> {
        let sq = StatsQuery::new(
            Query::new(&[self.source.as_str()], day(1, 0), day(4, 0)),
            Interval::Day,
            Some(GroupBy::Story),
        );
        let rows = self.index.stats(&sq)?;
        let get = |bucket: &str, g: &str| {
            rows.iter()
                .find(|r| r.bucket == bucket && r.group.as_deref() == Some(g))
                .map_or(0, |r| r.count)
        };
        check(
            get("1999-03-01", GROUP_STORIES) == 2 && get("1999-03-01", GROUP_COPIES) == 2,
            "day 1: 2 stories, 2 copies",
        )?;
        check(
            get("1999-03-02", GROUP_STORIES) == 2 && get("1999-03-02", GROUP_COPIES) == 3,
            "day 2: 2 stories (a's, x), 3 copies",
        )?;
        check(
            self.index.full_scan_stats(&sq)? == rows,
            "story stats == full scan",
        )
    }

    /// Recipes: the pages above are of version 2. A fingerprint of another
    /// recipe is never compared with them, even when equal; one not on
    /// record (a row from before versions were kept) still is.
    fn recipes_kept_apart(&self) -> Result<()> {
        let far = self.far;
        let mut v3 = vec![self.page("v3", Some(far), 4, 8)];
        v3[0].simhash_version = Some(3);
        self.index.link_near_duplicates(&mut v3, 3)?;
        check(
            v3[0].near_duplicate_of.is_none(),
            "an equal fingerprint of another recipe is no near-duplicate",
        )?;
        let mut v3b = vec![self.page("v3b", Some(far ^ 1), 4, 9)];
        v3b[0].simhash_version = Some(3);
        self.index.link_near_duplicates(&mut v3b, 3)?;
        check(
            v3b[0].near_duplicate_of.as_deref() == Some(self.url("v3").as_str()),
            "fingerprints of one recipe are compared (v3b nearly duplicates v3)",
        )?;
        let mut legacy = vec![self.page("old", Some(far ^ 1 << 40), 4, 10)];
        legacy[0].simhash_version = None;
        self.index.link_near_duplicates(&mut legacy, 3)?;
        check(
            legacy[0].near_duplicate_of.as_deref() == Some(self.url("d").as_str()),
            "an unrecorded recipe is compared with every one (the earliest root, d)",
        )
    }
}
