//! Time zones: the zone a page's times without an offset are read in (by
//! configuration, site, locale or language), and the offsets a page states
//! (numeric, or a zone's abbreviation on a day).

use chrono::{FixedOffset, NaiveDate, Offset, TimeZone};
use chrono_tz::Tz;

/// Zone for times without an offset: the configured one, else by site
/// (`.cn`/`.hk`/`.tw`/`.mo` hosts: Asia/Shanghai; another country's own
/// domain: its zone, see [`country_zone`]), else by the country a page's
/// locale names (`<html lang="en-SG">`, `og:locale` `de_DE`), else by
/// language ([`LANGUAGE_ZONES`]: Chinese Asia/Shanghai, Japanese
/// Asia/Tokyo, German Europe/Berlin, ...), else UTC.
pub fn page_zone(
    configured: Option<Tz>,
    host: Option<&str>,
    language: Option<&str>,
    locales: &[&str],
) -> Tz {
    if let Some(z) = configured {
        return z;
    }
    let tld = host
        .map(|h| h.trim_end_matches('.').rsplit('.').next().unwrap_or(""))
        .unwrap_or("")
        .to_ascii_lowercase();
    let chinese_region = |c: &str| matches!(c, "cn" | "hk" | "tw" | "mo");
    if chinese_region(&tld) {
        return chrono_tz::Asia::Shanghai;
    }
    if let Some(zone) = country_zone(&tld) {
        return zone;
    }
    // The region of a language tag: `zh-Hant-TW`, `en_SG` (a script's four
    // letters and the language itself skipped). A dialect's region where
    // the site is elsewhere (`en-GB` in Sydney) is no worse than UTC.
    let region = locales.iter().find_map(|l| {
        l.split(['-', '_'])
            .skip(1)
            .find(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_alphabetic()))
            .map(str::to_ascii_lowercase)
    });
    if let Some(region) = region {
        if chinese_region(&region) {
            return chrono_tz::Asia::Shanghai;
        }
        if let Some(zone) = country_zone(&region) {
            return zone;
        }
    }
    language
        .and_then(|l| {
            let i = LANGUAGE_ZONES
                .binary_search_by(|(code, _)| (*code).cmp(l))
                .ok()?;
            LANGUAGE_ZONES[i].1.parse().ok()
        })
        .unwrap_or(chrono_tz::UTC)
}

/// Languages whose newsrooms nearly all keep one zone, sorted by code:
/// the zone of a page in one of them that neither host nor locale placed.
/// Languages of many zones (English, Spanish, Portuguese, Arabic) are left
/// out; so are those whose second country keeps another clock (Russian
/// pages of Minsk keep Moscow's, of Almaty not: Moscow is still nearer
/// than UTC).
const LANGUAGE_ZONES: [(&str, &str); 29] = [
    ("bg", "Europe/Sofia"),
    ("cs", "Europe/Prague"),
    ("da", "Europe/Copenhagen"),
    ("de", "Europe/Berlin"),
    ("el", "Europe/Athens"),
    ("fa", "Asia/Tehran"),
    ("fi", "Europe/Helsinki"),
    ("fr", "Europe/Paris"),
    ("he", "Asia/Jerusalem"),
    ("hi", "Asia/Kolkata"),
    ("hu", "Europe/Budapest"),
    ("id", "Asia/Jakarta"),
    ("it", "Europe/Rome"),
    ("ja", "Asia/Tokyo"),
    ("ko", "Asia/Seoul"),
    ("ms", "Asia/Kuala_Lumpur"),
    ("nb", "Europe/Oslo"),
    ("nl", "Europe/Amsterdam"),
    ("nn", "Europe/Oslo"),
    ("no", "Europe/Oslo"),
    ("pl", "Europe/Warsaw"),
    ("ro", "Europe/Bucharest"),
    ("ru", "Europe/Moscow"),
    ("sk", "Europe/Bratislava"),
    ("sv", "Europe/Stockholm"),
    ("th", "Asia/Bangkok"),
    ("tr", "Europe/Istanbul"),
    ("vi", "Asia/Ho_Chi_Minh"),
    ("zh", "Asia/Shanghai"),
];

