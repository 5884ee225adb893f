//! What the words before a date say about it: a publish label, another
//! label (an update, a comment, a repost's original), a byline that ends at
//! it, or none; and whether the date stands where a byline's may.

use crate::lists::{self, List};
use std::sync::LazyLock;

use super::patterns::RE_BYLINE_BEFORE_DATE;

/// Characters before a date searched for its label.
const LABEL_WINDOW_CHARS: usize = 24;

/// A line longer than this is running prose: its dates are another event's
/// (`publiée par Les Echos (26/11/2019)`, `wurde am 18. Oktober 2021
/// eröffnet`), not a byline's, unless one opens the line (a dateline).
const MAX_BYLINE_CHARS: usize = 160;

/// Characters at the start of a prose line where a dateline's date may begin.
const DATELINE_START_CHARS: usize = 40;

/// Characters before a date searched for a byline that ends at it (`by NAME on`).
const BYLINE_WINDOW_CHARS: usize = 64;

/// Labels that say the date after them is the publish time.
pub(super) static PUBLISH_LABELS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/publish_labels.txt")));

/// Labels that say the date after them is not the publish time (the first
/// [`UPDATE_LABELS`] of them: an update time; then comments', and a
/// repost's original's).
pub(super) static OTHER_LABELS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/other_labels.txt")));

/// How many of [`OTHER_LABELS`] (the first) label an update time.
const UPDATE_LABELS: usize = 24;

/// Whether the label nearest before byte `start` of `line` names an update
/// (`Updated:`, `更新时间：`), not a comment.
pub(super) fn update_label_before(line: &str, start: usize) -> bool {
    let window = label_window(line, start);
    match (
        last_label(&window, &OTHER_LABELS[..UPDATE_LABELS]),
        last_label(&window, &OTHER_LABELS[UPDATE_LABELS..]),
    ) {
        (Some(u), Some(c)) => u > c,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The [`LABEL_WINDOW_CHARS`] characters before byte `start` of `line`, lower-cased.
fn label_window(line: &str, start: usize) -> String {
    let from = line[..start]
        .char_indices()
        .rev()
        .nth(LABEL_WINDOW_CHARS - 1)
        .map_or(0, |(i, _)| i);
    crate::fold::fold(&line[from..start]).to_lowercase()
}

/// Where the last of `labels` in `window` ends.
fn last_label(window: &str, labels: &[&str]) -> Option<usize> {
    labels.iter().filter_map(|l| label_end(window, l)).max()
}

/// Where the last `label` in `window` ends, if it is a label there. A label
/// of two Han characters is also the end of ordinary words (`运营时间`,
/// `城市更新`: a related item's headline run together with its date): after
/// another Han character it labels only with a colon after it (`信息来源：`).
pub(super) fn label_end(window: &str, label: &str) -> Option<usize> {
    let short_han = label.chars().count() == 2 && label.chars().all(is_cjk);
    // The last place it labels (an earlier one may, where a later one is
    // part of a word).
    window.rmatch_indices(label).find_map(|(p, _)| {
        let end = p + label.len();
        let in_word = short_han
            && window[..p].chars().next_back().is_some_and(is_cjk)
            && !window[end..].trim_start().starts_with([':', '：']);
        (!in_word).then_some(end)
    })
}

/// What a label before a date says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Label {
    Publish,
    Other,
    None,
}

/// Chinese, Japanese or Korean script.
pub(super) fn is_cjk(ch: char) -> bool {
    matches!(ch as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF)
}

/// The label nearest before byte `start` of `line`.
pub(super) fn label_before(line: &str, start: usize) -> Label {
    let window = label_window(line, start);
    match (
        last_label(&window, &PUBLISH_LABELS),
        last_label(&window, &OTHER_LABELS),
    ) {
        (Some(p), Some(o)) if o >= p => Label::Other,
        (Some(_), _) => Label::Publish,
        (None, Some(_)) => Label::Other,
        (None, None) => {
            // A byline longer than the label window: `Submitted by Jane Roe on`.
            let from = line[..start]
                .char_indices()
                .rev()
                .nth(BYLINE_WINDOW_CHARS - 1)
                .map_or(0, |(i, _)| i);
            if RE_BYLINE_BEFORE_DATE.is_match(&line[from..start]) {
                Label::Publish
            } else {
                Label::None
            }
        }
    }
}

/// Whether a date at byte `start` of `line` may be a byline's: the line is
/// short, or the date opens it.
pub(super) fn byline_position(line: &str, start: usize) -> bool {
    line.chars().count() <= MAX_BYLINE_CHARS
        || line[..start].chars().count() <= DATELINE_START_CHARS
}

/// The label of the date at byte `start` of `lines[i]`: the one before it on
/// its line, else, for a date that starts its line, a line before that is
/// only a label (`Datum` / `12.01.2017`, `Mise en ligne` / `23 mai 2019`:
/// the label and the date in two elements).
pub(super) fn line_label(lines: &[&str], i: usize, start: usize) -> Label {
    let line = lines[i];
    match label_before(line, start) {
        Label::None if i > 0 && line[..start].trim().is_empty() => {
            let prev = crate::fold::fold(lines[i - 1])
                .trim()
                .trim_end_matches([':', '：'])
                .trim_end()
                .to_lowercase();
            if PUBLISH_LABELS.contains(&prev.as_str()) {
                Label::Publish
            } else if OTHER_LABELS.contains(&prev.as_str()) {
                Label::Other
            } else {
                Label::None
            }
        }
        l => l,
    }
}
