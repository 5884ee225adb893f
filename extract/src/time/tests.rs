use chrono::{DateTime, TimeZone, Utc};

use super::candidates::*;
use super::contextual::*;
use super::decide::*;
use super::labels::*;
use super::numerals::*;
use super::scan::*;
use super::stated::*;
use super::*;

fn fetched() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 3, 10, 4, 0, 0)
        .single()
        .expect("valid")
}

fn first(text: &str) -> Option<String> {
    let d = text_dates(text).into_iter().next()?;
    let local = d
        .stated
        .resolve(chrono_tz::Asia::Shanghai)?
        .with_timezone(&chrono_tz::Asia::Shanghai);
    Some(
        local
            .format(if d.has_time {
                "%Y-%m-%d %H:%M %:z"
            } else {
                "%Y-%m-%d"
            })
            .to_string(),
    )
}

#[test]
fn a_label_is_found_before_a_later_use_of_its_word() {
    let w = "时间：地铁运营时间";
    assert_eq!(label_end(w, "时间"), Some("时间".len()));
    assert_eq!(label_end("地铁运营时间", "时间"), None);
    assert_eq!(label_end("运营时间：", "时间"), Some("运营时间".len()));
}

#[test]
fn dates_in_chinese_numerals() {
    assert_eq!(han_number("二〇二四"), Some(2024));
    assert_eq!(han_number("十"), Some(10));
    assert_eq!(han_number("十一"), Some(11));
    assert_eq!(han_number("二十"), Some(20));
    assert_eq!(han_number("三十一"), Some(31));
    assert_eq!(han_number("十十"), None);
    let d = text_dates("中国软件行业协会 二〇二四年十一月二十日");
    assert_eq!(d.len(), 1);
    assert!(!d[0].has_time);
    assert_eq!(
        d[0].stated
            .resolve(chrono_tz::UTC)
            .map(|l| l.date_naive().to_string()),
        Some("2024-11-20".to_string())
    );
    assert!(text_dates("二〇二四年十三月一日").is_empty());
}

#[test]
fn a_zone_abbreviation_beside_a_time_and_a_hyphenated_day() {
    let utc = |t: &str| {
        let d = text_dates(t);
        assert_eq!(d.len(), 1, "{t}");
        d[0].stated
            .resolve(chrono_tz::Asia::Shanghai)
            .map(|l| l.with_timezone(&chrono::Utc).to_rfc3339())
    };
    // RTHK's zone between the day and the time, RFA's after it.
    assert_eq!(
        utc("2024-11-25 HKT 20:31").as_deref(),
        Some("2024-11-25T12:31:00+00:00")
    );
    assert_eq!(
        utc("2024.12.02 12:31 EST").as_deref(),
        Some("2024-12-02T17:31:00+00:00")
    );
    // No abbreviation: the page's zone.
    assert_eq!(
        utc("2024-11-25 20:31").as_deref(),
        Some("2024-11-25T12:31:00+00:00")
    );
    // CST names more than one zone: the page's zone stands.
    assert_eq!(
        utc("2024-11-25 20:31 CST").as_deref(),
        Some("2024-11-25T12:31:00+00:00")
    );
    // People's Daily English: a 24-hour time, a comma, the date.
    assert_eq!(
        utc("16:45, November 25, 2024").as_deref(),
        Some("2024-11-25T08:45:00+00:00")
    );
    // CGTN's time before a hyphenated day.
    assert_eq!(
        utc("Updated 16:45, 17-Dec-2024").as_deref(),
        Some("2024-12-17T08:45:00+00:00")
    );
    let d = text_dates("Published 17-Dec-2024");
    assert!(d.len() == 1 && !d[0].has_time);
    assert_eq!(
        d[0].stated
            .resolve(chrono_tz::UTC)
            .map(|l| l.date_naive().to_string())
            .as_deref(),
        Some("2024-12-17")
    );
}

#[test]
fn a_reposts_original_date_is_not_its_publish_date() {
    let line = "本文转自经济日报，原文发布于2024年11月10日。";
    let at = first_date_start(line).expect("a date");
    assert_eq!(label_before(line, at), Label::Other);
    let own = "发布于2024年11月12日";
    assert_eq!(
        label_before(own, first_date_start(own).unwrap()),
        Label::Publish
    );
}

