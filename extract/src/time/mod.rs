//! Publish time: candidates from every source a page offers (meta tags,
//! JSON-LD, `<time>`, visible text near the title and at the head and foot of
//! the article, the URL, a feed or sitemap hint), then one decision.
//!
//! Every candidate is read in the page's time zone unless it states its own
//! offset ([`page_zone`]), checked against the fetch time (no future times, none
//! before [`EARLIEST_YEAR`]) and scored by how surely it is *this* page's
//! publish time: a labelled publish time next to the title beats a meta tag,
//! a meta tag beats an unlabelled date in the body, times of other items
//! (related links, comments) are never taken, and a modified/updated time is
//! taken only when the page states no publish time (`published_from`
//! `modified`). A day-precise winner takes the minutes of another candidate of
//! the same day.
//!
//! Parts: `zone` (the page's zone, stated offsets), `stated` (the shapes
//! of a time), `patterns` (the date forms, as data), `fields`,
//! `numerals`, `join` and `scan` (the text scan), `contextual` (days
//! without a year, relative times), `labels` (what the words before a date
//! say), `parse` (machine-readable values), `candidates` (each source's
//! candidates), `score` and `decide` (the decision).

mod candidates;
mod contextual;
mod decide;
mod fields;
mod join;
mod labels;
mod numerals;
mod parse;
mod patterns;
mod scan;
pub(crate) mod score;
mod stated;
mod zone;

pub use decide::EARLIEST_YEAR;
pub use parse::{parse_date, parse_stated};
pub use shapes::page::{PublishedFrom, TimeContext};
pub use stated::{Published, Stated};
pub use zone::page_zone;

pub(crate) use candidates::{
    article_edge_candidates, date_class_candidate, labelled_candidates, marked_element_candidate,
    near_title_candidates, parsed_candidate, script_candidates, url_candidate, url_year,
};
pub(crate) use contextual::is_relative;
pub(crate) use decide::decide;
pub(crate) use scan::first_date_start;
pub(crate) use stated::Candidate;

#[cfg(test)]
mod tests;
