//! Analysis of a fetched page or embed, before storage: charset, attributes,
//! topic, fingerprints; runs on the crawl side, several pages at once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crawler::{FetchedPage, PageLinks, PageReader};
use extract::{Extracted, Limits, TimeContext};
use indexer::Index;
use packer::warc::{self, EncodedRecord, ResponseInput};
use packer::{AttributeEncoder, PackLocation, PageAttributes};

use crate::config::Config;

use super::records::request_record;

/// Topic of pages when no model is available.
pub const UNCLASSIFIED: &str = "unclassified";

/// Characters of a page's main text given to the classifier (after its title).
pub const CLASSIFY_CHARS: usize = 20_000;

/// An embedded resource with its digest and, for an image, its hashes.
pub struct AnalysedEmbed {
    pub(crate) embed: crawler::FetchedEmbed,
    pub(crate) digest: String,
    pub(crate) image: Option<classifier::imagehash::ImageHashes>,
    pub(crate) stored: Option<Stored>,
}

/// A page with the work on it that needs no store ([`PageAnalysis`]).
pub struct Analysed {
    pub(crate) page: Page,
    /// Set when the page's record is already in a pack (reindex, fsck
    /// repair): it is indexed where it lies instead of written again.
    pub(crate) stored: Option<Stored>,
    pub(crate) work: PageAnalysis,
}

/// The per-page work that needs no store: source, topic, payload digest,
/// the response record (compressed) and the attribute vector. Done by
/// [`Analyser::analyse`] as pages arrive, several at a time (in a crawl, by
/// the crawler's task that decoded the page: the [`Analyser`] is the crawl's
/// reader), so the storage thread is left with what must be serial.
pub(crate) struct PageAnalysis {
    pub(crate) source: String,
    pub(crate) topic: String,
    pub(crate) topic_score: f32,
    pub(crate) digest: String,
    /// The page's record if it is new (unused when it turns out a revisit).
    pub(crate) response: EncodedRecord,
    /// The `request` record of the page's capture, concurrent to `response` (encoded again
    /// for a revisit); `None` when the page was not fetched by this crawl.
    pub(crate) request: Option<EncodedRecord>,
    /// The page's K-means attribute vector.
    pub(crate) vector: Vec<f32>,
    /// [`fingerprint`] of the page (when near-duplicates are detected).
    pub(crate) simhash: Option<u64>,
    /// The runs of Chinese characters of the page's main text, for the text index
    /// ([`indexer::TextDoc::han_of`]); the text itself is dropped.
    pub(crate) han: String,
    pub(crate) classify_secs: f64,
    /// Bytes of the page's body (the body itself is dropped once its record
    /// is encoded: a batch holds records, not bodies).
    pub(crate) body_bytes: u64,
}

/// The near-duplicate fingerprint of a page: the SimHash of its article text
/// when the extractor found one, else of its whole visible text
/// ([`extract::Extracted::main_text`]). The site's frame (menus,
/// related headlines, a long notice in an `<aside>` or a `copyright` box)
/// then has no say; a block the extractor counts as part of the article
/// (prose beside it, rust-doc's lists of provided methods) still has.
/// Every path that fingerprints a page (crawl, import, reindex: all through
/// [`Analyser::analyse_stored`]) uses this, so fingerprints stay comparable;
/// `harvest reextract` keeps the stored fingerprint and link.
/// It reads the tokens the extractor segmented the text into
/// ([`extract::Extracted::tokens`]), the classifier's too: the
/// same fingerprint as `classifier::simhash::simhash` of the text.
pub fn fingerprint(extract: &extract::Extracted) -> Option<u64> {
    classifier::simhash::simhash_tokens(&extract.tokens)
}

