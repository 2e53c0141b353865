//! examples/todo in a real browser: headless Chromium signs up, logs out
//! and in, adds todos, completes one and switches the language on the real
//! server (two workers, a SQLite file), for app.lua and app.js. Each run
//! saves a screenshot as target/test-artifacts/todo-<lua|js>.png.
//!
//! The browser reaches the server as http://todo.test:<port>, not
//! 127.0.0.1: Chromium treats loopback addresses as secure and would keep
//! `Secure` cookies sent over plain http there, hiding Hull's §16.13. Under
//! a real host name it drops them, as for any LAN address; the test shows
//! that (the default) and then runs the app with COOKIE_SECURE=false.
//!
//! Chromium comes from the Debian package (`apt-get install chromium`) or
//! `$COVE_CHROMIUM`. Without it the tests say so and pass, unless
//! `COVE_REQUIRE_BROWSER` is set (CI sets it), when they fail.
//!
//! `chat.rs` does the same for examples/chat, with two people in two pages;
//! `dashboard.rs` loads the `--metrics` dashboard while load runs.

mod cdp;
mod chat;
mod dashboard;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::util::{example_file, Server};
use cdp::Browser;

/// The Chromium to test with; `None` (the test skipped, and saying so)
/// when there is none, unless `COVE_REQUIRE_BROWSER` is set.
fn chromium_or_skip(test: &str) -> Option<std::path::PathBuf> {
    let found = cdp::find_chromium();
    if found.is_none() {
        assert!(
            std::env::var_os("COVE_REQUIRE_BROWSER").is_none(),
            "COVE_REQUIRE_BROWSER is set but no Chromium was found: \
             apt-get install chromium, or set COVE_CHROMIUM=/path/to/chrome"
        );
        // Straight to stderr: the test harness hides eprintln! of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: Chromium is not installed \
             (apt-get install chromium, or set COVE_CHROMIUM); \
             set COVE_REQUIRE_BROWSER=1 to make this a failure"
        );
    }
    found
}

/// One browser at a time: two Chromiums on a two-core machine only slow
/// each other down.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

#[test]
fn todo_in_chromium_lua() {
    todo_in_chromium("lua");
}

#[test]
fn todo_in_chromium_js() {
    todo_in_chromium("js");
}

fn todo_in_chromium(ext: &str) {
    let Some(chromium) = chromium_or_skip(&format!("todo_in_chromium_{ext}")) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Browser::launch(
        &chromium,
        &["--host-resolver-rules=MAP todo.test 127.0.0.1"],
        1000,
        760,
    )
    .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium.display()));

    // Default settings: the Secure session cookie never comes back over http.
    let server = Server::start(&example_file("todo", ext), &["--workers", "2"]);
    let mut page = Page::new(&mut b, &server);
    page.check(&server, |p| p.secure_cookies_are_dropped());
    drop(server);

    let server = Server::start_with_env(
        &example_file("todo", ext),
        &["--workers", "2"],
        &[("COOKIE_SECURE", "false")],
    );
    let mut page = Page::new(&mut b, &server);
    page.check(&server, |p| p.run(ext));
    let png = page.b.screenshot().expect("screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let file = artifacts().join(format!("todo-{ext}.png"));
    std::fs::write(&file, &png).expect("write the screenshot");
    println!("screenshot: {}", file.display());
}

/// target/test-artifacts (created if missing).
fn artifacts() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(&tmp).join("test-artifacts");
    std::fs::create_dir_all(&dir).expect("create target/test-artifacts");
    dir
}

struct Page<'a> {
    b: &'a mut Browser,
    base: String,
}

type Step = Result<(), String>;

impl<'a> Page<'a> {
    fn new(b: &'a mut Browser, server: &Server) -> Self {
        let base = format!("http://todo.test:{}", server.port);
        Page { b, base }
    }

    /// Run `steps`; on failure panic with where the page was and what it
    /// and the server said.
    fn check(&mut self, server: &Server, steps: impl FnOnce(&mut Self) -> Step) {
        if let Err(e) = steps(self) {
            panic!(
                "{e}\nat {}\npage:\n{}\nserver log:\n{}",
                self.path(),
                self.text(),
                server.log()
            );
        }
    }

    /// Hull's §16.13: with `Secure` cookies over plain http the visitor
    /// session is dropped, so the sign-up form always comes back expired.
    fn secure_cookies_are_dropped(&mut self) -> Step {
        self.b.goto(&format!("{}/register", self.base))?;
        self.b.fill("input[name=name]", "Ada Lovelace")?;
        self.b.fill("input[name=email]", "ada@example.com")?;
        self.b.fill("input[name=password]", "analytical engine")?;
        self.b.click_and_wait("form[action='/register'] button")?;
        self.expect_path("/register")?;
        self.expect(
            "no session",
            "document.querySelector('.errors').textContent.trim()",
            json!("This form had expired. Please send it again."),
        )
    }

    fn path(&mut self) -> String {
        self.b
            .eval("location.pathname")
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    }

