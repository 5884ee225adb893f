//! Damage a pack keeps: a torn last record cut away (the original kept beside it), and
//! the damaged regions in the middle of a pack recorded in `PACK.damaged`.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::stores::Stores;

/// Suffix of the file beside a pack that records its damaged regions
/// (`PACK.damaged`, JSON [`DamageFile`]), written by `fsck --repair`.
pub const DAMAGE_SUFFIX: &str = ".damaged";

/// `PACK.damaged`: the damaged regions of a pack that `fsck --repair` took
/// note of (their rows removed; the bytes kept where they are).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DamageFile {
    /// The regions, by offset.
    pub regions: Vec<RecordedRegion>,
}

/// One region of a [`DamageFile`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRegion {
    pub offset: u64,
    pub length: u64,
    pub reason: String,
    /// When the repair took note of it (RFC 3339).
    pub recorded_at: String,
}

/// Replaces the pack at `path` by its readable prefix `whole`: written to
/// a new file, synced, then the torn original is renamed aside
/// (`PATH.torn-YYYYMMDDHHMMSS`, kept: nothing archived is thrown away) and
/// the new file takes its name.
pub(super) fn cut_torn_pack(stores: &Stores, path: &str, whole: &[u8]) -> Result<()> {
    let stamp = chrono::Utc::now().format("%Y%m%d%H%M%S");
    let fresh = format!("{path}.repaired-{stamp}");
    let aside = format!("{path}.torn-{stamp}");
    let mut w = stores
        .packs
        .create(&fresh)
        .with_context(|| format!("creating {fresh}"))?;
    w.append(whole)
        .with_context(|| format!("writing {fresh}"))?;
    w.sync().with_context(|| format!("syncing {fresh}"))?;
    w.close().with_context(|| format!("closing {fresh}"))?;
    stores
        .packs
        .rename(path, &aside)
        .with_context(|| format!("moving the torn {path} aside"))?;
    stores
        .packs
        .rename(&fresh, path)
        .with_context(|| format!("putting the repaired {path} in place"))?;
    Ok(())
}

/// The damage file `path` (`len` bytes).
pub(super) fn read_damage_file(stores: &Stores, path: &str, len: u64) -> Result<DamageFile> {
    let bytes = stores
        .packs
        .read_range(path, 0, len)
        .with_context(|| format!("reading {path}"))?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!("{path} is not a damage record of fsck --repair (move it aside to check the pack afresh)")
    })
}

/// Writes the damage file `path`: a new file, synced, that then takes the
/// place of the old one (`had`). A crash in between loses the record, and
/// the next fsck reports the regions again (exit 1) until a repair records
/// them once more; nothing else depends on it.
pub(super) fn write_damage_file(
    stores: &Stores,
    path: &str,
    file: &DamageFile,
    had: bool,
) -> Result<()> {
    let stamp = chrono::Utc::now().format("%Y%m%d%H%M%S%f");
    let fresh = format!("{path}.new-{stamp}");
    let mut text = serde_json::to_vec_pretty(file)?;
    text.push(b'\n');
    let mut w = stores
        .packs
        .create(&fresh)
        .with_context(|| format!("creating {fresh}"))?;
    w.append(&text)
        .with_context(|| format!("writing {fresh}"))?;
    w.sync().with_context(|| format!("syncing {fresh}"))?;
    w.close().with_context(|| format!("closing {fresh}"))?;
    if had {
        stores
            .packs
            .delete(path)
            .with_context(|| format!("replacing {path}"))?;
    }
    stores
        .packs
        .rename(&fresh, path)
        .with_context(|| format!("putting {path} in place"))?;
    Ok(())
}