#[test]
fn text_date_forms() {
    assert_eq!(
        first("2023-11-17 20:52:15").as_deref(),
        Some("2023-11-17 20:52 +08:00")
    );
    assert_eq!(
        first("2023年11月17日 20:52").as_deref(),
        Some("2023-11-17 20:52 +08:00")
    );
    assert_eq!(
        first("2023年1月7日08:05 来源：人民网").as_deref(),
        Some("2023-01-07 08:05 +08:00")
    );
    // A time before a day-first date.
    assert_eq!(
        first("Published: 12:30pm, 24 Oct 2024").as_deref(),
        Some("2024-10-24 12:30 +08:00")
    );
    assert_eq!(
        first("16:30, Thu 24 October 2024").as_deref(),
        Some("2024-10-24 16:30 +08:00")
    );
    // A weekday between the day and the time.
    assert_eq!(
        first("2024年11月25日(一) 17:42").as_deref(),
        Some("2024-11-25 17:42 +08:00")
    );
    assert_eq!(
        first("2024年11月26日 星期二 08:55").as_deref(),
        Some("2024-11-26 08:55 +08:00")
    );
    assert_eq!(
        first("2023-1-7 8:05:09").as_deref(),
        Some("2023-01-07 08:05 +08:00")
    );
    assert_eq!(first("2019/9/7").as_deref(), Some("2019-09-07"));
    assert_eq!(
        first("2019.09.07 下午3:05").as_deref(),
        Some("2019-09-07 15:05 +08:00")
    );
    assert_eq!(
        first("2013-11-27T08:36:32Z").as_deref(),
        Some("2013-11-27 16:36 +08:00")
    );
    assert_eq!(
        first("Updated 10:20 AM ET, Wed November 27, 2013").as_deref(),
        Some("2013-11-27 23:20 +08:00")
    );
    assert_eq!(
        first("Published December 27, 2014 at 12:06 PM").as_deref(),
        Some("2014-12-27 12:06 +08:00")
    );
    assert_eq!(first("17 November 2023").as_deref(), Some("2023-11-17"));
    assert_eq!(
        first("ID 120231117093000"),
        None,
        "digits of a longer number"
    );
    assert_eq!(first("0000-00-00 00:00"), None);
    assert_eq!(first("2023-13-45"), None);
}

/// Held-out pages (go-htmldate's German and French news and blogs) write
/// the day first: `15.2.2018, 19:51`, `24. Juli 2017 - 18:55`.
#[test]
fn day_first_numeric_dates() {
    assert_eq!(
        first("Donnerstag, 15.2.2018, 19:51").as_deref(),
        Some("2018-02-15 19:51 +08:00")
    );
    assert_eq!(
        first("Datum: 22.12.2012, Rubrik: USA").as_deref(),
        Some("2012-12-22")
    );
    assert_eq!(
        first("04.02.2022 | 13:10 Uhr | Uta Helkenberg").as_deref(),
        Some("2022-02-04 13:10 +08:00")
    );
    assert_eq!(first("26/10/2018").as_deref(), Some("2018-10-26"));
    assert_eq!(
        first("10/26/2018").as_deref(),
        Some("2018-10-26"),
        "US order"
    );
    assert_eq!(first("08/08/2017").as_deref(), Some("2017-08-08"));
    assert_eq!(
        first("21-11-2023 10:29").as_deref(),
        Some("2023-11-21 10:29 +08:00")
    );
    assert_eq!(first("02/10/2020"), None, "day and month could be swapped");
    assert_eq!(first("12.10/2020"), None, "two separators");
    assert_eq!(first("v1.2.3.2020"), None, "a version");
    assert_eq!(first("31.02.2020"), None);
    assert_eq!(
        first("已本地化的日期字符串 \"11/22/1999\" 或 \"22.11.1999\" 无法用于自动转换"),
        None,
        "CJK text writes dates year first"
    );
}

/// Month names of other languages: `24. April 2020`, `27 juin 2019`.
#[test]
fn day_first_month_name_dates() {
    assert_eq!(
        first("Gespeichert von rasos am 24. Juli 2017 - 18:55").as_deref(),
        Some("2017-07-24 18:55 +08:00")
    );
    assert_eq!(
        first("Samstag, 5. Oktober 2013").as_deref(),
        Some("2013-10-05")
    );
    assert_eq!(
        first("Georg Quaas, 21. Jan. 2015").as_deref(),
        Some("2015-01-21")
    );
    assert_eq!(first("18. März 2020").as_deref(), Some("2020-03-18"));
    assert_eq!(
        first("jeudi 27 juin 2019, par").as_deref(),
        Some("2019-06-27")
    );
    assert_eq!(
        first("le 1er mai 2020 à 10h30").as_deref(),
        Some("2020-05-01 10:30 +08:00")
    );
    assert_eq!(first("13 de junio de 2019").as_deref(), Some("2019-06-13"));
    assert_eq!(
        first("9 oktober 2020 11:12").as_deref(),
        Some("2020-10-09 11:12 +08:00")
    );
    assert_eq!(
        first("2 novembre 2023 alle 10:20").as_deref(),
        Some("2023-11-02 10:20 +08:00")
    );
    assert_eq!(first("24. April 2020").as_deref(), Some("2020-04-24"));
    assert_eq!(first("Teil 12 Mairie 2020"), None, "not a month name");
}

