//! The `images` table: the perceptual hashes of the images archived with
//! their pages (`[crawl] images` / `requisites`), one row per (image URL,
//! payload), for the near-duplicate image groups of `harvest dedup` (photo
//! reuse across sites).
//!
//! Row key: `[url-hash 8B][payload digest]`; family `a`, cell `i` = JSON of
//! [`ImageEntry`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::index::Index;
use crate::keys::url_hash;
use crate::record::{PackLocation, FAMILY_ATTRS};
use crate::store::{Cell, Row};

pub use super::IMAGES_TABLE;

const Q_IMAGE: &[u8] = b"i";

/// One archived image and its hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageEntry {
    /// The image's URL.
    pub url: String,
    /// The first page of the crawl that embedded it.
    pub page_url: String,
    /// Source of that page.
    pub source: String,
    /// When the image was fetched.
    pub time: DateTime<Utc>,
    /// Payload digest (`sha1:…`).
    pub digest: String,
    /// Payload bytes.
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
    /// aHash, dHash and pHash (64 bits each; version in `hash_version`).
    pub ahash: u64,
    pub dhash: u64,
    pub phash: u64,
    pub hash_version: u32,
    /// Where its record is.
    pub location: PackLocation,
}

fn key(url: &str, digest: &str) -> Vec<u8> {
    let mut k = url_hash(url).to_vec();
    k.extend_from_slice(digest.as_bytes());
    k
}

impl Index {
    /// Files image hashes (after their records are durable).
    pub fn put_images(&self, images: &[ImageEntry]) -> Result<()> {
        if images.is_empty() {
            return Ok(());
        }
        let rows = images
            .iter()
            .map(|i| {
                Ok(Row {
                    key: key(&i.url, &i.digest),
                    cells: vec![Cell::new(FAMILY_ATTRS, Q_IMAGE, serde_json::to_vec(i)?)],
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.store.put(IMAGES_TABLE, &rows)
    }

    /// Every filed image, streamed; `visit` returns `false` to stop.
    pub fn each_image(&self, visit: &mut dyn FnMut(ImageEntry) -> bool) -> Result<()> {
        self.each_json(IMAGES_TABLE, Q_IMAGE, visit)
    }
}
