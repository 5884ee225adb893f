//! Index entries: what an index value says about its page (interned topic
//! and media labels, the prefilter that drops entries while they are
//! scanned, the verdict on the conditions not scanned), and the merges of
//! suffix-sorted entry streams (union, join).

use std::collections::HashMap;

use super::spec::Query;
use crate::index::{decode_index_value, FLAG_ATTRS, FLAG_EXT, FLAG_NEAR_DUP, FLAG_REVISIT};
use crate::keys::{self, Suffix};

/// Up to this many labels, [`Labels`] finds an id by comparing names.
const LINEAR_LABELS: usize = 32;
/// Label id of an index entry that carries no group label.
pub(crate) const NO_LABEL: u16 = u16::MAX;
/// An entry flag (beside the index value's `FLAG_*`): no index value of the page was
/// seen, only the text index named it; its data row decides everything.
pub(crate) const UNSEEN: u8 = 0x40;
/// [`Entry::rank`] is the text score times this, rounded.
pub(crate) const RANK_SCALE: f32 = 10_000.0;

/// An index hit inside one bucket: the page's suffix and what its index row
/// value says about it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) suffix: Suffix,
    pub(crate) flags: u8,
    pub(crate) comments: Option<u64>,
    /// Number of `keywords_any` keywords (not also in `keywords`) the page has.
    pub(crate) score: u16,
    /// Relevance of the page to the query's text (BM25 x [`RANK_SCALE`]; 0 without text).
    pub(crate) rank: u32,
    /// Topic id in the call's [`Labels`] ([`NO_LABEL`] = not recorded).
    pub(crate) topic: u16,
    /// Media id in the call's [`Labels`] ([`NO_LABEL`] = none or not recorded).
    pub(crate) media: u16,
    /// Url-hash of the story root of a near-duplicate, when recorded.
    pub(crate) story: Option<[u8; keys::URL_HASH_LEN]>,
}

impl Entry {
    /// Whether the index row recorded the page's topic and media.
    pub(crate) fn attrs_known(&self) -> bool {
        self.flags & FLAG_ATTRS != 0 && self.topic != NO_LABEL
    }
}

/// Interned topic and media values of one task (entries hold ids).
#[derive(Debug, Default)]
pub(crate) struct Labels {
    ids: HashMap<Vec<u8>, u16>,
    /// The values as stored (index = id).
    raw: Vec<Vec<u8>>,
    pub(super) names: Vec<String>,
}

impl Labels {
    fn id(&mut self, v: &[u8]) -> u16 {
        // A task sees few distinct topics and media: comparing bytes beats
        // hashing them (this runs twice per index row).
        if self.names.len() <= LINEAR_LABELS {
            if let Some(i) = self.raw.iter().position(|n| n.as_slice() == v) {
                // position < LINEAR_LABELS < NO_LABEL
                return i as u16;
            }
        } else if let Some(&i) = self.ids.get(v) {
            return i;
        }
        let Ok(i) = u16::try_from(self.names.len()) else {
            return NO_LABEL;
        };
        if i == NO_LABEL {
            return NO_LABEL;
        }
        self.names.push(String::from_utf8_lossy(v).into_owned());
        self.raw.push(v.to_vec());
        self.ids.insert(v.to_vec(), i);
        i
    }

    /// [`Labels::id`], trying `hint` (the id this caller got last) first:
    /// consecutive index rows mostly share their media, often their topic.
    fn id_hinted(&mut self, v: &[u8], hint: &mut u16) -> u16 {
        if self
            .raw
            .get(usize::from(*hint))
            .is_some_and(|r| r.as_slice() == v)
        {
            return *hint;
        }
        let i = self.id(v);
        *hint = i;
        i
    }

    pub(crate) fn name(&self, id: u16) -> Option<&str> {
        self.names.get(usize::from(id)).map(String::as_str)
    }
}