/// The tokens the topic classifier reads of a page, in order: those of its
/// title, then those of the first [`CLASSIFY_CHARS`] characters of its main
/// text, from the tokens the extractor segmented the text into
/// ([`extract::Extracted::tokens`]; only a line the cut falls in is
/// segmented again). The same tokens as `classifier::tokenize::tokenize` of
/// `"{title}\n{first CLASSIFY_CHARS characters}"`.
pub fn classifier_tokens(x: &extract::Extracted, push: &mut dyn FnMut(&str)) {
    classifier::tokenize::for_each_token(x.title.as_deref().unwrap_or(""), &mut *push);
    x.tokens
        .for_each_in_prefix(x.main_text(), CLASSIFY_CHARS, push);
}

/// A record already in a pack, indexed where it lies (`harvest reindex`,
/// `fsck --repair`): its place decides the topic folder and the cluster,
/// its id is the record id of the row.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Where the record is.
    pub location: PackLocation,
    /// Its `WARC-Record-ID`.
    pub record_id: String,
    /// Topic label of the pack's folder (a model label when one sanitises
    /// to the folder name, else the folder name).
    pub topic: String,
    /// Cluster of the pack (from its file name).
    pub cluster: u32,
}

impl Stored {
    /// The record's id with no bytes: nothing is written for it.
    pub(crate) fn placeholder(&self, digest: &str) -> EncodedRecord {
        EncodedRecord::id_only(self.record_id.clone(), Some(digest.to_string()))
    }
}

/// A page the crawl fetched (or a record held), with its extraction.
pub type Page = FetchedPage<Extracted>;

/// Extracts `page`, whose body decodes to `text`: the page with its extraction, and the
/// links and embeds a crawl follows (taken out of the extraction: no later step reads
/// them).
fn extracted(
    page: FetchedPage<()>,
    url: &url::Url,
    text: &str,
    ctx: &TimeContext,
    limits: &Limits,
) -> (Page, PageLinks) {
    let mut x = extract::extract_limited(text, url, ctx, limits);
    let found = PageLinks {
        links: std::mem::take(&mut x.links),
        embeds: std::mem::take(&mut x.embeds),
        limits: x.limits,
    };
    (page.map(|()| x), found)
}

/// The links and embeds of a page's stored copy.
fn stored_links(text: &str, url: &url::Url, limits: &Limits) -> PageLinks {
    let x = extract::extract_limited(text, url, &TimeContext::default(), limits);
    PageLinks {
        links: x.links,
        embeds: x.embeds,
        limits: x.limits,
    }
}

/// Reads pages with the extraction crate alone: records indexed again or imported,
/// whose analysis runs after ([`Analyser::analyse_stored`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractOnly;

impl PageReader for ExtractOnly {
    type Read = Extracted;

    fn read(
        &self,
        page: FetchedPage<()>,
        url: &url::Url,
        text: &str,
        ctx: &TimeContext,
        limits: &Limits,
    ) -> (Page, PageLinks) {
        extracted(page, url, text, ctx, limits)
    }

    fn links(&self, text: &str, url: &url::Url, limits: &Limits) -> PageLinks {
        stored_links(text, url, limits)
    }
}

/// What a crawl's reader ([`Analyser`]) makes of a page: its extraction and the work
/// on it, done in the crawler's task that decoded the page, so a page reaches the
/// storage thread without a second task.
pub struct Reading {
    extract: Extracted,
    work: PageAnalysis,
}

impl Analysed {
    /// A crawled page as the storage thread takes it.
    pub fn from_crawl(page: FetchedPage<Reading>) -> Self {
        let (page, work) = page.split(|r| (r.extract, r.work));
        Analysed {
            page,
            stored: None,
            work,
        }
    }
}

impl PageReader for Analyser {
    type Read = Reading;

    fn read(
        &self,
        page: FetchedPage<()>,
        url: &url::Url,
        text: &str,
        ctx: &TimeContext,
        limits: &Limits,
    ) -> (FetchedPage<Reading>, PageLinks) {
        let (mut page, found) = extracted(page, url, text, ctx, limits);
        let work = self.work(&mut page, None);
        (page.map(|extract| Reading { extract, work }), found)
    }

