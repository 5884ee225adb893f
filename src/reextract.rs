//! `harvest reextract [FILTERS]`: reads the archived responses of the
//! selected pages back from their packs, extracts the attributes again with
//! the current code and rewrites the index rows, so that an archive improves
//! without a recrawl.
//!
//! Per page: the record at the row's pack location (a revisit's first
//! capture, which holds the payload) -> HTTP body -> charset decode (the
//! archived Content-Type first) -> [`extract::extract_with`] with the
//! capture's fetch time and the configured publish-time zone (the page's
//! source's, else `[crawl]`'s). Title, publish
//! time and its provenance, media, author, comments, participants, keywords
//! and language are replaced; the topic, cluster, pack location, digest and
//! near-duplicate link stay. A publish time that came from a feed or a
//! sitemap (not stored in the page) is kept when the page itself gives none.
//! When the key time moves, the page is indexed under its new key, the old
//! row and its index entries are deleted, and the URL's `urls` row follows
//! it when it pointed at the old row. The words of every selected page are
//! written to the text index again from the new extraction (before its row,
//! as a crawl writes them), changed or not: `reextract` rebuilds the text
//! index of what it selects.

use std::io::Write;

use anyhow::{Context, Result};
use extract::{extract_with, PublishedFrom, TimeContext};
use indexer::{PageHit, PageRecord};

use crate::cli::ReextractArgs;
use crate::config::Config;
use crate::filters::{FilterSpec, MAX_LIMIT};
use crate::stores::Stores;

/// Pages written to the index per batch.
const BATCH: usize = 256;

/// What a re-extraction did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ReextractSummary {
    /// Pages selected by the filters.
    pub pages: u64,
    /// Pages whose attributes changed.
    pub changed: u64,
    /// Of those, pages filed under a new key (the key time moved).
    pub moved: u64,
    /// Pages whose record could not be read or decoded (left as they were).
    pub failed: u64,
    /// Pages whose words were written to the text index again.
    pub text: u64,
}

/// What `reextract --explain URL` shows: each attribute of the URL's latest capture
/// extracted again, and the rule that decided it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Explained {
    pub url: String,
    pub fetched: chrono::DateTime<chrono::Utc>,
    pub attributes: Vec<ExplainedAttribute>,
}

/// One attribute of [`Explained`]: its value now (`None`: none found), the value the
/// index holds, and the rule that decided it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExplainedAttribute {
    pub attribute: &'static str,
    pub value: Option<String>,
    pub indexed: Option<String>,
    pub rule: String,
}

impl Explained {
    /// One line per attribute: name, value, the rule after `<-`, and the indexed value
    /// when it differs.
    pub fn render(&self) -> String {
        let mut s = format!("{} (captured {})\n", self.url, self.fetched.to_rfc3339());
        for a in &self.attributes {
            let value = a.value.as_deref().unwrap_or("-");
            s.push_str(&format!("{:<10} {value}  <- {}", a.attribute, a.rule));
            if a.indexed != a.value {
                s.push_str(&format!(
                    "  (indexed: {})",
                    a.indexed.as_deref().unwrap_or("-")
                ));
            }
            s.push('\n');
        }
        s
    }
}

/// `reextract --explain URL`: the URL's latest page capture extracted again, with the
/// rule behind each attribute. Writes nothing.
pub fn explain(stores: &Stores, cfg: &Config, url: &str) -> Result<Explained> {
    let parsed = crawler::normalize::parse_normalized(url, None)
        .with_context(|| format!("{url:?} is not an absolute URL"))?;
    let page = crate::read::page_by_url(stores, parsed.as_str())?
        .with_context(|| format!("{parsed} is not a page of the archive"))?;
    let x = extracted_again(stores, cfg, &page)?;
    let new = with_attributes(&page, &x);
    let decisions = x.decisions;
    let published = |p: &PageRecord| {
        p.published.map(|t| {
            format!(
                "{} ({})",
                t.to_rfc3339(),
                p.published_source().unwrap_or("-")
            )
        })
    };
    let value = |attribute: &str, p: &PageRecord| -> Option<String> {
        match attribute {
            "title" => Some(p.title.clone()).filter(|t| !t.is_empty()),
            "published" => published(p),
            "media" => p.media.clone(),
            "outlet" => Some(p.outlet_or_host().to_string()),
            "author" => p.author.clone(),
            _ => None,
        }
    };
    Ok(Explained {
        url: page.url.clone(),
        fetched: page.fetched,
        attributes: decisions
            .iter()
            .map(|d| ExplainedAttribute {
                attribute: d.attribute,
                value: value(d.attribute, &new),
                indexed: value(d.attribute, &page),
                rule: d.rule.clone(),
            })
            .collect(),
    })
}

