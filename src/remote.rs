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

/// A command for the server: the arguments after the global options (the body of
/// `POST /api/cli`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct CliRequest {
    /// Arguments, e.g. `["query", "--topic", "military"]`.
    pub args: Vec<String>,
}

/// One frame of the server's answer to a [`CliRequest`]: the answer is a
/// stream of frames, one JSON value a line (an object `{"stdout": …}`, or
/// the string `"alive"`), sent as the command writes, so
/// a long export or crawl shows its output as it goes instead of at the end
/// (and the server holds a frame, not the whole output). The last frame is
/// [`CliFrame::Code`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CliFrame {
    /// Bytes of standard output, base64.
    Stdout(String),
    /// Text for standard error (messages, warnings).
    Stderr(String),
    /// Bytes of the output file the command line names (`--out`, `--plot`),
    /// base64: the calling process writes them to its file (the first,
    /// empty, frame creates it; it counts once the exit code is 0).
    File(String),
    /// The exit code (0 success, 1 error, 2 usage: the arguments do not
    /// parse or name no archive command); nothing follows.
    Code(u8),
    /// Nothing (the line `"alive"`): sent every [`ALIVE_EVERY`] while a command runs, so that a
    /// caller that went away is noticed (its connection fails the write) even
    /// when the command writes nothing, and the command is cancelled.
    Alive,
}

/// How often a running command's answer carries a [`CliFrame::Alive`].
pub const ALIVE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

impl CliFrame {
    /// A frame carrying `bytes` of standard output.
    pub fn stdout(bytes: &[u8]) -> CliFrame {
        CliFrame::Stdout(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// The frame as a line of the answer.
    pub fn line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// Bytes of output a [`FrameWriter`] gathers before it sends a frame.
const FRAME_BYTES: usize = 32 * 1024;

/// The standard output or error of a command run for a [`CliRequest`]:
/// written bytes go to the answer's stream in frames of at most
/// [`FRAME_BYTES`] (and at every flush). A slow reader holds the command
/// back (the channel is bounded); a reader gone makes writes fail with
/// `BrokenPipe`, which stops the command.
pub struct FrameWriter {
    tx: tokio::sync::mpsc::Sender<CliFrame>,
    stream: Stream,
    buf: Vec<u8>,
}

/// Which output of the command a [`FrameWriter`] carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
    File,
}

impl FrameWriter {
    pub fn stdout(tx: tokio::sync::mpsc::Sender<CliFrame>) -> FrameWriter {
        FrameWriter {
            tx,
            stream: Stream::Stdout,
            buf: Vec::new(),
        }
    }

    pub fn stderr(tx: tokio::sync::mpsc::Sender<CliFrame>) -> FrameWriter {
        FrameWriter {
            tx,
            stream: Stream::Stderr,
            buf: Vec::new(),
        }
    }

    /// The caller's output file: an empty [`CliFrame::File`] at once (the
    /// caller creates the file), then its bytes.
    pub fn file(tx: tokio::sync::mpsc::Sender<CliFrame>) -> FrameWriter {
        send_frame(&tx, CliFrame::File(String::new()));
        FrameWriter {
            tx,
            stream: Stream::File,
            buf: Vec::new(),
        }
    }

    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::take(&mut self.buf);
        let frame = match self.stream {
            Stream::Stderr => CliFrame::Stderr(String::from_utf8_lossy(&bytes).into_owned()),
            Stream::Stdout => CliFrame::stdout(&bytes),
            Stream::File => {
                CliFrame::File(base64::engine::general_purpose::STANDARD.encode(&bytes))
            }
        };
        if send_frame(&self.tx, frame) {
            Ok(())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the command's caller went away",
            ))
        }
    }
}

/// Sends `frame` from synchronous code, whatever thread that is: a plain
/// thread blocks on the channel, a runtime worker steps out of the runtime
/// for it. False when the receiver is gone.
fn send_frame(tx: &tokio::sync::mpsc::Sender<CliFrame>, frame: CliFrame) -> bool {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| tx.blocking_send(frame)).is_ok()
        }
        Ok(_) => tx.try_send(frame).is_ok(),
        Err(_) => tx.blocking_send(frame).is_ok(),
    }
}

/// Sends a line of standard error (a progress line); dropped when the
/// caller went away.
pub fn send_line(tx: &tokio::sync::mpsc::Sender<CliFrame>, line: &str) {
    send_frame(tx, CliFrame::Stderr(format!("{line}\n")));
}

