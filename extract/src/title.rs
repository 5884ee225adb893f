//! Title: the full headline from `<title>`, `og:title`, JSON-LD `headline`
//! and the article's `<h1>`, without the site name around it.
//!
//! The `<h1>` is the headline as the reader sees it: when it agrees with one
//! of the other sources it is taken as is. Otherwise `og:title` (cut at an
//! unescaped `"` by broken markup on some sites, so a longer `<title>` that
//! starts with it wins), JSON-LD, then `<title>` with the site suffix or
//! prefix removed. Titles longer than [`MAX_TITLE_CHARS`] are not titles.

use crate::lines::squash;

/// A candidate longer than this (characters) is rejected.
pub const MAX_TITLE_CHARS: usize = 400;

/// Separators between a headline and a site name, spaced (any script).
const SPACED_SEPARATORS: [&str; 11] = [
    " | ", " - ", " – ", " — ", " :: ", " · ", " _ ", " ｜ ", " » ", " / ", " : ",
];
/// Separators used without spaces (CJK titles).
const TIGHT_SEPARATORS: [char; 10] = ['_', '|', '｜', '│', '丨', '-', '－', '—', '–', '：'];

/// Longest site-name segment cut without knowing the site's name.
const SITE_SEGMENT_CHARS: usize = 24;

