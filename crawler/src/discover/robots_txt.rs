//! `Sitemap:` lines of a robots.txt body, read with texting_robots within the
//! same size limit as the rules.

use url::Url;

use crate::error::DiscoverError;
use crate::robots::{resolve_sitemap_lines, ROBOTS_MAX_BYTES};

/// robots.txt user-agent used to read `Sitemap:` lines (they belong to no group).
const ROBOTS_ANY_AGENT: &str = "*";

/// The `Sitemap:` URLs of a robots.txt body fetched from `robots_url`.
///
/// The field name is matched case-insensitively (texting_robots, which also
/// reads `Site-map:`); relative URLs are resolved against `robots_url`;
/// unparsable and non-http(s) URLs are skipped; duplicates are removed, first
/// occurrence kept. Only the first [`ROBOTS_MAX_BYTES`] of the body are read
/// (cut at a line end), as for the rules.
///
/// # Errors
///
/// [`DiscoverError::Robots`] when texting_robots rejects the file (a rule of
/// the `*` group that it cannot compile).
pub fn robots_sitemaps(body: &[u8], robots_url: &Url) -> Result<Vec<Url>, DiscoverError> {
    let body = cut_at_line(body, ROBOTS_MAX_BYTES);
    let robot = texting_robots::Robot::new(ROBOTS_ANY_AGENT, body)
        .map_err(|e| DiscoverError::Robots(format!("{e:#}")))?;
    Ok(resolve_sitemap_lines(
        robot.sitemaps.iter().map(String::as_str),
        robots_url,
    ))
}

/// The first `max` bytes of `body`, cut after the last line end within them.
fn cut_at_line(body: &[u8], max: u64) -> &[u8] {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if body.len() <= max {
        return body;
    }
    let head = &body[..max];
    match head.iter().rposition(|&b| b == b'\n') {
        Some(end) => &head[..=end],
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;
    use crate::robots::RobotsRules;

    const ROBOTS: &str = "User-agent: *\nDisallow: /private\n\
        Sitemap: https://news.example/sitemap.xml\n\
        SITEMAP: /news-sitemap.xml # the news one\n\
        sitemap:https://news.example/sitemap.xml\n\
        Sitemap: ftp://news.example/old.xml\n\
        Sitemap: https://cdn.example/feeds/atom.xml\n";

    #[test]
    fn robots_sitemap_lines_any_case_resolved_deduplicated_http_only() {
        let robots = Url::parse("https://news.example/robots.txt").unwrap();
        let got = robots_sitemaps(ROBOTS.as_bytes(), &robots).unwrap();
        let got: Vec<&str> = got.iter().map(Url::as_str).collect();
        assert_eq!(
            got,
            [
                "https://news.example/sitemap.xml",
                "https://news.example/news-sitemap.xml",
                "https://cdn.example/feeds/atom.xml",
            ]
        );
    }

    #[test]
    fn robots_rules_give_the_same_sitemaps_as_the_raw_body() {
        let robots = Url::parse("https://news.example/robots.txt").unwrap();
        let rules = RobotsRules::from_bytes("harvest", ROBOTS.as_bytes());
        assert_eq!(
            rules.sitemaps(&robots),
            robots_sitemaps(ROBOTS.as_bytes(), &robots).unwrap()
        );
        assert!(RobotsRules::AllowAll.sitemaps(&robots).is_empty());
    }

    #[test]
    fn robots_sitemap_lines_past_the_read_limit_are_ignored() {
        let robots = Url::parse("https://news.example/robots.txt").unwrap();
        let mut body = String::from("Sitemap: /first.xml\n");
        let padding = format!("# {}\n", "x".repeat(1000));
        while (body.len() as u64) < ROBOTS_MAX_BYTES {
            body.push_str(&padding);
        }
        body.push_str("Sitemap: /late.xml\n");
        let got = robots_sitemaps(body.as_bytes(), &robots).unwrap();
        assert_eq!(got, [Url::parse("https://news.example/first.xml").unwrap()]);
    }
}