/// `GMT+8` after an English date's time (Reuters), and the dates of the
/// Republic of China's calendar after its era or a date label.
#[test]
fn an_offset_after_gmt_and_the_republic_of_chinas_years() {
    assert_eq!(
        first("November 25, 2024 3:05 PM GMT+8").as_deref(),
        Some("2024-11-25 15:05 +08:00")
    );
    assert_eq!(
        first("Nov 25, 2024 3:05 PM GMT-5").as_deref(),
        Some("2024-11-26 04:05 +08:00")
    );
    // A bare GMT is UTC still.
    assert_eq!(
        first("November 25, 2024 3:05 PM GMT").as_deref(),
        Some("2024-11-25 23:05 +08:00")
    );
    assert_eq!(first("發布日期：113-11-25").as_deref(), Some("2024-11-25"));
    assert_eq!(
        first("中華民國113年12月1日 星期日").as_deref(),
        Some("2024-12-01")
    );
    assert_eq!(
        first("時間：113/11/25 15:05").as_deref(),
        Some("2024-11-25 15:05 +08:00")
    );
    // Without the era or a label, three digits are no year.
    assert_eq!(first("编号 113-11-25"), None);
    assert_eq!(first("日期：1130-11-25"), None);
    // Its label still tells an update from the publish day.
    let line = "發布日期：113-11-25 更新日期：113-11-27";
    assert_eq!(
        label_before(line, line.rfind("113").unwrap_or(0)),
        Label::Other
    );
    // Another article's date over a blog post.
    let line = "最新推荐文章于 2024-11-20 10:00:00 发布";
    assert_eq!(
        label_before(line, line.find("2024").unwrap_or(0)),
        Label::Other
    );
}

/// Korean bylines (`입력 2024.11.25. 오후 3:05`, `수정 …`) and a
/// Japanese portal's `11/25(月) 15:05`.
#[test]
fn korean_day_parts_and_a_weekday_in_brackets() {
    assert_eq!(
        first("입력 2024.11.25. 오후 3:05").as_deref(),
        Some("2024-11-25 15:05 +08:00")
    );
    assert_eq!(
        first("2024.11.25. 오전 9:40").as_deref(),
        Some("2024-11-25 09:40 +08:00")
    );
    let line = "입력 2024.11.25. 오후 3:05 수정 2024.11.25. 오후 5:20";
    assert_eq!(
        label_before(line, line.find("2024").unwrap_or(0)),
        Label::Publish
    );
    assert_eq!(
        label_before(line, line.rfind("2024").unwrap_or(0)),
        Label::Other
    );
    let fetched = Utc.with_ymd_and_hms(2024, 11, 26, 3, 0, 0).unwrap();
    let d = contextual_dates("11/25(月) 15:05配信", fetched, chrono_tz::Asia::Tokyo, None);
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].stated
            .resolve(chrono_tz::Asia::Tokyo)
            .map(|l| l.to_rfc3339())
            .as_deref(),
        Some("2024-11-25T15:05:00+09:00")
    );
}

/// A time before a year-first date, `at` between a date and its time, a
/// Japanese weekday in brackets.
#[test]
fn a_time_first_an_at_and_a_japanese_weekday() {
    assert_eq!(
        first("15:05 2024/11/25").as_deref(),
        Some("2024-11-25 15:05 +08:00")
    );
    assert_eq!(
        first("記者 陳怡君／台北報導15:05 2024/11/25").as_deref(),
        Some("2024-11-25 15:05 +08:00")
    );
    // A longer number before the date: the day only.
    assert_eq!(first("115:05 2024/11/25").as_deref(), Some("2024-11-25"));
    assert_eq!(
        first("Posted on 2024-11-25 at 15:05").as_deref(),
        Some("2024-11-25 15:05 +08:00")
    );
    assert_eq!(
        first("2024年11月25日(月) 15時05分").as_deref(),
        Some("2024-11-25 15:05 +08:00")
    );
    assert_eq!(
        page_zone(None, Some("www.zaobao.com.sg"), Some("zh"), &[]),
        chrono_tz::Asia::Singapore
    );
    assert_eq!(
        page_zone(None, Some("www.sinchew.com.my"), None, &[]),
        chrono_tz::Asia::Kuala_Lumpur
    );
}

/// A time of day set apart from its date by a weekday, a word or
/// separators, after or before it; not one that another date holds,
/// nor one past a word that is no weekday.
#[test]
fn a_time_set_apart_from_its_date() {
    for (line, want) in [
        ("2024-11-25 (Mon) | 15:05", "2024-11-25 15:05 +08:00"),
        ("25.11.2024 - Montag - 15:05 Uhr", "2024-11-25 15:05 +08:00"),
        ("November 25, 2024 | 3:05 pm", "2024-11-25 15:05 +08:00"),
        ("2024/11/25 星期一 下午3:05", "2024-11-25 15:05 +08:00"),
        ("2024-11-25 · 07:05 (GMT+0)", "2024-11-25 15:05 +08:00"),
        ("15:05 · 2024/11/25", "2024-11-25 15:05 +08:00"),
        ("Updated 3:05 PM, 2024-11-25", "2024-11-25 15:05 +08:00"),
        ("2024-11-25 阅读 12:30", "2024-11-25"),
        ("2024-11-25 | 12:305", "2024-11-25"),
        ("2024-11-25 | 25:30", "2024-11-25"),
        // An offset after a date and time a form took without it.
        (
            "Thứ hai, 25/11/2024, 14:05 (GMT+7)",
            "2024-11-25 15:05 +08:00",
        ),
        ("25.11.2024 08:05 CET", "2024-11-25 15:05 +08:00"),
        ("25/11/2024 15:05 -12345", "2024-11-25 15:05 +08:00"),
    ] {
        assert_eq!(first(line).as_deref(), Some(want), "{line}");
    }
    // The time after the first date is its own, not the next one's.
    let d = text_dates("2024-11-24 10:30 2024-11-25");
    assert_eq!((d.len(), d[0].has_time, d[1].has_time), (2, true, false));
    let d = text_dates("2024-11-24 | 2024-11-25 10:30");
    assert_eq!((d[0].has_time, d[1].has_time), (false, true));
}

