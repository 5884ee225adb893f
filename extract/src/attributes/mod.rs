//! Deciding a page's attributes, each by its own rule table over the page
//! view: the headline first (the lines around it are where bylines, datelines
//! and source labels are read), then the publish time, the media, the outlet
//! and the author (a wire agency credited as the author may become the media).

mod author;
mod media;
mod outlet;
mod published;
mod title;

pub use published::{DATE_META_KEYS, MODIFIED_META_KEYS, PUBLISHED_META_KEYS};

use author::decide_author;
use media::{decide_media, MediaChoice};
use outlet::site_outlet;
use published::decide_published;
use title::decide_title;

use crate::page::{Around, PageView};
use crate::rules::Decision;
use crate::time::Published;

/// The attributes of a page decided by its rules, and which rule decided each.
pub(crate) struct Decided {
    pub(crate) title: Option<String>,
    pub(crate) published: Option<Published>,
    pub(crate) media: MediaChoice,
    pub(crate) outlet: Option<String>,
    pub(crate) author: Option<String>,
    pub(crate) decisions: Vec<Decision>,
}

/// Decides each attribute in turn: the headline first (the lines around it are where
/// bylines, datelines and source labels are read), then the publish time, the media, the
/// outlet and the author (a wire agency credited as the author may become the media).
pub(crate) fn decide_attributes(p: &PageView<'_>) -> Decided {
    let (title, title_rule) = decide_title(p);
    let around = Around::find(p, title.as_deref());
    let published = decide_published(p, &around);
    let mut media = decide_media(p, &around, title.as_deref(), published);
    let (outlet, outlet_rule) = site_outlet(
        p.metas,
        p.ld.publisher.as_deref(),
        p.title_tag.as_deref(),
        &p.names,
    )
    .unzip();
    let (author, author_rule) = decide_author(p, &around, published, &mut media);
    let decisions = vec![
        Decision::new("title", title_rule.map(str::to_string)),
        Decision::new(
            "published",
            published.map(|p| format!("{} (the best scored candidate)", p.from.as_str())),
        ),
        Decision::new(
            "media",
            (!media.rule.is_empty()).then(|| media.rule.join(", ")),
        ),
        Decision::new(
            "outlet",
            Some(outlet_rule.unwrap_or("host (no site name)").to_string()),
        ),
        Decision::new("author", author_rule.map(str::to_string)),
    ];
    Decided {
        title,
        published,
        media,
        outlet,
        author,
        decisions,
    }
}
