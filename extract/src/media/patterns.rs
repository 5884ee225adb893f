//! The forms the media and author rules read, as data: the regular
//! expressions of source and author labels, bylines, reporters' lines,
//! agencies' datelines and the dates beside an outlet or a reporter.

use std::sync::LazyLock;

use regex::Regex;

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static regex is valid")
}

/// `来源：新华社`, `稿源: 人民网`, `Source: AP`, `Source: Al Jazeera and news
/// agencies` (a Latin name runs over its capitalised words: a space does not
/// end it, a lower-case word does).
pub(super) static RE_MEDIA_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:文章来源|本文来源|信息来源|来源于|来源|来自|稿源|出处|(?i:\bsource))\s*[:：]\s*[-–]?\s*(\p{Lu}[\p{L}.'&-]+(?:[ \t]+(?:\p{Lu}[\p{L}.'&-]*|of|de|for))*|[^\s|｜/,，;；:：()（）\[\]【】]{2,40})",
    )
});

/// `作者：王希`, `撰文 | 王希`, `文/王希`, `作者 王希`: a labelled name of 2-4
/// characters (several joined by `、`, or by spaces when of 2-3 characters),
/// ending where the Chinese text ends; roles after the names (`编辑`) are cut
/// by [`super::names::chinese_names`]; an outlet's reporter title may come before them
/// (`作者：南方周末记者 王瑞恩`).
pub(super) static RE_AUTHOR_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:(?:作者|记者|撰文|撰稿|采写|编译|报道|报导|文)\s*[:：/|｜]|作者[ \t\u{3000}]+)\s*(?:[0-9A-Za-z\p{Han}·]{2,16}?记者[ \t\u{3000}]*)?([\p{Han}·]{2,4}(?:(?:、[\p{Han}·]{2,4})|(?:[ \t\u{3000}]+[\p{Han}·]{2,3})){0,3})(?:[^\p{Han}·]|$)",
    )
});

/// `作者：中共科技部党组`, `作者：本报评论员`: a labelled author that is a body,
/// not a person: a name of up to 16 characters ending in a body's word.
pub(super) static RE_BODY_AUTHOR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|\s)(?:作者|撰文|文)\s*[:：/|｜]\s*([\p{Han}·]{1,12}(?:党组|党委|评论员|编辑部|课题组|研究组|研究院|研究所|研究中心|委员会|办公室|中心组|工作组|调研组|写作组))(?:[^\p{Han}·]|$)",
    )
});

/// `楼主：海东青2024`: a forum thread's poster, a user name up to a space.
pub(super) static RE_THREAD_POSTER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:^|\s)楼主\s*[:：]\s*([^\s:：|｜,，]{2,24})"));

/// `作者：民生观察者   发表时间：…`: a user name (any length up to 24) after
/// a poster's label, up to the time label after it (Chinese names of 2-4
/// characters are [`RE_AUTHOR_LABEL`]'s).
pub(super) static RE_HANDLE_POSTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|\s)(?:作者|发帖人|发表人|发布人|发布者)\s*[:：]\s*([^\s:：|｜,，]{2,24})\s+(?:发表时间|发布时间|发表于|发帖时间|时间|日期)",
    )
});

/// `（中央社記者溫貴香台北25日電）`: an agency's dateline in brackets, the
/// reporters' names run into the place they file from and the day.
pub(super) static RE_AGENCY_DATELINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"[（(]\s*\p{Han}{0,8}?记者\s*([\p{Han}·、]{2,40}?)\s*\d{1,2}日电\s*[）)]")
});

/// `南都讯 记者刘嫚 通讯员穗铁宣 12月28日，…`, `本报讯 记者 张三、李四 `: a
/// story's lead naming its reporters without brackets.
pub(super) static RE_LEAD_REPORTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*\p{Han}{1,10}讯[ \t\u{3000}]*\p{Han}{0,8}?记者[ \t\u{3000}]*([\p{Han}·]{2,4}?(?:、[\p{Han}·]{2,4}?){0,3})(?:[ \t\u{3000}，,]|通讯员|实习生|\d|$)",
    )
});

