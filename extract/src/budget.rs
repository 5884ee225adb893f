//! Budgets of one page's extraction (issue 13): however hostile the markup,
//! a page costs about a second of CPU at most and a bounded number of links.
//!
//! - **Nesting depth.** html5ever's tree builder walks its stack of open
//!   elements for most start tags (is there a `<p>` in button scope?), so a
//!   page of `n` nested elements costs O(n²): 25,000 nested `<div>` took
//!   1.6 s, 200,000 over 2 minutes. [`flatten`] is a linear pre-scan that
//!   follows the nesting (void elements, raw-text elements, comments, implied
//!   end tags of `p`/`li`/`td`/... and end tags that close unclosed children,
//!   as the HTML parser does) and, when the page goes deeper than
//!   [`Limits::max_depth`], leaves the tags below that depth out of the copy
//!   that is parsed; their text stays, attached at the limit. Browsers do
//!   the same: Blink's parser attaches elements deeper than 512 levels as
//!   siblings. The archived bytes are never touched: only the DOM the
//!   attributes are read from is flatter.
//! - **Parse CPU.** As a backstop for shapes the pre-scan does not model, the
//!   DOM is fed to html5ever in [`PARSE_CHUNK_BYTES`] chunks and feeding stops
//!   once the parse used [`Limits::parse_cpu`] of the thread's CPU time; the
//!   attributes then come from the part parsed so far, the links from the
//!   tokenizer over the whole page (linear time, not budgeted: the links of a
//!   page never depend on the machine's speed).
//! - **Links.** At most [`Limits::max_links`] distinct links a page; a link
//!   whose absolute URL is longer than [`Limits::max_url_length`] is dropped.
//!
//! What the budgets did to a page is in [`crate::Extracted::limits`]; the
//! crawl adds it up in its summary.

use std::time::Duration;

pub use shapes::page::{
    LimitReport, Limits, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LINKS, DEFAULT_MAX_URL_LENGTH,
    DEFAULT_PARSE_CPU,
};

/// Bytes fed to the parser between two looks at the CPU clock.
pub const PARSE_CHUNK_BYTES: usize = 8 * 1024;

/// CPU time used by the calling thread so far (wall time where the platform
/// has no thread clock).
#[allow(unsafe_code, reason = "clock_gettime through libc")]
pub fn thread_cpu_time() -> Duration {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into the valid,
        // exclusively borrowed `ts`.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if rc == 0 {
            return Duration::new(
                u64::try_from(ts.tv_sec).unwrap_or(0),
                u32::try_from(ts.tv_nsec).unwrap_or(0),
            );
        }
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// A CPU budget started now on the calling thread.
#[derive(Debug, Clone, Copy)]
pub struct CpuBudget {
    start: Duration,
    budget: Duration,
}

impl CpuBudget {
    /// `budget` of the calling thread's CPU time from now.
    pub fn start(budget: Duration) -> Self {
        CpuBudget {
            start: thread_cpu_time(),
            budget,
        }
    }

    /// Whether the thread has used the budget up.
    pub fn spent(&self) -> bool {
        thread_cpu_time().saturating_sub(self.start) >= self.budget
    }
}

/// Result of [`flatten`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flattened {
    /// The page without the tags deeper than the limit; `None` when the page
    /// stays within it (parse the original).
    pub html: Option<String>,
    /// Deepest nesting seen.
    pub depth: usize,
    /// Tags left out.
    pub dropped: u64,
}

/// Element classes (bits) the scan needs; see [`flags`].
const VOID: u16 = 1;
/// Content is text up to the end tag.
const RAW: u16 = 1 << 1;
/// The start tag closes an open `<p>`.
const CLOSES_P: u16 = 1 << 2;
/// Implied end tags of list items never look past it.
const LIST_STOP: u16 = 1 << 3;
/// `svg`, `math`: there `/>` closes an element.
const FOREIGN: u16 = 1 << 4;
/// `html`, `head`, `body`: never a new level.
const ROOT: u16 = 1 << 5;
/// Boundary of the button scope (a `<p>` is not looked for past it).
const P_STOP: u16 = 1 << 6;
/// A marker of the active formatting elements (`<a>` is not looked for past it).
const MARKER: u16 = 1 << 7;
/// `h1`..`h6`.
const HEADING: u16 = 1 << 8;
/// `table`.
const TABLE: u16 = 1 << 9;
/// `tr`.
const ROW: u16 = 1 << 10;
/// `tbody`, `thead`, `tfoot`.
const SECTION: u16 = 1 << 11;