/// Conditions a task checks on index row values instead of scanning their
/// index ranges.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Checks {
    pub(super) topic: bool,
    pub(super) media: bool,
}

/// Conditions decided on each index row while it is scanned: a row whose
/// value rules its page out (a revisit, a near-duplicate, a comment count
/// out of range, a topic or media not asked for when those are checked on
/// values) is dropped before it is kept, joined or interned further. Every
/// index row of a page carries the same value, so a dropped row never
/// belongs to a page that could match.
pub(crate) struct Prefilter<'q> {
    q: &'q Query,
    checks: Checks,
    /// Per label id: whether it is one of the query's topics (`None`: not
    /// looked up yet).
    topic_ok: Vec<Option<bool>>,
    /// Per label id: whether it is one of the query's media.
    media_ok: Vec<Option<bool>>,
    /// Label ids of the last entry (consecutive entries mostly share them).
    topic_hint: u16,
    media_hint: u16,
}

impl<'q> Prefilter<'q> {
    pub(crate) fn new(q: &'q Query, checks: Checks) -> Self {
        Prefilter {
            q,
            checks,
            topic_ok: Vec::new(),
            media_ok: Vec::new(),
            topic_hint: NO_LABEL,
            media_hint: NO_LABEL,
        }
    }

    /// The entry of a page's index value, unless the value rules it out
    /// (its topic and media interned in `labels`).
    pub(super) fn admit(
        &mut self,
        suffix: Suffix,
        value: &[u8],
        labels: &mut Labels,
    ) -> Option<Entry> {
        let v = decode_index_value(value);
        if value_rules_out(self.q, v.flags, v.comments) {
            return None;
        }
        let e = Entry {
            suffix,
            flags: v.flags,
            comments: v.comments,
            score: 0,
            rank: 0,
            topic: v
                .topic
                .map_or(NO_LABEL, |t| labels.id_hinted(t, &mut self.topic_hint)),
            media: v
                .media
                .map_or(NO_LABEL, |m| labels.id_hinted(m, &mut self.media_hint)),
            story: v.story,
        };
        (!self.rejects_labels(&e, labels)).then_some(e)
    }

    /// The recorded topic or media rules the page out (checked conditions only).
    fn rejects_labels(&mut self, e: &Entry, labels: &Labels) -> bool {
        if !(self.checks.topic || self.checks.media) || !e.attrs_known() {
            return false;
        }
        let q = self.q;
        if self.checks.topic && !memo(&mut self.topic_ok, e.topic, labels, &q.topics) {
            return true;
        }
        self.checks.media && !memo(&mut self.media_ok, e.media, labels, &q.media)
    }
}

/// The flags and comment count of an index value alone rule its page out
/// (revisit, near-duplicate, comment range). A legacy value (no
/// [`FLAG_EXT`]) tells only the revisit bit.
fn value_rules_out(q: &Query, flags: u8, comments: Option<u64>) -> bool {
    if !q.include_revisits && flags & FLAG_REVISIT != 0 {
        return true;
    }
    flags & FLAG_EXT != 0
        && ((q.collapse_near_duplicates && flags & FLAG_NEAR_DUP != 0)
            || !q.comments_in_range(comments))
}

/// Whether label `id` is one of `wanted`, remembered per id.
fn memo(cache: &mut Vec<Option<bool>>, id: u16, labels: &Labels, wanted: &[String]) -> bool {
    let i = usize::from(id);
    if let Some(Some(ok)) = cache.get(i) {
        return *ok;
    }
    let ok = labels
        .name(id)
        .is_some_and(|n| wanted.iter().any(|w| w == n));
    if id != NO_LABEL {
        if cache.len() <= i {
            cache.resize(i + 1, None);
        }
        cache[i] = Some(ok);
    }
    ok
}

/// What the index row value says about the conditions not scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Yes,
    No,
    /// The value does not tell (a legacy value, or topic and media not
    /// recorded): read the data row to decide.
    Unknown,
}

