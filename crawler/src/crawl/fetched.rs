//! What a fetch task hands to the analysis ([`Fetched`], [`PendingPage`]): the
//! scheduler passes it from the fetch task, which holds its host, to an
//! analysis task, which holds none.

use chrono::Utc;
use url::Url;

use crate::event::{FetchedEmbed, NotModifiedPage};
use shapes::page::TimeContext;

/// What a fetch task leaves for the analysis.
pub(super) enum Fetched {
    /// Nothing more to do (a failure was reported, or a duplicate redirect).
    Done,
    /// A page to decode, extract and report.
    Page(Box<PendingPage>),
    /// A 304 whose stored copy's links are to be followed.
    NotModified(Box<NotModifiedPage>),
}

/// A fetched page before its analysis.
pub(super) struct PendingPage {
    pub(super) requested: String,
    pub(super) url: Url,
    pub(super) fetched_at: chrono::DateTime<Utc>,
    pub(super) status: u16,
    pub(super) status_line: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
    pub(super) content_type: String,
    pub(super) header_charset: Option<String>,
    pub(super) ip_address: Option<String>,
    pub(super) depth: u32,
    pub(super) time_ctx: TimeContext,
    /// The redirect answers on the way to it (archived after the page).
    pub(super) hops: Vec<FetchedEmbed>,
    /// The request it answers.
    pub(super) request: crate::event::SentRequest,
}
