//! Media (the originating outlet) and author.
//!
//! Media: a labelled source in the text near the title or at the edges of the
//! article (`来源：新华社`, `Source: AP`), else meta `source`, JSON-LD
//! `publisher`, `og:site_name`, `application-name`; the host only as a
//! fallback, flagged. Author: JSON-LD `author`, meta `author` and its kin,
//! a byline element (`rel=author`, `itemprop=author`, `.byline`), a labelled
//! name in the text (`作者：`, `记者 王希`, `By Jane Doe`).
//!
//! Parts: `names` (what counts as a name or an outlet), `source` (source
//! labels and elements), `dateline` (the lines beside the date and under the
//! headline), `agency` (wire agencies), `author` (author labels, bylines,
//! reporters), and the rules' data: `words` (word lists, meta keys) and
//! `patterns` (regular expressions).

mod agency;
mod author;
mod dateline;
mod names;
mod patterns;
mod source;
mod words;

pub use agency::{agency_dateline_media, wire_agency};
pub use author::{
    author_value, byline_line_author, labelled_author, names_an_outlet, reporter_outlet,
    without_outlet_prefix,
};
pub use dateline::{
    account_above_dateline, dateline_media, dateline_reporter, followed_account,
    poster_above_posted,
};
pub use names::{chinese_part, domain_like, link_shortener, name_value, same_outlet};
pub use source::{data_source_media, edition_media, labelled_media, source_element_media};
pub use words::{AUTHOR_META_KEYS, MEDIA_META_KEYS, SITE_META_KEYS};

#[cfg(test)]
mod tests;
