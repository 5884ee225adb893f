//! The author's decision: the tables of the author the markup names and of the
//! one the text labels, which of them wins when the markup names the outlet,
//! and a wire agency credited as the author becoming the media.

use super::media::MediaChoice;
use crate::byline::byline_author;
use crate::dom::{element_text, meta_value};
use crate::media;
use crate::page::{Around, PageView};
use crate::rules::{decide, Rule};
use crate::time::Published;

/// The author the text labels (`作者：`, `（记者 X）`, `By X`), in order.
fn text_author_rules<'r>(
    p: &'r PageView<'_>,
    a: &'r Around<'_>,
    published: Option<Published>,
) -> Vec<Rule<'r>> {
    vec![
        (
            "author label",
            Box::new(|| media::labelled_author(p.header_and_edges(a))),
        ),
        (
            "byline line of the article",
            Box::new(|| media::byline_line_author(p.article_lines.iter().copied())),
        ),
        // `澎湃新闻记者 陈思远` on a line of its own under the headline.
        (
            "byline line under the headline",
            Box::new(|| media::byline_line_author(a.header_above_end.iter().copied())),
        ),
        (
            "reporter beside the date",
            Box::new(move || {
                media::dateline_reporter(
                    a.header.iter().copied(),
                    published.map(|p| p.local.date_naive()),
                )
            }),
        ),
        (
            "poster above 'posted'",
            Box::new(|| media::poster_above_posted(a.header)),
        ),
        // `<a href="/author/kelly-ip">Kelly Ip</a>` under the headline.
        (
            "author link under the headline",
            Box::new(|| {
                p.els.author_links.iter().find_map(|e| {
                    let name = media::author_value(&element_text(e))?;
                    (name.chars().count() <= 40
                        && a.header_above_end.iter().any(|l| l.contains(&name)))
                    .then_some(name)
                })
            }),
        ),
    ]
}

/// The author and its rule. The author the markup names (JSON-LD, meta, a byline
/// element), unless it names the site or the outlet: Chinese portals put their own
/// name in `<meta name="author">` and the reporter in the text, so such a markup author
/// gives way to one the text labels. A wire agency credited as the author filed the
/// story: it becomes the media (unless a source label names one) and no person is
/// named.
pub(crate) fn decide_author(
    p: &PageView<'_>,
    a: &Around<'_>,
    published: Option<Published>,
    m: &mut MediaChoice,
) -> (Option<String>, Option<&'static str>) {
    let marked_rules: Vec<Rule<'_>> = vec![
        ("JSON-LD author", Box::new(|| p.ld.author.clone())),
        (
            "author meta",
            Box::new(|| {
                media::AUTHOR_META_KEYS
                    .iter()
                    .find_map(|k| meta_value(p.metas, k).and_then(media::author_value))
            }),
        ),
        ("byline element", Box::new(|| byline_author(&p.els.byline))),
    ];
    let text_rules = text_author_rules(p, a, published);
    let outlet_media = |m: &MediaChoice| m.media.clone().filter(|_| !m.from_host);
    let title_tag = p.title_tag.as_deref();
    let (author, rule) = match decide(&marked_rules) {
        Some((author, rule))
            if media::names_an_outlet(&author, outlet_media(m).as_deref(), &p.names, title_tag) =>
        {
            // Else a byline element naming someone else (`<a rel="author">`
            // beside `<meta name="author" content="中時電子報">`).
            if let Some((t, rule)) = decide(&text_rules) {
                (Some(t), Some(rule))
            } else if let Some(b) = byline_author(&p.els.byline).filter(|b| *b != author) {
                (
                    Some(b),
                    Some("byline element (the markup author names the outlet)"),
                )
            } else {
                (Some(author), Some(rule))
            }
        }
        Some((author, rule)) => (Some(author), Some(rule)),
        None => decide(&text_rules).unzip(),
    };
    // `<a href="/author/kyodo/">Kyodo</a>`, `By Reuters`: a wire agency
    // credited as the author filed the story.
    if let Some(agency) = author.as_deref().and_then(media::wire_agency) {
        if m.labelled.is_none() {
            m.media = Some(agency);
            m.from_host = false;
            m.rule = vec!["wire agency credited as the author"];
        }
        return (None, None);
    }
    let author = author.map(|author| {
        media::without_outlet_prefix(author, outlet_media(m).as_deref(), &p.names, title_tag)
    });
    (author, rule)
}

