//! Character-set detection and decoding.
//!
//! Order: charset parameter of the HTTP `Content-Type` header, byte-order mark,
//! `<meta charset>` / `<meta http-equiv="Content-Type">` in the first
//! [`META_PRESCAN_BYTES`] bytes, then chardetng. A header or meta label whose
//! decoding produces malformed sequences is not trusted and the next source is
//! tried (a page labelled `utf-8` that is really GBK still decodes correctly). A
//! wrong single-byte label (e.g. `iso-8859-1`) cannot be detected this way and wins.
//!
//! Labels are resolved with the WHATWG table of encoding_rs, so `gb2312` and
//! `gbk` give GBK and `big5` gives Big5. When GBK bytes contain GB18030 four-byte
//! sequences the encoding is reported as GB18030 (encoding_rs decodes both the same
//! way; the name tells the truth about the bytes).

use encoding_rs::{Encoding, GB18030, GBK, REPLACEMENT, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252};
use regex::bytes::Regex;
use std::sync::LazyLock;

/// How many leading bytes are searched for a `<meta>` charset declaration.
pub const META_PRESCAN_BYTES: usize = 4096;
/// How many leading bytes are fed to chardetng.
pub const DETECT_PREFIX_BYTES: usize = 1024 * 1024;

/// Where the encoding used for a page came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharsetSource {
    /// The `charset` parameter of the `Content-Type` response header.
    Header,
    /// A byte-order mark at the start of the body.
    Bom,
    /// A `<meta>` declaration near the start of the document.
    Meta,
    /// Guessed by chardetng from the bytes.
    Detected,
    /// Nothing to go on (empty or pure-ASCII body): UTF-8.
    Default,
}

impl CharsetSource {
    /// Lowercase label, for logs and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Header => "header",
            Self::Bom => "bom",
            Self::Meta => "meta",
            Self::Detected => "detected",
            Self::Default => "default",
        }
    }
}

/// The result of [`decode`].
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The decoded text (BOM removed).
    pub text: String,
    /// The encoding used.
    pub encoding: &'static Encoding,
    /// Where it came from.
    pub source: CharsetSource,
}

static META_CHARSET: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?i-u)<meta\b[^>]*?charset\s*=\s*["']?\s*([a-z0-9_\-:.]+)"#).ok()
});

/// The `charset` parameter of a `Content-Type` value, if any.
pub fn charset_from_content_type(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if name.trim().eq_ignore_ascii_case("charset") {
            let v = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
            (!v.is_empty()).then(|| v.to_string())
        } else {
            None
        }
    })
}

/// The encoding declared by a `<meta>` tag in the first [`META_PRESCAN_BYTES`]
/// bytes. Per the HTML standard a UTF-16 declaration in a meta tag means UTF-8.
pub fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let prefix = &body[..body.len().min(META_PRESCAN_BYTES)];
    let re = META_CHARSET.as_ref()?;
    re.captures_iter(prefix).find_map(|caps| {
        let label = caps.get(1)?.as_bytes();
        let enc = Encoding::for_label(label)?;
        Some(if enc == UTF_16LE || enc == UTF_16BE {
            UTF_8
        } else {
            enc
        })
    })
}

/// True when GBK-family bytes contain a GB18030 four-byte sequence.
fn has_gb18030_four_byte(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
        } else if (0x81..=0xFE).contains(&b) {
            match bytes.get(i + 1) {
                Some(0x30..=0x39) => return true,
                Some(_) => i += 2,
                None => return false,
            }
        } else {
            i += 1;
        }
    }
    false
}

/// Replaces GBK by GB18030 when the bytes need it.
fn refine(enc: &'static Encoding, body: &[u8]) -> &'static Encoding {
    if enc == GBK && has_gb18030_four_byte(body) {
        GB18030
    } else {
        enc
    }
}

/// Decodes with `enc`; `None` when the bytes are malformed for it.
fn decode_clean(enc: &'static Encoding, body: &[u8]) -> Option<String> {
    let (text, had_errors) = enc.decode_with_bom_removal(body);
    (!had_errors).then(|| text.into_owned())
}

/// Whether `enc` can decode documents (the WHATWG `replacement` encoding, which
/// labels such as `iso-2022-kr` map to, cannot).
fn usable(enc: &'static Encoding) -> bool {
    enc != REPLACEMENT
}

/// chardetng's guess for `body` (no TLD hint).
pub fn detect(body: &[u8]) -> &'static Encoding {
    let mut det = chardetng::EncodingDetector::new();
    det.feed(&body[..body.len().min(DETECT_PREFIX_BYTES)], false);
    det.guess(None, true)
}

/// Picks the encoding of `body` and decodes it. `header_charset` is the charset
/// parameter of the `Content-Type` header, if any. Never fails: the last resort
/// decodes with replacement characters.
pub fn decode(body: &[u8], header_charset: Option<&str>) -> Decoded {
    if let Some(enc) = header_charset.and_then(|l| Encoding::for_label(l.trim().as_bytes())) {
        let enc = refine(enc, body);
        if usable(enc) {
            if let Some(text) = decode_clean(enc, body) {
                return Decoded {
                    text,
                    encoding: enc,
                    source: CharsetSource::Header,
                };
            }
        }
    }
    if let Some((enc, bom_len)) = Encoding::for_bom(body) {
        let (text, _) = enc.decode_without_bom_handling(&body[bom_len..]);
        return Decoded {
            text: text.into_owned(),
            encoding: enc,
            source: CharsetSource::Bom,
        };
    }
    if let Some(enc) = meta_charset(body) {
        let enc = refine(enc, body);
        if usable(enc) {
            if let Some(text) = decode_clean(enc, body) {
                return Decoded {
                    text,
                    encoding: enc,
                    source: CharsetSource::Meta,
                };
            }
        }
    }
    if body.is_ascii() {
        return Decoded {
            text: String::from_utf8_lossy(body).into_owned(),
            encoding: UTF_8,
            source: CharsetSource::Default,
        };
    }
    let guessed = refine(detect(body), body);
    let (text, _) = guessed.decode_without_bom_handling(body);
    Decoded {
        text: text.into_owned(),
        encoding: guessed,
        source: CharsetSource::Detected,
    }
}

