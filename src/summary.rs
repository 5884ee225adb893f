//! What a crawl, a job run or an import did: the counts printed at its end, kept
//! in the run's record and reported to `/metrics` as it goes.

use std::collections::BTreeMap;

/// What a crawl did, printed at its end.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct IngestSummary {
    /// Pages fetched with a 2xx HTML answer and stored.
    pub pages: u64,
    /// Of those: URLs captured for the first time.
    #[serde(default)]
    pub new: u64,
    /// Of those: URLs captured before whose payload changed (new response
    /// record, index row updated).
    #[serde(default)]
    pub changed: u64,
    /// Of those: URLs captured before with the same payload (a revisit
    /// record, no new index row).
    #[serde(default)]
    pub unchanged: u64,
    /// Pages whose payload was seen before: stored as `revisit` records.
    pub duplicates: u64,
    /// Pages within `[dedup] distance` bits of an earlier page's SimHash:
    /// linked to the first page of that story (`near_duplicate_of`).
    #[serde(default)]
    pub near_duplicates: u64,
    /// Answers 304 Not Modified.
    pub not_modified: u64,
    /// A crashed run taken up: records it had packed but not yet indexed,
    /// indexed from its packs.
    pub taken_up_indexed: u64,
    /// A crashed run taken up: queued URLs it had archived, not fetched
    /// again (their links queued from the stored copy).
    pub taken_up_not_fetched: u64,
    /// Payload bytes fetched.
    pub bytes: u64,
    /// Bytes written into packs (compressed records).
    pub pack_bytes: u64,
    /// Distinct packs written to.
    pub packs: u64,
    /// Sitemap and feed documents read.
    pub discovery_documents: u64,
    /// URLs listed by those sitemaps and feeds.
    pub discovered_urls: u64,
    /// Cluster centres created or moved (rows written to `clusters`).
    pub clusters_updated: u64,
    /// Pages nested deeper than `[crawl] max_html_depth`: parsed with the
    /// deeper tags flattened (stored as fetched).
    pub pages_flattened: u64,
    /// Pages whose parse stopped at `[crawl] parse_cpu_ms` (stored as fetched).
    pub pages_parse_truncated: u64,
    /// Pages with more links than `[crawl] max_links_per_page`.
    pub pages_links_capped: u64,
    /// Links not taken from those pages.
    pub links_dropped: u64,
    /// Pages whose text has more words than the text index takes
    /// ([`indexer::text::MAX_TEXT_TOKENS`]): their first words are searchable.
    pub pages_text_cut: u64,
    /// Words of those pages' texts past the limit, not searchable.
    pub text_words_dropped: u64,
    /// URLs longer than `[crawl] max_url_length`: links dropped from pages
    /// and discovered URLs refused when queued.
    pub urls_too_long: u64,
    /// Discovered URLs not queued, by reason (`url_too_long`,
    /// `repeated_segments`, `host_limit`, `private_address`, ...).
    pub refused: BTreeMap<String, u64>,
    /// Redirect (3xx) and error (4xx, 5xx) answers archived as `response`
    /// records (with the page a redirect led to, or on their own).
    pub answers: u64,
    /// Embedded resources archived with their pages (`[crawl] images`,
    /// `requisites`): response or revisit records, not index rows.
    pub embeds: u64,
    /// Of those, payloads seen before (revisit records).
    pub embed_duplicates: u64,
    /// Payload bytes of the embeds.
    pub embed_bytes: u64,
    /// Images among the embeds with their perceptual hashes filed.
    pub images_hashed: u64,
    /// Embeds not fetched, by reason.
    pub embed_failures: BTreeMap<String, u64>,
    /// Seconds spent classifying pages (one core).
    pub classify_secs: f64,
    /// Seconds the storage thread spent on each step of its batches.
    pub storage: StorageTimes,
    pub topics: BTreeMap<String, u64>,
    pub failures: BTreeMap<String, u64>,
    pub elapsed_secs: f64,
}

impl IngestSummary {
    pub fn failures_total(&self) -> u64 {
        self.failures.values().sum()
    }

