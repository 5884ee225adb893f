//! The write step: each record of a batch goes into its pack (pages into their cluster's,
//! embeds into their page's, a 304's revisit into the pack of the capture it confirms),
//! the request record right after it; and what each record's index rows will be.

use std::collections::HashMap;

use anyhow::{Context, Result};
use crawler::NotModifiedPage;
use indexer::{DigestEntry, PageRecord, UrlState};
use packer::warc::{self, EncodedRecord, ResponseInput};
use packer::{PackKey, PackLocation};

use super::analyse::UNCLASSIFIED;
use super::analyse::{Page, Stored};
use super::batch::{PagePlace, Pending, Prepared, Written, WrittenEmbeds, MAX_PAGE_PLACES};
use super::decide::{revisit_or_response, CaptureOf};
use super::place::Placement;
use super::records::request_record;
use super::store::Ingest;

impl Ingest {
    /// The write step: each page's record goes into its cluster's pack (the batch's new
    /// packs opened side by side first), then the 304s' revisit records and the embeds'.
    /// Nothing is synced yet.
    pub(super) fn write(
        &mut self,
        prepared: Vec<Prepared>,
        placement: Placement,
        not_modified: Vec<(NotModifiedPage, Option<Stored>)>,
    ) -> Result<Written> {
        // The batch's new packs are opened side by side (on HDFS each is a few NameNode
        // calls); one that fails here is tried again by its first write, which reports it.
        let keys: Vec<PackKey> = prepared
            .iter()
            .zip(&placement.clusters)
            .filter(|(p, _)| p.stored.is_none())
            .map(|(p, &cluster)| PackKey {
                topic: p.topic.clone(),
                date: p.day,
                cluster,
            })
            .collect();
        if let Err(e) = self.packer.open_ahead(&keys) {
            tracing::warn!(error = %e, "opening a batch's packs ahead");
        }
        let mut written = Written {
            pending: Vec::with_capacity(prepared.len()),
            centres: placement.centres,
            ..Written::default()
        };
        for (p, &cluster) in prepared.into_iter().zip(&placement.clusters) {
            let pending = self.write_page(p, cluster, &mut written)?;
            written.pending.push(pending);
        }
        let (states, captures) = self.write_not_modified(not_modified)?;
        written.not_modified_states = states;
        written.not_modified_captures = captures;
        written.embeds = self.write_embeds(&written.first_locations)?;
        Ok(written)
    }

    /// Writes one page's record into its cluster's pack (a record already in a pack
    /// stays where it lies), counts it, and makes its index rows: the page's row (none
    /// for a re-capture), its words, its capture, its URL's state.
    fn write_page(&mut self, mut p: Prepared, cluster: u32, w: &mut Written) -> Result<Pending> {
        let key = PackKey {
            topic: p.topic.clone(),
            date: p.day,
            cluster,
        };
        let loc = match &p.stored {
            Some(s) => s.location.clone(),
            None => self
                .write_capture(&key, &p.encoded, p.request.as_ref())
                .with_context(|| format!("writing the record of {}", p.page.url))?,
        };
        w.cluster_packs
            .insert((p.topic.clone(), p.day, cluster), loc.path.clone());
        if self.page_places.len() >= MAX_PAGE_PLACES {
            self.page_places.clear();
        }
        self.page_places.insert(
            p.page.url.clone(),
            PagePlace {
                key,
                record_id: p.encoded.record_id.clone(),
                source: p.source.clone(),
            },
        );
        settle_first_location(&mut p.digest_update, p.revisit, &loc, &w.first_locations);
        if !p.revisit {
            w.first_locations
                .insert(p.digest.clone(), p.digest_update.first_location.clone());
        }
        let changed = p.previous.is_some() && !p.recapture;
        self.account(p.body_bytes, &p.topic, p.revisit, &loc);
        match (&p.previous, p.recapture) {
            (None, _) => self.summary.new += 1,
            (Some(_), true) => self.summary.unchanged += 1,
            (Some(_), false) => self.summary.changed += 1,
        }
        // The topic moves into the page's row: nothing after this reads it.
        let topic = std::mem::take(&mut p.topic);
        let record = page_row(&p, topic, cluster, &loc);
        let url_state = self.url_state_after(&p, changed);
        if !p.recapture {
            if let Some(prev) = &p.previous {
                let new_key = self.index.page_key(&record)?;
                if !prev.table.is_empty()
                    && (prev.table != new_key.table || prev.row_key != new_key.row_key)
                {
                    w.moved.push(indexer::PageKey {
                        table: prev.table.clone(),
                        row_key: prev.row_key.clone(),
                    });
                }
            }
        }
        let capture = CaptureOf::page(&p.page).row(
            capture_kind(p.revisit),
            Some(p.digest.clone()),
            &p.encoded,
            &loc,
        );
        let text = (!p.recapture && self.index.text().is_some()).then(|| {
            indexer::TextDoc::of(
                &record,
                std::mem::take(&mut p.page.extract.tokens),
                std::mem::take(&mut p.han),
            )
        });
        if let Some(dropped) = text.as_ref().map(|t| t.dropped).filter(|&d| d > 0) {
            self.summary.pages_text_cut += 1;
            self.summary.text_words_dropped += dropped as u64;
        }
        Ok(Pending {
            capture,
            text,
            record: (!p.recapture).then_some(record),
            digest_update: p.digest_update,
            url_state,
        })
    }