    fn links(&self, text: &str, url: &url::Url, limits: &Limits) -> PageLinks {
        stored_links(text, url, limits)
    }
}

/// Everything [`Analysed`] needs, shareable across threads.
#[derive(Clone)]
pub struct Analyser {
    cfg: Arc<Config>,
    model: Option<Arc<classifier::Model>>,
    encoder: Arc<AttributeEncoder>,
    image_hasher: Arc<classifier::imagehash::ImageHasher>,
    /// On a remote index: page tables made as soon as a page names them.
    tables_ahead: Option<Arc<TablesAhead>>,
    /// Whether the index has a text index (`[index] text`): the one switch the analysis
    /// (Chinese runs) and the ingest (words) both read.
    text: bool,
}

/// Page tables made as soon as an analysed page names one, beside the crawl.
/// A new table takes an HBase master seconds; made by the batch that needs
/// it, the table is waited for by the storage thread (and the crawl behind
/// it). A page is analysed a batch or two before its batch is indexed, and a
/// batch that needs a table still being made waits only for the rest of it.
struct TablesAhead {
    index: Arc<Index>,
    asked: Mutex<HashSet<(String, i32)>>,
}

impl TablesAhead {
    /// Starts making the page table of `source` and `year` unless it was asked for before.
    fn ask(&self, source: &str, year: i32) {
        let Ok(mut asked) = self.asked.lock() else {
            return;
        };
        if !asked.insert((source.to_owned(), year)) {
            return;
        }
        let index = self.index.clone();
        let source = source.to_owned();
        std::thread::spawn(move || {
            if let Err(e) = index.prepare_page_tables(&[&source], year) {
                // The batch that needs the table makes it (or reports why not).
                tracing::debug!(error = %e, source, year, "making a page table ahead");
            }
        });
    }
}

impl Analyser {
    pub(crate) fn new(
        cfg: &Config,
        model: Option<classifier::Model>,
        index: &Arc<Index>,
    ) -> Analyser {
        Analyser {
            cfg: Arc::new(cfg.clone()),
            model: model.map(Arc::new),
            encoder: Arc::new(AttributeEncoder::new(&cfg.packing.kmeans)),
            image_hasher: Arc::new(classifier::imagehash::ImageHasher::new()),
            text: index.text().is_some(),
            tables_ahead: index.store().remote().then(|| {
                Arc::new(TablesAhead {
                    index: index.clone(),
                    asked: Mutex::new(HashSet::new()),
                })
            }),
        }
    }

    fn classify(&self, page: &Page) -> (String, f32) {
        let Some(model) = &self.model else {
            return (UNCLASSIFIED.to_string(), 0.0);
        };
        let p = model.predict_with(|push| classifier_tokens(&page.extract, push));
        (p.topic, p.score)
    }

    /// Digest and, for a decodable raster image, its perceptual hashes.
    pub fn analyse_embed(&self, embed: crawler::FetchedEmbed) -> AnalysedEmbed {
        self.analyse_embed_stored(embed, None)
    }

    /// [`Analyser::analyse_embed`] of an embed whose record is already in a
    /// pack (reindex): indexed where it lies.
    pub fn analyse_embed_stored(
        &self,
        embed: crawler::FetchedEmbed,
        stored: Option<Stored>,
    ) -> AnalysedEmbed {
        let digest = warc::payload_digest(&embed.body);
        let image = (embed.kind != extract::EmbedKind::Answer
            && embed.content_type.starts_with("image/")
            && embed.content_type != "image/svg+xml")
            .then(|| self.image_hasher.hash_bytes(&embed.body).ok())
            .flatten();
        AnalysedEmbed {
            embed,
            digest,
            image,
            stored,
        }
    }

    /// The store-independent work on one page.
    pub fn analyse(&self, page: Page) -> Analysed {
        self.analyse_stored(page, None)
    }

