//! Wire agencies: the agency that filed a story, from its dateline
//! (`MEMPHIS, Tenn. (AP) —`, `新华社北京11月17日电`, `（中央社記者溫貴香台北25日電）`)
//! or credited as its author.

use crate::fold::fold;

use super::names::{name_value, person_names};
use super::patterns::{RE_AGENCY_OUTLET, RE_WIRE_DATELINE};
use super::words::{SELF_OUTLETS, WIRE_AGENCIES};

/// The names of a [`super::patterns::RE_AGENCY_DATELINE`]: those before the last whole, the
/// last one's place cut off (a name of three characters before a place of two
/// or more, of two before a place of two: `溫貴香台北`, `王明台北`; a lone
/// name of two or three is taken whole).
pub(super) fn agency_dateline_names(run: &str) -> Option<String> {
    let parts: Vec<&str> = run.split('、').collect();
    let (last, before) = parts.split_last()?;
    let chars: Vec<char> = last.chars().collect();
    let keep = match chars.len() {
        2 | 3 => chars.len(),
        4 => 2,
        5..=7 => 3,
        _ => return None,
    };
    let last: String = chars[..keep].iter().collect();
    let mut names: Vec<&str> = before.to_vec();
    names.push(&last);
    let names = names.join("、");
    person_names(&names).then_some(names)
}

/// The agency of a [`RE_WIRE_DATELINE`]: an abbreviation (`AP`, `CNA`) or a
/// name the dash after it marks (`(Reuters) -`), not a word of the page's
/// own (`(UPDATED)`, `(VIDEO)`).
///
/// Without the dash the abbreviation must be a known agency's
/// ([`WIRE_AGENCIES`]): a story's lead names bodies so too (`Germany's Social
/// Democrats (SPD) have …`); nor is it one that spells the initials of the
/// words before it (`International Olympic Committee (IOC) President …`).
fn wire_dateline_agency(line: &str) -> Option<String> {
    let c = RE_WIRE_DATELINE.captures(line)?;
    let agency = c.get(1)?.as_str();
    let abbreviation =
        (2..=6).contains(&agency.len()) && agency.bytes().all(|b| b.is_ascii_uppercase());
    const NOT_AGENCIES: [&str; 6] = ["UPDATED", "UPDATE", "LIVE", "VIDEO", "PHOTOS", "WATCH"];
    let known = WIRE_AGENCIES.contains(&agency.to_lowercase().as_str());
    let dashed = c.get(2).is_some();
    let place = &line[..c.get(1)?.start()];
    ((known || (dashed && !initials_of(agency, place)))
        && (abbreviation || dashed)
        && !NOT_AGENCIES.contains(&agency.to_uppercase().as_str()))
    .then(|| name_value(agency))?
}

/// Whether `abbreviation` spells the initials of the last words of `before`
/// (`International Olympic Committee (` for `IOC`): an acronym the text
/// defines.
pub(super) fn initials_of(abbreviation: &str, before: &str) -> bool {
    let words: Vec<&str> = before
        .trim_end_matches(|c: char| c == '(' || c.is_whitespace())
        .split_whitespace()
        .collect();
    let n = abbreviation.chars().count();
    n >= 2
        && words.len() >= n
        && words[words.len() - n..]
            .iter()
            .filter_map(|w| w.chars().next())
            .map(|c| c.to_ascii_uppercase())
            .eq(abbreviation.chars().map(|c| c.to_ascii_uppercase()))
}

/// `Kyodo`, `By Reuters`, `AFP`, `新华社`: the agency an author value
/// names, as written; `None` for a person (or `Reuters staff` and the like).
pub fn wire_agency(author: &str) -> Option<String> {
    let name = author.trim();
    let f = fold(name).to_lowercase();
    let f = f.strip_prefix("by ").unwrap_or(&f).trim();
    WIRE_AGENCIES
        .contains(&f)
        .then(|| name_value(name.strip_prefix("By ").unwrap_or(name)))?
}

/// The agency of the first [`RE_AGENCY_OUTLET`] or [`RE_WIRE_DATELINE`]
/// dateline in `lines`; not the page's own (`本报`, `本网`).
pub fn agency_dateline_media<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    lines.into_iter().find_map(|l| {
        let f = fold(l);
        let Some(c) = RE_AGENCY_OUTLET.captures(&f) else {
            return wire_dateline_agency(l);
        };
        let folded = c.get(1)?.as_str();
        if SELF_OUTLETS.iter().any(|s| folded.starts_with(s)) {
            return None;
        }
        name_value(&l[c.get(1)?.range()])
    })
}