/// Full-width digits, and a short date after a bare `时间：`.
#[test]
fn full_width_digits_and_a_short_date_after_time() {
    let line = "发布时间：２０２４年１１月２５日　１５：０５　　信息来源：县水利局";
    assert_eq!(first(line).as_deref(), Some("2024-11-25 15:05 +08:00"));
    let d = text_dates(line);
    assert_eq!(label_before(line, d[0].start), Label::Publish);
    let fetched = Utc.with_ymd_and_hms(2024, 11, 28, 2, 0, 0).unwrap();
    let sh = chrono_tz::Asia::Shanghai;
    let d = contextual_dates("作者：刘洋　　时间：11-25 15:05", fetched, sh, None);
    assert_eq!(
        d.first()
            .and_then(|d| d.stated.resolve(sh))
            .map(|l| l.to_rfc3339())
            .as_deref(),
        Some("2024-11-25T15:05:00+08:00")
    );
    let d = contextual_dates("时间：１１－２５", fetched, sh, None);
    assert!(d.is_empty(), "full-width hyphen is no separator");
}

/// A relative phrase whose element carries the time in its `title`.
#[test]
fn a_relative_winner_takes_the_time_its_element_titles() {
    assert!(is_relative("3\u{a0}天前"));
    assert!(is_relative("前天 09:10"));
    assert!(!is_relative("2024-11-25 15:05"));
    assert!(!is_relative("发表于 3 天前，共 12 条回复，最后回复于昨天"));
    let ctx = TimeContext {
        fetched: Utc.with_ymd_and_hms(2024, 11, 28, 6, 0, 0).unwrap(),
        zone: None,
        hint: None,
    };
    let sh = chrono_tz::Asia::Shanghai;
    let mut phrase = cand("2024-11-25 14:00", PublishedFrom::Text, 95, true);
    phrase.relative = true;
    phrase.has_time = false;
    let titled = cand(
        "2024-11-25 15:05:06",
        PublishedFrom::Text,
        score::TITLED,
        false,
    );
    let other = cand(
        "2024-11-22 10:00:00",
        PublishedFrom::Text,
        score::TITLED,
        false,
    );
    let p = decide(&[phrase, other, titled], &ctx, sh).expect("a time");
    assert_eq!(p.local.to_rfc3339(), "2024-11-25T15:05:06+08:00");
    // Without it, the phrase's day.
    let p = decide(&[phrase, other], &ctx, sh).expect("a time");
    assert!(!p.has_time);
}

#[test]
fn relative_and_yearless_dates_count_from_the_fetch_time() {
    let zone = chrono_tz::Asia::Shanghai;
    let one = |t: &str, year| {
        let d = contextual_dates(t, fetched(), zone, year)
            .into_iter()
            .next()?;
        Some(
            d.stated
                .resolve(zone)?
                .with_timezone(&zone)
                .format("%Y-%m-%d %H:%M")
                .to_string(),
        )
    };
    // Fetched 2024-03-10 12:00 in Shanghai.
    assert_eq!(one("3小时前", None).as_deref(), Some("2024-03-10 09:00"));
    assert_eq!(
        one("25 minutes ago", None).as_deref(),
        Some("2024-03-10 11:35")
    );
    assert_eq!(one("昨天 10:20", None).as_deref(), Some("2024-03-09 10:20"));
    assert_eq!(
        one("3月8日 07:15", None).as_deref(),
        Some("2024-03-08 07:15")
    );
    assert_eq!(
        one("12月31日 07:15", None).as_deref(),
        Some("2023-12-31 07:15"),
        "a later month is last year"
    );
    assert_eq!(
        one("12月31日", Some(2019)).as_deref(),
        Some("2019-12-31 00:00")
    );
}