/// The page's archived response extracted again.
fn extracted_again(stores: &Stores, cfg: &Config, page: &PageRecord) -> Result<extract::Extracted> {
    let html = crate::read::page_text(stores, page)?;
    let url = url::Url::parse(&page.url).with_context(|| format!("stored URL {:?}", page.url))?;
    let ctx = TimeContext {
        fetched: page.fetched,
        zone: cfg
            .sources
            .iter()
            .find(|s| s.name == page.source)
            .and_then(|s| s.publish_time_zone)
            .or(cfg.crawl.publish_time_zone),
        hint: None,
    };
    Ok(extract_with(&html, &url, &ctx))
}

/// The page's attributes extracted again from its archived response, and its words for the
/// text index.
pub fn reextract_page(
    stores: &Stores,
    cfg: &Config,
    page: &PageRecord,
) -> Result<(PageRecord, indexer::TextDoc)> {
    let x = extracted_again(stores, cfg, page)?;
    let new = with_attributes(page, &x);
    let han = indexer::TextDoc::han_of(x.main_text());
    let text = indexer::TextDoc::of(&new, x.tokens, han);
    Ok((new, text))
}

/// `page` with the attributes of its extraction `x`.
fn with_attributes(page: &PageRecord, x: &extract::Extracted) -> PageRecord {
    let mut new = page.clone();
    new.title = x.title.clone().unwrap_or_default();
    let from_hint = matches!(
        page.published_from
            .as_deref()
            .and_then(PublishedFrom::parse),
        Some(PublishedFrom::Feed | PublishedFrom::Sitemap)
    );
    // A feed's or sitemap's publish time beats a page's modified time.
    let own = x.published.is_some() && x.published_from != Some(PublishedFrom::Modified);
    if own || !from_hint {
        new.published = x.published;
        new.published_from = Some(
            x.published_from
                .map_or(indexer::PUBLISHED_FROM_FETCH, |p| p.as_str())
                .to_string(),
        );
    }
    new.media = x.media.clone();
    new.media_from_host = x.media_from_host;
    new.outlet = x.outlet.clone();
    new.author = x.author.clone();
    new.comments = x.comments;
    new.participants = x.participants;
    new.keywords = x.keywords.clone();
    new.language = x.language.clone();
    new
}

/// Re-extracts every page `spec` selects; with `dry_run`, only counts.
pub fn run(
    stores: &Stores,
    cfg: &Config,
    spec: &FilterSpec,
    dry_run: bool,
) -> Result<ReextractSummary> {
    let (mut q, _) = spec
        .build(None, MAX_LIMIT)
        .map_err(|e| anyhow::anyhow!(e.cli()))?;
    // Revisit rows are pages too (their payload is the first capture's).
    q.include_revisits = true;
    let hits = stores.index.search(&q)?;
    let mut summary = ReextractSummary::default();
    let mut batch: Vec<(PageHit, PageRecord)> = Vec::new();
    let mut texts: Vec<indexer::TextDoc> = Vec::new();
    for hit in hits {
        summary.pages += 1;
        let (new, text) = match reextract_page(stores, cfg, &hit.page) {
            Ok(n) => n,
            Err(e) => {
                summary.failed += 1;
                tracing::warn!(url = %hit.page.url, error = %format!("{e:#}"), "re-extraction failed; page left as it was");
                continue;
            }
        };
        texts.push(text);
        if new != hit.page {
            summary.changed += 1;
            batch.push((hit, new));
        }
        if batch.len() >= BATCH || texts.len() >= BATCH {
            summary.moved += write(stores, &batch, &texts, dry_run)?;
            summary.text += if dry_run { 0 } else { texts.len() as u64 };
            batch.clear();
            texts.clear();
        }
    }
    summary.moved += write(stores, &batch, &texts, dry_run)?;
    summary.text += if dry_run { 0 } else { texts.len() as u64 };
    Ok(summary)
}

