//! `cove dev`'s error page (issue 37, item 6): a failed handler, middleware
//! or template render answers 500 with the error, its file:line and the
//! source around it — HTML for a browser, JSON for an API client — while
//! serve mode keeps the plain `Internal Server Error`. Every template is
//! compiled as a VM loads: a broken one fails the reload (or holds the
//! start) and the last good version goes on rendering.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{both, line_of, write_file as write, Lang, Server};

/// How long a reload may take to show; generous for a loaded 2-core machine.
const RELOAD: Duration = Duration::from_secs(20);

/// What Firefox sends for a page.
const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

const LUA_APP: &str = r#"local template = require("hull.template")
app.use("*", "/mw", function(req, res)
  error("middleware says no") -- MW_LINE
end)
app.get("/boom", function(req, res)
  local detail = "<b>&'\"</b>"
  error("it broke: " .. detail) -- BOOM_LINE
end)
app.get("/tpl", function(req, res)
  res:html(template.render("page.html", { n = 1 })) -- TPL_LINE
end)
app.get("/mw", function(req, res) res:text("unreachable") end)
app.get("/a", function(req, res) res:html(template.render("a.html", { n = 1 })) end)
app.get("/b", function(req, res) res:html(template.render("b.html", { n = 2 })) end)
"#;

const JS_APP: &str = r#"import { app } from "hull:app";
import { template } from "hull:template";
app.use("*", "/mw", (req, res) => {
  throw new Error("middleware says no"); // MW_LINE
});
app.get("/boom", (req, res) => {
  const detail = "<b>&'\"</b>";
  throw new Error("it broke: " + detail); // BOOM_LINE
});
app.get("/tpl", (req, res) => {
  res.html(template.render("page.html", { n: 1 })); // TPL_LINE
});
app.get("/mw", (req, res) => res.text("unreachable"));
app.get("/a", (req, res) => res.html(template.render("a.html", { n: 1 })));
app.get("/b", (req, res) => res.html(template.render("b.html", { n: 2 })));
"#;

/// `{{ n < "s" }}` parses, and fails when rendered (a number against a string).
const PAGE: &str = "<p>before</p>\n{{ n < \"s\" }}\n<p>after</p>\n";

/// The app in a temporary directory, with its templates.
fn app(lang: Lang) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = match lang {
        Lang::Lua => LUA_APP,
        Lang::Js => JS_APP,
    };
    write(dir.path(), &entry(lang), source);
    write(dir.path(), "templates/page.html", PAGE);
    write(dir.path(), "templates/a.html", "a one {{ n }}");
    write(dir.path(), "templates/b.html", "b one {{ n }}");
    dir
}

fn entry(lang: Lang) -> String {
    format!("app.{}", lang.ext())
}

/// `(line number, line text)` of the line holding `marker`.
fn marked(dir: &Path, lang: Lang, marker: &str) -> (usize, String) {
    let file = dir.join(entry(lang));
    let line = line_of(&file, marker);
    let text = std::fs::read_to_string(&file).unwrap();
    (line, text.lines().nth(line - 1).unwrap().to_string())
}

/// `text` as the page escapes it.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn html_page_for_a_browser(lang: Lang) {
    let dir = app(lang);
    let s = Server::start(dir.path(), &["dev"]);
    let r = s.request("GET", "/boom?x=1", &[("Accept", BROWSER)], None);
    assert_eq!(r.status, 500);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(
        r.header("content-security-policy"),
        Some("default-src 'none'; style-src 'unsafe-inline'")
    );
    let page = r.text();
    let (line, text) = marked(dir.path(), lang, "BOOM_LINE");
    let file = entry(lang);
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.contains("GET /boom"), "{page}");
    // The message, escaped: the app's markup never reaches the page as markup.
    assert!(
        page.contains(&format!("<h1>it broke: {}</h1>", escaped("<b>&'\"</b>"))),
        "{page}"
    );
    assert!(!page.contains("<b>&"), "{page}");
    assert!(page.contains(&format!("<p>at {file}:{line}</p>")), "{page}");
    // The failing line, marked, and its neighbours.
    assert!(
        page.contains(&format!(
            "<span class=\"hit\"><i>{line}</i>{}</span>",
            escaped(&text)
        )),
        "{page}"
    );
    assert!(page.contains(&format!("<i>{}</i>", line - 1)), "{page}");
    assert!(page.contains(&format!("<i>{}</i>", line + 1)), "{page}");
    // The whole error as the log has it.
    s.wait_for_log(&format!("GET /boom: {file}:{line}: it broke"));
}

fn json_for_an_api_client(lang: Lang) {
    let dir = app(lang);
    let s = Server::start(dir.path(), &["dev"]);
    let (line, text) = marked(dir.path(), lang, "BOOM_LINE");
    for headers in [
        &[][..],
        &[("Accept", "application/json")][..],
        &[("Accept", "*/*")][..],
    ] {
        let r = s.request("GET", "/boom", headers, None);
        assert_eq!(r.status, 500);
        assert_eq!(r.header("content-type"), Some("application/json"));
        let err = &r.json()["error"];
        assert_eq!(err["message"], "it broke: <b>&'\"</b>", "{err}");
        assert_eq!(err["file"], entry(lang), "{err}");
        assert_eq!(err["line"], line, "{err}");
        assert_eq!(err["method"], "GET", "{err}");
        let source = err["source"].as_array().expect("source lines");
        assert_eq!(source.len(), 11, "five lines either side: {err}");
        let failing = source
            .iter()
            .find(|l| l["line"] == line)
            .unwrap_or_else(|| panic!("no line {line}: {err}"));
        assert_eq!(failing["text"], text.as_str(), "{err}");
    }
}