#[test]
fn two_digit_years_beside_the_title_take_the_century_of_the_fetch_time() {
    let zone = chrono_tz::Europe::Berlin;
    let one = |t: &str| {
        let d = contextual_dates(t, fetched(), zone, None)
            .into_iter()
            .next()?;
        Some(
            d.stated
                .resolve(zone)?
                .with_timezone(&zone)
                .format("%Y-%m-%d %H:%M")
                .to_string(),
        )
    };
    // Fetched in 2024.
    assert_eq!(
        one("Klaus-Peter Schöppner, 8.5.12").as_deref(),
        Some("2012-05-08 00:00")
    );
    assert_eq!(one("02.12.19").as_deref(), Some("2019-12-02 00:00"));
    assert_eq!(
        one("29.12.10, 13:36 Uhr").as_deref(),
        Some("2010-12-29 13:36")
    );
    assert_eq!(one("1.3.24").as_deref(), Some("2024-03-01 00:00"));
    assert_eq!(
        one("1.3.25").as_deref(),
        Some("1925-03-01 00:00"),
        "later than the fetch year"
    );
    assert_eq!(one("Version 1.2.10.4"), None, "a version");
    assert_eq!(one("v1.2.10"), None);
    assert_eq!(one("release 10.2.10b"), None);
    assert_eq!(one("32.1.12"), None, "no such day");
    assert_eq!(one("13.13.12"), None, "no such month");
    assert_eq!(one("发布于 8.5.12"), None, "not in CJK text");
}

#[test]
fn labels_before_a_date() {
    assert_eq!(
        label_before("发布时间：2023-11-17", "发布时间：".len()),
        Label::Publish
    );
    assert_eq!(
        label_before("更新时间：2023-11-17", "更新时间：".len()),
        Label::Other
    );
    let line = "发布时间：2023-11-17 10:00 更新时间：2023-11-18";
    let second = line.rfind("2023").unwrap_or(0);
    assert_eq!(label_before(line, second), Label::Other);
    assert_eq!(label_before("Updated: Nov 18, 2023", 9), Label::Other);
    // A related item's headline run together with its date: a word that
    // ends like a short label is no label; with a colon it is one.
    let at = |line: &str| label_before(line, line.find("20").unwrap_or(0));
    assert_eq!(at("北京地铁延长运营时间2024-12-10 18:02"), Label::None);
    assert_eq!(at("城市更新项目启动 2024-05-01"), Label::None);
    assert_eq!(at("时间：2024-12-10 18:02"), Label::Publish);
    assert_eq!(at("信息来源：市发改委 2024-12-10"), Label::Publish);
    assert_eq!(at("本文发布时间 2024-12-10"), Label::Publish);
    assert_eq!(at("最后更新 2024-12-10"), Label::Other);
    // A byline that ends at the date, longer than the label window.
    let at = |line: &str| label_before(line, line.find("2020").unwrap_or(0));
    assert_eq!(
        at("Submitted by Maria Antonia Rossi on Tue, 2020-01-07"),
        Label::Publish
    );
    assert_eq!(at("Geschrieben von Bo Berg am 2020-01-07"), Label::Publish);
    // A caption's agent is not a byline; nor is a sentence's `by`.
    assert_eq!(
        at("interviewed by a television crew on 2020-09-28 in Manchester"),
        Label::None
    );
    assert_eq!(at("shares fell by 3% on 2020-09-28"), Label::None);
    assert_eq!(
        label_before("严玉洁 2023-11-17", "严玉洁 ".len()),
        Label::None
    );
    // German, French, Italian, Dutch labels.
    assert_eq!(
        label_before("Erschienen am: 01.11.2023", 15),
        Label::Publish
    );
    assert_eq!(
        label_before("veröffentlicht 28.01.2022", 16),
        Label::Publish
    );
    let line = "Letzte Änderung: 31.10.2023 - 14:49:39";
    assert_eq!(
        label_before(line, line.find("31").unwrap_or(0)),
        Label::Other
    );
    assert_eq!(label_before("Aktualisiert: 30.12.2016", 14), Label::Other);
    assert_eq!(label_before("mis à jour le 3 mai 2020", 14), Label::Other);
}

/// The label in an element of its own before the date's.
#[test]
fn a_label_on_the_line_before() {
    let day = |lines: &[&str]| {
        labelled_candidates(lines)
            .first()
            .and_then(|c| c.stated.resolve(chrono_tz::UTC))
            .map(|d| d.date_naive().to_string())
    };
    assert_eq!(
        day(&["Mise en ligne", "23 mai 2019"]).as_deref(),
        Some("2019-05-23")
    );
    assert_eq!(
        day(&["Datum:", "12.01.2017"]).as_deref(),
        Some("2017-01-12")
    );
    assert_eq!(day(&["Updated", "12.01.2017"]), None);
    assert_eq!(day(&["Mise en ligne par Alice", "23 mai 2019"]), None);
    assert_eq!(day(&["Datum", "Seite 3, 12.01.2017"]), None);
}