impl ReextractSummary {
    /// The summary line of `harvest reextract` without `--json`.
    pub fn render(&self, dry_run: bool) -> String {
        format!(
            "reextract{}: {} page(s), {} changed, {} under a new key (publish time moved), {} failed, {} written to the text index\n",
            if dry_run {
                " (dry run, nothing written)"
            } else {
                ""
            },
            self.pages,
            self.changed,
            self.moved,
            self.failed,
            self.text
        )
    }
}

/// Writes the pages' words to the text index, then the changed pages' rows; returns how
/// many moved to a new key.
fn write(
    stores: &Stores,
    batch: &[(PageHit, PageRecord)],
    texts: &[indexer::TextDoc],
    dry_run: bool,
) -> Result<u64> {
    let mut moved = Vec::new();
    let mut pages = Vec::with_capacity(batch.len());
    let mut url_moves = Vec::new();
    for (hit, new) in batch {
        let key = stores.index.page_key(new)?;
        if key.table != hit.table || key.row_key != hit.row_key {
            moved.push(indexer::PageKey {
                table: hit.table.clone(),
                row_key: hit.row_key.clone(),
            });
            url_moves.push((new.url.clone(), hit.table.clone(), hit.row_key.clone(), key));
        }
        pages.push(new.clone());
    }
    if dry_run {
        return Ok(moved.len() as u64);
    }
    // One batch: the words, the new rows, the old rows' removal and the URLs' new keys
    // are durable together (the words' mark goes with the rows: `indexer::textmark`).
    stores.index.atomically(|ix| {
        ix.index_texts(texts)?;
        if pages.is_empty() {
            return Ok(());
        }
        ix.index_pages(&pages)?;
        if !moved.is_empty() {
            ix.delete_pages(&moved)?;
        }
        let mut states = Vec::new();
        for (url, old_table, old_key, new_key) in url_moves {
            if let Some(mut st) = ix.get_url(&url)? {
                if st.table == old_table && st.row_key == old_key {
                    st.table = new_key.table;
                    st.row_key = new_key.row_key;
                    states.push(st);
                }
            }
        }
        if !states.is_empty() {
            ix.put_urls(&states)?;
        }
        Ok(())
    })?;
    Ok(moved.len() as u64)
}

/// `harvest reextract`: the summary line, or with `--json` the summary as one
/// JSON line and nothing else (stdout is then JSON only).
pub fn run_command(
    stores: &Stores,
    cfg: &Config,
    args: &ReextractArgs,
    out: &mut dyn Write,
) -> Result<()> {
    if let Some(url) = &args.explain {
        // Only the zone's default is left: a filter, a switch, a zone or `--dry-run`
        // would change nothing of what --explain prints, so each is refused.
        let zone = args.filters.tz.as_str();
        let plain = FilterSpec {
            tz: zone.to_string(),
            ..FilterSpec::default()
        };
        if args.filters != plain || !(zone.is_empty() || zone == "UTC") || args.dry_run {
            anyhow::bail!(
                "--explain takes one URL and nothing else: no filters, --tz, \
                 --include-revisits, --collapse or --dry-run"
            );
        }
        let explained = explain(stores, cfg, url)?;
        if args.json {
            writeln!(out, "{}", serde_json::to_string(&explained)?)?;
        } else {
            write!(out, "{}", explained.render())?;
        }
        return Ok(());
    }
    let spec = args.filters.clone();
    let summary = run(stores, cfg, &spec, args.dry_run)?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    } else {
        write!(out, "{}", summary.render(args.dry_run))?;
    }
    Ok(())
}