/// The classes of a lowercase element name.
fn flags(n: &[u8]) -> u16 {
    match n {
        b"area" | b"base" | b"basefont" | b"bgsound" | b"br" | b"col" | b"embed" | b"frame"
        | b"image" | b"img" | b"input" | b"keygen" | b"link" | b"meta" | b"param" | b"source"
        | b"track" | b"wbr" => VOID,
        b"hr" => VOID | CLOSES_P,
        b"script" | b"style" | b"xmp" | b"iframe" | b"noembed" | b"noframes" | b"noscript"
        | b"textarea" | b"title" => RAW,
        b"html" => ROOT | LIST_STOP | P_STOP,
        b"head" | b"body" => ROOT | LIST_STOP,
        b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" => CLOSES_P | HEADING,
        b"ul" | b"ol" | b"menu" | b"dl" | b"blockquote" | b"fieldset" => CLOSES_P | LIST_STOP,
        b"address" | b"article" | b"aside" | b"center" | b"details" | b"dialog" | b"dir"
        | b"div" | b"figcaption" | b"figure" | b"footer" | b"form" | b"header" | b"hgroup"
        | b"main" | b"nav" | b"p" | b"pre" | b"section" | b"summary" | b"li" | b"dd" | b"dt"
        | b"listing" => CLOSES_P,
        b"table" => TABLE | LIST_STOP | P_STOP | MARKER,
        b"td" | b"th" | b"caption" => LIST_STOP | P_STOP | MARKER,
        b"template" | b"object" | b"applet" | b"marquee" => LIST_STOP | P_STOP | MARKER,
        b"tr" => ROW | LIST_STOP,
        b"tbody" | b"thead" | b"tfoot" => SECTION | LIST_STOP,
        b"button" | b"select" => LIST_STOP | P_STOP,
        b"svg" | b"math" => FOREIGN | LIST_STOP | P_STOP,
        _ => 0,
    }
}

/// How far down the stack implied end tags look.
const IMPLIED_WINDOW: usize = 16;
/// How far down the stack an end tag looks for its element.
const END_TAG_WINDOW: usize = 64;
/// Bytes of a name kept (longer names compare by this prefix).
const NAME_BYTES: usize = 15;

/// A lowercase element name, inline.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Name {
    b: [u8; NAME_BYTES],
    len: u8,
}

impl Name {
    fn of(s: &[u8]) -> Name {
        let mut b = [0u8; NAME_BYTES];
        let len = s.len().min(NAME_BYTES);
        for (d, c) in b.iter_mut().zip(&s[..len]) {
            *d = c.to_ascii_lowercase();
        }
        Name { b, len: len as u8 }
    }

    fn bytes(&self) -> &[u8] {
        &self.b[..self.len as usize]
    }
}

/// An open element.
#[derive(Clone, Copy)]
struct Open {
    name: Name,
    flags: u16,
}

/// What an implied end tag looks for: names, or classes.
#[derive(Clone, Copy)]
enum Target<'a> {
    Names(&'a [&'a [u8]]),
    Class(u16),
}

impl Target<'_> {
    fn matches(&self, o: &Open) -> bool {
        match self {
            Target::Names(ns) => ns.contains(&o.name.bytes()),
            Target::Class(c) => o.flags & c != 0,
        }
    }
}

struct Scan {
    max_depth: usize,
    /// Elements within the limit.
    kept: Vec<Open>,
    /// Elements below the limit (their tags are cut).
    dropped: Vec<Open>,
    /// Open `svg`/`math` elements (there `/>` closes an element).
    foreign: usize,
    cuts: Vec<(usize, usize)>,
    cut_tags: u64,
    depth: usize,
}

impl Scan {
    /// Leaves `from..to` (one tag, or an element's text and end tag) out.
    fn cut(&mut self, from: usize, to: usize) {
        self.cut_tags += 1;
        match self.cuts.last_mut() {
            Some(last) if last.1 == from => last.1 = to,
            _ => self.cuts.push((from, to)),
        }
    }

    fn pop_to(&mut self, len: usize, deep: bool) {
        let stack = if deep {
            &mut self.dropped
        } else {
            &mut self.kept
        };
        if len >= stack.len() {
            return;
        }
        let foreign = stack[len..]
            .iter()
            .filter(|o| o.flags & FOREIGN != 0)
            .count();
        stack.truncate(len);
        self.foreign = self.foreign.saturating_sub(foreign);
    }