    fn text(&mut self) -> String {
        self.b
            .eval("document.body ? document.body.innerText : ''")
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    }

    fn js(&mut self, expression: &str) -> Result<Value, String> {
        self.b.eval(expression)
    }

    fn expect(&mut self, what: &str, expression: &str, want: Value) -> Step {
        let got = self.js(expression)?;
        if got == want {
            Ok(())
        } else {
            Err(format!("{what}: {expression} is {got}, expected {want}"))
        }
    }

    fn expect_path(&mut self, want: &str) -> Step {
        self.expect("location", "location.pathname", json!(want))
    }

    fn todo_titles(&mut self) -> Result<Value, String> {
        self.js("Array.from(document.querySelectorAll('.todo .title'), e => e.textContent)")
    }

    fn run(&mut self, ext: &str) -> Step {
        // Logged out, "/" redirects to the login page.
        self.b.goto(&format!("{}/", self.base))?;
        self.expect_path("/login")?;
        // The stylesheet loaded (and the CSP let it): cards are rounded.
        self.expect(
            "style.css applied",
            "getComputedStyle(document.querySelector('.card')).borderTopLeftRadius",
            json!("14px"),
        )?;

        // Sign up from the nav's button.
        self.b.click_and_wait(".account a[href='/register']")?;
        self.expect_path("/register")?;
        self.b.fill("input[name=name]", "Ada Lovelace")?;
        self.b.fill("input[name=email]", "ada@example.com")?;
        self.b.fill("input[name=password]", "analytical engine")?;
        self.b.click_and_wait("form[action='/register'] button")?;
        self.expect_path("/")?;
        self.expect(
            "greeting",
            "document.querySelector('h1').textContent",
            json!("What needs doing?"),
        )?;
        self.expect(
            "user in the nav",
            "document.querySelector('.who').textContent",
            json!("Ada Lovelace"),
        )?;
        self.expect(
            "empty list",
            "!!document.querySelector('.empty')",
            json!(true),
        )?;

        // Log out, then back in: the session cookie comes and goes.
        self.b
            .click_and_wait(".account form[action='/logout'] button")?;
        self.expect_path("/login")?;
        self.b.fill("input[name=email]", "ada@example.com")?;
        self.b.fill("input[name=password]", "wrong password")?;
        self.b.click_and_wait("form[action='/login'] button")?;
        self.expect(
            "wrong password",
            "document.querySelector('.errors').textContent.trim()",
            json!("Invalid credentials: check your email and password."),
        )?;
        self.b.fill("input[name=password]", "analytical engine")?;
        self.b.click_and_wait("form[action='/login'] button")?;
        self.expect_path("/")?;

        // Two todos (newest first), then complete the first one added.
        for title in ["Buy oat milk", "Write the browser test"] {
            self.b.fill("#title", title)?;
            self.b.click_and_wait("form.add button")?;
            self.expect_path("/")?;
        }
        let titles = self.todo_titles()?;
        if titles != json!(["Write the browser test", "Buy oat milk"]) {
            return Err(format!("todos after adding: {titles}"));
        }
        self.b.click_and_wait(".todo:last-child .check")?;
        self.expect(
            "done",
            "document.querySelector('.todo:last-child').classList.contains('done')",
            json!(true),
        )?;
        self.expect(
            "not done",
            "document.querySelector('.todo:first-child').classList.contains('done')",
            json!(false),
        )?;
        self.expect(
            "crossed out",
            "getComputedStyle(document.querySelector('.todo.done .title')).textDecorationLine",
            json!("line-through"),
        )?;
        self.expect(
            "summary",
            "document.querySelector('.summary').textContent.trim()",
            json!("1 of 2 left"),
        )?;
        self.expect(
            "progress",
            "document.querySelector('progress').value",
            json!(1),
        )?;

        // Hungarian and back; each switch returns to the page it was made on.
        self.b.click_and_wait("a[hreflang=hu]")?;
        self.expect_path("/")?;
        self.expect("lang", "document.documentElement.lang", json!("hu"))?;
        self.expect(
            "greeting in Hungarian",
            "document.querySelector('h1').textContent",
            json!("Mi a teendő?"),
        )?;
        self.b.click_and_wait("a[href='/about']")?;
        let runtime = if ext == "lua" { "Lua" } else { "JavaScript" };
        self.expect(
            "about page",
            "document.querySelector('.muted').textContent",
            json!(format!("Ez a példány {runtime} nyelven fut.")),
        )?;
        self.b.click_and_wait("a[hreflang=en]")?;
        self.expect_path("/about")?;
        self.expect("lang", "document.documentElement.lang", json!("en"))?;
        self.b.click_and_wait(".nav a[href='/']")?;
        self.expect_path("/")?;
        let titles = self.todo_titles()?;
        if titles != json!(["Write the browser test", "Buy oat milk"]) {
            return Err(format!("todos after switching languages: {titles}"));
        }
        Ok(())
    }
}