    /// The state of a page's URL after this capture: its counts, validators and digest,
    /// and, for an article, when it is fetched next.
    fn url_state_after(&self, p: &Prepared, changed: bool) -> UrlState {
        let captures = p.previous.as_ref().map_or(1, |s| s.captures + 1);
        // A page that states only when it was modified (a section page's
        // `og:updated_time`) is no article: hubs are fetched every run.
        let article = p.page.extract.published.is_some()
            && p.page.extract.published_from != Some(extract::PublishedFrom::Modified)
            && p.page.depth > 0;
        let (next_fetch, interval_secs) = if article {
            self.recrawl.next(
                captures,
                changed,
                p.previous.as_ref().and_then(|s| s.interval_secs),
                p.page.fetched_at,
            )
        } else {
            (None, None)
        };
        UrlState {
            url: p.page.url.clone(),
            last_capture: p.page.fetched_at,
            captures,
            first_capture: p
                .previous
                .as_ref()
                .and_then(|s| s.first_capture)
                .or(Some(p.page.fetched_at)),
            etag: header_value(&p.page.headers, "etag"),
            last_modified: header_value(&p.page.headers, "last-modified"),
            table: p
                .previous
                .as_ref()
                .map(|s| s.table.clone())
                .unwrap_or_default(),
            row_key: p
                .previous
                .as_ref()
                .map(|s| s.row_key.clone())
                .unwrap_or_default(),
            digest: Some(p.digest.clone()),
            next_fetch,
            changes: p.previous.as_ref().map_or(0, |s| s.changes) + u64::from(changed),
            article,
            interval_secs,
        }
    }

    /// Writes the queued embeds into their pages' packs (a response record
    /// linked to the page's record by `WARC-Concurrent-To`, or a revisit of
    /// a payload seen before); returns their captures, digest updates and
    /// image hashes, to index once the packs are synced.
    pub(super) fn write_embeds(
        &mut self,
        batch_firsts: &HashMap<String, PackLocation>,
    ) -> Result<WrittenEmbeds> {
        let mut out = WrittenEmbeds::default();
        let embeds = std::mem::take(&mut self.embeds);
        // Digests seen before this batch, read in one call; then the
        // batch's own first captures.
        let mut seen = self
            .reader()
            .known_digests(embeds.iter().map(|a| a.digest.as_str()))?;
        for a in embeds {
            let e = &a.embed;
            let place = match self.page_places.get(&e.page_url) {
                Some(p) => p.clone(),
                None => self.place_of_indexed_page(&e.page_url, e.fetched_at)?,
            };
            let earlier = seen.get(&a.digest).cloned();
            let capture = CaptureOf::embed(e);
            let (encoded, mut entry) = revisit_or_response(
                &capture,
                &a.digest,
                &place.source,
                a.stored.as_ref(),
                earlier,
                || match &a.stored {
                    Some(s) => s.placeholder(&a.digest),
                    None => warc::encode_response_with(
                        &ResponseInput {
                            target_uri: &e.url,
                            date: e.fetched_at,
                            ip_address: e.ip_address.as_deref(),
                            concurrent_to: (!place.record_id.is_empty())
                                .then_some(place.record_id.as_str()),
                            status_line: &e.status_line,
                            headers: &e.headers,
                            payload: &e.body,
                        },
                        &a.digest,
                    ),
                },
            );
            let revisit = entry.captures > 1;
            let loc = match &a.stored {
                Some(s) => s.location.clone(),
                None => {
                    let request =
                        request_record(e.request.as_ref(), &e.url, e.fetched_at, &encoded);
                    self.write_capture(&place.key, &encoded, request.as_ref())
                        .with_context(|| format!("writing the record of {}", e.url))?
                }
            };
            settle_first_location(&mut entry, revisit, &loc, batch_firsts);
            if e.kind == extract::EmbedKind::Answer {
                self.summary.answers += 1;
            } else {
                self.summary.embeds += 1;
                self.summary.embed_bytes += e.body.len() as u64;
                self.summary.embed_duplicates += u64::from(revisit);
            }
            self.summary.pack_bytes += loc.length;
            if self.packs_seen.insert(loc.path.clone()) {
                self.summary.packs += 1;
            }
            out.captures.push(capture.row(
                capture_kind(revisit),
                Some(a.digest.clone()),
                &encoded,
                &loc,
            ));
            // An image is filed once per (URL, payload): its first capture.
            let recapture = revisit
                && (entry.first_url == e.url
                    || self
                        .reader()
                        .captures_of(&e.url)?
                        .iter()
                        .any(|c| c.digest.as_deref() == Some(a.digest.as_str())));
            if let Some(h) = a.image.as_ref().filter(|_| !recapture) {
                self.summary.images_hashed += 1;
                out.images.push(indexer::ImageEntry {
                    url: e.url.clone(),
                    page_url: e.page_url.clone(),
                    source: place.source.clone(),
                    time: e.fetched_at,
                    digest: a.digest.clone(),
                    bytes: e.body.len() as u64,
                    width: h.width,
                    height: h.height,
                    ahash: h.ahash,
                    dhash: h.dhash,
                    phash: h.phash,
                    hash_version: classifier::imagehash::HASH_VERSION,
                    location: entry.first_location.clone(),
                });
            }
            seen.insert(a.digest.clone(), entry.clone());
            out.digests.push(entry);
        }
        Ok(out)
    }