    /// Index in a stack of the nearest element that `target` matches,
    /// looking at most `window` elements down and never past `stops`.
    fn find(&self, deep: bool, target: Target<'_>, stops: u16, window: usize) -> Option<usize> {
        let stack = if deep { &self.dropped } else { &self.kept };
        for (i, o) in stack.iter().enumerate().rev().take(window) {
            if target.matches(o) {
                return Some(i);
            }
            if o.flags & stops != 0 {
                return None;
            }
        }
        None
    }

    /// The end tags a start tag implies (`<li>` closes an open `<li>`).
    fn implied_end(&mut self, open: &Open) {
        let deep = !self.dropped.is_empty();
        let n = open.name.bytes();
        let rule: Option<(Target<'_>, u16, usize)> = match n {
            b"li" => Some((Target::Names(&[b"li"]), LIST_STOP, IMPLIED_WINDOW)),
            b"dt" | b"dd" => Some((Target::Names(&[b"dt", b"dd"]), LIST_STOP, IMPLIED_WINDOW)),
            b"td" | b"th" => Some((Target::Names(&[b"td", b"th"]), TABLE | ROW, IMPLIED_WINDOW)),
            b"tr" => Some((Target::Class(ROW), TABLE | SECTION, IMPLIED_WINDOW)),
            b"tbody" | b"thead" | b"tfoot" => Some((Target::Class(SECTION), TABLE, IMPLIED_WINDOW)),
            b"option" => Some((Target::Names(&[b"option"]), 0, 1)),
            b"optgroup" => Some((Target::Names(&[b"option", b"optgroup"]), 0, 2)),
            // One `<a>` never holds another: the parser closes the first.
            b"a" => Some((Target::Names(&[b"a"]), MARKER, IMPLIED_WINDOW)),
            b"nobr" => Some((Target::Names(&[b"nobr"]), MARKER, IMPLIED_WINDOW)),
            b"button" => Some((Target::Names(&[b"button"]), MARKER, IMPLIED_WINDOW)),
            _ if open.flags & HEADING != 0 => Some((Target::Class(HEADING), 0, 1)),
            _ => None,
        };
        if let Some((target, stops, window)) = rule {
            if let Some(i) = self.find(deep, target, stops, window) {
                self.pop_to(i, deep);
            }
        }
        if open.flags & CLOSES_P != 0 {
            if let Some(i) = self.find(deep, Target::Names(&[b"p"]), P_STOP, IMPLIED_WINDOW) {
                self.pop_to(i, deep);
            }
        }
    }

    /// A start tag at `tag`; true when it was cut (deeper than the limit).
    fn start_tag(&mut self, open: Open, tag: (usize, usize), self_closing: bool) -> bool {
        if open.flags & (ROOT | VOID) != 0 || (self_closing && self.foreign > 0) {
            // Below the limit every tag goes: a `<g/>` whose `<svg>` was cut
            // would open an element in the copy (found by fuzz_nesting_prescan).
            if !self.dropped.is_empty() {
                self.cut(tag.0, tag.1);
            }
            return false;
        }
        self.implied_end(&open);
        let deep = self.kept.len() >= self.max_depth;
        if open.flags & FOREIGN != 0 {
            self.foreign += 1;
        }
        if deep {
            self.dropped.push(open);
            self.cut(tag.0, tag.1);
        } else {
            self.kept.push(open);
        }
        // html, body: two levels the page does not write.
        self.depth = self.depth.max(self.kept.len() + self.dropped.len() + 2);
        deep
    }

    fn end_tag(&mut self, name: Name, tag: (usize, usize)) {
        let n = name.bytes();
        let target = Target::Names(std::slice::from_ref(&n));
        if !self.dropped.is_empty() {
            if let Some(i) = self.find(true, target, 0, END_TAG_WINDOW) {
                self.pop_to(i, true);
                self.cut(tag.0, tag.1);
                return;
            }
        }
        if flags(n) & ROOT != 0 || n == b"br" {
            if !self.dropped.is_empty() {
                self.cut(tag.0, tag.1);
            }
            return;
        }
        match self.find(false, target, 0, END_TAG_WINDOW) {
            Some(i) => {
                self.pop_to(i, false);
                // Closing a kept element closes everything below it.
                self.pop_to(0, true);
            }
            None if !self.dropped.is_empty() => self.cut(tag.0, tag.1),
            None => {}
        }
    }
}

/// Index of the first occurrence of `needle` in `hay` at or after `from`.
fn find_bytes(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Like [`find_bytes`], ASCII case-insensitive.
fn find_ci(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| p + from)
}

