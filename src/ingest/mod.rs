//! The glue between the stages: crawler events in, then per batch
//! analyse → decide → place → write → sync → index, each step a module.
//!
//! The storage side runs on its own OS thread (the storage traits are
//! synchronous); the crawler runs on tokio and feeds it through a bounded
//! channel, so a slow disk slows the crawl instead of filling memory.

pub mod analyse;
mod batch;
mod decide;
mod index;
pub mod place;
pub mod progress;
pub mod records;
pub mod run;
pub mod store;
mod write;

pub use crate::summary::{IngestSummary, StorageTimes};
pub use analyse::*;
pub use progress::*;
pub use run::*;
pub use store::*;
