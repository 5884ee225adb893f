//! Traditional Chinese label characters folded to their Simplified forms, so
//! one set of labels (`发布时间`, `来源`, `记者`, `编辑`, `新闻网`) reads pages
//! from Taiwan, Hong Kong and overseas outlets too (`發佈時間`, `來源`,
//! `記者`, `編輯`, `新聞網`).
//!
//! Only the characters of the labels and words the extraction matches are
//! folded, one for one: every one of them is three bytes in UTF-8 in both
//! forms, so a byte offset found in the folded text is the same in the
//! original, and a value (a reporter's name, an outlet) is taken from the
//! original text, in the page's own script.

use std::borrow::Cow;

/// (Traditional, Simplified).
const PAIRS: [(char, char); 60] = [
    ('佈', '布'),
    ('後', '后'),
    ('處', '处'),
    ('員', '员'),
    ('圖', '图'),
    ('實', '实'),
    ('審', '审'),
    ('寫', '写'),
    ('對', '对'),
    ('導', '导'),
    ('戶', '户'),
    ('採', '采'),
    ('攝', '摄'),
    ('於', '于'),
    ('時', '时'),
    ('瀏', '浏'),
    ('監', '监'),
    ('發', '发'),
    ('稱', '称'),
    ('線', '线'),
    ('編', '编'),
    ('網', '网'),
    ('習', '习'),
    ('聞', '闻'),
    ('製', '制'),
    ('覆', '复'),
    ('視', '视'),
    ('訊', '讯'),
    ('記', '记'),
    ('評', '评'),
    ('譯', '译'),
    ('讀', '读'),
    ('論', '论'),
    ('責', '责'),
    ('資', '资'),
    ('輯', '辑'),
    ('轉', '转'),
    ('週', '周'),
    ('鐘', '钟'),
    ('開', '开'),
    ('間', '间'),
    ('閱', '阅'),
    ('關', '关'),
    ('電', '电'),
    ('頻', '频'),
    ('點', '点'),
    ('華', '华'),
    ('報', '报'),
    ('剛', '刚'),
    ('來', '来'),
    ('覽', '览'),
    ('舉', '举'),
    ('號', '号'),
    ('糾', '纠'),
    ('錯', '错'),
    ('創', '创'),
    ('載', '载'),
    ('擊', '击'),
    ('數', '数'),
    ('據', '据'),
];

fn simplified(c: char) -> Option<char> {
    if !('\u{4e00}'..='\u{9fff}').contains(&c) {
        return None;
    }
    PAIRS.iter().find(|(t, _)| *t == c).map(|(_, s)| *s)
}

/// `s` with the Traditional label characters in their Simplified forms, the
/// same length in bytes (borrowed when there is none).
/// Japanese text (any kana) stays as it is: its kanji (`時間`, `記者`) are
/// not Traditional Chinese labels.
pub(crate) fn fold(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| simplified(c).is_some_and(|f| f != c))
        || s.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c))
    {
        return Cow::Borrowed(s);
    }
    let out: String = s.chars().map(|c| simplified(c).unwrap_or(c)).collect();
    debug_assert_eq!(out.len(), s.len());
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_fold_to_simplified_at_the_same_offsets() {
        let t = "發佈時間：2019-03-18 23:59 來源：聯合新聞網 記者陳嘉寧／桃園機場報導 編輯";
        let f = fold(t);
        assert_eq!(f.len(), t.len());
        assert!(f.starts_with("发布时间："));
        assert!(f.contains("来源："));
        assert!(f.contains("记者陳嘉寧／桃園機場报导"), "{f}");
        assert!(f.ends_with("编辑"));
        assert!(matches!(fold("发布时间：今天"), Cow::Borrowed(_)));
        assert!(matches!(fold("配信時間：10時30分"), Cow::Owned(_)));
        assert!(matches!(
            fold("更新日時：2019年のニュース"),
            Cow::Borrowed(_)
        ));
        for (t, s) in PAIRS {
            assert_eq!(t.len_utf8(), s.len_utf8(), "{t}");
        }
    }
}
