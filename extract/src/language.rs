//! The page's language: from the scripts its text is written in (Han, kana,
//! Hangul, Latin), else its `<html lang>`.

use crate::lines::is_han;

/// Share of CJK characters above which a page is taken as Chinese.
pub const CJK_SHARE_ZH: f64 = 0.30;

/// Language guess from the text and the `<html lang>` attribute.
pub(crate) fn detect_language(text: &str, html_lang: Option<&str>) -> Option<String> {
    let (mut han, mut kana, mut hangul, mut latin, mut letters) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        letters += 1;
        if is_han(c) {
            han += 1;
        } else if matches!(c as u32, 0x3040..=0x30FF) {
            kana += 1;
        } else if matches!(c as u32, 0xAC00..=0xD7AF) {
            hangul += 1;
        } else if c.is_ascii_alphabetic() || matches!(c as u32, 0xC0..=0x24F) {
            latin += 1;
        }
    }
    let lang_attr = html_lang
        .and_then(|l| l.split(['-', '_']).next())
        .map(|l| l.trim().to_ascii_lowercase())
        .filter(|l| !l.is_empty());
    if letters > 0 {
        let share = |n: usize| n as f64 / letters as f64;
        if share(han + kana + hangul) > CJK_SHARE_ZH {
            if share(kana) > 0.05 {
                return Some("ja".into());
            }
            if hangul > han {
                return Some("ko".into());
            }
            return Some("zh".into());
        }
    }
    if lang_attr.is_some() {
        return lang_attr;
    }
    (letters > 0 && latin as f64 / letters as f64 > 0.8).then(|| "en".into())
}