    /// Adds what the page budgets and the trap limits of a crawl did.
    pub fn add_limits(&mut self, c: &crawler::CrawlSummary) {
        self.pages_flattened += c.pages_flattened;
        self.pages_parse_truncated += c.pages_parse_truncated;
        self.pages_links_capped += c.pages_links_capped;
        self.links_dropped += c.links_dropped;
        let refused_long = c
            .refused
            .get(crawler::guard::Refusal::UrlTooLong.label())
            .copied()
            .unwrap_or(0);
        self.urls_too_long += c.long_links + refused_long;
        for (k, n) in &c.refused {
            *self.refused.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &c.embed_failures {
            *self.embed_failures.entry(k.clone()).or_default() += n;
        }
    }

    /// The human summary printed after a crawl.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let secs = self.elapsed_secs.max(1e-9);
        out.push_str(&format!(
            "pages stored   {:>8}   ({:.1} pages/s)\n",
            self.pages,
            self.pages as f64 / secs
        ));
        out.push_str(&format!(
            "bytes fetched  {:>8}   ({:.2} MB/s)\n",
            self.bytes,
            self.bytes as f64 / secs / 1e6
        ));
        out.push_str(&format!(
            "  new {}, changed {}, unchanged {}\n",
            self.new, self.changed, self.unchanged
        ));
        out.push_str(&format!("pack bytes     {:>8}\n", self.pack_bytes));
        out.push_str(&format!("packs          {:>8}\n", self.packs));
        out.push_str(&format!(
            "duplicates     {:>8}   (revisit records, bytes not stored twice)\n",
            self.duplicates
        ));
        out.push_str(&format!(
            "near-dups      {:>8}   (reposts linked to the first page of their story)\n",
            self.near_duplicates
        ));
        out.push_str(&format!(
            "not modified   {:>8}   (304: revisit records, links followed from the stored copy)\n",
            self.not_modified
        ));
        if self.taken_up_indexed + self.taken_up_not_fetched > 0 {
            out.push_str(&format!(
                "taken up       {:>8}   (records of the crashed run indexed from its packs; {} URLs it had archived not fetched again)\n",
                self.taken_up_indexed, self.taken_up_not_fetched
            ));
        }
        if self.answers > 0 {
            out.push_str(&format!(
                "answers        {:>8}   (redirects and error answers archived)\n",
                self.answers
            ));
        }
        if self.embeds > 0 || !self.embed_failures.is_empty() {
            out.push_str(&format!(
                "embeds         {:>8}   ({} bytes, {} seen before, {} images hashed; {} not fetched)\n",
                self.embeds,
                self.embed_bytes,
                self.embed_duplicates,
                self.images_hashed,
                self.embed_failures.values().sum::<u64>()
            ));
            for (why, n) in &self.embed_failures {
                out.push_str(&format!("  {why:<20}{n:>6}\n"));
            }
        }
        if self.discovery_documents > 0 {
            out.push_str(&format!(
                "sitemaps/feeds {:>8}   ({} URLs listed)\n",
                self.discovery_documents, self.discovered_urls
            ));
        }
        if self.pages_flattened + self.pages_parse_truncated + self.pages_links_capped > 0
            || self.urls_too_long > 0
        {
            out.push_str(&format!(
                "page limits    {:>8}   flattened, {} parse cut, {} over the link cap ({} links dropped), {} URLs too long\n",
                self.pages_flattened,
                self.pages_parse_truncated,
                self.pages_links_capped,
                self.links_dropped,
                self.urls_too_long
            ));
        }
        if self.pages_text_cut > 0 {
            out.push_str(&format!(
                "text index cut {:>8}   pages over {} words ({} words not searchable)\n",
                self.pages_text_cut,
                indexer::text::MAX_TEXT_TOKENS,
                self.text_words_dropped
            ));
        }
        out.push_str(&format!("failures       {:>8}\n", self.failures_total()));
        for (kind, n) in &self.failures {
            out.push_str(&format!("  {kind:<20}{n:>6}\n"));
        }
        out.push_str("topics\n");
        for (topic, n) in &self.topics {
            out.push_str(&format!("  {topic:<20}{n:>6}\n"));
        }
        out.push_str(&format!("time           {:>8.2} s\n", self.elapsed_secs));
        out
    }
}

/// Seconds the storage thread spent on each step of a run's batches (the
/// steps of [`crate::ingest::Ingest::store_records`]): where a slow backend shows.
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StorageTimes {
    /// Reading the batch's URL states and known digests.
    pub lookup_secs: f64,
    /// Placing the pages into K-means clusters.
    pub placement_secs: f64,
    /// Appending records to packs (304 revisits and embeds included).
    pub write_secs: f64,
    /// Making the packs durable (fsync, hsync).
    pub sync_secs: f64,
    /// Reading and deciding the batch's index rows, and waiting for the
    /// last batch's to be applied.
    pub index_secs: f64,
    /// Applying the index rows (on their own thread in a crawl, beside the
    /// next batch's steps: not part of the storage thread's time there).
    pub apply_secs: f64,
    /// Batches stored.
    pub batches: u64,
}