#[cfg(test)]
mod tests {
    use crate::extract;
    use crate::tests::url;

    #[test]
    fn the_reporter_of_the_text_over_the_portal_in_the_markup() {
        let u = url("http://tech.example.com/19/1125/a.html");
        // `<meta name="author">` names the portal (the start of the title's
        // last segment): the reporter the text labels wins.
        let portal = "<html><head><title>亚马逊海外购登陆拼多多_网易科技</title>\
            <meta name=\"author\" content=\"网易\"></head><body><h1>亚马逊海外购登陆拼多多</h1>\
            <div>2019-11-25 11:01:53 来源: 新京报</div><div class=\"post_text\">\
            <p>新京报讯（记者 陆一夫）11月25日，新京报记者登录拼多多全球购页面发现，亚马逊海外购与拼多多达成合作。</p>\
            <p>亚马逊中国方面表示，限时快闪店将带来逾千款海外正品的优惠折扣。</p></div></body></html>";
        let x = extract(portal, &u);
        assert_eq!(x.author.as_deref(), Some("陆一夫"));
        assert_eq!(x.media.as_deref(), Some("新京报"));
        // Without a labelled reporter the markup's author stands.
        let alone = portal.replace("（记者 陆一夫）", "");
        assert_eq!(extract(&alone, &u).author.as_deref(), Some("网易"));
        // A related list's `<span class="author">黄斌汉：</span>` is no byline.
        let listed = "<html><head><title>中铁总辟谣称消息不实</title></head><body>\
            <h1>中铁总辟谣称消息不实</h1><div>2018年12月28日 19:55 新京报</div>\
            <div class=\"article\"><p>新京报快讯（记者 裴剑飞）今日有网友爆料，有60万个账号在暗网低价出售。</p>\
            <p>中国铁路总公司表示消息不实。</p></div><ul><li><a href=\"/b\">\
            <span class=\"author\">黄斌汉：</span>新年大礼 雄安总体规划批复</a></li></ul></body></html>";
        assert_eq!(extract(listed, &u).author.as_deref(), Some("裴剑飞"));
    }

    /// China Times' shape: `<meta name="author">` is the outlet, the text
    /// labels no one, a `rel=author` link names the reporter.
    #[test]
    fn a_byline_element_over_an_outlet_in_the_markup() {
        let u = url("https://www.chinatimes.com/realtimenews/20180916001767-260402");
        let page = "<html><head><title>悲慟！北市士林年邁母子 住處上吊自殺身亡 - 中時電子報</title>\
            <meta name=\"author\" content=\"中時電子報\"><meta property=\"og:site_name\" content=\"中時電子報\"></head>\
            <body><h1>悲慟！北市士林年邁母子 住處上吊自殺身亡</h1>\
            <div class=\"rp_name\"><a href=\"/reporter/899\" rel=\"author\">謝明俊</a></div>\
            <article><p>台北市士林區一處公寓今天下午傳出母子在住處身亡，警方到場後確認兩人已無生命跡象。</p>\
            <p>警方表示，詳細原因仍待調查，已報請檢察官相驗。</p></article></body></html>";
        assert_eq!(extract(page, &u).author.as_deref(), Some("謝明俊"));
        // Without it the markup's author stands.
        let alone = page.replace("rel=\"author\">謝明俊", ">謝明俊");
        assert_eq!(extract(&alone, &u).author.as_deref(), Some("中時電子報"));
    }

    #[test]
    fn an_outlets_short_name_before_a_chinese_reporter_is_cut() {
        let u = url("https://finance.caixin.com/2024-09-27/102240000.html");
        let page = |author: &str, site: &str| {
            format!(
                r#"<html><head><title>央行宣布降准_金融频道_{site}</title>
                <meta name="author" content="{author}"><meta property="og:site_name" content="{site}">
                </head><body><h1>央行宣布降准</h1><p>正文。</p></body></html>"#
            )
        };
        let author = |a: &str, site: &str| extract(&page(a, site), &u).author;
        assert_eq!(author("财新 吴雨俭", "财新网").as_deref(), Some("吴雨俭"));
        // Not before other words, and not when the first word is no outlet.
        assert_eq!(
            author("Reuters Staff", "Reuters").as_deref(),
            Some("Reuters Staff")
        );
        assert_eq!(author("王芳 李可", "财新网").as_deref(), Some("王芳、李可"));
    }
}