fn a_template_error_points_at_the_template(lang: Lang) {
    let dir = app(lang);
    let s = Server::start(dir.path(), &["dev"]);
    let r = s.get("/tpl");
    assert_eq!(r.status, 500);
    let err = &r.json()["error"];
    assert_eq!(err["file"], "templates/page.html", "{err}");
    assert_eq!(err["line"], 2, "{err}");
    assert!(err["column"].is_u64(), "{err}");
    assert_eq!(
        err["source"],
        serde_json::json!([
            { "line": 1, "text": "<p>before</p>" },
            { "line": 2, "text": "{{ n < \"s\" }}" },
            { "line": 3, "text": "<p>after</p>" },
        ])
    );
    // The page shows the handler line that rendered it too.
    let (line, text) = marked(dir.path(), lang, "TPL_LINE");
    let page = s
        .request("GET", "/tpl", &[("Accept", BROWSER)], None)
        .text();
    assert!(page.contains("<h2>templates/page.html:2:"), "{page}");
    assert!(
        page.contains(&format!("<h2>{}:{line}</h2>", entry(lang))),
        "{page}"
    );
    assert!(page.contains(&escaped(&text)), "{page}");
    assert!(page.contains("{{ n &lt; &quot;s&quot; }}"), "{page}");
}

fn a_middleware_error_is_shown(lang: Lang) {
    let dir = app(lang);
    let s = Server::start(dir.path(), &["dev"]);
    let (line, text) = marked(dir.path(), lang, "MW_LINE");
    let r = s.get("/mw");
    assert_eq!(r.status, 500);
    let err = &r.json()["error"];
    assert_eq!(err["message"], "middleware says no", "{err}");
    assert_eq!(err["line"], line, "{err}");
    let source = err["source"].as_array().unwrap();
    assert!(source.iter().any(|l| l["text"] == text.as_str()), "{err}");
}

fn serve_mode_stays_plain(lang: Lang) {
    let dir = app(lang);
    let s = Server::start(dir.path(), &[]);
    for path in ["/boom", "/tpl", "/mw"] {
        for accept in [BROWSER, "application/json"] {
            let r = s.request("GET", path, &[("Accept", accept)], None);
            assert_eq!(r.status, 500, "{path}");
            assert_eq!(r.text(), "Internal Server Error", "{path}");
            assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
        }
    }
}

/// Poll `path` until `want(body)` holds; panics with the log after `RELOAD`.
fn until(s: &Server, path: &str, want: impl Fn(&str) -> bool) {
    let start = Instant::now();
    loop {
        let body = s.get(path).text();
        if want(&body) {
            return;
        }
        assert!(
            start.elapsed() < RELOAD,
            "GET {path} still {body:?}\n{}",
            s.log()
        );
        thread::sleep(Duration::from_millis(50));
    }
}

fn a_broken_template_fails_the_reload_and_the_old_one_keeps_rendering(lang: Lang) {
    let dir = app(lang);
    let s = Server::start(dir.path(), &["dev"]);
    assert_eq!(s.get("/a").text(), "a one 1");
    // b.html has not been rendered yet by any worker: it must not be read
    // from disk after the broken edit either.
    write(dir.path(), "templates/b.html", "b two\n{% if n %}{{ n }}");
    let log = s.wait_for_log("reload failed: templates/b.html:2:1:");
    assert!(log.contains("is never closed"), "{log}");
    assert!(log.contains("still serving the previous version"), "{log}");
    for _ in 0..8 {
        assert_eq!(s.get("/b").text(), "b one 2");
        assert_eq!(s.get("/a").text(), "a one 1");
    }
    // Fixed: the next save reloads.
    write(dir.path(), "templates/b.html", "b three {{ n }}");
    until(&s, "/b", |body| body == "b three 2");
    s.wait_for_log("reloaded (1 file changed: templates/b.html)");
}

fn a_broken_template_at_start_is_reported_and_served_once_fixed(lang: Lang) {
    let dir = app(lang);
    write(dir.path(), "templates/a.html", "{% for %}");
    // `Server::start` waits for the server to listen, which it does only
    // once the template is fixed.
    let fixer = {
        let dir = dir.path().to_path_buf();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(1500));
            write(&dir, "templates/a.html", "a fixed {{ n }}");
        })
    };
    let s = Server::start(dir.path(), &["dev"]);
    fixer.join().unwrap();
    // The line that gave the port may reach the log a moment later.
    let log = s.wait_for_log("listening on");
    let error = log
        .find("templates/a.html:1:")
        .unwrap_or_else(|| panic!("not reported: {log}"));
    assert!(error < log.find("listening on").unwrap(), "{log}");
    assert!(log.contains("fix it and save"), "{log}");
    assert_eq!(s.get("/a").text(), "a fixed 1");
}

both!(
    html_page_for_a_browser,
    json_for_an_api_client,
    a_template_error_points_at_the_template,
    a_middleware_error_is_shown,
    serve_mode_stays_plain,
    a_broken_template_fails_the_reload_and_the_old_one_keeps_rendering,
    a_broken_template_at_start_is_reported_and_served_once_fixed,
);
