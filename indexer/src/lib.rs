//! indexer stage of harvest.