/// Decodes `body` with the encoding called `name` (an encoding_rs name such as
/// the one stored in `FetchedPage::charset`); unknown names fall back to
/// windows-1252, which never fails.
pub fn decode_with_name(body: &[u8], name: &str) -> String {
    let enc = Encoding::for_label(name.as_bytes()).unwrap_or(WINDOWS_1252);
    enc.decode_with_bom_removal(body).0.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::BIG5;

    /// Real zh-CN sentence from the LibreOffice help (MPL-2.0).
    const ZH_CN: &str = "当文档中包含一个或多个宏时，将显示“宏安全性”对话框。您也可以从“工具 - 选项 - LibreOffice - 安全性”页面中调用此对话框。";
    /// Real zh-TW sentence from the LibreOffice help (MPL-2.0).
    const ZH_TW: &str = "當文件包含一或多個巨集時，會出現 [巨集安全性] 對話方塊。您也可以從 [工具] - [選項] 頁面呼叫此對話方塊。";

    fn page(body_text: &str, meta: Option<&str>) -> String {
        let meta = meta
            .map(|m| format!("<meta charset=\"{m}\">"))
            .unwrap_or_default();
        format!("<!DOCTYPE html><html><head>{meta}<title>t</title></head><body><p>{body_text}</p></body></html>")
    }

    fn encode(enc: &'static Encoding, s: &str) -> Vec<u8> {
        let (bytes, _, had_errors) = enc.encode(s);
        assert!(!had_errors, "{} cannot encode the sample", enc.name());
        bytes.into_owned()
    }

    #[test]
    fn content_type_parameter() {
        assert_eq!(
            charset_from_content_type("text/html; charset=GBK").as_deref(),
            Some("GBK")
        );
        assert_eq!(
            charset_from_content_type("text/html;Charset=\"utf-8\"").as_deref(),
            Some("utf-8")
        );
        assert_eq!(charset_from_content_type("text/html"), None);
    }

    #[test]
    fn header_label_wins_and_gb2312_means_gbk() {
        let html = page(ZH_CN, None);
        let d = decode(&encode(GBK, &html), Some("gb2312"));
        assert_eq!(d.text, html);
        assert_eq!(d.encoding, GBK);
        assert_eq!(d.source, CharsetSource::Header);
    }

    #[test]
    fn wrong_utf8_header_falls_back_to_meta() {
        let html = page(ZH_TW, Some("big5"));
        let d = decode(&encode(BIG5, &html), Some("utf-8"));
        assert_eq!(d.text, html);
        assert_eq!(d.encoding, BIG5);
        assert_eq!(d.source, CharsetSource::Meta);
    }

    #[test]
    fn http_equiv_meta_is_found() {
        let html = format!(
            "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\"></head><body>{ZH_CN}</body></html>"
        );
        let d = decode(&encode(GBK, &html), None);
        assert_eq!((d.encoding, d.source), (GBK, CharsetSource::Meta));
        assert_eq!(d.text, html);
    }

    #[test]
    fn bom_is_used_and_removed() {
        let mut bytes = vec![0xEF, 0xBB, 0xBF];
        bytes.extend_from_slice(ZH_CN.as_bytes());
        let d = decode(&bytes, None);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Bom));
        assert_eq!(d.text, ZH_CN);
    }

    #[test]
    fn unlabelled_gbk_and_big5_are_detected() {
        let html = page(ZH_CN, None);
        let d = decode(&encode(GBK, &html), None);
        assert_eq!(d.source, CharsetSource::Detected);
        assert_eq!(d.text, html);
        let html = page(ZH_TW, None);
        let d = decode(&encode(BIG5, &html), None);
        assert_eq!((d.encoding, d.source), (BIG5, CharsetSource::Detected));
        assert_eq!(d.text, html);
    }

    #[test]
    fn four_byte_sequences_report_gb18030() {
        // U+20BB7 (a CJK Extension B character) only exists as a GB18030 four-byte code.
        let text = format!("{ZH_CN}\u{20BB7}");
        let html = page(&text, None);
        let bytes = encode(GB18030, &html);
        let d = decode(&bytes, Some("gbk"));
        assert_eq!(d.encoding, GB18030);
        assert_eq!(d.text, html);
        assert!(!has_gb18030_four_byte(&encode(GBK, ZH_CN)));
    }

    #[test]
    fn ascii_defaults_to_utf8_and_garbage_never_panics() {
        let d = decode(b"<html>plain</html>", None);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Default));
        let junk: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let d = decode(&junk, Some("no-such-charset"));
        assert!(!d.text.is_empty());
        assert_eq!(decode(&[], None).text, "");
    }

    #[test]
    fn decode_with_name_round_trips() {
        assert_eq!(decode_with_name(&encode(BIG5, ZH_TW), "Big5"), ZH_TW);
    }
}
