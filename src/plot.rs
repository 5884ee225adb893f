//! `harvest stats --plot FILE.svg|png`: the web UI's trend chart for a
//! report. Bars per time bucket, stacked by group when grouped, a legend and
//! axis labels. SVG is written by hand; PNG is that SVG rendered by resvg with
//! the system's fonts (install a CJK font such as fonts-noto-cjk for Chinese
//! labels in PNGs; SVGs carry the text and render in any browser).

use std::fmt::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 480.0;
const MARGIN_LEFT: f64 = 64.0;
const MARGIN_RIGHT: f64 = 180.0;
const MARGIN_TOP: f64 = 40.0;
const MARGIN_BOTTOM: f64 = 72.0;
/// Colours of the series (cycled), readable on white.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];
const FONT: &str = "Noto Sans CJK SC, Source Han Sans SC, Microsoft YaHei, DejaVu Sans, sans-serif";

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" axis maximum and tick step for `max`.
fn axis(max: u64) -> (f64, f64) {
    let max = max.max(1) as f64;
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
        .max(1.0);
    ((max / step).ceil() * step, step)
}

/// Statistics laid out for a chart: buckets in order, one series per group
/// (or one named `all`), counts aligned to the buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsTable {
    pub buckets: Vec<String>,
    pub series: Vec<(String, Vec<u64>)>,
}

impl StatsTable {
    pub fn from_rows(rows: &[indexer::StatsRow], grouped: bool) -> StatsTable {
        let mut buckets: Vec<String> = Vec::new();
        let mut index: std::collections::HashMap<&str, usize> = Default::default();
        for r in rows {
            if !index.contains_key(r.bucket.as_str()) {
                index.insert(&r.bucket, buckets.len());
                buckets.push(r.bucket.clone());
            }
        }
        let mut series: Vec<(String, Vec<u64>)> = Vec::new();
        for r in rows {
            let name = r.group.clone().unwrap_or_else(|| "all".to_string());
            let i = index[r.bucket.as_str()];
            let pos = match series.iter().position(|(n, _)| *n == name) {
                Some(p) => p,
                None => {
                    series.push((name, vec![0; buckets.len()]));
                    series.len() - 1
                }
            };
            series[pos].1[i] += r.count;
        }
        if series.is_empty() && !grouped {
            series.push(("all".to_string(), vec![0; buckets.len()]));
        }
        StatsTable { buckets, series }
    }

    pub fn total(&self) -> u64 {
        self.series.iter().flat_map(|(_, c)| c.iter()).sum()
    }

    /// Pages counted: the total, except by story (the `copies` series; the
    /// `stories` series counts the same pages again, by story).
    pub fn pages(&self, group_by: Option<indexer::GroupBy>) -> u64 {
        if group_by == Some(indexer::GroupBy::Story) {
            self.series
                .iter()
                .filter(|(name, _)| name == indexer::query::GROUP_COPIES)
                .flat_map(|(_, c)| c.iter())
                .sum()
        } else {
            self.total()
        }
    }
}

