//! One process owns the embedded store: while `harvest serve` runs, the
//! command line (`crawl`, `jobs`, `query`, `stats`, `get`) on the same data
//! dir goes through it. The server names its address in `{data_dir}/serve.json`;
//! a command finds it there and sends its arguments to `POST /api/cli`, where
//! the server runs the same code on its open store and sends the output back.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::config::{Config, IndexBackend};

/// File in the data dir naming the running server.
pub const SERVE_FILE: &str = "serve.json";
/// Route of the command endpoint.
pub const CLI_ROUTE: &str = "/api/cli";

/// What `{data_dir}/serve.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ServeInfo {
    /// Base URL, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    /// Process id of the server.
    pub pid: u32,
    /// The server's bearer token, if it has one (the file is private: 0600).
    pub token: Option<String>,
}

/// A command for the server: the arguments after the global options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CliRequest {
    /// Arguments, e.g. `["query", "--topic", "military"]`.
    pub args: Vec<String>,
}

/// What the server answers to a [`CliRequest`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct CliResponse {
    /// Exit code (0 success, 1 error, 2 usage).
    pub code: u8,
    /// Standard output, base64.
    pub stdout: String,
    /// Standard error (messages).
    pub stderr: String,
}

impl CliResponse {
    /// A response carrying `stdout` bytes.
    pub fn new(code: u8, stdout: &[u8], stderr: String) -> CliResponse {
        CliResponse {
            code,
            stdout: base64::engine::general_purpose::STANDARD.encode(stdout),
            stderr,
        }
    }

    /// The decoded standard output.
    pub fn stdout_bytes(&self) -> Result<Vec<u8>> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.stdout)
            .context("the server sent undecodable output")
    }
}

/// The serve file of a config's embedded store (none for HBase: there
/// several processes share the tables).
pub fn serve_file(cfg: &Config) -> Option<PathBuf> {
    match cfg.index {
        IndexBackend::Embedded { .. } => Some(cfg.data_dir.join(SERVE_FILE)),
        IndexBackend::Hbase { .. } => None,
    }
}

/// Writes the serve file (private to the user: it may hold the token).
pub fn write_info(path: &Path, info: &ServeInfo) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("json.tmp");
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::io::Write::write_all(&mut f, serde_json::to_string_pretty(info)?.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Removes the serve file if it still names this process.
pub fn remove_info(path: &Path) {
    if let Some(info) = read_info(path) {
        if info.pid == std::process::id() {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn read_info(path: &Path) -> Option<ServeInfo> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The running server of this config's data dir, if there is one (a file
/// left by a server that died is ignored).
pub fn find(cfg: &Config) -> Option<ServeInfo> {
    let info = read_info(&serve_file(cfg)?)?;
    crate::jobs::process_alive(info.pid).then_some(info)
}

/// The arguments of this process after the global options (`-c FILE`,
/// `-v`, `--log-format F`), with `--plot FILE` and `--out FILE` made
/// absolute (the server writes them).
pub fn forwarded_args() -> Vec<String> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut out = Vec::with_capacity(raw.len());
    // The server runs elsewhere: files named to `import` are made absolute.
    let mut import_files = false;
    let mut i = 0;
    while i < raw.len() {
        let a = &raw[i];
        if import_files && !a.starts_with('-') {
            out.push(cwd.join(a).display().to_string());
            i += 1;
            continue;
        }
        if a == "import" {
            import_files = true;
        }
        match a.as_str() {
            "-c" | "--config" | "--log-format" => {
                i += 2;
                continue;
            }
            "--plot" | "--out" => {
                out.push(a.clone());
                if let Some(v) = raw.get(i + 1) {
                    out.push(cwd.join(v).display().to_string());
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        if a.starts_with("--config=") || a.starts_with("--log-format=") {
        } else if let Some(v) = a.strip_prefix("--plot=") {
            out.push(format!("--plot={}", cwd.join(v).display()));
        } else if let Some(v) = a.strip_prefix("--out=") {
            out.push(format!("--out={}", cwd.join(v).display()));
        } else if a.starts_with("-v") && a[1..].chars().all(|c| c == 'v') || a == "--verbose" {
        } else {
            out.push(a.clone());
        }
        i += 1;
    }
    out
}

/// Sends `args` to the server and relays its output; returns the exit code.
pub fn forward(info: &ServeInfo, args: Vec<String>) -> Result<u8> {
    eprintln!(
        "harvest: the store is open in `harvest serve` (pid {}); running this through {}",
        info.pid, info.url
    );
    let rt = crate::runtime()?;
    let url = format!("{}{CLI_ROUTE}", info.url.trim_end_matches('/'));
    let resp: CliResponse = rt.block_on(async {
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(5))
            .build()
            .context("cannot build an HTTP client")?;
        let mut req = client
            .post(&url)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&CliRequest { args })?);
        if let Some(t) = &info.token {
            req = req.bearer_auth(t);
        }
        let r = req
            .send()
            .await
            .with_context(|| format!("cannot reach the running server at {}", info.url))?;
        let status = r.status();
        let body = r.bytes().await.context("reading the server's answer")?;
        if !status.is_success() {
            anyhow::bail!(
                "the running server answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        serde_json::from_slice::<CliResponse>(&body)
            .context("the server's answer is not a command result")
    })?;
    let out = resp.stdout_bytes()?;
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out)?;
    stdout.flush()?;
    if !resp.stderr.is_empty() {
        eprint!("{}", resp.stderr);
    }
    Ok(resp.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_carry_binary_output() {
        let r = CliResponse::new(0, &[0, 159, 146, 150], String::new());
        assert_eq!(r.stdout_bytes().ok(), Some(vec![0, 159, 146, 150]));
    }

    #[test]
    fn serve_file_is_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(SERVE_FILE);
        let info = ServeInfo {
            url: "http://127.0.0.1:1".into(),
            pid: std::process::id(),
            token: Some("t".into()),
        };
        write_info(&path, &info).expect("write");
        assert_eq!(read_info(&path), Some(info));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
        remove_info(&path);
        assert!(!path.exists());
    }
}
