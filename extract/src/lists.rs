//! The word lists the extraction rules match against (agencies, labels, words that
//! are no names or outlets), one data file each in `lists/`, embedded in the crate:
//! an entry a line, as written; a line starting with `#` is a comment, a blank line
//! is skipped. Adding a word is adding a line.

use std::sync::LazyLock;

/// One embedded list, read on first use.
pub(crate) type List = LazyLock<Vec<&'static str>>;

/// The entries of a list file.
pub(crate) fn parse(text: &'static str) -> Vec<&'static str> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_blank_lines_are_no_entries() {
        assert_eq!(
            parse("# agencies\nReuters\n\nAFP\n# the end\n"),
            ["Reuters", "AFP"]
        );
    }
}