/// Country code top-level domains and their zones, sorted by code.
const COUNTRY_ZONES: [(&str, &str); 44] = [
    ("ae", "Asia/Dubai"),
    ("ar", "America/Argentina/Buenos_Aires"),
    ("at", "Europe/Vienna"),
    ("bd", "Asia/Dhaka"),
    ("be", "Europe/Brussels"),
    ("bg", "Europe/Sofia"),
    ("ch", "Europe/Zurich"),
    ("cz", "Europe/Prague"),
    ("de", "Europe/Berlin"),
    ("dk", "Europe/Copenhagen"),
    ("eg", "Africa/Cairo"),
    ("es", "Europe/Madrid"),
    ("fi", "Europe/Helsinki"),
    ("fr", "Europe/Paris"),
    // The United Kingdom's code in language tags (`en-GB`); its domain is `.uk`.
    ("gb", "Europe/London"),
    ("gr", "Europe/Athens"),
    ("hu", "Europe/Budapest"),
    ("ie", "Europe/Dublin"),
    ("il", "Asia/Jerusalem"),
    ("in", "Asia/Kolkata"),
    ("it", "Europe/Rome"),
    ("jp", "Asia/Tokyo"),
    ("ke", "Africa/Nairobi"),
    ("kr", "Asia/Seoul"),
    ("my", "Asia/Kuala_Lumpur"),
    ("ng", "Africa/Lagos"),
    ("nl", "Europe/Amsterdam"),
    ("no", "Europe/Oslo"),
    ("nz", "Pacific/Auckland"),
    ("ph", "Asia/Manila"),
    ("pk", "Asia/Karachi"),
    ("pl", "Europe/Warsaw"),
    ("pt", "Europe/Lisbon"),
    ("ro", "Europe/Bucharest"),
    ("ru", "Europe/Moscow"),
    ("sa", "Asia/Riyadh"),
    ("se", "Europe/Stockholm"),
    ("sg", "Asia/Singapore"),
    ("sk", "Europe/Bratislava"),
    ("th", "Asia/Bangkok"),
    ("tr", "Europe/Istanbul"),
    ("uk", "Europe/London"),
    ("vn", "Asia/Ho_Chi_Minh"),
    ("za", "Africa/Johannesburg"),
];

/// The zone of a country with one zone (or one that nearly all its
/// newsrooms keep) by its code top-level domain: a site under `.de` or
/// `.fr` states its times in Berlin's or Paris's, in any language (RFI's
/// Chinese service too). Codes sold for other uses (`.io`, `.tv`, `.me`,
/// `.co`) and countries of several zones (`.us`, `.br`, `.au`) are left
/// out; Russia's newsrooms keep Moscow's time.
fn country_zone(tld: &str) -> Option<Tz> {
    let i = COUNTRY_ZONES
        .binary_search_by(|(t, _)| (*t).cmp(tld))
        .ok()?;
    COUNTRY_ZONES[i].1.parse().ok()
}

/// Offset of a zone abbreviation common in English bylines; `None` for
/// unknown or ambiguous ones (CST, IST).
pub(super) fn abbreviation_offset(abbr: &str, date: NaiveDate) -> Option<FixedOffset> {
    let named = |tz: Tz| {
        tz.from_local_datetime(&date.and_hms_opt(12, 0, 0)?)
            .earliest()
            .map(|d| d.offset().fix())
    };
    let hours = match abbr.to_ascii_uppercase().as_str() {
        "ET" => return named(chrono_tz::America::New_York),
        "PT" => return named(chrono_tz::America::Los_Angeles),
        "CT" => return named(chrono_tz::America::Chicago),
        "UTC" | "GMT" | "Z" => 0,
        "EST" => -5,
        "EDT" | "CDT" => {
            if abbr.eq_ignore_ascii_case("EDT") {
                -4
            } else {
                -5
            }
        }
        "PST" => -8,
        "PDT" | "MST" => -7,
        "MDT" => -6,
        "BST" | "CET" => 1,
        "CEST" | "EET" => 2,
        "EEST" | "MSK" => 3,
        "HKT" | "SGT" | "AWST" => 8,
        "JST" | "KST" => 9,
        "AEST" => 10,
        "AEDT" => 11,
        _ => return None,
    };
    FixedOffset::east_opt(hours * 3600)
}

