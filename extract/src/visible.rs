//! The page's visible text: its text nodes outside scripts, styles and
//! navigation, one line per block element, the lines the line-based rules
//! read.

use scraper::{Html, Node};

use crate::lines::{push_squashed, BLOCK_ELEMENTS, SKIPPED_ELEMENTS};

enum Step<T> {
    Visit(T),
    Break,
}

/// Visible text of the document, one line per block element.
pub fn visible_text(doc: &Html) -> String {
    let mut out = String::new();
    let mut stack = vec![Step::Visit(doc.tree.root())];
    let newline = |out: &mut String| {
        if !out.is_empty() && !out.ends_with('\n') {
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('\n');
        }
    };
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Break => {
                newline(&mut out);
                continue;
            }
            Step::Visit(n) => n,
        };
        match node.value() {
            Node::Text(t) => push_squashed(&mut out, t, &[]),
            Node::Element(e) => {
                let name = e.name();
                if SKIPPED_ELEMENTS.contains(&name) {
                    continue;
                }
                let block = BLOCK_ELEMENTS.contains(&name);
                if block {
                    newline(&mut out);
                    stack.push(Step::Break);
                }
                stack.extend(node.children().rev().map(Step::Visit));
            }
            Node::Document | Node::Fragment => {
                stack.extend(node.children().rev().map(Step::Visit));
            }
            _ => {}
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use crate::extract;
    use crate::tests::url;

    #[test]
    fn body_text_skips_script_style_nav() {
        let e = extract(
            "<html><head><title>x</title><style>p{}</style></head><body><nav>Home About</nav><p>First  para</p><script>var a=1;</script><p>Second <b>bold</b></p></body></html>",
            &url("http://example.com/"),
        );
        assert_eq!(e.body_text, "First para\nSecond bold");
    }
}