/// End (exclusive) of the tag whose attributes start at `from`: after its
/// `>`, skipping quoted attribute values.
fn tag_end(b: &[u8], from: usize) -> usize {
    let mut j = from;
    let mut after_eq = false;
    while j < b.len() {
        match b[j] {
            b'>' => return j + 1,
            q @ (b'"' | b'\'') if after_eq => {
                j = match b[j + 1..].iter().position(|&c| c == q) {
                    Some(p) => j + 1 + p + 1,
                    None => b.len(),
                };
                after_eq = false;
                continue;
            }
            b'=' => after_eq = true,
            c if c.is_ascii_whitespace() => {}
            _ => after_eq = false,
        }
        j += 1;
    }
    b.len()
}

/// End (exclusive) of a tag name starting at `from`.
fn name_end(b: &[u8], from: usize) -> usize {
    let mut j = from;
    while j < b.len() && !matches!(b[j], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>') {
        j += 1;
    }
    j
}

/// Walks the page's tags once (linear time) and, when it nests deeper than
/// `max_depth`, returns a copy without the tags below that depth (see the
/// module docs). Tag names are cut at ASCII whitespace, `/` or `>` only, so
/// a name never ends inside a multi-byte character.
pub fn flatten(html: &str, max_depth: usize) -> Flattened {
    let b = html.as_bytes();
    let mut s = Scan {
        max_depth,
        kept: Vec::new(),
        dropped: Vec::new(),
        foreign: 0,
        cuts: Vec::new(),
        cut_tags: 0,
        depth: 0,
    };
    let mut i = 0;
    while let Some(p) = b[i..].iter().position(|&c| c == b'<') {
        i += p;
        let Some(&c) = b.get(i + 1) else { break };
        if c == b'!' {
            i = if b[i..].starts_with(b"<!--") {
                // `<!-->` and `<!--->` end at once.
                let body = i + 4;
                if b[body..].starts_with(b">") {
                    body + 1
                } else if b[body..].starts_with(b"->") {
                    body + 2
                } else {
                    find_bytes(b, body, b"-->").map_or(b.len(), |e| e + 3)
                }
            } else {
                find_bytes(b, i + 2, b">").map_or(b.len(), |e| e + 1)
            };
            continue;
        }
        if c == b'?' {
            i = find_bytes(b, i + 2, b">").map_or(b.len(), |e| e + 1);
            continue;
        }
        if c == b'/' {
            match b.get(i + 2) {
                Some(n) if n.is_ascii_alphabetic() => {
                    let ne = name_end(b, i + 2);
                    let end = tag_end(b, ne);
                    s.end_tag(Name::of(&b[i + 2..ne]), (i, end));
                    i = end;
                }
                Some(b'>') => i += 3,
                _ => i = find_bytes(b, i + 2, b">").map_or(b.len(), |e| e + 1),
            }
            continue;
        }
        if !c.is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let ne = name_end(b, i + 1);
        let end = tag_end(b, ne);
        let self_closing = end >= 2 && b[end - 1] == b'>' && b[end - 2] == b'/';
        let name = Name::of(&b[i + 1..ne]);
        if name.bytes() == b"plaintext" {
            break;
        }
        let open = Open {
            name,
            flags: flags(name.bytes()),
        };
        let raw = open.flags & RAW != 0 && !(self_closing && s.foreign > 0);
        let deep = s.start_tag(open, (i, end), self_closing);
        i = end;
        if raw {
            // The content is text up to `</name`; a cut element goes whole.
            let mut close = Vec::with_capacity(NAME_BYTES + 2);
            close.extend_from_slice(b"</");
            close.extend_from_slice(name.bytes());
            let content_end = find_ci(b, i, &close).unwrap_or(b.len());
            let after = if content_end < b.len() {
                tag_end(b, content_end + close.len())
            } else {
                b.len()
            };
            if deep {
                s.cut(i, after);
                s.dropped.pop();
            } else {
                s.kept.pop();
            }
            i = after;
        }
    }
    if s.cuts.is_empty() {
        return Flattened {
            html: None,
            depth: s.depth,
            dropped: 0,
        };
    }
    let mut out = String::with_capacity(html.len());
    let mut at = 0;
    for (from, to) in &s.cuts {
        out.push_str(&html[at..*from]);
        // `<` + a cut tag + `div>` would join into a new tag in the copy
        // (found by fuzz_nesting_prescan): a space keeps them apart.
        if matches!(
            out.as_bytes().last(),
            Some(b'<' | b'/' | b'!' | b'?' | b'-')
        ) {
            out.push(' ');
        }
        at = *to;
    }
    out.push_str(&html[at..]);
    Flattened {
        html: Some(out),
        depth: s.depth,
        dropped: s.cut_tags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(n: usize) -> String {
        format!(
            "<html><body>{}text{}</body></html>",
            "<div>".repeat(n),
            "</div>".repeat(n)
        )
    }

    #[test]
    fn shallow_pages_are_not_copied() {
        let html =
            "<html><body><div><p>a<p>b<ul><li>x<li>y</ul></div><br><img src=x></body></html>";
        let f = flatten(html, 8);
        assert_eq!(f.html, None);
        assert!(f.depth <= 6, "{}", f.depth);
    }

    #[test]
    fn implied_end_tags_do_not_count_as_depth() {
        let mut html = String::from("<table>");
        for _ in 0..500 {
            html.push_str("<tr><td>cell<td>cell<p>para<li>item<option>o");
        }
        html.push_str("</table>");
        for _ in 0..500 {
            html.push_str("<p>para <b>bold <a href=x>link<a href=y>other");
        }
        let f = flatten(&html, 64);
        assert_eq!(f.html, None, "depth {}", f.depth);
    }

    #[test]
    fn deep_nesting_is_flattened_to_the_limit() {
        let f = flatten(&nested(1000), 100);
        let out = f.html.expect("flattened");
        assert_eq!(f.depth, 1002);
        assert_eq!(f.dropped, 2 * 900);
        assert_eq!(out.matches("<div>").count(), 100);
        assert_eq!(out.matches("</div>").count(), 100);
        assert!(out.contains("text"));
        // The copy is within the limit by the same measure.
        assert_eq!(flatten(&out, 100).html, None);
    }

    #[test]
    fn self_closing_divs_nest_outside_svg() {
        let html = format!("<body>{}</body>", "<div/>".repeat(300));
        assert!(flatten(&html, 100).html.is_some());
        let svg = format!("<svg>{}</svg>", "<path/>".repeat(300));
        assert_eq!(flatten(&svg, 100).html, None);
    }

    #[test]
    fn deep_script_is_cut_whole_and_markup_in_raw_text_is_ignored() {
        let html = format!(
            "<script>var s = '{}';</script>{}<script>alert('<div>')</script>x{}",
            "<div>".repeat(500),
            "<span>".repeat(20),
            "</span>".repeat(20)
        );
        let f = flatten(&html, 10);
        let out = f.html.expect("flattened");
        assert!(out.starts_with("<script>var s = '<div>"));
        assert!(!out.contains("alert"), "{out}");
        assert!(out.contains('x'));
        assert_eq!(f.depth, 23);
    }

    #[test]
    fn comments_and_quoted_brackets_are_not_tags() {
        let html = format!(
            "<!-- {} --><a title=\"<div>\" href='>'>x</a><!---->",
            "<div>".repeat(500)
        );
        assert_eq!(flatten(&html, 10).html, None);
    }

    /// Regression (fuzz_nesting_prescan): cutting a deep `<svg>` kept its
    /// `<g/>` children, which open elements outside svg: 60,000 of them
    /// nested 60,000 deep in the copy.
    #[test]
    fn self_closing_tags_under_a_cut_svg_are_cut_too() {
        let html = format!("{}<svg>{}", "<div>".repeat(10), "<g/>".repeat(60_000));
        let f = flatten(&html, 10);
        let out = f.html.expect("flattened");
        assert!(!out.contains("<g/>"));
        assert_eq!(flatten(&out, 10).html, None);
    }

    /// Regression (fuzz_nesting_prescan): cutting `<i>` out of `<<i>div>`
    /// made a `<div>` in the copy, so cuts could build the nesting they
    /// were meant to remove.
    #[test]
    fn cuts_never_join_text_into_new_tags() {
        let html = format!("{}{}", "<div>".repeat(10), "<<i>div>".repeat(50_000));
        let out = flatten(&html, 10).html.expect("flattened");
        assert!(!out.contains("<div>div"), "{}", &out[..200]);
        assert_eq!(flatten(&out, 10).html, None);
        assert_eq!(flatten(&out, 10).depth, 12);
    }

    #[test]
    fn truncated_input_never_panics() {
        for html in [
            "<",
            "<d",
            "<div",
            "<div a=\"",
            "</",
            "</d",
            "<!--",
            "<!",
            "<?",
            "<script>",
            "<div>é<",
        ] {
            let _ = flatten(html, 1);
        }
        let deep = nested(50);
        for cut in 0..deep.len() {
            let _ = flatten(&deep[..cut], 3);
        }
    }
}