/// An offset as [`super::patterns::OFFSET_AFTER`] finds it: numeric, or a zone's
/// abbreviation on `date`.
pub(super) fn stated_offset(z: &str, date: NaiveDate) -> Option<FixedOffset> {
    parse_offset(z).or_else(|| abbreviation_offset(z, date))
}

pub(super) fn parse_offset(s: &str) -> Option<FixedOffset> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("z") {
        return FixedOffset::east_opt(0);
    }
    let s = s
        .trim_start_matches("GMT")
        .trim_start_matches("UTC")
        .replace([' ', ':'], "");
    let (sign, digits) = match s.chars().next()? {
        '+' => (1, &s[1..]),
        '-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m): (i32, i32) = match digits.len() {
        1 | 2 => (digits.parse().ok()?, 0),
        3 => (digits[..1].parse().ok()?, digits[1..].parse().ok()?),
        4 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?),
        _ => return None,
    };
    if h > 14 || m > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_by_configuration_site_and_language() {
        let tz = |c, h, l| page_zone(c, h, l, &[]).name().to_string();
        assert_eq!(
            tz(None, Some("news.sina.com.cn"), Some("zh")),
            "Asia/Shanghai"
        );
        assert_eq!(tz(None, Some("www.bbc.com"), Some("zh")), "Asia/Shanghai");
        assert_eq!(tz(None, Some("www.cnn.com"), Some("en")), "UTC");
        // A country's own domain, in any language.
        assert_eq!(tz(None, Some("www.lemonde.fr"), Some("fr")), "Europe/Paris");
        assert_eq!(tz(None, Some("www.rfi.fr"), Some("zh")), "Europe/Paris");
        assert_eq!(tz(None, Some("www.tagesschau.de"), None), "Europe/Berlin");
        assert_eq!(tz(None, Some("www.bbc.co.uk"), Some("en")), "Europe/London");
        assert_eq!(tz(None, Some("example.io"), Some("en")), "UTC");
        // A locale's region where the host names no country.
        let at = |host, locales: &[&str]| page_zone(None, Some(host), Some("en"), locales);
        assert_eq!(
            at("www.straitstimes.com", &["en-SG"]),
            chrono_tz::Asia::Singapore
        );
        assert_eq!(
            at("www.scmp.com", &["", "en_HK"]),
            chrono_tz::Asia::Shanghai
        );
        assert_eq!(
            at("news.example.com", &["zh-Hant-TW"]),
            chrono_tz::Asia::Shanghai
        );
        assert_eq!(
            at("www.thetimes.com", &["en-GB"]),
            chrono_tz::Europe::London
        );
        assert_eq!(at("www.cnn.com", &["en-US", "en_US"]), chrono_tz::UTC);
        assert_eq!(at("www.cnn.com", &["en"]), chrono_tz::UTC);
        // The host's country first.
        assert_eq!(at("www.lemonde.fr", &["en-GB"]), chrono_tz::Europe::Paris);
        assert_eq!(tz(None, Some("example.tv"), Some("zh")), "Asia/Shanghai");
        assert!(COUNTRY_ZONES.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        assert!(LANGUAGE_ZONES.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        for (lang, name) in LANGUAGE_ZONES {
            assert_eq!(tz(None, Some("example.com"), Some(lang)), name, "{lang}");
        }
        assert_eq!(tz(None, Some("example.com"), Some("es")), "UTC");
        for (tld, name) in COUNTRY_ZONES {
            assert_eq!(country_zone(tld).map(|z| z.name()), Some(name), "{tld}");
        }
        assert_eq!(tz(None, Some("www.nikkei.com"), Some("ja")), "Asia/Tokyo");
        assert_eq!(
            tz(
                Some(chrono_tz::Europe::Berlin),
                Some("news.sina.com.cn"),
                Some("zh")
            ),
            "Europe/Berlin"
        );
    }
}
