//! Lines on stderr that do not go through `tracing`: the top-level error,
//! warnings and notes, progress lines, a forwarded command's stderr. Under
//! `--log-format text` they are written as they are; under `--log-format
//! json` each line is one JSON object of the shape `tracing`'s JSON lines
//! have (`timestamp`, `level`, `fields.message`, `target`), so every line a
//! `harvest` process writes to stderr parses as JSON (issue 42).
//!
//! These lines are not filtered by `-v` / `HARVEST_LOG` (an error is always
//! shown); the level of a line is read from its prefix (`harvest: error:`,
//! `harvest: warning:`, else info).

use std::io::Write;
use std::sync::OnceLock;

use crate::cli::LogFormat;

/// The format chosen at start ([`crate::init_tracing`]); text until then.
static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// The `target` of the JSON lines.
const TARGET: &str = "harvest";

/// Sets the format of the lines (once; later calls are ignored). Under
/// JSON a panic's message is a JSON line too.
pub fn set_format(format: LogFormat) {
    if FORMAT.set(format).is_ok() && format == LogFormat::Json {
        std::panic::set_hook(Box::new(|info| {
            eprintln!("{}", json_line("ERROR", &format!("panic: {info}"), None));
        }));
    }
}

/// The format of the lines.
pub fn format() -> LogFormat {
    FORMAT.get().copied().unwrap_or_default()
}

/// Whether `args` (a command line, program name first) asks for JSON log
/// lines: what decides the format of a usage error, found before the
/// command line is parsed.
pub fn json_requested<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> bool {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(AsRef::as_ref).collect();
    args.iter().enumerate().any(|(i, a)| {
        *a == "--log-format=json"
            || (*a == "--log-format" && args.get(i + 1) == Some(&"json".as_ref()))
    })
}

/// Level and message of a text line: `harvest: error: M` is an error,
/// `harvest: warning: M` a warning, anything else (`harvest: M`) a note.
fn level_and_message(line: &str) -> (&'static str, &str) {
    let line = line.trim_end_matches(['\n', '\r']);
    for (prefix, level) in [
        ("harvest: error: ", "ERROR"),
        ("error: ", "ERROR"),
        ("harvest: warning: ", "WARN"),
        ("warning: ", "WARN"),
        ("harvest: ", "INFO"),
    ] {
        if let Some(rest) = line.strip_prefix(prefix) {
            return (level, rest);
        }
    }
    ("INFO", line)
}

/// One JSON log line (without its newline).
pub fn json_line(level: &str, message: &str, extra: Option<(&str, serde_json::Value)>) -> String {
    let mut fields = serde_json::json!({ "message": message });
    if let Some((key, value)) = extra {
        fields[key] = value;
    }
    serde_json::json!({
        "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "level": level,
        "fields": fields,
        "target": TARGET,
    })
    .to_string()
}

/// Writes `text` (whole lines) to stderr in the chosen format.
pub fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write_lines(&mut err, text, format());
}

fn write_lines(out: &mut dyn Write, text: &str, format: LogFormat) -> std::io::Result<()> {
    match format {
        LogFormat::Text => {
            out.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                out.write_all(b"\n")?;
            }
        }
        LogFormat::Json => {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let (level, message) = level_and_message(line);
                writeln!(out, "{}", json_line(level, message, None))?;
            }
        }
    }
    out.flush()
}

/// The error that ends a command: `harvest: error: E` and a `caused by:`
/// line per cause, or one JSON line with the causes in `fields.causes`.
pub fn error(err: &anyhow::Error) {
    let causes: Vec<String> = err.chain().skip(1).map(|c| c.to_string()).collect();
    match format() {
        LogFormat::Text => {
            let mut text = format!("harvest: error: {err}\n");
            for cause in &causes {
                text.push_str(&format!("  caused by: {cause}\n"));
            }
            say(&text);
        }
        LogFormat::Json => {
            let extra = (!causes.is_empty()).then(|| ("causes", serde_json::json!(causes)));
            eprintln!("{}", json_line("ERROR", &err.to_string(), extra));
        }
    }
}

/// Stderr as a writer of lines in the chosen format: text passes through
/// as it is written; under JSON a line is written once it is whole (the
/// rest when flushed or dropped).
#[derive(Default)]
pub struct StderrLines {
    pending: Vec<u8>,
}

impl StderrLines {
    pub fn new() -> StderrLines {
        StderrLines::default()
    }

    fn emit(&mut self, upto: usize) -> std::io::Result<()> {
        let line: Vec<u8> = self.pending.drain(..upto).collect();
        write_lines(
            &mut std::io::stderr().lock(),
            &String::from_utf8_lossy(&line),
            LogFormat::Json,
        )
    }
}

impl Write for StderrLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if format() == LogFormat::Text {
            return std::io::stderr().write(buf);
        }
        self.pending.extend_from_slice(buf);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            self.emit(end + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            self.emit(self.pending.len())?;
        }
        std::io::stderr().flush()
    }
}

impl Drop for StderrLines {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_level_and_parse_as_json() {
        let mut out = Vec::new();
        write_lines(
            &mut out,
            "harvest: warning: no model\nharvest: error: gone\nharvest: stopping\n\nplain\n",
            LogFormat::Json,
        )
        .unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        let got: Vec<(&str, &str)> = lines
            .iter()
            .map(|v| {
                (
                    v["level"].as_str().unwrap(),
                    v["fields"]["message"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("WARN", "no model"),
                ("ERROR", "gone"),
                ("INFO", "stopping"),
                ("INFO", "plain")
            ]
        );
        assert!(lines.iter().all(|v| v["target"] == TARGET));
    }

    #[test]
    fn the_format_is_found_before_parsing() {
        assert!(json_requested(&["harvest", "--log-format", "json", "x"]));
        assert!(json_requested(&["harvest", "query", "--log-format=json"]));
        assert!(!json_requested(&["harvest", "--log-format", "text"]));
        assert!(!json_requested(&["harvest", "json"]));
    }
}
