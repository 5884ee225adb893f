//! The page's language. Text that is mostly Han, kana or Hangul is Chinese,
//! Japanese or Korean by its scripts; other text is identified by `whatlang`
//! (trigram profiles of 69 languages), its answer taken when it is reliable,
//! else the page's `<html lang>`, else whatlang's best guess.
//!
//! The CJK rule comes first because it weighs a character against a letter:
//! a Chinese page with code samples or English names holds more Latin letters
//! than Han characters, and a per-character script count (whatlang's) reads it
//! as English, while a Han character carries about as much as a Latin word.

use whatlang::Lang;

use crate::lines::is_han;

/// Share of CJK characters above which a page is taken as Chinese.
pub const CJK_SHARE_ZH: f64 = 0.30;

/// Characters of text given to the trigram detector: enough for a reliable
/// answer on a page of prose, bounded so a long page costs no more.
const SAMPLE_CHARS: usize = 4_000;

/// Language guess from the text and the `<html lang>` attribute, as an
/// ISO 639-1 code where the language has one (else ISO 639-3).
pub(crate) fn detect_language(text: &str, html_lang: Option<&str>) -> Option<String> {
    if let Some(cjk) = cjk_language(text) {
        return Some(cjk.into());
    }
    let lang_attr = html_lang
        .and_then(|l| l.split(['-', '_']).next())
        .map(|l| l.trim().to_ascii_lowercase())
        .filter(|l| !l.is_empty());
    let sample = match text.char_indices().nth(SAMPLE_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    };
    let guess = whatlang::detect(sample);
    match (guess, lang_attr) {
        (Some(info), Some(_)) if info.is_reliable() => Some(code(info.lang())),
        (_, Some(attr)) => Some(attr),
        (Some(info), None) => Some(code(info.lang())),
        (None, None) => None,
    }
}

/// `zh`, `ja` or `ko` when more than [`CJK_SHARE_ZH`] of the letters are
/// Han, kana or Hangul: kana make it Japanese, Hangul outnumbering Han Korean.
fn cjk_language(text: &str) -> Option<&'static str> {
    let (mut han, mut kana, mut hangul, mut letters) = (0usize, 0usize, 0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        letters += 1;
        if is_han(c) {
            han += 1;
        } else if matches!(c as u32, 0x3040..=0x30FF) {
            kana += 1;
        } else if matches!(c as u32, 0xAC00..=0xD7AF) {
            hangul += 1;
        }
    }
    let share = |n: usize| n as f64 / letters.max(1) as f64;
    if letters == 0 || share(han + kana + hangul) <= CJK_SHARE_ZH {
        return None;
    }
    Some(if share(kana) > 0.05 {
        "ja"
    } else if hangul > han {
        "ko"
    } else {
        "zh"
    })
}

/// ISO 639-1 code of a language (Mandarin: `zh`), else its ISO 639-3 code.
fn code(lang: Lang) -> String {
    if lang == Lang::Cmn {
        return "zh".into();
    }
    isolang::Language::from_639_3(lang.code())
        .and_then(|l| l.to_639_1())
        .unwrap_or(lang.code())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_then_trigrams_then_the_attribute() {
        let zh = "在命令行中输入 soffice --headless 即可在后台启动办公软件并转换文件格式。";
        assert_eq!(detect_language(zh, None).as_deref(), Some("zh"));
        let ja = "東京都は本日、新しい条例を発表しました。";
        assert_eq!(detect_language(ja, Some("en")).as_deref(), Some("ja"));
        let ko = "서울시는 오늘 새로운 조례를 발표했습니다.";
        assert_eq!(detect_language(ko, None).as_deref(), Some("ko"));
        let de = "Die Bundesregierung hat am Mittwoch einen neuen Gesetzentwurf \
                  vorgelegt, der die Förderung erneuerbarer Energien ausweiten soll.";
        assert_eq!(detect_language(de, None).as_deref(), Some("de"));
        // A template's wrong attribute loses to reliable text.
        assert_eq!(detect_language(de, Some("en-US")).as_deref(), Some("de"));
        // Too little text to tell: the attribute decides.
        assert_eq!(
            detect_language("Bonjour", Some("fr-FR")).as_deref(),
            Some("fr")
        );
        let ru = "Правительство представило новый законопроект о поддержке \
                  возобновляемых источников энергии.";
        assert_eq!(detect_language(ru, None).as_deref(), Some("ru"));
        assert_eq!(detect_language("", None), None);
        assert_eq!(detect_language("", Some("es")).as_deref(), Some("es"));
    }
}
