//! crawler stage of harvest.
