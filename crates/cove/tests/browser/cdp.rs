//! A headless Chromium driven over the DevTools protocol (CDP) through
//! `--remote-debugging-pipe`: Chromium reads JSON commands on fd 3 and
//! writes replies and events on fd 4, each message ended by a NUL byte.
//! A pipe needs no port, no WebSocket and no crate beyond serde_json, so
//! the test runs offline with nothing but the Debian `chromium` package.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long one command or one page load may take.
const STEP: Duration = Duration::from_secs(30);

/// The Chromium to use: `$COVE_CHROMIUM`, else the first of the usual
/// names on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("COVE_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// One browser with a page (tab) attached, and more on request; commands
/// go to the current page.
pub struct Browser {
    child: Child,
    commands: ChildStdin,
    messages: Receiver<Value>,
    session: String,
    next_id: u64,
    /// Events that arrived while waiting for a reply, oldest first.
    events: Vec<Value>,
    profile: tempfile::TempDir,
}

impl Browser {
    /// Start `chromium` headless with a fresh profile (and `extra`
    /// command-line flags) and open a blank page of `width`×`height` CSS
    /// pixels.
    pub fn launch(
        chromium: &Path,
        extra: &[&str],
        width: u32,
        height: u32,
    ) -> Result<Browser, String> {
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let log = std::fs::File::create(profile.path().join("chromium.log"))
            .map_err(|e| e.to_string())?;
        // std::process cannot hand a child extra file descriptors without
        // unsafe code, so `sh` moves our stdin/stdout pipes to fds 3 and 4
        // and then becomes Chromium (exec keeps the pid, so kill works).
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>&2"#)
            .arg(chromium)
            .args([
                "--headless",
                "--remote-debugging-pipe",
                // Chromium's sandbox refuses to run as root (CI containers).
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--mute-audio",
                "--hide-scrollbars",
                "--password-store=basic",
                "--use-mock-keychain",
            ])
            .args(extra)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", chromium.display()))?;
        let commands = child.stdin.take().ok_or("no stdin pipe")?;
        let replies = child.stdout.take().ok_or("no stdout pipe")?;
        let (tx, messages) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(replies);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                // Anything that is not JSON is not CDP: ignore it.
                if let Ok(msg) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(msg).is_err() {
                        break;
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            commands,
            messages,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
            profile,
        };
        browser
            .open_page(None, width, height)
            .map_err(|e| format!("{e}\nchromium's log:\n{}", browser.chromium_log()))?;
        Ok(browser)
    }

    /// Open another page in a browser context of its own (its own cookies
    /// and storage, as a second browser would have) and make it the
    /// current page. Returns its id, for `switch_to`.
    pub fn open_private_page(&mut self, width: u32, height: u32) -> Result<String, String> {
        let context = self.send_to(None, "Target.createBrowserContext", json!({}))?;
        let context = context["browserContextId"]
            .as_str()
            .ok_or("no browserContextId")?
            .to_string();
        self.open_page(Some(&context), width, height)?;
        Ok(self.session.clone())
    }

    /// The id of the page that commands go to.
    pub fn current_page(&self) -> String {
        self.session.clone()
    }

    /// Send the following commands to the page `page` (an id from
    /// `current_page` or `open_private_page`), brought to the front.
    pub fn switch_to(&mut self, page: &str) -> Result<(), String> {
        self.session = page.to_string();
        self.call("Page.bringToFront", json!({})).map(drop)
    }

    fn open_page(&mut self, context: Option<&str>, width: u32, height: u32) -> Result<(), String> {
        let mut params = json!({ "url": "about:blank" });
        if let Some(context) = context {
            params["browserContextId"] = json!(context);
        }
        let target = self.send_to(None, "Target.createTarget", params)?;
        let target_id = target["targetId"]
            .as_str()
            .ok_or("no targetId")?
            .to_string();
        let attached = self.send_to(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        self.session = attached["sessionId"]
            .as_str()
            .ok_or("no sessionId")?
            .to_string();
        self.call("Page.enable", json!({}))?;
        self.call("Runtime.enable", json!({}))?;
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        )?;
        Ok(())
    }

    /// What Chromium wrote to stderr (for failure messages).
    pub fn chromium_log(&self) -> String {
        std::fs::read_to_string(self.profile.path().join("chromium.log")).unwrap_or_default()
    }