/// The chart as an SVG document. Each bar is a `<rect class="bar">`, each
/// bucket a `<g class="bucket" data-bucket="…">` (as in the web UI).
pub fn stats_svg(table: &StatsTable, title: &str) -> String {
    let plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
    let plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM;
    let n = table.buckets.len().max(1);
    let totals: Vec<u64> = (0..table.buckets.len())
        .map(|i| table.series.iter().map(|(_, c)| c[i]).sum())
        .collect();
    let (ymax, step) = axis(totals.iter().copied().max().unwrap_or(0));
    let slot = plot_w / n as f64;
    let bar_w = (slot * 0.8).max(1.0);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" font-size="12">"#
    );
    let _ = write!(
        svg,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    let _ = write!(
        svg,
        r#"<text x="{}" y="24" font-size="16" font-weight="bold">{}</text>"#,
        MARGIN_LEFT,
        escape(title)
    );
    // Y axis with ticks and grid lines.
    let mut v = 0.0;
    while v <= ymax + 0.5 {
        let y = MARGIN_TOP + plot_h - v / ymax * plot_h;
        let _ = write!(
            svg,
            r##"<line x1="{MARGIN_LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            MARGIN_LEFT + plot_w,
            MARGIN_LEFT - 6.0,
            y + 4.0,
            v as u64
        );
        v += step;
    }
    // Bars, stacked bottom-up in series order.
    let label_every = (n / 12).max(1);
    for (i, bucket) in table.buckets.iter().enumerate() {
        let x = MARGIN_LEFT + i as f64 * slot + (slot - bar_w) / 2.0;
        let _ = write!(
            svg,
            r#"<g class="bucket" data-bucket="{}">"#,
            escape(bucket)
        );
        let mut base = 0u64;
        for (s, (name, counts)) in table.series.iter().enumerate() {
            let c = counts[i];
            if c == 0 {
                continue;
            }
            let y_top = MARGIN_TOP + plot_h - (base + c) as f64 / ymax * plot_h;
            let h = c as f64 / ymax * plot_h;
            let _ = write!(
                svg,
                r#"<rect class="bar" x="{x:.1}" y="{y_top:.1}" width="{bar_w:.1}" height="{h:.1}" fill="{}"><title>{} {}: {c}</title></rect>"#,
                PALETTE[s % PALETTE.len()],
                escape(bucket),
                escape(name)
            );
            base += c;
        }
        if i % label_every == 0 {
            let lx = MARGIN_LEFT + i as f64 * slot + slot / 2.0;
            let ly = MARGIN_TOP + plot_h + 14.0;
            let _ = write!(
                svg,
                r#"<text x="{lx:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-45 {lx:.1} {ly:.1})">{}</text>"#,
                escape(bucket)
            );
        }
        svg.push_str("</g>");
    }
    let _ = write!(
        svg,
        r##"<line x1="{MARGIN_LEFT}" x2="{}" y1="{}" y2="{}" stroke="#333"/>"##,
        MARGIN_LEFT + plot_w,
        MARGIN_TOP + plot_h,
        MARGIN_TOP + plot_h
    );
    // Legend.
    for (s, (name, counts)) in table.series.iter().enumerate() {
        let y = MARGIN_TOP + 10.0 + s as f64 * 18.0;
        let x = WIDTH - MARGIN_RIGHT + 16.0;
        let _ = write!(
            svg,
            r#"<rect x="{x}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{:.1}">{} ({})</text>"#,
            y - 10.0,
            PALETTE[s % PALETTE.len()],
            x + 18.0,
            y,
            escape(name),
            counts.iter().sum::<u64>()
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Render an SVG to PNG with the system's fonts.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>> {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &opt).context("parsing the chart SVG")?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .context("allocating the PNG canvas")?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("encoding the PNG")
}

/// The chart of `table` in the format `path`'s extension names (`.svg` or
/// `.png`).
pub fn chart_bytes(table: &StatsTable, title: &str, path: &Path) -> Result<Vec<u8>> {
    let svg = stats_svg(table, title);
    Ok(match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => svg.into_bytes(),
        Some("png") => svg_to_png(&svg)?,
        _ => bail!(
            "--plot {}: the file name must end in .svg or .png",
            path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> StatsTable {
        StatsTable {
            buckets: vec![
                "2017-03-01".into(),
                "2017-03-02".into(),
                "2017-03-03".into(),
            ],
            series: vec![
                ("军事".into(), vec![3, 0, 1]),
                ("politics".into(), vec![2, 0, 0]),
            ],
        }
    }

    #[test]
    fn one_group_per_bucket_and_one_rect_per_nonzero_count() {
        let svg = stats_svg(&table(), "pages per day");
        assert_eq!(svg.matches(r#"class="bucket""#).count(), 3);
        assert_eq!(svg.matches(r#"class="bar""#).count(), 3);
        assert!(svg.contains("军事 (4)"));
        assert!(svg.contains("2017-03-02"));
    }

    #[test]
    fn png_renders_and_the_axis_is_nice() {
        let png = svg_to_png(&stats_svg(&table(), "t")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(axis(5), (5.0, 1.0));
        assert_eq!(axis(0), (1.0, 1.0));
        assert_eq!(axis(731), (800.0, 200.0));
    }
}