impl std::io::Write for FrameWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= FRAME_BYTES {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

impl crate::outfile::OutFile for FrameWriter {
    fn commit(mut self: Box<Self>) -> Result<()> {
        self.send()
            .context("sending the output file to the command's caller")
    }
}

impl Drop for FrameWriter {
    fn drop(&mut self) {
        let _ = self.send();
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
/// absolute (for the server's messages; the file itself is written here,
/// from the answer's [`CliFrame::File`] frames), and the positions of the
/// files named to `import` (sent to the server before the command: it reads
/// no path a request names).
pub fn forwarded_args() -> (Vec<String>, Vec<(usize, PathBuf)>) {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut out = Vec::with_capacity(raw.len());
    let mut uploads = Vec::new();
    let mut import_files = false;
    let mut i = 0;
    while i < raw.len() {
        let a = &raw[i];
        if import_files && !a.starts_with('-') {
            uploads.push((out.len(), cwd.join(a)));
            out.push(a.clone());
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
    (out, uploads)
}

/// Prefix of an uploaded file's name in a forwarded `import`:
/// `upload:ID/NAME`, a file the caller sent to [`UPLOAD_ROUTE`].
pub const UPLOAD_PREFIX: &str = "upload:";
/// Route a forwarded `import` sends its files to first.
pub const UPLOAD_ROUTE: &str = "/api/uploads";
/// Folder of the data dir holding uploaded files until their import ends.
pub const UPLOAD_DIR: &str = "uploads";

/// The file an upload reference (`upload:ID/NAME`) names in `data_dir`, or
/// None when it is not one (an ID is 32 hex digits, a NAME a plain file name).
pub fn upload_path(data_dir: &Path, reference: &str) -> Option<PathBuf> {
    let (id, name) = reference.strip_prefix(UPLOAD_PREFIX)?.split_once('/')?;
    let id_ok = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    (id_ok && plain_file_name(name)).then(|| data_dir.join(UPLOAD_DIR).join(id).join(name))
}

/// A name that is one path component: no separator, not `.` or `..`, not empty.
pub fn plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && name.len() <= 255
}

/// The server a serve file names refuses connections: it died (or its pid
/// went to another process) and nothing of the command ran there.
#[derive(Debug)]
pub struct Unreachable {
    pub url: String,
    pub pid: u32,
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server named in {SERVE_FILE} (pid {}) does not answer at {}",
            self.pid, self.url
        )
    }
}

impl std::error::Error for Unreachable {}

/// Sends `args` to the server and relays its output as it comes (the output
/// file, if the command names one, written to `output` here); the files at
/// `uploads` (positions in `args`) are sent first. Returns the exit code.
pub fn forward(
    info: &ServeInfo,
    (mut args, uploads): (Vec<String>, Vec<(usize, PathBuf)>),
    output: Option<&Path>,
) -> Result<u8> {
    crate::logline::say(&format!(
        "harvest: the store is open in `harvest serve` (pid {}); running this through {}",
        info.pid, info.url
    ));
    let rt = crate::runtime()?;
    let url = format!("{}{CLI_ROUTE}", info.url.trim_end_matches('/'));
    rt.block_on(async {
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(5))
            .build()
            .context("cannot build an HTTP client")?;
        for (at, path) in &uploads {
            args[*at] = match upload(&client, info, path).await {
                Ok(reference) => reference,
                Err(e) => {
                    if e.chain().any(|c| {
                        c.downcast_ref::<reqwest::Error>()
                            .is_some_and(reqwest::Error::is_connect)
                    }) {
                        return Err(anyhow::Error::new(Unreachable {
                            url: info.url.clone(),
                            pid: info.pid,
                        })
                        .context(format!("{e:#}")));
                    }
                    return Err(e);
                }
            };
        }
        let mut req = client
            .post(&url)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&CliRequest { args })?);
        if let Some(t) = &info.token {
            req = req.bearer_auth(t);
        }
        let mut r = match req.send().await {
            Ok(r) => r,
            // Nobody listens: the command never started there.
            Err(e) if e.is_connect() => {
                return Err(anyhow::Error::new(Unreachable {
                    url: info.url.clone(),
                    pid: info.pid,
                })
                .context(e))
            }
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("cannot reach the running server at {}", info.url)))
            }
        };
        let status = r.status();
        if !status.is_success() {
            let body = r.bytes().await.unwrap_or_default();
            anyhow::bail!(
                "the running server answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        let mut relay = Relay {
            pending: Vec::new(),
            stderr: crate::logline::StderrLines::new(),
            output: output.map(Path::to_path_buf),
            writing: None,
        };
        while let Some(chunk) = r.chunk().await.context("reading the server's answer")? {
            if let Some(code) = relay.take(&chunk)? {
                return Ok(code);
            }
        }
        anyhow::bail!("the server ended its answer before the command finished")
    })
}

/// Sends the file at `path` to the server's upload folder; the reference
/// (`upload:ID/NAME`) a forwarded `import` names it by.
async fn upload(client: &reqwest::Client, info: &ServeInfo, path: &Path) -> Result<String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| plain_file_name(n))
        .with_context(|| format!("{}: not a file name the server can take", path.display()))?;
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!("{} is not a file", path.display());
    }
    let file = tokio::fs::File::open(path)
        .await
        .with_context(|| format!("cannot read {}", path.display()))?;
    let url = format!(
        "{}{UPLOAD_ROUTE}?name={}",
        info.url.trim_end_matches('/'),
        url::form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>()
    );
    let mut req = client
        .post(&url)
        .header("content-length", meta.len())
        .body(reqwest::Body::from(file));
    if let Some(t) = &info.token {
        req = req.bearer_auth(t);
    }
    let r = req
        .send()
        .await
        .with_context(|| format!("sending {} to the running server", path.display()))?;
    let status = r.status();
    let body = r.bytes().await.unwrap_or_default();
    if !status.is_success() {
        anyhow::bail!(
            "the running server refused {}: {status}: {}",
            path.display(),
            String::from_utf8_lossy(&body)
        );
    }
    let answer: serde_json::Value =
        serde_json::from_slice(&body).context("the server's upload answer is not JSON")?;
    answer["upload"]
        .as_str()
        .map(str::to_owned)
        .context("the server's upload answer names no upload")
}

