//! examples/chat in a real browser: two people, each in a page of their own
//! browser context (their own cookies, as two browsers), sign in, open the
//! same room on the real server (two workers, a SQLite file) and talk over
//! the page's WebSocket, with the online counter fed by an event stream;
//! for app.lua and app.js. Each run saves a screenshot as
//! target/test-artifacts/chat-<lua|js>.png.
//!
//! The pages load http://127.0.0.1:<port>, where Chromium keeps the
//! session's `Secure` cookie over plain http (loopback counts as secure).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::cdp::Browser;
use super::{artifacts, chromium_or_skip, ONE_BROWSER};
use crate::util::{example_file, Server};

#[test]
fn chat_in_chromium_lua() {
    chat_in_chromium("lua");
}

#[test]
fn chat_in_chromium_js() {
    chat_in_chromium("js");
}

fn chat_in_chromium(ext: &str) {
    let Some(chromium) = chromium_or_skip(&format!("chat_in_chromium_{ext}")) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Browser::launch(&chromium, &[], 900, 700)
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium.display()));
    let server = Server::start(&example_file("chat", ext), &["--workers", "2"]);
    let ada = b.current_page();
    let grace = b
        .open_private_page(900, 700)
        .unwrap_or_else(|e| panic!("a second page: {e}"));
    let mut two = Two {
        b: &mut b,
        base: format!("http://127.0.0.1:{}", server.port),
        ada,
        grace,
    };
    if let Err(e) = two.run() {
        let (ada, grace) = (two.ada.clone(), two.grace.clone());
        let mut pages = String::new();
        for (who, page) in [("Ada", ada), ("Grace", grace)] {
            let text = two.at(&page).map(|p| p.state()).unwrap_or_else(|e| e);
            pages.push_str(&format!("{who}'s page: {text}\n"));
        }
        panic!("{e}\n{pages}server log:\n{}", server.log());
    }
    let png = two.b.screenshot().expect("screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let file = artifacts().join(format!("chat-{ext}.png"));
    std::fs::write(&file, &png).expect("write the screenshot");
    println!("screenshot: {}", file.display());
}

type Step = Result<(), String>;

/// The browser and its two people's pages.
struct Two<'a> {
    b: &'a mut Browser,
    base: String,
    ada: String,
    grace: String,
}

/// What the room shows: [who, text] of each message.
const MESSAGES: &str = "Array.from(document.querySelectorAll('#messages li.message'), \
     li => [li.querySelector('.who').textContent, li.querySelector('.text').textContent])";
/// The room's notices ("Ada joined").
const NOTICES: &str =
    "Array.from(document.querySelectorAll('#messages li.notice .text'), e => e.textContent)";
const ONLINE: &str = "document.getElementById('online').textContent";