    /// Run a CDP method on the page and return its result.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let session = self.session.clone();
        self.send_to(Some(&session), method, params)
    }

    fn send_to(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).map_err(|e| e.to_string())?;
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .and_then(|()| self.commands.flush())
            .map_err(|e| format!("{method}: chromium's pipe is closed ({e})"))?;
        let deadline = Instant::now() + STEP;
        loop {
            let msg = self.next_message(deadline, method)?;
            if msg["id"].as_u64() == Some(id) {
                if let Some(err) = msg.get("error") {
                    return Err(format!("{method}: {err}"));
                }
                return Ok(msg["result"].clone());
            }
            if msg.get("method").is_some() {
                self.events.push(msg);
            }
        }
    }

    fn next_message(&mut self, deadline: Instant, waiting_for: &str) -> Result<Value, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.messages.recv_timeout(left) {
            Ok(msg) => Ok(msg),
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("{waiting_for}: no answer within {STEP:?}"))
            }
            Err(RecvTimeoutError::Disconnected) => Err(format!(
                "{waiting_for}: chromium exited\n{}",
                self.chromium_log()
            )),
        }
    }

    /// Forget the events seen so far (call before an action whose events
    /// you will wait for).
    pub fn clear_events(&mut self) {
        self.events.clear();
        while self.messages.try_recv().is_ok() {}
    }

    /// Wait for the event `method` on the page (one that arrived since the
    /// last `clear_events` counts).
    pub fn wait_event(&mut self, method: &str) -> Result<Value, String> {
        let mine = |m: &Value, session: &str| {
            m["method"] == method && m["sessionId"].as_str() == Some(session)
        };
        if let Some(i) = self.events.iter().position(|m| mine(m, &self.session)) {
            return Ok(self.events.remove(i)["params"].clone());
        }
        let deadline = Instant::now() + STEP;
        loop {
            let msg = self.next_message(deadline, method)?;
            if mine(&msg, &self.session) {
                return Ok(msg["params"].clone());
            }
        }
    }

    /// Evaluate a JavaScript expression in the page; its value as JSON.
    /// (DevTools evaluation is not subject to the page's CSP, which
    /// forbids the page's own scripts.)
    pub fn eval(&mut self, expression: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(format!("{expression}: {ex}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Open `url` and wait until the page has loaded.
    pub fn goto(&mut self, url: &str) -> Result<(), String> {
        self.clear_events();
        let r = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(err) = r.get("errorText") {
            return Err(format!("{url}: {err}"));
        }
        self.wait_event("Page.loadEventFired").map(drop)
    }

    /// Type `text` into the element `selector` as keyboard input would.
    pub fn fill(&mut self, selector: &str, text: &str) -> Result<(), String> {
        let found = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return false; e.focus(); e.value = ''; return true; }})()",
            sel = json!(selector)
        ))?;
        if found != json!(true) {
            return Err(format!("no element {selector}"));
        }
        self.call("Input.insertText", json!({ "text": text }))
            .map(drop)
    }

    /// Click the middle of the element `selector` with the mouse.
    pub fn click(&mut self, selector: &str) -> Result<(), String> {
        let rect = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            sel = json!(selector)
        ))?;
        let (Some(x), Some(y)) = (rect[0].as_f64(), rect[1].as_f64()) else {
            return Err(format!("no element {selector}"));
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            )?;
        }
        Ok(())
    }

    /// Click `selector` and wait for the page it leads to (a form POST and
    /// its redirect) to load.
    pub fn click_and_wait(&mut self, selector: &str) -> Result<(), String> {
        self.clear_events();
        self.click(selector)?;
        self.wait_event("Page.loadEventFired").map(drop)
    }

    /// A PNG of the whole page.
    pub fn screenshot(&mut self) -> Result<Vec<u8>, String> {
        let r = self.call(
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": true }),
        )?;
        let data = r["data"].as_str().ok_or("no screenshot data")?;
        base64_decode(data).ok_or_else(|| "screenshot is not base64".to_string())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ask politely (Chromium then stops its helper processes), then make sure.
        let _ = self.send_to(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (with padding), as CDP sends binary data.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let keep = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        out.extend_from_slice(&n.to_be_bytes()[1..1 + keep]);
    }
    Some(out)
}

#[test]
fn base64_decodes_what_cdp_sends() {
    assert_eq!(base64_decode("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
    assert_eq!(base64_decode("aGk=").as_deref(), Some(&b"hi"[..]));
    assert_eq!(base64_decode("YWJj").as_deref(), Some(&b"abc"[..]));
    assert_eq!(base64_decode("a"), None);
    assert_eq!(base64_decode("a*=="), None);
}