    /// [`Analyser::analyse`] of a page whose record is already in a pack:
    /// the pack's folder keeps its topic (the model's score is kept when it
    /// agrees) and no record is encoded.
    pub fn analyse_stored(&self, mut page: Page, stored: Option<Stored>) -> Analysed {
        let work = self.work(&mut page, stored.as_ref());
        Analysed { page, stored, work }
    }

    /// Classifies, hashes and encodes `page`, then drops its body and texts
    /// (what a batch still needs is the record and the attributes).
    fn work(&self, page: &mut Page, stored: Option<&Stored>) -> PageAnalysis {
        let source = self.cfg.source_for(&page.url);
        // A page with a publish time is keyed by it (one without one by this
        // year, whose tables the crawl made at its start).
        if let (Some(ahead), Some(published)) = (&self.tables_ahead, page.extract.published) {
            ahead.ask(&source, chrono::Datelike::year(&published));
        }
        let t0 = Instant::now();
        let (mut topic, mut topic_score) = self.classify(page);
        let classify_secs = t0.elapsed().as_secs_f64();
        let digest = warc::payload_digest(&page.body);
        let response = match stored {
            Some(s) => {
                if packer::sanitize_topic(&topic) != packer::sanitize_topic(&s.topic) {
                    topic = s.topic.clone();
                    topic_score = 0.0;
                }
                s.placeholder(&digest)
            }
            None => warc::encode_response_with(
                &ResponseInput {
                    target_uri: &page.url,
                    date: page.fetched_at,
                    ip_address: page.ip_address.as_deref(),
                    concurrent_to: None,
                    status_line: &page.status_line,
                    headers: &page.headers,
                    payload: &page.body,
                },
                &digest,
            ),
        };
        let request = match stored {
            Some(_) => None,
            None => request_record(page.request.as_ref(), &page.url, page.fetched_at, &response),
        };
        let x = &page.extract;
        let vector = self.encoder.encode(&PageAttributes {
            media: x.media.as_deref().unwrap_or(""),
            comments: x.comments,
            participants: x.participants,
            keywords: &x.keywords,
        });
        let simhash = self
            .cfg
            .dedup
            .near_duplicates
            .then(|| fingerprint(&page.extract))
            .flatten();
        // The Chinese runs are only for the text index.
        let han = if self.text {
            indexer::TextDoc::han_of(page.extract.main_text())
        } else {
            String::new()
        };
        let body_bytes = page.body.len() as u64;
        page.body = Vec::new();
        page.extract.body_text = String::new();
        page.extract.article_text = String::new();
        // The tokens stay with the page: the text index takes them (a page's tokens are
        // about the size of its text, a batch's far less than its records).
        PageAnalysis {
            source,
            topic,
            topic_score,
            digest,
            response,
            request,
            vector,
            simhash,
            han,
            classify_secs,
            body_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A year named by an analysed page gets its page table made once, on
    /// another thread; a source name the index refuses makes nothing.
    #[test]
    fn tables_ahead_makes_each_named_year_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store: Arc<dyn indexer::TableStore> = Arc::new(
            indexer::EmbeddedStore::open(dir.path()).unwrap_or_else(|e| panic!("open: {e}")),
        );
        let index = Arc::new(
            Index::new(store.clone(), indexer::IndexOptions { buckets: 2 }).expect("index"),
        );
        let ahead = TablesAhead {
            index,
            asked: Mutex::new(HashSet::new()),
        };
        for (source, year) in [("news", 2017), ("news", 2017), ("blogs", 2018)] {
            ahead.ask(source, year);
        }
        ahead.ask("Bad Name", 2017);
        let want = ["blogs_2018", "news_2017"];
        let started = Instant::now();
        loop {
            let tables = store.list_tables().expect("tables");
            if want.iter().all(|t| tables.iter().any(|n| n == t)) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "tables made ahead: {tables:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let asked = ahead.asked.lock().expect("asked");
        assert_eq!(asked.len(), 3, "{asked:?}");
        let tables = store.list_tables().expect("tables");
        assert!(
            !tables.iter().any(|t| t.to_lowercase().contains("bad")),
            "{tables:?}"
        );
    }
}