pub(crate) fn verdict(q: &Query, e: &Entry, checks: Checks, labels: &Labels) -> Verdict {
    if e.flags & UNSEEN != 0 {
        return Verdict::Unknown;
    }
    if value_rules_out(q, e.flags, e.comments) {
        return Verdict::No;
    }
    // A legacy value cannot decide near-duplicate or comment conditions.
    // Index values do not record the publish-time provenance: the data row decides.
    let unknown = (e.flags & FLAG_EXT == 0
        && (q.collapse_near_duplicates || q.has_comment_filter()))
        || q.has_row_only_filter();
    if checks.topic || checks.media {
        if !e.attrs_known() {
            return Verdict::Unknown;
        }
        if checks.topic
            && !labels
                .name(e.topic)
                .is_some_and(|t| q.topics.iter().any(|x| x == t))
        {
            return Verdict::No;
        }
        if checks.media
            && !labels
                .name(e.media)
                .is_some_and(|m| q.media.iter().any(|x| x == m))
        {
            return Verdict::No;
        }
    }
    if unknown {
        Verdict::Unknown
    } else {
        Verdict::Yes
    }
}

fn combine(x: &Entry, y: &Entry, add_scores: bool) -> Entry {
    let (topic, media) = if x.attrs_known() {
        (x.topic, x.media)
    } else {
        (y.topic, y.media)
    };
    Entry {
        suffix: x.suffix,
        // Seen by one side: no longer unseen.
        flags: ((x.flags | y.flags) & !UNSEEN) | (x.flags & y.flags & UNSEEN),
        comments: x.comments.or(y.comments),
        score: if add_scores {
            x.score.saturating_add(y.score)
        } else {
            x.score.max(y.score)
        },
        rank: x.rank.max(y.rank),
        topic,
        media,
        story: x.story.or(y.story),
    }
}

/// Union of sorted lists; with `count`, each entry's score is the number of
/// lists that hold it.
pub(super) fn union(mut lists: Vec<Vec<Entry>>, count: bool) -> Vec<Entry> {
    if count {
        for e in lists.iter_mut().flatten() {
            e.score = 1;
        }
    }
    if lists.len() == 1 {
        return lists.pop().unwrap_or_default();
    }
    let mut all: Vec<Entry> = lists.into_iter().flatten().collect();
    all.sort_by_key(|a| a.suffix);
    let mut out: Vec<Entry> = Vec::with_capacity(all.len());
    for e in all {
        match out.last_mut() {
            Some(last) if last.suffix == e.suffix => *last = combine(last, &e, count),
            _ => out.push(e),
        }
    }
    out
}

