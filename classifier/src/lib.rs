//! classifier stage of harvest.