impl Two<'_> {
    /// Commands go to `page` from now on.
    fn at(&mut self, page: &str) -> Result<&mut Self, String> {
        self.b.switch_to(page)?;
        Ok(self)
    }

    /// Where the current page is and what it says.
    fn state(&mut self) -> String {
        let v = self
            .b
            .eval("location.pathname + '\\n' + (document.body ? document.body.innerText : '')");
        v.ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    }

    /// Wait (10 s at most) until `expression` is `want` on the current page.
    fn wait_for(&mut self, what: &str, expression: &str, want: Value) -> Step {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.b.eval(expression)?;
            if got == want {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("{what}: {expression} is {got}, expected {want}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn expect_path(&mut self, want: &str) -> Step {
        self.wait_for("location", "location.pathname", json!(want))
    }

    /// Sign in as `name` and open the lobby, until its socket is open.
    fn sign_in_and_open_the_lobby(&mut self, name: &str) -> Step {
        self.b.goto(&format!("{}/", self.base))?;
        self.expect_path("/login")?;
        self.b.fill("input[name=name]", name)?;
        self.b.click_and_wait("form[action='/login'] button")?;
        self.expect_path("/")?;
        self.wait_for(
            "who is signed in",
            "document.querySelector('.who').textContent",
            json!(name),
        )?;
        // The counter's stream has delivered its first event.
        self.wait_for(
            "a count",
            &format!("/^[0-9]+$/.test({ONLINE})"),
            json!(true),
        )?;
        self.b.click_and_wait("a[href='/rooms/lobby']")?;
        self.expect_path("/rooms/lobby")?;
        self.wait_for(
            "connected",
            "document.getElementById('chat').classList.contains('live')",
            json!(true),
        )?;
        self.wait_for(
            "status",
            "document.getElementById('status').textContent",
            json!("Connected"),
        )
    }

    /// Type `text` into the room's box and press Send.
    fn say(&mut self, text: &str) -> Step {
        self.b.fill("#text", text)?;
        self.b.click("#send button")
    }

    fn run(&mut self) -> Step {
        let (ada, grace) = (self.ada.clone(), self.grace.clone());
        self.at(&ada)?.sign_in_and_open_the_lobby("Ada")?;
        self.wait_for("Ada's join", NOTICES, json!(["Ada joined"]))?;
        self.wait_for("Ada alone", ONLINE, json!("1"))?;
        // The stylesheet loaded (the CSP lets it): the room scrolls.
        self.wait_for(
            "style.css applied",
            "getComputedStyle(document.querySelector('.messages')).overflowY",
            json!("auto"),
        )?;

        self.at(&grace)?.sign_in_and_open_the_lobby("Grace")?;
        self.wait_for("two online", ONLINE, json!("2"))?;
        self.at(&ada)?.wait_for(
            "Grace arrives",
            NOTICES,
            json!(["Ada joined", "Grace joined"]),
        )?;
        self.wait_for("two online for Ada", ONLINE, json!("2"))?;

        // Each says something and sees the other's words.
        self.say("Hello from Ada")?;
        self.wait_for(
            "Ada's own message",
            MESSAGES,
            json!([["Ada", "Hello from Ada"]]),
        )?;
        self.wait_for(
            "marked as hers",
            "document.querySelector('#messages li.message').classList.contains('mine')",
            json!(true),
        )?;
        self.at(&grace)?.wait_for(
            "Grace hears Ada",
            MESSAGES,
            json!([["Ada", "Hello from Ada"]]),
        )?;
        self.wait_for(
            "not Grace's",
            "document.querySelector('#messages li.message').classList.contains('mine')",
            json!(false),
        )?;
        self.say("Hi Ada <b>, Grace here")?;
        let both = json!([
            ["Ada", "Hello from Ada"],
            ["Grace", "Hi Ada <b>, Grace here"]
        ]);
        self.wait_for("Grace's own message", MESSAGES, both.clone())?;
        self.at(&ada)?
            .wait_for("Ada hears Grace", MESSAGES, both.clone())?;
        // A message is text: nothing became an element.
        self.wait_for(
            "no markup",
            "document.querySelectorAll('#messages b').length",
            json!(0),
        )?;

        // Opened again, the room starts with what was said.
        let lobby = format!("{}/rooms/lobby", self.base);
        self.at(&grace)?.b.goto(&lobby)?;
        self.wait_for("history", MESSAGES, both)?;
        self.wait_for("two online again", ONLINE, json!("2"))?;

        // Grace leaves the room for the list: Ada sees her go, and the
        // counter drops on both pages.
        self.b.click_and_wait("a[href='/']")?;
        self.expect_path("/")?;
        self.wait_for(
            "the lobby's count",
            "document.querySelector('.rooms li').textContent",
            json!("#lobby 2 messages"),
        )?;
        self.wait_for("Grace sees one online", ONLINE, json!("1"))?;
        self.at(&ada)?
            .wait_for("Ada sees one online", ONLINE, json!("1"))?;
        let notices = self.b.eval(NOTICES)?;
        if notices.as_array().and_then(|n| n.last()) != Some(&json!("Grace left")) {
            return Err(format!("Ada's notices: {notices}"));
        }

        // Back to the room (from the back/forward cache): its socket and
        // the counter's stream open again.
        self.at(&grace)?.b.eval("history.back()")?;
        self.expect_path("/rooms/lobby")?;
        self.wait_for(
            "connected again",
            "document.getElementById('chat').classList.contains('live')",
            json!(true),
        )?;
        self.wait_for("Grace back online", ONLINE, json!("2"))?;
        self.at(&ada)?
            .wait_for("Ada sees Grace back", ONLINE, json!("2"))?;
        self.wait_for(
            "Grace's return",
            &format!("{NOTICES}.slice(-2)"),
            json!(["Grace left", "Grace joined"]),
        )
    }
}