/// Merge-join of two sorted lists: entries of `a` found in `b` get `b`'s
/// information; entries of `a` not in `b` are kept only with `keep_unmatched`
/// (left join) and dropped otherwise (intersection).
pub(super) fn join(a: Vec<Entry>, b: Vec<Entry>, keep_unmatched: bool) -> Vec<Entry> {
    let mut out = Vec::with_capacity(if keep_unmatched {
        a.len()
    } else {
        a.len().min(b.len())
    });
    let mut bi = b.into_iter().peekable();
    for x in a {
        while bi.peek().is_some_and(|y| y.suffix < x.suffix) {
            bi.next();
        }
        match bi.peek() {
            Some(y) if y.suffix == x.suffix => out.push(combine(&x, y, false)),
            _ if keep_unmatched => out.push(x),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::keys::SUFFIX_LEN;

    fn e(s: u8, topic: u16) -> Entry {
        let mut suffix = [0u8; SUFFIX_LEN];
        suffix[4] = s;
        Entry {
            suffix,
            flags: if topic == NO_LABEL {
                0
            } else {
                FLAG_EXT | FLAG_ATTRS
            },
            comments: None,
            score: 0,
            rank: 0,
            topic,
            media: NO_LABEL,
            story: None,
        }
    }

    #[test]
    fn union_and_join_merge_sorted_streams() {
        let u = union(vec![vec![e(1, 0), e(5, 0)], vec![e(2, 1), e(5, 1)]], false);
        assert_eq!(
            u.iter().map(|x| x.suffix[4]).collect::<Vec<_>>(),
            vec![1, 2, 5]
        );
        let i = join(u.clone(), vec![e(2, 7), e(3, 7), e(5, 7)], false);
        assert_eq!(
            i.iter().map(|x| x.suffix[4]).collect::<Vec<_>>(),
            vec![2, 5]
        );
        assert_eq!(i[0].topic, 1);
        let left = join(
            vec![e(1, NO_LABEL), e(2, NO_LABEL), e(3, NO_LABEL)],
            vec![e(2, 4)],
            true,
        );
        assert_eq!(
            left.iter().map(|x| x.topic).collect::<Vec<_>>(),
            vec![NO_LABEL, 4, NO_LABEL],
            "a legacy entry takes the topic of a row that knows it"
        );
    }

    #[test]
    fn counting_union_scores_lists_holding_an_entry() {
        let u = union(
            vec![
                vec![e(1, 0), e(5, 0)],
                vec![e(5, 0)],
                vec![e(5, 0), e(9, 0)],
            ],
            true,
        );
        assert_eq!(
            u.iter().map(|x| (x.suffix[4], x.score)).collect::<Vec<_>>(),
            vec![(1, 1), (5, 3), (9, 1)]
        );
    }

    #[test]
    fn verdicts_use_extended_index_values() {
        let mut labels = Labels::default();
        let military = labels.id(b"military");
        let economy = labels.id(b"economy");
        let q = Query {
            min_comments: Some(10),
            collapse_near_duplicates: true,
            topics: vec!["military".into()],
            ..Query::new(&[], Utc::now(), Utc::now())
        };
        let checks = Checks {
            topic: true,
            media: false,
        };
        let mut x = e(1, NO_LABEL);
        assert_eq!(
            verdict(&q, &x, checks, &labels),
            Verdict::Unknown,
            "legacy row"
        );
        x = e(1, military);
        x.comments = Some(10);
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::Yes);
        x.topic = economy;
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::No, "other topic");
        x.topic = military;
        x.comments = Some(9);
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::No);
        x.comments = Some(11);
        x.flags |= FLAG_NEAR_DUP;
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::No);
        let legacy_revisit = Entry {
            flags: FLAG_REVISIT,
            ..e(1, NO_LABEL)
        };
        assert_eq!(
            verdict(&q, &legacy_revisit, checks, &labels),
            Verdict::No,
            "the revisit flag is always valid"
        );
    }

    #[test]
    fn label_ids_stay_stable_past_the_linear_search() {
        let mut labels = Labels::default();
        let values: Vec<Vec<u8>> = (0..LINEAR_LABELS * 2)
            .map(|i| format!("media-{i}").into_bytes())
            .collect();
        let ids: Vec<u16> = values.iter().map(|v| labels.id(v)).collect();
        assert_eq!(ids, (0..values.len() as u16).collect::<Vec<_>>());
        let mut hint = NO_LABEL;
        for (v, id) in values.iter().zip(&ids).rev() {
            assert_eq!(labels.id(v), *id, "id of {v:?} again");
            assert_eq!(labels.id_hinted(v, &mut hint), *id, "hinted id of {v:?}");
            assert_eq!(hint, *id);
        }
        assert_eq!(labels.name(ids[LINEAR_LABELS + 3]), Some("media-35"));
        // Non-UTF-8 values keep distinct ids even though their names are lossy.
        let (a, b) = (labels.id(&[0xff]), labels.id(&[0xfe]));
        assert_ne!(a, b);
        assert_eq!(labels.id(&[0xff]), a);
    }
}
