//! The decide step: what each capture of a batch is stored as. A page is new, changed or
//! a re-capture of its URL's last payload; a page or an embed whose payload was captured
//! before is stored as a revisit of that first capture, else as a response
//! ([`revisit_or_response`], shared by pages and embeds).

use std::collections::HashMap;

use anyhow::Result;
use indexer::DigestEntry;
use packer::warc::{self, EncodedRecord, RevisitInput};

use crawler::NotModifiedPage;

use super::analyse::{Analysed, Page, PageAnalysis, Stored};
use super::batch::Prepared;
use super::index::both;
use super::records::request_record;
use super::store::Ingest;

impl Ingest {
    /// The decide step: for each page of the batch its previous capture (a re-capture
    /// when the payload is the same) and its record, the response or a revisit of its
    /// payload's first capture.
    pub(super) fn decide(
        &mut self,
        pages: Vec<Analysed>,
        read: &indexer::ReadRows,
    ) -> Result<Vec<Prepared>> {
        let mut out: Vec<Prepared> = Vec::with_capacity(pages.len());
        // Digests first captured inside this batch are not in the table yet.
        let mut batch_digests: HashMap<String, usize> = HashMap::new();
        // The batch's URL states and digest entries, each table read once
        // (a round trip per page and table on HBase otherwise).
        let (mut previous_of, mut earlier_of) = {
            let urls: Vec<&str> = pages.iter().map(|a| a.page.url.as_str()).collect();
            // On a remote store the rows read are kept: the index step
            // reads them again to merge and would otherwise ask twice.
            let remembering;
            let index = if self.index.store().remote() {
                remembering = self.reader().remembering(read);
                &remembering
            } else {
                self.reader()
            };
            let (states, earlier) = both(
                index.store().remote(),
                || index.get_urls(&urls),
                || index.known_digests(pages.iter().map(|a| a.work.digest.as_str())),
            );
            (states?.into_iter(), earlier?)
        };
        for analysed in pages {
            let Analysed {
                page,
                stored,
                work:
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
                    },
            } = analysed;
            self.summary.classify_secs += classify_secs;
            let day = page
                .extract
                .published
                .unwrap_or(page.fetched_at)
                .date_naive();
            // The same URL with the same payload as its last capture: a
            // re-capture. Its revisit record goes into a pack (the capture
            // history), the counts go up, and the page keeps its index row.
            let previous = previous_of.next().flatten();
            let recapture = match &previous {
                Some(prev) => match &prev.digest {
                    Some(d) => *d == digest,
                    None => self
                        .reader()
                        .get_page(&prev.table, &prev.row_key)?
                        .is_some_and(|p| p.digest == digest),
                },
                None => false,
            };
            let earlier = match batch_digests.get(&digest) {
                Some(&i) => Some(out[i].digest_update.clone()),
                None => earlier_of.remove(&digest),
            };
            let response_id = response.record_id.clone();
            let capture = CaptureOf::page(&page);
            let (encoded, digest_update) =
                revisit_or_response(&capture, &digest, &source, stored.as_ref(), earlier, || {
                    response
                });
            let revisit = digest_update.captures > 1;
            // The request was made concurrent to the response; a revisit is another record.
            let request = match request {
                Some(_) if encoded.record_id != response_id => {
                    request_record(page.request.as_ref(), &page.url, page.fetched_at, &encoded)
                }
                other => other,
            };
            batch_digests.insert(digest.clone(), out.len());
            out.push(Prepared {
                page,
                source,
                topic,
                topic_score,
                digest,
                vector,
                simhash,
                han,
                day,
                previous,
                recapture,
                encoded,
                request,
                digest_update,
                revisit,
                stored,
                body_bytes,
            });
        }
        Ok(out)
    }
}

/// The record a capture is stored as, and its payload's digest entry after it: when
/// `earlier` (the payload's entry) names a first capture, a revisit of it (the entry's
/// count up, `source` added to its sources); else the response `response` makes, the
/// payload's first capture. A record already in a pack (`stored`) is indexed where it
/// lies: its placeholder stands for the revisit.
pub(super) fn revisit_or_response(
    capture: &CaptureOf<'_>,
    digest: &str,
    source: &str,
    stored: Option<&Stored>,
    earlier: Option<DigestEntry>,
    response: impl FnOnce() -> EncodedRecord,
) -> (EncodedRecord, DigestEntry) {
    match earlier {
        Some(mut first) => {
            let rec = match stored {
                Some(s) => s.placeholder(digest),
                None => warc::encode_revisit(&RevisitInput {
                    target_uri: capture.url,
                    date: capture.date,
                    status_line: capture.status_line,
                    headers: capture.headers,
                    payload_digest: digest,
                    refers_to: &first.first_record_id,
                    refers_to_target_uri: &first.first_url,
                    refers_to_date: first.first_date,
                }),
            };
            first.captures += 1;
            if !first.sources.iter().any(|s| s == source) {
                first.sources.push(source.to_string());
            }
            (rec, first)
        }
        None => {
            let rec = response();
            let entry = DigestEntry {
                digest: digest.to_string(),
                first_url: capture.url.to_string(),
                first_date: capture.date,
                first_record_id: rec.record_id.clone(),
                first_location: indexer::PackLocation::default(),
                captures: 1,
                sources: vec![source.to_string()],
            };
            (rec, entry)
        }
    }
}

/// What a capture's record and its `captures` row say of the HTTP exchange, for pages,
/// embeds and 304s alike.
pub(super) struct CaptureOf<'a> {
    pub(super) url: &'a str,
    pub(super) date: chrono::DateTime<chrono::Utc>,
    pub(super) status: u16,
    pub(super) status_line: &'a str,
    pub(super) headers: &'a [(String, String)],
}

impl<'a> CaptureOf<'a> {
    pub(super) fn page(page: &'a Page) -> Self {
        CaptureOf {
            url: &page.url,
            date: page.fetched_at,
            status: page.status,
            status_line: &page.status_line,
            headers: &page.headers,
        }
    }

    pub(super) fn embed(e: &'a crawler::FetchedEmbed) -> Self {
        CaptureOf {
            url: &e.url,
            date: e.fetched_at,
            status: e.status,
            status_line: &e.status_line,
            headers: &e.headers,
        }
    }

    pub(super) fn not_modified(nm: &'a NotModifiedPage) -> Self {
        CaptureOf {
            url: &nm.url,
            date: nm.fetched_at,
            status: 304,
            status_line: &nm.status_line,
            headers: &nm.headers,
        }
    }
}