/// Reads an answer's frames from its chunks and writes their output.
#[derive(Default)]
struct Relay {
    pending: Vec<u8>,
    /// The command's stderr, in this process's log format.
    stderr: crate::logline::StderrLines,
    /// The output file the command line names.
    output: Option<PathBuf>,
    /// The output file being written: its temporary name and handle.
    writing: Option<(PathBuf, std::fs::File)>,
}

impl Relay {
    /// Takes one chunk of the answer; the exit code once its frame came.
    fn take(&mut self, chunk: &[u8]) -> Result<Option<u8>> {
        use std::io::Write;
        self.pending.extend_from_slice(chunk);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let frame: CliFrame = serde_json::from_slice(&line)
                .context("the server's answer is not a command result")?;
            match frame {
                CliFrame::Stdout(b64) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .context("the server sent undecodable output")?;
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&bytes)?;
                    stdout.flush()?;
                }
                CliFrame::File(b64) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .context("the server sent an undecodable file")?;
                    self.file_bytes(&bytes)?;
                }
                CliFrame::Stderr(text) => self.stderr.write_all(text.as_bytes())?,
                CliFrame::Code(code) => {
                    self.stderr.flush()?;
                    self.finish_file(code == 0)?;
                    return Ok(Some(code));
                }
                CliFrame::Alive => {}
            }
        }
        Ok(None)
    }

    /// Bytes of the output file (the first frame creates it, under a
    /// temporary name beside it).
    fn file_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let Some(path) = &self.output else {
            anyhow::bail!("the server sent a file this command names none of");
        };
        if self.writing.is_none() {
            let tmp = crate::outfile::temporary_beside(path)?;
            let f = std::fs::File::create(&tmp)
                .with_context(|| format!("creating {}", tmp.display()))?;
            self.writing = Some((tmp, f));
        }
        if let Some((tmp, f)) = &mut self.writing {
            f.write_all(bytes)
                .with_context(|| format!("writing {}", tmp.display()))?;
        }
        Ok(())
    }

    /// The command ended: the output file is renamed into place when it
    /// succeeded, removed when it failed.
    fn finish_file(&mut self, ok: bool) -> Result<()> {
        let (Some(path), Some((tmp, f))) = (&self.output, self.writing.take()) else {
            return Ok(());
        };
        if !ok {
            drop(f);
            let _ = std::fs::remove_file(&tmp);
            return Ok(());
        }
        f.sync_all()
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.writing.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_binary_output_one_line_each() {
        let line = CliFrame::stdout(&[0, 159, 146, 150, b'\n']).line();
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let back: CliFrame = serde_json::from_slice(&line).expect("frame");
        let CliFrame::Stdout(b64) = back else {
            panic!("{back:?}")
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64");
        assert_eq!(bytes, vec![0, 159, 146, 150, b'\n']);
        let mut relay = Relay::default();
        let code = CliFrame::Code(3).line();
        assert_eq!(relay.take(&code[..4]).expect("partial"), None);
        assert_eq!(relay.take(&code[4..]).expect("rest"), Some(3));
    }

    /// The lines README and the OpenAPI document describe (issue 42).
    #[test]
    fn frame_lines_are_as_documented() {
        let lines: Vec<String> = [
            CliFrame::stdout(b"a"),
            CliFrame::Stderr("w\n".into()),
            CliFrame::File(String::new()),
            CliFrame::Alive,
            CliFrame::Code(2),
        ]
        .iter()
        .map(|f| String::from_utf8(f.line()).expect("utf-8"))
        .collect();
        assert_eq!(
            lines,
            [
                "{\"stdout\":\"YQ==\"}\n",
                "{\"stderr\":\"w\\n\"}\n",
                "{\"file\":\"\"}\n",
                "\"alive\"\n",
                "{\"code\":2}\n"
            ]
        );
    }

    #[test]
    fn writers_send_frames_as_they_fill_and_fail_once_the_reader_is_gone() {
        use std::io::Write;
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let mut w = FrameWriter::stdout(tx);
        w.write_all(b"small").expect("write");
        assert!(rx.try_recv().is_err(), "a small write waits for a flush");
        w.flush().expect("flush");
        assert!(matches!(rx.try_recv(), Ok(CliFrame::Stdout(_))));
        w.write_all(&vec![b'x'; FRAME_BYTES]).expect("write");
        assert!(
            matches!(rx.try_recv(), Ok(CliFrame::Stdout(_))),
            "a full frame goes at once"
        );
        drop(rx);
        w.write_all(b"more").expect("buffered");
        let e = w.flush().expect_err("reader gone");
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
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