    /// Writes a capture's record and, right after it in the same pack, the request record
    /// that goes with it; the capture's location. The request's bytes count in `pack_bytes`
    /// here (the capture's where it is accounted).
    fn write_capture(
        &mut self,
        key: &PackKey,
        capture: &EncodedRecord,
        request: Option<&EncodedRecord>,
    ) -> packer::Result<PackLocation> {
        let mut records = vec![capture];
        records.extend(request);
        let mut locations = self.packer.write_all(key, &records)?.into_iter();
        let Some(capture) = locations.next() else {
            unreachable!("one location per record written");
        };
        self.summary.pack_bytes += locations.map(|l| l.length).sum::<u64>();
        Ok(capture)
    }

    /// The pack and record of a page stored earlier (for a late embed): its
    /// index row's place, else an `unclassified` pack of the embed's day.
    fn place_of_indexed_page(
        &self,
        page_url: &str,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Result<PagePlace> {
        // No page (an error answer of its own, an imported resource): no
        // lookup (an empty row key is refused by HBase).
        let state = if page_url.is_empty() {
            None
        } else {
            self.reader().get_url(page_url)?
        };
        if let Some(state) = state {
            if let Some(page) = self.reader().get_page(&state.table, &state.row_key)? {
                return Ok(PagePlace {
                    key: PackKey {
                        topic: page.topic.clone(),
                        date: page.key_time().date_naive(),
                        cluster: page.cluster,
                    },
                    record_id: page.record_id.clone(),
                    source: page.source.clone(),
                });
            }
        }
        Ok(PagePlace {
            key: PackKey {
                topic: UNCLASSIFIED.to_string(),
                date: at.date_naive(),
                cluster: 0,
            },
            record_id: String::new(),
            source: self.cfg.source_for(page_url),
        })
    }

    /// Writes a revisit record (profile server-not-modified) for each 304 into
    /// the pack of the capture it confirms; returns the URL states to write
    /// once the packs are synced. A 304 for a URL without a stored capture
    /// (validators from elsewhere) is only counted.
    pub(super) fn write_not_modified(
        &mut self,
        items: Vec<(NotModifiedPage, Option<Stored>)>,
    ) -> Result<(Vec<UrlState>, Vec<indexer::Capture>)> {
        let mut states = Vec::with_capacity(items.len());
        let mut captures = Vec::with_capacity(items.len());
        for (nm, stored) in items {
            self.summary.not_modified += 1;
            let Some(prev) = self.reader().get_url(&nm.url)? else {
                continue;
            };
            let Some(page) = self.reader().get_page(&prev.table, &prev.row_key)? else {
                continue;
            };
            let (rec, loc) = match stored {
                Some(s) => (s.placeholder(&page.digest), s.location),
                None => {
                    let rec = warc::encode_not_modified(&warc::NotModifiedInput {
                        target_uri: &nm.url,
                        date: nm.fetched_at,
                        status_line: &nm.status_line,
                        headers: &nm.headers,
                        refers_to: &page.record_id,
                        refers_to_target_uri: &page.url,
                        refers_to_date: page.fetched,
                    });
                    let key = PackKey {
                        topic: page.topic.clone(),
                        date: page.key_time().date_naive(),
                        cluster: page.cluster,
                    };
                    let request = request_record(nm.request.as_ref(), &nm.url, nm.fetched_at, &rec);
                    let loc = self
                        .write_capture(&key, &rec, request.as_ref())
                        .with_context(|| format!("writing the revisit record of {}", nm.url))?;
                    (rec, loc)
                }
            };
            self.summary.pack_bytes += loc.length;
            if self.packs_seen.insert(loc.path.clone()) {
                self.summary.packs += 1;
            }
            captures.push(CaptureOf::not_modified(&nm).row(
                indexer::CaptureKind::NotModified,
                prev.digest.clone().or(Some(page.digest.clone())),
                &rec,
                &loc,
            ));
            let count = prev.captures + 1;
            let (next_fetch, interval_secs) = if prev.article {
                self.recrawl
                    .next(count, false, prev.interval_secs, nm.fetched_at)
            } else {
                (None, None)
            };
            let mut state = prev;
            state.last_capture = nm.fetched_at;
            state.captures = count;
            if let Some(etag) = header_value(&nm.headers, "etag") {
                state.etag = Some(etag);
            }
            if let Some(lm) = header_value(&nm.headers, "last-modified") {
                state.last_modified = Some(lm);
            }
            state.next_fetch = next_fetch;
            state.interval_secs = interval_secs;
            states.push(state);
        }
        Ok((states, captures))
    }
}

impl CaptureOf<'_> {
    /// The capture's row: stored as `record` at `loc`.
    fn row(
        &self,
        kind: indexer::CaptureKind,
        digest: Option<String>,
        record: &EncodedRecord,
        loc: &PackLocation,
    ) -> indexer::Capture {
        indexer::Capture {
            url: self.url.to_string(),
            time: self.date,
            kind,
            status: self.status,
            digest,
            record_id: record.record_id.clone(),
            location: loc.clone(),
            content_type: Some(header_value(self.headers, "content-type")),
        }
    }
}

