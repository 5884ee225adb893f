//! How markup becomes lines of text, shared by the body text, the article text, the
//! headline and the media rules: which elements are skipped, which start a line, and
//! how whitespace is squashed. A leaf: it uses no other module of the crate.

/// Elements whose content is not body text. `footer` is page chrome; on the
/// LibreOffice help pages it also holds a CSS-hidden block naming the source
/// file, which is not text a reader sees.
pub(crate) const SKIPPED_ELEMENTS: [&str; 12] = [
    "script", "style", "nav", "noscript", "template", "svg", "iframe", "head", "object", "canvas",
    "select", "footer",
];

/// Elements that start a new line of body text.
pub(crate) const BLOCK_ELEMENTS: [&str; 31] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "aside",
    "main",
    "blockquote",
    "pre",
    "dd",
    "dt",
    "dl",
    "form",
    "hr",
    "figure",
    "figcaption",
    "address",
    "td",
];

/// Collapses runs of whitespace into one space and trims.
pub(crate) fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Appends the words of `text` to `out` separated by single spaces; the
/// first word is preceded by a space unless `out` is empty or ends with one
/// of `no_space_after` (what [`squash`] then a join would give, without
/// allocating).
pub(crate) fn push_squashed(out: &mut String, text: &str, no_space_after: &[char]) {
    let mut words = text.split_whitespace();
    let Some(first) = words.next() else {
        return;
    };
    if !out.is_empty() && !out.ends_with('\n') && !no_space_after.iter().any(|c| out.ends_with(*c))
    {
        out.push(' ');
    }
    out.push_str(first);
    for w in words {
        out.push(' ');
        out.push_str(w);
    }
}

/// A Han character (the CJK ideograph blocks).
pub(crate) fn is_han(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0xF900..=0xFAFF)
}
