//! A small synchronous Chrome DevTools Protocol client: it launches Debian's
//! headless Chromium, attaches to one page over the browser's websocket
//! (flat sessions), and offers navigate / evaluate / poll / screenshot. The
//! page's uncaught exceptions and `console.error` calls are kept for
//! [`Page::take_js_errors`].

use std::io::Read;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

/// Where the test expects Debian's `chromium` package.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The file Chromium writes into its profile with `--remote-debugging-port=0`.
const ACTIVE_PORT_FILE: &str = "DevToolsActivePort";
/// How long Chromium may take to write that file.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest wait for the answer to one protocol call.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Interval between two evaluations in [`Page::wait_for`].
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Pause after resizing the viewport, for out-of-process iframes to repaint.
const SETTLE: Duration = Duration::from_millis(500);

/// Errors are messages: this is test support, every error ends in a panic.
pub type CdpResult<T> = Result<T, String>;

/// A headless Chromium child process with a throwaway profile; killed on drop.
pub struct Chromium {
    child: Child,
    profile: tempfile::TempDir,
    port: u16,
    browser_path: String,
}

impl Chromium {
    /// Start `binary` headless with a `width`×`height` window and wait for its
    /// DevTools endpoint.
    pub fn launch(binary: &Path, width: u32, height: u32) -> CdpResult<Chromium> {
        let profile = tempfile::tempdir().map_err(|e| format!("profile dir: {e}"))?;
        let log = std::fs::File::create(profile.path().join("chromium.log"))
            .map_err(|e| format!("chromium log: {e}"))?;
        let child = Command::new(binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut chromium = Chromium {
            child,
            profile,
            port: 0,
            browser_path: String::new(),
        };
        let file = chromium.profile.path().join(ACTIVE_PORT_FILE);
        let start = Instant::now();
        loop {
            // Written in one go, but read it only once both lines are there.
            if let Ok(text) = std::fs::read_to_string(&file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    chromium.port = port
                        .trim()
                        .parse()
                        .map_err(|e| format!("{ACTIVE_PORT_FILE}: bad port {port:?}: {e}"))?;
                    chromium.browser_path = path.trim().to_string();
                    return Ok(chromium);
                }
            }
            if let Ok(Some(status)) = chromium.child.try_wait() {
                return Err(format!(
                    "chromium exited ({status}) before listening:\n{}",
                    chromium.log()
                ));
            }
            if start.elapsed() > LAUNCH_TIMEOUT {
                return Err(format!(
                    "chromium wrote no {ACTIVE_PORT_FILE} within {LAUNCH_TIMEOUT:?}:\n{}",
                    chromium.log()
                ));
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Chromium's stderr so far (for failure messages).
    pub fn log(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(self.profile.path().join("chromium.log")) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// A new tab, attached over its own websocket connection.
    pub fn open_page(&self) -> CdpResult<Page> {
        let addr = format!("127.0.0.1:{}", self.port);
        let stream = TcpStream::connect(&addr).map_err(|e| format!("connect {addr}: {e}"))?;
        stream
            .set_read_timeout(Some(CALL_TIMEOUT))
            .map_err(|e| format!("read timeout: {e}"))?;
        let url = format!("ws://{addr}{}", self.browser_path);
        let (ws, _) = tungstenite::client::client(url.as_str(), stream)
            .map_err(|e| format!("websocket handshake with {url}: {e}"))?;
        let mut page = Page {
            ws,
            session: None,
            next_id: 0,
            js_errors: Vec::new(),
        };
        let target = page.call("Target.createTarget", json!({ "url": "about:blank" }))?;
        let target_id = target["targetId"]
            .as_str()
            .ok_or_else(|| format!("Target.createTarget answered {target}"))?
            .to_string();
        let attached = page.call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or_else(|| format!("Target.attachToTarget answered {attached}"))?;
        page.session = Some(session.to_string());
        page.call("Page.enable", json!({}))?;
        page.call("Runtime.enable", json!({}))?;
        Ok(page)
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One tab driven over the browser connection with a flat session id.
pub struct Page {
    ws: WebSocket<TcpStream>,
    session: Option<String>,
    next_id: u64,
    /// Uncaught exceptions and console errors seen in the events so far.
    js_errors: Vec<String>,
}

impl Page {
    /// Send one command and wait for its answer (events in between are dropped,
    /// except JavaScript errors, which are kept).
    pub fn call(&mut self, method: &str, params: Value) -> CdpResult<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .map_err(|e| format!("{method}: send: {e}"))?;
        let start = Instant::now();
        loop {
            let frame = self.ws.read().map_err(|e| format!("{method}: read: {e}"))?;
            let text = match frame {
                Message::Text(t) => t,
                Message::Close(c) => return Err(format!("{method}: connection closed: {c:?}")),
                _ => continue,
            };
            let answer: Value = serde_json::from_str(text.as_str())
                .map_err(|e| format!("{method}: bad JSON from chromium: {e}"))?;
            if let Some(error) = js_error(&answer) {
                self.js_errors.push(error);
                continue;
            }
            if answer["id"].as_u64() == Some(id) {
                if let Some(err) = answer.get("error") {
                    return Err(format!("{method}: {err}"));
                }
                return Ok(answer["result"].clone());
            }
            if start.elapsed() > CALL_TIMEOUT {
                return Err(format!("{method}: no answer within {CALL_TIMEOUT:?}"));
            }
        }
    }

    /// The page's uncaught exceptions (also unhandled rejections) and
    /// `console.error` messages since the last call, oldest first. A round
    /// trip first reads the events the browser sent before it.
    pub fn take_js_errors(&mut self) -> CdpResult<Vec<String>> {
        self.eval("0")?;
        Ok(std::mem::take(&mut self.js_errors))
    }

    /// Load `url` and wait until its document has finished loading.
    pub fn navigate(&mut self, url: &str, timeout: Duration) -> CdpResult<()> {
        let nav = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(err) = nav.get("errorText").and_then(Value::as_str) {
            return Err(format!("navigate {url}: {err}"));
        }
        self.wait_for(
            "document loaded",
            "document.readyState === 'complete'",
            timeout,
        )
        .map(|_| ())
    }

    /// Evaluate `expression` in the page (promises awaited) and return its value.
    pub fn eval(&mut self, expression: &str) -> CdpResult<Value> {
        let r = self.call(
            "Runtime.evaluate",
            json!({
                "expression": expression,
                "awaitPromise": true,
                "returnByValue": true,
                "userGesture": true,
            }),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            let text = ex["exception"]["description"]
                .as_str()
                .or_else(|| ex["text"].as_str())
                .unwrap_or("exception");
            return Err(format!("JavaScript error: {text}\nin: {expression}"));
        }
        Ok(r["result"].get("value").cloned().unwrap_or(Value::Null))
    }

    /// Evaluate `expression` until it gives a truthy value; return that value.
    pub fn wait_for(
        &mut self,
        what: &str,
        expression: &str,
        timeout: Duration,
    ) -> CdpResult<Value> {
        let start = Instant::now();
        loop {
            let v = self.eval(expression)?;
            if truthy(&v) {
                return Ok(v);
            }
            if start.elapsed() > timeout {
                return Err(format!(
                    "timed out after {timeout:?} waiting for {what} (last value {v})"
                ));
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Save a PNG of the whole page at `path`. The viewport is stretched to the
    /// document for the shot: `captureBeyondViewport` leaves out-of-process
    /// (sandboxed) iframes blank.
    pub fn screenshot(&mut self, path: &Path) -> CdpResult<PathBuf> {
        let size = self.eval(
            "({w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight})",
        )?;
        let (w, h) = (
            size["w"].as_u64().unwrap_or(0),
            size["h"].as_u64().unwrap_or(0),
        );
        if w > 0 && h > 0 {
            self.call(
                "Emulation.setDeviceMetricsOverride",
                json!({ "width": w, "height": h, "deviceScaleFactor": 1, "mobile": false }),
            )?;
            // Two frames: layout and paint at the new size.
            self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")?;
            std::thread::sleep(SETTLE);
        }
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        if w > 0 && h > 0 {
            self.call("Emulation.clearDeviceMetricsOverride", json!({}))?;
        }
        let shot = shot?;
        let data = shot["data"]
            .as_str()
            .ok_or("Page.captureScreenshot returned no data")?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("screenshot base64: {e}"))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, png).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path.to_path_buf())
    }
}

/// The message of a `Runtime.exceptionThrown` event, or of a
/// `Runtime.consoleAPICalled` event of type `error` / `assert`.
fn js_error(event: &Value) -> Option<String> {
    let params = &event["params"];
    match event["method"].as_str()? {
        "Runtime.exceptionThrown" => {
            let ex = &params["exceptionDetails"];
            let text = ex["exception"]["description"]
                .as_str()
                .or_else(|| ex["text"].as_str())
                .unwrap_or("exception");
            Some(format!("uncaught: {text}"))
        }
        "Runtime.consoleAPICalled"
            if matches!(params["type"].as_str(), Some("error" | "assert")) =>
        {
            let args: Vec<String> = params["args"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| {
                            v["value"]
                                .as_str()
                                .map(String::from)
                                .or_else(|| v["description"].as_str().map(String::from))
                                .unwrap_or_else(|| v["value"].to_string())
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(format!("console.error: {}", args.join(" ")))
        }
        _ => None,
    }
}

/// JavaScript truthiness of a JSON value.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{js_error, truthy};
    use serde_json::json;

    #[test]
    fn exceptions_and_console_errors_are_js_errors_other_events_not() {
        let thrown = json!({"method": "Runtime.exceptionThrown", "params": {"exceptionDetails": {
            "text": "Uncaught", "exception": {"description": "TypeError: $(...).reset is not a function"}}}});
        assert_eq!(
            js_error(&thrown).as_deref(),
            Some("uncaught: TypeError: $(...).reset is not a function")
        );
        let logged = json!({"method": "Runtime.consoleAPICalled", "params": {"type": "error",
            "args": [{"type": "string", "value": "bad"}, {"type": "number", "value": 3}]}});
        assert_eq!(js_error(&logged).as_deref(), Some("console.error: bad 3"));
        let info =
            json!({"method": "Runtime.consoleAPICalled", "params": {"type": "log", "args": []}});
        assert_eq!(js_error(&info), None);
        assert_eq!(js_error(&json!({"id": 3, "result": {}})), None);
    }

    #[test]
    fn truthiness_follows_javascript() {
        assert!(!truthy(&json!(null)));
        assert!(!truthy(&json!(0)));
        assert!(!truthy(&json!("")));
        assert!(!truthy(&json!(false)));
        assert!(truthy(&json!(3)));
        assert!(truthy(&json!("x")));
        assert!(truthy(&json!([])));
    }
}
