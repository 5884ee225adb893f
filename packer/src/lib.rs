//! packer stage of harvest.