/// `财联社11月25日电`, `新华社北京11月17日电`, `人民网北京11月25日电`,
/// `（中央社記者溫貴香台北25日電）`: an agency's dateline opening a story,
/// the agency (a name ending in `社`, `网` or `台`, the place after it cut).
pub(super) static RE_AGENCY_OUTLET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*(?:【[^】]{1,80}】\s*)?(?:[（(]\s*)?(\p{Han}{1,6}?(?:社|网|台))(?:记者[\p{Han}·、]{2,40}?|\p{Han}{0,6}?\d{1,2}月)\d{1,2}日电",
    )
});

/// `MEMPHIS, Tenn. (AP) —`, `BEIJING, Nov 25 (Reuters) -`, `Taichung, Dec.
/// 12 (CNA) The …`: a wire story's dateline, the place (and a state or the
/// day) before the agency in brackets.
pub(super) static RE_WIRE_DATELINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*\p{Lu}[\p{L}.'’-]*(?:[ -]\p{Lu}[\p{L}.'’-]*){0,3}(?:,\s*[\p{L}.'’ ]{2,20}?(?:\s*\d{1,2})?){0,2}\s*\((\p{Lu}[A-Za-z]{1,14}(?:[ -]\p{Lu}[A-Za-z]+){0,2})\)\s*(--|[-—–:])?",
    )
});

/// `王希/文`, `王希、李明 ／ 文`: the name before the mark, a line of its own
/// (in a sentence a slash and `文` mean other things).
pub(super) static RE_NAME_THEN_WEN: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*([\p{Han}·]{2,4}(?:、[\p{Han}·]{2,4}){0,3})\s*[/／|｜]\s*文\s*$"));

/// `（记者王希）`, `（本报记者 李国利、黄一宸）`, `本报记者 王希 `: a reporter named
/// in brackets or after `本报记者` (`记者从…获悉` is a sentence, not a byline).
pub(super) static RE_AUTHOR_REPORTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"[（(]\s*(?:本报|新华社|中新社)?记者\s*([\p{Han}·]{2,4}(?:、[\p{Han}·]{2,4}){0,3})\s*[）)]|本报记者\s*([\p{Han}·]{2,4})(?:[\s，,。]|$)",
    )
});

/// `（记者 张三 通讯员 李四）`, `【环球时报记者 张晓】`, `（本报实习记者 王五、赵六）`,
/// `【环球时报驻欧洲特约记者 程远 环球时报特约记者 沈舟】`: a
/// bracketed byline whose reporter title may name the outlet and whose names
/// other roles may follow (cut by [`super::names::chinese_names`]); not a photo credit
/// (`（新华社记者 李四 摄）`).
pub(super) static RE_BRACKETED_REPORTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"[（(【〔]\s*\p{Han}{0,12}?记者[ \t\u{3000}]*([\p{Han}·]{2,4}(?:[、 \t\u{3000}]+(?:\p{Han}{0,12}?记者[ \t\u{3000}]*)?[\p{Han}·]{2,4}){0,5})\s*[）)】〕]",
    )
});

/// `記者陳嘉寧／桃園機場報導` (folded: `记者…／…报导`): Taiwan's byline, the
/// reporter and where they report from.
///
/// In brackets the title may be left out: `（王煌忠／台中報導）`, but not a
/// desk (`（國際中心／綜合報導）`, see [`super::words::NOT_REPORTERS`]).
pub(super) static RE_REPORTER_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[\s（(〔【])(?:本报)?记者\s*([\p{Han}·]{2,4})\s*[／/]\s*\p{Han}{1,12}(?:报导|报道)|[（(〔【]\s*([\p{Han}·]{2,4})\s*[／/]\s*\p{Han}{1,12}(?:报导|报道)\s*[）)〕】]",
    )
});

/// `By Jane Doe` at the start of a line (`Von`, `Par`, `Por`, `Door` on
/// German, French, Spanish and Dutch pages).
pub(super) static RE_BYLINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:By|BY|by|Von|VON|von|Par|PAR|par|Por|POR|por|Door|door)\s+(\p{Lu}[\p{L}.'-]+(?:(?:\s+|\s+(?:and|und|et|y|en)\s+)(?:\p{Lu}[\p{L}.'-]*|de|van|von|da|del|la)){0,7})",
    )
});

/// `《 人民日报 》（ 2024年11月25日 第 09 版）`: the newspaper whose page an
/// article was printed on, a line of its own.
pub(super) static RE_EDITION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*《\s*([^《》]{2,20}?)\s*》\s*[（(]\s*(?:19|20)\d{2}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日\s*(?:第\s*[0-9A-Za-z]{1,4}\s*版|[0-9A-Za-z]{1,4}\s*版)\s*[）)]\s*$",
    )
});

