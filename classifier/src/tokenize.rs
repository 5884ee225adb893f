//! The tokenizer the classifier reads text with: harvest's shared word tokens (crate
//! `tokens`: jieba with HMM for runs of Chinese characters, Unicode words otherwise,
//! lowercased, stop words dropped), re-exported under the name it has always had here.

pub use tokens::{for_each_token, is_stop_word, tokenize, warm_up, Tokens};