/// The kind of a page's or an embed's capture.
fn capture_kind(revisit: bool) -> indexer::CaptureKind {
    if revisit {
        indexer::CaptureKind::Revisit
    } else {
        indexer::CaptureKind::Response
    }
}

/// A page's index row, as written at `loc` in `cluster`'s pack; `topic` is the page's
/// (`p.topic`, moved out).
fn page_row(p: &Prepared, topic: String, cluster: u32, loc: &PackLocation) -> PageRecord {
    let mut record = page_record(
        &p.page,
        &p.source,
        topic,
        p.topic_score,
        &p.digest,
        &p.encoded,
        loc,
        p.revisit,
    );
    record.cluster = cluster;
    if !p.recapture {
        record.simhash = p.simhash;
        record.simhash_version = p.simhash.map(|_| classifier::simhash::FINGERPRINT_VERSION);
    }
    // A page without a publish time keeps its first capture's key
    // time: a changed page replaces its row instead of adding one.
    record.first_seen = p.previous.as_ref().and_then(|s| s.first_capture);
    record
}

#[allow(clippy::too_many_arguments)]
fn page_record(
    page: &Page,
    source: &str,
    topic: String,
    topic_score: f32,
    digest: &str,
    encoded: &EncodedRecord,
    loc: &PackLocation,
    revisit: bool,
) -> PageRecord {
    let x = &page.extract;
    PageRecord {
        url: page.url.clone(),
        title: x.title.clone().unwrap_or_default(),
        published: x.published,
        fetched: page.fetched_at,
        first_seen: None,
        media: x.media.clone(),
        comments: x.comments,
        participants: x.participants,
        keywords: x.keywords.clone(),
        topic,
        topic_score,
        cluster: 0,
        pack_path: loc.path.clone(),
        offset: loc.offset,
        length: loc.length,
        digest: digest.to_string(),
        record_id: encoded.record_id.clone(),
        simhash: None,
        simhash_version: None,
        near_duplicate_of: None,
        language: x.language.clone(),
        charset: Some(page.charset.clone()),
        status: page.status,
        source: source.to_string(),
        revisit,
        published_from: Some(
            x.published_from
                .map_or(indexer::PUBLISHED_FROM_FETCH, |p| p.as_str())
                .to_string(),
        ),
        author: x.author.clone(),
        media_from_host: x.media_from_host,
        outlet: x.outlet.clone(),
    }
}

pub(crate) fn header_value(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

/// The first capture a digest entry names, for pages and embeds alike: a new payload's is
/// the record just written (`here`); a revisit whose entry names none yet was first captured
/// earlier in this batch (`batch_firsts`).
fn settle_first_location(
    entry: &mut DigestEntry,
    revisit: bool,
    here: &PackLocation,
    batch_firsts: &HashMap<String, PackLocation>,
) {
    if !revisit {
        entry.first_location = here.clone();
    } else if entry.first_location.path.is_empty() {
        if let Some(first) = batch_firsts.get(&entry.digest) {
            entry.first_location = first.clone();
        }
    }
}