/// The end of a sentence inside a line: `. `, `! `, `? ` before more text,
/// or a Chinese full stop.
pub(super) static RE_SENTENCE_END: LazyLock<Regex> =
    LazyLock::new(|| re(r#"[.!?]["'”’)]?\s+\S|[。！？]"#));

/// A numeric date with an optional time of day, as Chinese portals print
/// them on the line under a headline (`2019-09-26 10:56:28`, `2019年09月11日01:53`),
/// or a month and day with a time, as apps print them (`11-25 15:05`).
pub(super) static RE_DATELINE_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?:\s*\d{1,2}:\d{2}(?::\d{2})?)?|(?:^|\s)(\d{1,2})\s*[-/月]\s*(\d{1,2})\s*日?\s+\d{1,2}:\d{2}(?::\d{2})?",
    )
});

/// `记者 王希`, `本报记者 王希、李明` among a dateline's words.
pub(super) static RE_DATELINE_REPORTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[\s|｜])\p{Han}{0,8}记者[ \t\u{3000}]*([\p{Han}·]{2,4}(?:、[\p{Han}·]{2,4}){0,3})(?:[\s|｜]|$)",
    )
});

/// A dateline under a headline: a publish label or none, then a day with or
/// without its year and a time (`发布时间：10-08 12:00`, `18-03-08 23:16`).
pub(super) static RE_SHORT_DATELINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:\p{Han}{2,4}\s*[:：]\s*)?(?:\d{2,4}[-/.年])?\d{1,2}[-/.月]\d{1,2}日?\s*\d{1,2}:\d{2}")
});

/// `澎湃新闻记者 朱奕奕`, `新京报记者 陆一夫 实习生 张三`, `记者 王希`,
/// `界面新闻记者 | 李可`: a line that is only an outlet's reporter title and
/// names (roles cut by [`super::names::chinese_names`]); the outlet's name may hold a `·`
/// (`中青报·中青网记者 邱晨辉`), a bullet may lead (`■南方日报记者 刘倩`,
/// `□本报记者`), and an agency's dateline may come first on its own line
/// (`新华社广州11月17日电 记者周颖、李嘉乐`).
pub(super) static RE_REPORTER_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[■□●○◎▲△◆◇★☆•▪\s]*(?:\p{Han}{2,12}?\d{1,2}月\d{1,2}日电[ \t\u{3000}]*)?[\p{Han}·+＋]{0,12}记者[ \t\u{3000}]*(?:[|｜:：/／][ \t\u{3000}]*)?([\p{Han}·][\p{Han}·、 \t\u{3000}]{1,40})$",
    )
});

/// `南方周末记者 王瑞恩`, `作者：澎湃新闻记者 朱奕奕`, `（中国青年报记者 邱晨辉）`: the
/// outlet a byline's reporter writes for (ASCII letters and digits beside its
/// Chinese characters, `21世纪经济报道`; a rank between, `首席记者`): the media
/// that wrote the article. `本报记者` names none, nor does an agency's dateline.
pub(super) static RE_REPORTER_OUTLET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[■□●○◎▲△◆◇★☆•▪\s]*(?:(?:作者|文|采写|撰文|记者)[ \t\u{3000}]*[:：/／|｜][ \t\u{3000}]*|[（(【〔][ \t\u{3000}]*)?([0-9A-Za-z\p{Han}·]{2,16}?)(?:首席|特约|实习|见习|驻\p{Han}{1,4})?记者[ \t\u{3000}]*(?:[|｜:：/／][ \t\u{3000}]*)?([\p{Han}·][\p{Han}·、 \t\u{3000}]{1,30}?)[ \t\u{3000}]*[）)】〕]?$",
    )
});

/// `김철수 기자`: a Korean reporter's byline, a line of its own.
pub(super) static RE_KO_REPORTER: LazyLock<Regex> =
    LazyLock::new(|| re(r"^([\p{Hangul}]{2,4})[ \t]*기자$"));

/// `By `, `Posted by `, `Written by `, `Von `: the words before a byline's
/// names.
pub(super) static RE_BY_PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:(?:Posted|posted|Written|written|Reported|reported|Story|Words)\s+)?(?:By|BY|by|Von|von|Par|par|Por|por|Door|door)\s+",
    )
});