#[test]
fn a_days_url_takes_its_time_from_the_scripts_publish_variable() {
    let sh = chrono_tz::Asia::Shanghai;
    let ctx = TimeContext {
        fetched: fetched(),
        zone: None,
        hint: None,
    };
    let mut cands: Vec<Candidate> = url_candidate("/a/20240225/x.html").into_iter().collect();
    cands.extend(script_candidates(
        [r#"window.DATA = {"pubtime":"2024-02-25 15:05:12"};"#],
        sh,
    ));
    let p = decide(&cands, &ctx, sh).expect("a time");
    assert_eq!(p.local.to_rfc3339(), "2024-02-25T15:05:12+08:00");
    assert_eq!(p.from, PublishedFrom::Script);
    // Another day's variable leaves the URL's day alone.
    let mut cands: Vec<Candidate> = url_candidate("/a/20240225/x.html").into_iter().collect();
    cands.extend(script_candidates(
        [r#"{"pubtime":"2024-02-20 15:05:12"}"#],
        sh,
    ));
    let p = decide(&cands, &ctx, sh).expect("a time");
    assert_eq!(p.from, PublishedFrom::Url);
}

/// Script variables: the publish names and WeChat's `var ct` (seconds
/// since the epoch, shown at the page's zone); a name assigned different
/// times on one page (a list of items) names none; a bare `ct` or `time`
/// is not read.
#[test]
fn script_variables_give_a_publish_time_when_the_page_agrees_with_itself() {
    let sh = chrono_tz::Asia::Shanghai;
    let shown = |scripts: &[&str]| -> Vec<String> {
        script_candidates(scripts.iter().copied(), sh)
            .iter()
            .map(|c| {
                assert_eq!(c.from, PublishedFrom::Script);
                let t = c.stated.resolve(sh).expect("resolves");
                if c.has_time {
                    t.format("%Y-%m-%d %H:%M:%S").to_string()
                } else {
                    t.format("%Y-%m-%d").to_string()
                }
            })
            .collect()
    };
    assert_eq!(
        shown(&[r#"var nickname = "x"; var ct = "1581517074"; var svr_time = "1581604666" * 1;"#]),
        ["2020-02-12 22:17:54"]
    );
    assert_eq!(
        shown(&["var BASE_DATA = { articleInfo: { publish_time: '2019-09-08 11:42:03' } };"]),
        ["2019-09-08 11:42:03"]
    );
    // The same time twice (a day and its time, seconds and milliseconds): one.
    assert_eq!(
        shown(&[r#"{"pubtime":"2019-09-08","pub_time":"2019-09-08 11:42"}"#]),
        ["2019-09-08 11:42:00"]
    );
    assert_eq!(
        shown(&[
            r#"window.__d = {"newsTime":"2019-09-09 18:13:22"};"#,
            r#"x={"newsTime":"1568024002000"}"#
        ]),
        ["2019-09-09 18:13:22"]
    );
    // Related items, each with its own time; not a publish name; not WeChat's `var ct`.
    assert!(
        shown(&[r#"[{"ptime":"2019-09-06 09:10:56"},{"ptime":"2019-09-07 14:34:58"}]"#]).is_empty()
    );
    assert!(shown(&[r#"var s_advert = { "time": "2019-12-29 22:31:02" };"#]).is_empty());
    assert!(shown(&[r#"{"ct": "1581517074"}"#]).is_empty());
    assert!(shown(&[r#"var publish_time = "0000-00-00";"#]).is_empty());
}

/// A relative phrase the page shows (`昨天 22:17`, rendered by its script) gives
/// way to the time the script holds: counted back from a fetch time long
/// after the render it would be days off.
#[test]
fn a_script_time_beats_a_relative_phrase() {
    let sh = chrono_tz::Asia::Shanghai;
    let ctx = TimeContext {
        fetched: fetched(),
        zone: None,
        hint: None,
    };
    let lines = ["三星 Galaxy S20 系列手机正式发布", "爱否科技 昨天 22:17"];
    let mut cands = near_title_candidates(&lines, 0, None, &ctx, sh, None);
    assert!(cands.iter().any(|c| c.relative), "{cands:?}");
    let relative_only = decide(&cands, &ctx, sh).expect("a time");
    assert_eq!(relative_only.local.date_naive().to_string(), "2024-03-09");
    cands.extend(script_candidates([r#"var ct = "1581517074";"#], sh));
    let p = decide(&cands, &ctx, sh).expect("a time");
    assert_eq!(p.from, PublishedFrom::Script);
    assert_eq!(p.local.to_rfc3339(), "2020-02-12T22:17:54+08:00");
}

fn cand(value: &str, from: PublishedFrom, score: i32, near_title: bool) -> Candidate {
    let (stated, has_time) = parse_stated(value).expect("parses");
    Candidate {
        year_inferred: false,
        relative: false,
        stated,
        has_time,
        from,
        score,
        near_title,
    }
}

/// A date inside running prose near the title is another event's; a
/// dateline that opens a long line is the byline's.
#[test]
fn prose_dates_are_not_bylines() {
    let ctx = TimeContext {
        fetched: fetched(),
        zone: None,
        hint: None,
    };
    let prose = format!(
        "{} wurde das Zentrum am 18. Oktober 2021 am Erzberg eröffnet, {}",
        "Im Beisein zahlreicher Ehrengäste aus Wissenschaft, Politik und Wirtschaft",
        "und mit mehr als vier Kilometern an Tunneln ist es das größte seiner Art in Europa."
    );
    let days = |lines: &[&str]| -> Vec<String> {
        near_title_candidates(lines, 0, None, &ctx, chrono_tz::UTC, None)
            .iter()
            .chain(labelled_candidates(lines).iter())
            .filter_map(|c| c.stated.resolve(chrono_tz::UTC))
            .map(|d| d.date_naive().to_string())
            .collect()
    };
    assert!(days(&["Zentrum eröffnet", &prose]).is_empty());
    let dateline = format!("20.10.2021 - 10:24 {prose}");
    assert_eq!(days(&["Zentrum eröffnet", &dateline]), ["2021-10-20"]);
    let published = format!("Veröffentlicht: 20.10.2021 {prose}");
    assert_eq!(
        days(&["Zentrum eröffnet", &published]),
        ["2021-10-20", "2021-10-20"]
    );
}

/// mercurynews.com: the meta and JSON-LD state UTC, the page's `<time>`
/// its Pacific wall clock.
#[test]
fn a_utc_time_is_stated_at_the_pages_wall_clock() {
    let ctx = TimeContext {
        fetched: fetched(),
        zone: None,
        hint: None,
    };
    let got = |c: &[Candidate]| {
        decide(c, &ctx, chrono_tz::UTC).map(|p| (p.local.to_rfc3339(), p.utc.to_rfc3339()))
    };
    let meta = cand("2023-11-09T01:49:09+00:00", PublishedFrom::Meta, 90, false);
    let wall = cand("2023-11-08 17:49:09", PublishedFrom::Time, 65, false);
    assert_eq!(
        got(&[meta, wall]),
        Some((
            "2023-11-08T17:49:09-08:00".to_string(),
            "2023-11-09T01:49:09+00:00".to_string()
        ))
    );
    // A round hour elsewhere on the page is no wall clock.
    let meta = cand("2023-11-09T02:00:00+00:00", PublishedFrom::Meta, 90, false);
    let other = cand("2023-11-08 18:00", PublishedFrom::Text, 40, false);
    assert_eq!(
        got(&[meta, other]).map(|(l, _)| l),
        Some("2023-11-09T02:00:00+00:00".to_string())
    );
}

#[test]
fn a_day_without_its_year_takes_the_year_the_page_states() {
    // Read years after publication (a re-extraction, an old page): the
    // dateline's `11月25日` is the page's 2019, not the fetch year's.
    let ctx = TimeContext {
        fetched: Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap(),
        zone: None,
        hint: None,
    };
    let z = chrono_tz::Asia::Shanghai;
    let lines = [
        "多地项目连环爆雷",
        "2019-11-25 11:01:53 来源: 新京报",
        "发稿时间：11月25日",
    ];
    let mut cands = near_title_candidates(&lines, 0, None, &ctx, z, None);
    assert!(cands.iter().any(|c| c.year_inferred), "{cands:?}");
    cands.push(cand(
        "2019-11-25T11:01:53+08:00",
        PublishedFrom::Meta,
        90,
        false,
    ));
    let p = decide(&cands, &ctx, z).expect("a time");
    assert_eq!(p.local.to_rfc3339(), "2019-11-25T11:01:53+08:00");
    // A day after the page's own date is the year before's.
    let dec = near_title_candidates(&["标题", "发稿时间：12月30日"], 0, None, &ctx, z, None);
    let mut c = dec.clone();
    c.push(cand("2020-01-02 10:00", PublishedFrom::Text, 60, false));
    let p = decide(&c, &ctx, z).expect("a time");
    assert_eq!(p.local.format("%Y-%m-%d").to_string(), "2019-12-30");
    // Without a year anywhere on the page, the fetch time's (the last
    // 11月25日 before it).
    let alone = near_title_candidates(
        &lines[..1]
            .iter()
            .chain(&lines[2..])
            .copied()
            .collect::<Vec<_>>(),
        0,
        None,
        &ctx,
        z,
        None,
    );
    let p = decide(&alone, &ctx, z).expect("a time");
    assert_eq!(p.local.format("%Y-%m-%d").to_string(), "2025-11-25");
}

#[test]
fn decision_rejects_future_and_ancient_and_refines_the_day() {
    let ctx = TimeContext {
        fetched: fetched(),
        zone: None,
        hint: None,
    };
    let z = chrono_tz::Asia::Shanghai;
    let got = |c: &[Candidate]| {
        decide(c, &ctx, z).map(|p| (p.local.format("%Y-%m-%d %H:%M").to_string(), p.from))
    };
    assert_eq!(
        got(&[cand("2099-01-01", PublishedFrom::Meta, 90, false)]),
        None
    );
    assert_eq!(
        got(&[cand("1990-05-01", PublishedFrom::Meta, 90, false)]),
        None
    );
    assert!(parse_stated("0000-00-00").is_none());
    assert_eq!(
        got(&[
            cand("2024-03-01", PublishedFrom::Meta, 90, false),
            cand("2024-03-01 15:13", PublishedFrom::Text, 80, true),
        ]),
        Some(("2024-03-01 15:13".into(), PublishedFrom::Text))
    );
    // An update time in a meta tag later than the visible byline loses.
    assert_eq!(
        got(&[
            cand("2024-03-05T10:00:00+08:00", PublishedFrom::Meta, 90, false),
            cand("2024-03-01 15:13", PublishedFrom::Text, 80, true),
        ]),
        Some(("2024-03-01 15:13".into(), PublishedFrom::Text))
    );
    // The same day: the zoned meta time stands.
    assert_eq!(
        got(&[
            cand("2024-03-01T15:13:00+08:00", PublishedFrom::Meta, 90, false),
            cand("2024-03-01 15:13", PublishedFrom::Text, 80, true),
        ]),
        Some(("2024-03-01 15:13".into(), PublishedFrom::Meta))
    );
}

#[test]
fn elements_marked_as_the_publish_time() {
    let texts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let at = |c: Option<Candidate>| {
        c.and_then(|c| c.stated.resolve(chrono_tz::UTC))
            .map(|d| d.with_timezone(&Utc).to_rfc3339())
    };
    assert_eq!(
        at(marked_element_candidate(&texts(&["1709864700000"]))).as_deref(),
        Some("2024-03-08T02:25:00+00:00")
    );
    assert_eq!(
        at(marked_element_candidate(&texts(&[
            "更新于 2024-03-09",
            "2024/6/19 5:50"
        ])))
        .as_deref(),
        Some("2024-06-19T05:50:00+00:00")
    );
    let list = texts(&["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]);
    assert!(marked_element_candidate(&list).is_none(), "a list of posts");
    assert!(marked_element_candidate(&texts(&["12345"])).is_none());
}

/// `<span class="date">` and kin: a weak source, none for a list.
#[test]
fn elements_with_a_date_class() {
    let texts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let c = date_class_candidate(&texts(&["Blog entry by A. R. | 28 April, 2017"]));
    assert_eq!(
        c.and_then(|c| c.stated.resolve(chrono_tz::UTC))
            .map(|d| d.date_naive().to_string())
            .as_deref(),
        Some("2017-04-28")
    );
    assert!(c.is_some_and(|c| c.score < score::URL), "below the URL's");
    let same_day = texts(&["28.04.2017", "28.04.2017 10:00", "Freitag, 28. April 2017"]);
    assert!(date_class_candidate(&same_day).is_some());
    let list = texts(&["2024-01-01", "2024-01-02", "2024-01-03"]);
    assert!(date_class_candidate(&list).is_none(), "a list of posts");
    assert!(date_class_candidate(&texts(&["Updated 2024-01-01"])).is_none());
}

/// Baijiahao's `发布时间：18-03-08 23:16` and `发布时间：10-08 12:00`.
#[test]
fn short_dates_after_a_publish_label() {
    let lines = [
        "英国美女在殡仪馆工作太痛苦，转行当美人鱼",
        "加拿大必读",
        "发布时间：18-03-08 23:16",
    ];
    let ctx = TimeContext {
        fetched: fetched(),
        zone: None,
        hint: None,
    };
    let zone = chrono_tz::Asia::Shanghai;
    let got = |lines: &[&str]| {
        let c = near_title_candidates(lines, 0, None, &ctx, zone, None);
        decide(&c, &ctx, zone).map(|p| p.local.format("%Y-%m-%d %H:%M").to_string())
    };
    assert_eq!(got(&lines).as_deref(), Some("2018-03-08 23:16"));
    // No year: the fetch year (2024-03-10), else the year before.
    let lines = ["英国美女在殡仪馆工作太痛苦", "发布时间：02-08 12:00"];
    assert_eq!(got(&lines).as_deref(), Some("2024-02-08 12:00"));
    let lines = ["英国美女在殡仪馆工作太痛苦", "发布时间：10-08 12:00"];
    assert_eq!(got(&lines).as_deref(), Some("2023-10-08 12:00"));
    // Without the label: a score, a code, a phone number.
    let lines = ["英国美女在殡仪馆工作太痛苦", "比分 10-08 全场"];
    assert_eq!(got(&lines), None);
    // Unlabelled with a time of day, standing apart on a dateline.
    let lines = ["北方多地迎来降雪", "央视新闻 02-08 12:00 发布于北京"];
    assert_eq!(got(&lines).as_deref(), Some("2024-02-08 12:00"));
    let lines = ["北方多地迎来降雪", "编号A02-08 12:00"];
    assert_eq!(got(&lines), None, "not standing apart");
    let lines = ["英国美女在殡仪馆工作太痛苦", "发布时间：10-08-2023"];
    assert_eq!(
        got(&lines),
        None,
        "a day-first date is not read as year-first"
    );
}

#[test]
fn traditional_chinese_labels() {
    assert_eq!(label_before("發佈時間：2019-03-18", 15), Label::Publish);
    assert_eq!(label_before("最後更新：2019-03-18", 15), Label::Other);
    // Japanese kanji are not folded (`更新日時` is an update either way).
    assert_eq!(label_before("配信日：2019-03-18", 12), Label::None);
    let d = text_dates("2019年3月18日 23時59分");
    assert!(d.first().is_some_and(|d| d.has_time), "時 as 时");
}