/// Decodes the entities that survived one round of decoding (`&amp;quot;` in
/// the source gives `&quot;` after parsing).
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find('&') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        // Within the first 10 bytes (a byte search: slicing at 10 could cut a
        // character, found by fuzz_html_extractor).
        let end = rest.bytes().take(10).position(|b| b == b';');
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "nbsp" => Some(' '),
                "ldquo" => Some('“'),
                "rdquo" => Some('”'),
                "lsquo" => Some('‘'),
                "rsquo" => Some('’'),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                _ => {
                    let n = name.strip_prefix('#')?;
                    let code = match n.strip_prefix(['x', 'X']) {
                        Some(h) => u32::from_str_radix(h, 16).ok()?,
                        None => n.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            }?;
            Some((c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Comparison form: lower case, one kind of quote and dash, no spaces.
fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '“' | '”' | '„' | '«' | '»' | '「' | '」' | '＂' => '"',
            '‘' | '’' | '`' => '\'',
            '–' | '—' | '－' => '-',
            c => c,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

fn clean(s: &str) -> Option<String> {
    let t = squash(&decode_entities(s));
    let n = t.chars().count();
    (n > 0 && n <= MAX_TITLE_CHARS).then_some(t)
}

/// Whether `segment` names the site: it contains one of `site_names` (the
/// page's own site name, labels of its host) or they contain it, or it is a
/// domain name (`CNN.com`) or a short Chinese site name (`新浪网`, `网易新闻`).
fn names_site(segment: &str, site_names: &[String]) -> bool {
    let seg = norm(segment);
    let domain = seg.contains('.')
        && !seg.contains(' ')
        && seg.rsplit('.').next().is_some_and(|tld| {
            (2..=6).contains(&tld.len()) && tld.chars().all(|c| c.is_ascii_alphabetic())
        });
    const CJK_SITE_ENDINGS: [&str; 8] = [
        "网",
        "新闻",
        "频道",
        "日报",
        "晚报",
        "在线",
        "客户端",
        "官网",
    ];
    let folded = crate::fold::fold(&seg);
    let cjk_site = seg.chars().count() <= 10
        && seg.chars().all(is_cjk)
        && CJK_SITE_ENDINGS.iter().any(|e| folded.ends_with(e));
    if domain || cjk_site {
        return true;
    }
    !seg.is_empty()
        && site_names.iter().any(|s| {
            let s = norm(s);
            s.chars().count() >= 2
                && (seg.contains(&s) || (seg.chars().count() >= 2 && s.contains(&seg)))
        })
}

/// Splits `title` at its last (or first, `from_end = false`) separator:
/// (headline part, site part).
fn split_at_separator(title: &str, from_end: bool) -> Option<(String, String)> {
    let spaced = SPACED_SEPARATORS
        .iter()
        .filter_map(|sep| {
            let p = if from_end {
                title.rfind(sep)
            } else {
                title.find(sep)
            }?;
            Some((p, sep.len()))
        })
        .reduce(|a, b| if (b.0 > a.0) == from_end { b } else { a });
    let found = spaced.or_else(|| {
        if !title.chars().any(is_cjk) {
            return None;
        }
        let p = if from_end {
            title.rfind(TIGHT_SEPARATORS)
        } else {
            title.find(TIGHT_SEPARATORS)
        }?;
        let len = title[p..].chars().next()?.len_utf8();
        Some((p, len))
    })?;
    let (before, after) = (title[..found.0].trim(), title[found.0 + found.1..].trim());
    if before.is_empty() || after.is_empty() {
        return None;
    }
    Some(if from_end {
        (before.to_string(), after.to_string())
    } else {
        (after.to_string(), before.to_string())
    })
}

/// The site's name a `<title>` ends with (`…-和讯网`, `…_中山网`,
/// `…-CSDN.NET`): its last segment after a separator, when that names a site
/// ([`names_site`]): what a page without any other outlet's name calls itself.
pub fn site_segment(title: &str, site_names: &[String]) -> Option<String> {
    let t = squash(&decode_entities(title));
    let (head, site) = split_at_separator(&t, true)?;
    let n = site.chars().count();
    (head.chars().count() >= 2 && (2..=30).contains(&n) && names_site(&site, site_names))
        .then_some(site)
}

/// The site's name after the headline in a `<title>` (`…扩张-36氪`, `… -
/// 业主论坛 - 江城社区 - Powered by Discuz!`): the last segment of what
/// follows the page's `headline` there, a forum software's credit left out.
/// What a page that names no outlet anywhere else calls itself.
pub fn segment_after_headline(title: &str, headline: &str) -> Option<String> {
    let t = squash(&decode_entities(title));
    let rest = t.strip_prefix(squash(headline).as_str())?;
    let separated = rest.starts_with(|c: char| c.is_whitespace() || TIGHT_SEPARATORS.contains(&c));
    let mut rest = rest
        .trim_start_matches(|c: char| c.is_whitespace() || TIGHT_SEPARATORS.contains(&c))
        .to_string();
    if !separated || rest.is_empty() {
        return None;
    }
    loop {
        let (head, last) = split_at_separator(&rest, true).unwrap_or_default();
        let last = if last.is_empty() { rest.clone() } else { last };
        if !last.to_lowercase().starts_with("powered by") {
            let n = last.chars().count();
            return ((2..=30).contains(&n) && !last.chars().all(|c| c.is_ascii_digit()))
                .then_some(last);
        }
        if head.is_empty() {
            return None;
        }
        rest = head;
    }
}

/// Whether each `·`-part of `name` (`澎湃新闻·澎湃号·湃客`) is in what follows
/// `headline` in `title` (`…_澎湃号·湃客_澎湃新闻-The Paper`): the name of
/// the site or of its channel, not of an outlet.
pub fn names_the_sites_part(title: &str, headline: &str, name: &str) -> bool {
    let t = squash(&decode_entities(title));
    let Some(rest) = t.strip_prefix(squash(headline).as_str()) else {
        return false;
    };
    let parts: Vec<&str> = name
        .split(['·', '・'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    !parts.is_empty() && parts.iter().all(|p| rest.contains(p))
}

/// `<title>` without the site name: segments that name the site (or are
/// short next to the rest) are cut from the end, then from the start.
pub fn strip_site(title: &str, site_names: &[String]) -> String {
    let mut t = squash(title);
    for from_end in [true, false] {
        for _ in 0..3 {
            let Some((head, site)) = split_at_separator(&t, from_end) else {
                break;
            };
            let (hn, sn) = (head.chars().count(), site.chars().count());
            let known = names_site(&site, site_names);
            // Without a known site name, only the end is cut, and only a
            // short part next to a long headline.
            let short = from_end
                && sn <= SITE_SEGMENT_CHARS
                && sn * 2 <= hn
                && site.split_whitespace().count() <= 4;
            if !(known && hn >= 2 || short) {
                break;
            }
            t = head;
        }
    }
    // `决议__2007年第23号国务院公报_中国政府网`: a doubled separator leaves one.
    let trimmed = t.trim_end_matches(|c: char| c.is_whitespace() || TIGHT_SEPARATORS.contains(&c));
    if trimmed.chars().count() >= 2 && trimmed.len() < t.len() {
        return trimmed.to_string();
    }
    t
}

/// The longest part a space alone sets off from a headline that
/// [`as_shown`] leaves out.
const SPACED_PART_CHARS: usize = 10;

/// The headline as the page shows it, when a line of the page's text is the
/// title without a part before or after it that a separator sets off (a
/// section: `明日股市预测--最新出炉…`, a bracketed forum name: `…怎么样？【考研吧】`):
/// the line is at least half the title and
/// the part left out is not the start of the next line (a title the page
/// wraps). `None`: the title stands; always for titles without Chinese or
/// Japanese characters (strip_site knows the sites of the others).
pub fn as_shown(title: &str, lines: &[&str]) -> Option<String> {
    let bare = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let title = squash(title);
    let t_chars = title.chars().count();
    let cjk = title
        .chars()
        .any(|c| ('\u{3040}'..='\u{30ff}').contains(&c) || ('\u{4e00}'..='\u{9fff}').contains(&c));
    if t_chars < 8 || !cjk {
        return None;
    }
    // The part left out: after the line (`trailing`) or before it. Not a
    // colon: `央行：…` is the headline's own.
    let shown_whole = lines.iter().any(|l| l.trim() == title);
    let set_off = |part: &str, trailing: bool| {
        let p = part.trim();
        let sep = |c: char| "_|｜│丨-－–—·»/".contains(c);
        // A short name a space sets off (`…开展调研工作 东区办事处`, a
        // department after the headline), unless the page shows the title
        // whole too (a headline of two clauses).
        let spaced = !shown_whole
            && if trailing {
                part.starts_with(char::is_whitespace)
            } else {
                part.ends_with(char::is_whitespace)
            };
        let short_name = spaced
            && (2..=SPACED_PART_CHARS).contains(&p.chars().count())
            && !p.contains(char::is_whitespace);
        // A bracketed part (`…怎么样？【考研吧】`, a forum's name).
        let bracketed = p.starts_with('【') && p.ends_with('】');
        !p.is_empty()
            && (short_name
                || bracketed
                || if trailing {
                    p.starts_with(sep)
                } else {
                    p.ends_with(sep)
                })
    };
    let mut best: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let l = line.trim();
        let n = l.chars().count();
        if n * 2 < t_chars || n >= t_chars || n < 6 {
            continue;
        }
        // A title wrapped over two lines of the page is not a shorter one.
        let wrapped = |rest: &str| {
            lines
                .get(i + 1)
                .is_some_and(|next| bare(next).starts_with(&bare(rest)))
        };
        let fits = title
            .strip_prefix(l)
            .is_some_and(|rest| set_off(rest, true) && !wrapped(rest))
            || title
                .strip_suffix(l)
                .is_some_and(|rest| set_off(rest, false))
            // Parts on both sides: `【图片】…【军事吧】`.
            || title.find(l).is_some_and(|at| {
                let (before, after) = (&title[..at], &title[at + l.len()..]);
                set_off(before, false) && set_off(after, true) && !wrapped(after)
            });
        if fits && best.is_none_or(|b| b.len() < l.len()) {
            best = Some(l);
        }
    }
    best.map(str::to_string)
}

/// The title spaced as the page shows it: a Chinese or Japanese title with a
/// space the page's own lines do not have (`<title>…2007　年末…</title>`
/// where the headline reads `…2007年末…`, here wrapped over three lines with
/// `<br>`) loses that space. The page's lines, one or more in a row, must
/// hold the title's characters exactly; a space where the page breaks a line
/// or has one too stays. `None`: the title stands.
pub fn as_spaced(title: &str, lines: &[&str]) -> Option<String> {
    const MAX_LINES: usize = 6;
    let bare = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    if !title.chars().any(char::is_whitespace) || !title.chars().any(is_cjk) {
        return None;
    }
    let want = bare(title);
    let first = want.chars().next()?;
    let shown = (0..lines.len()).find_map(|i| {
        // Only a line that starts as the title does can start it (no
        // whitespace-free copy of every other line).
        if !lines[i].trim_start().starts_with(first) {
            return None;
        }
        let mut got = String::new();
        for (k, line) in lines[i..].iter().take(MAX_LINES).enumerate() {
            let b = bare(line);
            if b.is_empty() || !want[got.len()..].starts_with(&b) {
                return None;
            }
            got.push_str(&b);
            if got.len() == want.len() {
                return Some(lines[i..=i + k].join("\n"));
            }
        }
        None
    })?;
    let mut out = String::with_capacity(title.len());
    let mut t = title.chars().peekable();
    let mut v = shown.chars().peekable();
    loop {
        let mut t_space = String::new();
        while let Some(c) = t.next_if(|c| c.is_whitespace()) {
            t_space.push(c);
        }
        let mut v_space = false;
        while v.next_if(|c| c.is_whitespace()).is_some() {
            v_space = true;
        }
        if v_space {
            out.push_str(&t_space);
        }
        match (t.next(), v.next()) {
            (Some(a), Some(b)) if a == b => out.push(a),
            (None, None) => break,
            _ => return None,
        }
    }
    let out = out.trim().to_string();
    (out != title).then_some(out)
}

/// Site names usable to recognise a suffix: labels of the host (`reuters`
/// of www.reuters.com), besides what the page says.
pub fn host_names(host: Option<&str>) -> Vec<String> {
    const GENERIC: [&str; 10] = [
        "www", "com", "cn", "net", "org", "news", "co", "uk", "html", "m",
    ];
    host.map(|h| {
        h.split('.')
            .filter(|l| l.len() >= 3 && !GENERIC.contains(l))
            .map(str::to_string)
            .collect()
    })
    .unwrap_or_default()
}

/// The headline from the page's sources; `site_names`: `og:site_name`,
/// `application-name`, host labels.
pub fn choose(
    title_tag: Option<&str>,
    og: Option<&str>,
    headline: Option<&str>,
    h1s: &[String],
    site_names: &[String],
) -> Option<String> {
    choose_ruled(title_tag, og, headline, h1s, site_names).map(|(t, _)| t)
}

/// [`choose`], with the name of the rule that decided.
pub fn choose_ruled(
    title_tag: Option<&str>,
    og: Option<&str>,
    headline: Option<&str>,
    h1s: &[String],
    site_names: &[String],
) -> Option<(String, &'static str)> {
    let title_tag = title_tag.and_then(clean);
    let stripped = title_tag.as_deref().map(|t| strip_site(t, site_names));
    let og = og.and_then(clean);
    let headline = headline.and_then(clean);
    let h1s: Vec<String> = h1s.iter().take(4).filter_map(|h| clean(h)).collect();

    // The visible headline, when another source confirms it.
    for h in &h1s {
        let hn = norm(h);
        if hn.chars().count() < 2 || names_site(h, site_names) && hn.chars().count() < 12 {
            continue;
        }
        let same = |o: &Option<String>| o.as_deref().is_some_and(|o| norm(o) == hn);
        let in_title = title_tag.as_deref().is_some_and(|t| {
            let tn = norm(t);
            let sn = stripped.as_deref().map(norm).unwrap_or_default();
            tn.contains(&hn) && hn.chars().count() * 5 >= sn.chars().count() * 3
        });
        // The title starts or ends with the headline, a separator next to it.
        // At the end it is as long as the rest at least: a short `<h1>` there
        // is the site's name (`Outside the web: … · V8` and the logo `V8`).
        let framed = title_tag.as_deref().is_some_and(|t| {
            let sep = |rest: &str| {
                let r = rest.trim();
                r.is_empty()
                    || r.starts_with(TIGHT_SEPARATORS)
                    || r.starts_with(['|', '-', '–', '—', ':', '·', '»', '/'])
            };
            let h = h.as_str();
            t.strip_prefix(h).is_some_and(sep)
                || t.strip_suffix(h).is_some_and(|r| {
                    sep(&r.chars().rev().collect::<String>())
                        && h.chars().count() >= r.trim().chars().count()
                })
        });
        if same(&og) || same(&headline) || same(&stripped) || in_title || framed {
            return Some((h.clone(), "<h1> confirmed by <title>, og:title or JSON-LD"));
        }
    }
    // A title that only names the site (`人民日报 -- 人民网` on each page of an
    // e-paper), and nothing else gives a headline: the first `<h1>` does.
    if og.is_none() && headline.is_none() {
        if let (Some(s), Some(h)) = (stripped.as_deref(), h1s.first()) {
            if names_site(s, site_names)
                && !names_site(h, site_names)
                && h.chars().count() > s.chars().count()
            {
                return Some((h.clone(), "<h1> under a <title> that names only the site"));
            }
        }
    }
    let og = og.map(|o| strip_site(&o, site_names));
    if let Some(o) = og {
        // og:title cut short (an unescaped quote ends the attribute): the
        // longer <title> or headline that starts with it is the full one.
        let on = norm(&o);
        let longer = [headline.as_deref(), stripped.as_deref()]
            .into_iter()
            .flatten()
            .find(|t| {
                let tn = norm(t);
                tn.len() > on.len() && tn.starts_with(&on)
            });
        return Some(match longer {
            Some(l) => (l.to_string(), "og:title completed by a longer title"),
            None => (o, "og:title"),
        });
    }
    headline
        .map(|h| (strip_site(&h, site_names), "JSON-LD headline"))
        .or(stripped.map(|t| (t, "<title> without the site's name")))
        .filter(|(t, _)| !t.is_empty())
        .or_else(|| h1s.into_iter().next().map(|h| (h, "first <h1>")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A `<title>`'s last segment after the headline names the site; a
    /// forum software's credit does not.
    #[test]
    fn a_name_in_the_sites_part() {
        let t = "数据观察｜快递业务量增长21%_澎湃号·湃客_澎湃新闻-The Paper";
        let h = "数据观察｜快递业务量增长21%";
        assert!(names_the_sites_part(t, h, "澎湃新闻·澎湃号·湃客"));
        assert!(!names_the_sites_part(t, h, "国家邮政局"));
        assert!(!names_the_sites_part(t, "另一个标题", "澎湃新闻"));
    }

    #[test]
    fn the_segment_after_the_headline() {
        let h = "老小区加装电梯，一楼住户该不该补偿？";
        assert_eq!(
            segment_after_headline(
                &format!("{h} - 业主论坛 -  江城社区 -  Powered by Discuz!"),
                h
            )
            .as_deref(),
            Some("江城社区")
        );
        assert_eq!(
            segment_after_headline(
                "某企业拟追加投资，海外产能再扩张-36氪",
                "某企业拟追加投资，海外产能再扩张"
            )
            .as_deref(),
            Some("36氪")
        );
        // Nothing after it, or no separator: no site.
        assert_eq!(segment_after_headline(h, h), None);
        assert_eq!(
            segment_after_headline(&format!("{h}【新能源汽车吧】"), h),
            None
        );
        assert_eq!(segment_after_headline("Another headline - Site", h), None);
    }

    #[test]
    fn the_headline_as_the_page_shows_it() {
        let lines = [
            "首页 > 股市预测",
            "最新出炉联合国贸发报告：2019年全球经济增长率降至2.3%",
            "2019-09-26 10:09:11",
        ];
        assert_eq!(
            as_shown(
                "明日股市预测--最新出炉联合国贸发报告：2019年全球经济增长率降至2.3%",
                &lines
            )
            .as_deref(),
            Some("最新出炉联合国贸发报告：2019年全球经济增长率降至2.3%")
        );
        // Bracketed parts on both sides.
        assert_eq!(
            as_shown(
                "【图片】国产新型两栖攻击舰海试画面流出，细节分析一波【军事吧】",
                &[
                    "军事吧",
                    "国产新型两栖攻击舰海试画面流出，细节分析一波",
                    "只看楼主"
                ]
            )
            .as_deref(),
            Some("国产新型两栖攻击舰海试画面流出，细节分析一波")
        );
        // A bracketed part the page does not show with the headline.
        assert_eq!(
            as_shown(
                "大家觉得今年的考研难度怎么样？【考研吧】",
                &["考研吧", "大家觉得今年的考研难度怎么样？", "清风徐来"]
            )
            .as_deref(),
            Some("大家觉得今年的考研难度怎么样？")
        );
        // A colon belongs to the headline; a wrapped title is the title.
        assert_eq!(
            as_shown(
                "央行：稳健的货币政策要精准有力",
                &["稳健的货币政策要精准有力"]
            ),
            None
        );
        assert_eq!(
            as_shown(
                "多地出台新政 支持以旧换新_第二部分",
                &["多地出台新政 支持以旧换新", "_第二部分"]
            ),
            None
        );
        // A short name a space alone sets off, after or before the headline.
        assert_eq!(
            as_shown(
                "区委书记一行到金融街开展调研工作 东区办事处",
                &["区委书记一行到金融街开展调研工作", "2019-09-26"]
            )
            .as_deref(),
            Some("区委书记一行到金融街开展调研工作")
        );
        assert_eq!(
            as_shown(
                "原创 最不愁吃肉的国家：顿顿有肉吃",
                &["最不愁吃肉的国家：顿顿有肉吃"]
            )
            .as_deref(),
            Some("最不愁吃肉的国家：顿顿有肉吃")
        );
        // Not a clause of a headline the page also shows whole, nor a long
        // one, nor a part the next line starts with.
        let two_clauses = "多地项目连环爆雷 狂奔的龙湖集团";
        assert_eq!(
            as_shown(two_clauses, &["多地项目连环爆雷", two_clauses]),
            None
        );
        assert_eq!(
            as_shown(
                "多地出台新政支持以旧换新 家电汽车消费一季度明显回暖",
                &["多地出台新政支持以旧换新"]
            ),
            None
        );
        assert_eq!(
            as_shown(
                "多地出台新政支持以旧换新 消费回暖",
                &["多地出台新政支持以旧换新", "消费回暖"]
            ),
            None
        );
        // Other scripts: strip_site's business.
        assert_eq!(
            as_shown("Foo happens again - Part two", &["Foo happens again"]),
            None
        );
        // A doubled separator leaves no trailing one.
        assert_eq!(
            strip_site(
                "全国人民代表大会常务委员会关于批准财政部发行特别国债购买外汇及调整2007年末国债余额限额的决议__2007年第23号国务院公报_中国政府网",
                &names(&["中国政府网"])
            ),
            "全国人民代表大会常务委员会关于批准财政部发行特别国债购买外汇及调整2007年末国债余额限额的决议"
        );
    }

    #[test]
    fn the_site_a_title_ends_with() {
        let none: [String; 0] = [];
        assert_eq!(
            site_segment(
                "交通运输部：着力打造京津冀区域综合立体交通网络-股票频道-和讯网",
                &none
            )
            .as_deref(),
            Some("和讯网")
        );
        assert_eq!(
            site_segment(
                "第三届知道安全论坛鸟巢举办 知道创宇发布新版ZoomEye-CSDN.NET ",
                &none
            )
            .as_deref(),
            Some("CSDN.NET")
        );
        assert_eq!(
            site_segment("Foo happens again | Reuters", &names(&["reuters"])).as_deref(),
            Some("Reuters")
        );
        // A headline's own dash or colon, a part that names no site: none.
        assert_eq!(
            site_segment("1-10月德清县固定资产投资结构趋稳趋优", &none),
            None
        );
        assert_eq!(site_segment("Foo happens again - Part two", &none), None);
    }

    #[test]
    fn traditional_site_names_and_box_drawing_separators() {
        assert_eq!(
            strip_site(
                "和男友口角鎖門吞藥 女墜樓不治│即時新聞│20160521│蘋果日報",
                &[]
            ),
            "和男友口角鎖門吞藥 女墜樓不治"
        );
        assert_eq!(
            strip_site("澎湖重度殘障男子 陳屍馬公水仙宮旁空屋丨聯合新聞網", &[]),
            "澎湖重度殘障男子 陳屍馬公水仙宮旁空屋"
        );
    }

    #[test]
    fn a_space_the_page_does_not_show_is_dropped() {
        let lines = [
            "全国人民代表大会常务委员会",
            "关于批准财政部发行特别国债购买外汇及",
            "调整2007年末国债余额限额的决议",
            "（2007年6月29日第十届全国人民代表大会常务委员会第二十八次会议通过）",
        ];
        assert_eq!(
            as_spaced(
                "全国人民代表大会常务委员会关于批准财政部发行特别国债购买外汇及调整2007\u{3000}年末国债余额限额的决议",
                &lines
            )
            .as_deref(),
            Some("全国人民代表大会常务委员会关于批准财政部发行特别国债购买外汇及调整2007年末国债余额限额的决议")
        );
        // A space the page shows, or where it breaks the line, stays.
        assert_eq!(
            as_spaced("多地出台新政 支持以旧换新", &["多地出台新政 支持以旧换新"]),
            None
        );
        assert_eq!(
            as_spaced(
                "多地出台新政 支持以旧换新",
                &["多地出台新政", "支持以旧换新"]
            ),
            None
        );
        assert_eq!(
            as_spaced("多地出台新政 支持以旧换新", &["多地出台新政支持以旧换新"]).as_deref(),
            Some("多地出台新政支持以旧换新")
        );
        // Not the page's headline (other characters), or not Chinese: none.
        assert_eq!(
            as_spaced("多地出台新政 支持以旧换新", &["多地出台新政策"]),
            None
        );
        assert_eq!(as_spaced("Foo bar", &["Foobar"]), None);
    }

    /// v8.dev-style pages: the logo `<h1>V8</h1>` ends the `<title>`
    /// (`… · V8`) and comes before the article's `<h1>`.
    #[test]
    fn a_short_h1_at_the_end_of_the_title_is_the_site() {
        let h1s = names(&["V8", "Outside the web: standalone WebAssembly binaries"]);
        assert_eq!(
            choose(
                Some("Outside the web: standalone WebAssembly binaries · V8"),
                None,
                None,
                &h1s,
                &[],
            )
            .as_deref(),
            Some("Outside the web: standalone WebAssembly binaries")
        );
        // A headline at the end of the title, after the site's name.
        assert_eq!(
            choose(
                Some("V8 · Outside the web"),
                None,
                None,
                &names(&["Outside the web"]),
                &[]
            )
            .as_deref(),
            Some("Outside the web")
        );
    }

    #[test]
    fn site_suffixes_and_prefixes_go() {
        let none: Vec<String> = Vec::new();
        assert_eq!(
            strip_site("暴雨来袭 多地停课 - 网易新闻", &none),
            "暴雨来袭 多地停课"
        );
        assert_eq!(
            strip_site("央行宣布降准0.5个百分点_新浪财经_新浪网", &names(&["sina"])),
            "央行宣布降准0.5个百分点"
        );
        assert_eq!(
            strip_site(
                "Oil prices rise on supply fears | Reuters",
                &names(&["reuters"])
            ),
            "Oil prices rise on supply fears"
        );
        assert_eq!(
            strip_site(
                "Reuters | Oil prices rise on supply fears",
                &names(&["reuters"])
            ),
            "Oil prices rise on supply fears"
        );
        assert_eq!(
            strip_site("短缺药品保供稳价 全力保障临床用药需求-新华网", &none),
            "短缺药品保供稳价 全力保障临床用药需求"
        );
        // A dash inside the headline stays.
        assert_eq!(
            strip_site("Biden - Trump debate draws record audience", &none),
            "Biden - Trump debate draws record audience"
        );
        assert_eq!(
            strip_site("COVID-19疫情最新情况", &none),
            "COVID-19疫情最新情况"
        );
    }

    #[test]
    fn a_headline_with_ascii_quotes_is_not_cut() {
        // <meta property="og:title" content="He said "no" to the plan"> gives og = `He said `.
        let t = choose(
            Some(r#"He said "no" to the plan - Example News"#),
            Some("He said "),
            None,
            &[],
            &names(&["example"]),
        );
        assert_eq!(t.as_deref(), Some(r#"He said "no" to the plan"#));
        let t = choose(
            Some(r#"外交部："不接受"所谓裁决_新闻_腾讯网"#),
            None,
            None,
            &[r#"外交部："不接受"所谓裁决"#.to_string()],
            &names(&["qq"]),
        );
        assert_eq!(t.as_deref(), Some(r#"外交部："不接受"所谓裁决"#));
    }

    #[test]
    fn h1_confirmed_by_title_wins_and_entities_decode() {
        let t = choose(
            Some("Storm passes &amp; snow falls - CNN.com"),
            None,
            None,
            &["CNN".into(), "Storm passes &amp; snow falls".into()],
            &names(&["cnn"]),
        );
        assert_eq!(t.as_deref(), Some("Storm passes & snow falls"));
        // A title that only names the site: the h1.
        let t = choose(
            Some("人民日报 -- 人民网"),
            None,
            None,
            &["我国科技创新能力稳步提升".into()],
            &names(&["people"]),
        );
        assert_eq!(t.as_deref(), Some("我国科技创新能力稳步提升"));
        assert_eq!(
            decode_entities("a &quot;b&quot; &#27979;&#x8BD5; &bogus; &"),
            "a \"b\" 测试 &bogus; &"
        );
    }

    #[test]
    fn absurd_titles_are_missing() {
        let long = "x".repeat(10_000);
        assert_eq!(choose(Some(&long), Some(&long), None, &[], &[]), None);
        assert_eq!(
            choose(Some(&long), None, None, &["Real headline".into()], &[]).as_deref(),
            Some("Real headline")
        );
        assert_eq!(choose(None, None, None, &[], &[]), None);
    }
}
