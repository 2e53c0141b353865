//! Templates end to end (`hull.template` / `hull:template`): the same
//! fixture app in Lua and JavaScript over real HTTP, errors in the 500 log
//! line and at load, `cove dev` picking up an edited template, and a built
//! executable rendering templates from its pack.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{fixture, line_of, run, write_file as write, Server};

/// `tests/fixtures/<name>/`.
fn fixture_dir(name: &str) -> std::path::PathBuf {
    fixture(name).parent().expect("fixture dir").to_path_buf()
}

const PAGE: &str = "<title>HELLO &lt;YOU&gt;</title>
<nav><a href=\"/\" class=\"on\">Home</a> | <a href=\"/about\">About</a></nav>

<main><p>1. pen</p>
<p>2. desk (big)</p>
no note <b>b</b> &lt;b&gt;b&lt;/b&gt; [3]</main>
";

fn app(ext: &str) -> std::path::PathBuf {
    fixture_dir("templates").join(format!("app.{ext}"))
}

fn renders_pages(ext: &str) {
    let s = Server::start(&app(ext), &[]);
    let r = s.get("/page");
    assert_eq!(r.status, 200, "{}", s.log());
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    // Multi-level extends (home → layout → base): the page's blocks win
    // over the layout's; newlines after tags are kept.
    assert_eq!(r.text(), PAGE);
    let r = s.get("/compiled");
    assert_eq!(
        r.text(),
        "<nav><a href=\"/\">Home</a> | <a href=\"/about\" class=\"on\">About</a></nav>\n"
    );
    let r = s.get("/missing");
    assert_eq!(
        r.json()["err"],
        "template.render: template not found: nope.html (templates/nope.html: no such file)"
    );
}

#[test]
fn lua_renders_pages() {
    renders_pages("lua");
}

#[test]
fn js_renders_pages() {
    renders_pages("js");
}

#[test]
fn runtimes_differ_where_their_apps_expect_it() {
    let lua = Server::start(&app("lua"), &[]);
    let js = Server::start(&app("js"), &[]);
    // Lua prints floats as tostring does; JS as String(n).
    assert_eq!(lua.get("/string").text(), "x+2=2.0");
    assert_eq!(js.get("/string").text(), "x+2=2");
    // 0 and "" are true in Lua, false in JS; Lua's pairs are sorted, JS
    // objects keep insertion order.
    assert_eq!(lua.get("/truthy").text(), "0Ea=1;b=2;c=3;");
    assert_eq!(js.get("/truthy").text(), "b=2;a=1;c=3;");
}

/// A `req` handed to a template shows every field, those built on first
/// read (crates/cove-lua/src/req.rs) too.
#[test]
fn templates_read_every_request_field() {
    for ext in ["lua", "js"] {
        let s = Server::start(&app(ext), &[]);
        let r = s.request("GET", "/req/7?q=x", &[("Accept", "text/x-test")], None);
        assert_eq!(
            r.text(),
            " path=/req/7 GET /req/7 x text/x-test id=7",
            "{ext}: {}",
            s.log()
        );
    }
}

/// Query results of two or more rows arrive packed (crates/cove-lua/src/rows.rs);
/// loops, `length`, `json` and key/value loops read them as plain arrays.
#[test]
fn lua_templates_read_packed_query_results() {
    let lua = Server::start(&app("lua"), &[]);
    assert_eq!(
        lua.get("/rows").text(),
        concat!(
            "a1;b2;|2|",
            "[{&quot;n&quot;:1,&quot;name&quot;:&quot;a&quot;},{&quot;n&quot;:2,&quot;name&quot;:&quot;b&quot;}]",
            "|1:a;2:b;",
            "|[]12"
        )
    );
}

/// The page sent is the string passed to `res.html`, whichever pages were
/// rendered before it (the JS binding hands `res.html` the bytes of the
/// page it rendered last instead of converting that string back).
fn sends_the_page_it_is_given(ext: &str) {
    let s = Server::start(&app(ext), &[]);
    let nav = |on: usize| {
        let class = |i| if i == on { " class=\"on\"" } else { "" };
        format!(
            "<nav><a href=\"/\"{}>Home</a> | <a href=\"/about\"{}>About</a></nav>\n",
            class(0),
            class(1)
        )
    };
    let (a, b) = (nav(0), nav(1));
    for (w, want) in [
        ("b", b.clone()),
        ("a", a.clone()),
        ("ab", format!("{a}{b}")),
        ("twice", b.clone()),
        ("utf8", format!("café ✓ 😀|{b}")),
    ] {
        let r = s.get(&format!("/which?w={w}"));
        assert_eq!(r.status, 200, "{w}: {}", s.log());
        assert_eq!(r.text(), want, "{ext} ?w={w}");
    }
}

#[test]
fn lua_sends_the_page_it_is_given() {
    sends_the_page_it_is_given("lua");
}

#[test]
fn js_sends_the_page_it_is_given() {
    sends_the_page_it_is_given("js");
}

fn error_names_template_position(ext: &str) {
    let s = Server::start(&app(ext), &[]);
    let r = s.get("/bad");
    assert_eq!(r.status, 500);
    assert_eq!(r.text(), "Internal Server Error");
    let line = line_of(&app(ext), "BAD_LINE");
    let want = format!(
        "app.{ext}:{line}: template.render: templates/pages/bad.html:2:14: unknown filter \"uper\""
    );
    s.wait_for_log(&want);
}

#[test]
fn lua_error_names_template_position() {
    error_names_template_position("lua");
}

#[test]
fn js_error_names_template_position() {
    error_names_template_position("js");
}

#[test]
fn broken_template_at_load_stops_the_app() {
    for ext in ["lua", "js"] {
        let app = fixture_dir("templates_load_error").join(format!("app.{ext}"));
        let log = match Server::try_start(&app, &[]) {
            Ok(s) => panic!("started:\n{}", s.log()),
            Err(log) => log,
        };
        let line = line_of(&app, "LOAD_LINE");
        assert!(
            log.contains(&format!(
                "app.{ext}:{line}: template.render: templates/broken.html:2:1: {{% if %}} is never closed: add {{% end %}}"
            )),
            "{log}"
        );
    }
}

#[test]
fn clear_cache_is_callable() {
    for ext in ["lua", "js"] {
        let s = Server::start(&app(ext), &["--workers", "1"]);
        assert_eq!(s.get("/page").text(), PAGE);
        assert_eq!(s.get("/clear").text(), "cleared");
        assert_eq!(s.get("/page").text(), PAGE);
    }
}

/// `cove dev` builds new VMs on any change, and with them new template
/// caches: an edited template shows without a restart.
#[test]
fn dev_picks_up_an_edited_template() {
    for (file, src) in [
        (
            "app.lua",
            r#"local t = require("hull.template")
app.get("/", function(req, res) res:html(t.render("page.html", { n = 1 })) end)"#,
        ),
        (
            "app.js",
            r#"import { app } from "hull:app";
import { template } from "hull:template";
app.get("/", (req, res) => res.html(template.render("page.html", { n: 1 })));"#,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), file, src);
        write(dir.path(), "templates/page.html", "one {{ n }}");
        let s = Server::start(dir.path(), &["dev"]);
        assert_eq!(s.get("/").text(), "one 1");
        write(dir.path(), "templates/page.html", "two {{ n }}");
        let start = Instant::now();
        loop {
            let body = s.get("/").text();
            if body == "two 1" {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "still {body:?}\n{}",
                s.log()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A built executable reads its templates from the pack.
#[test]
fn built_executable_renders_from_its_pack() {
    for ext in ["lua", "js"] {
        let src = tempfile::tempdir().unwrap();
        let app_dir = src.path().join("site");
        let from = fixture_dir("templates");
        for rel in [
            format!("app.{ext}"),
            "templates/base.html".into(),
            "templates/layout.html".into(),
            "templates/pages/home.html".into(),
            "templates/pages/bad.html".into(),
            "templates/partials/nav.html".into(),
        ] {
            let text = std::fs::read_to_string(from.join(&rel)).unwrap();
            write(&app_dir, &rel, &text);
        }
        let out = tempfile::tempdir().unwrap();
        let exe = out.path().join("site");
        let exit = run(&[
            "build",
            "-o",
            exe.to_str().unwrap(),
            app_dir.to_str().unwrap(),
        ]);
        assert_eq!(exit.code, Some(0), "{}", exit.stderr);
        drop(src);
        let s = Server::start_exe(&exe, &[]).unwrap_or_else(|log| panic!("{log}"));
        assert_eq!(s.get("/page").text(), PAGE);
    }
}

fn example_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/templates")
}

/// `cove test examples/templates` runs both suites and passes.
#[test]
fn example_suites_pass() {
    let dir = example_dir();
    let exit = run(&["test", dir.to_str().unwrap()]);
    assert_eq!(exit.code, Some(0), "{}{}", exit.stdout, exit.stderr);
    assert!(
        exit.stdout.contains("--- tests/test_app.lua ---"),
        "{}",
        exit.stdout
    );
    assert!(
        exit.stdout.contains("--- tests/test_app.js ---"),
        "{}",
        exit.stdout
    );
    assert_eq!(
        exit.stdout.matches("5/5 tests passed").count(),
        2,
        "{}",
        exit.stdout
    );
}

/// The example serves the same pages from both files, linking its CSS.
#[test]
fn example_pages_match_across_runtimes() {
    let dir = example_dir();
    assert!(dir.join("static/style.css").is_file());
    let lua = Server::start(&dir.join("app.lua"), &[]);
    let js = Server::start(&dir.join("app.js"), &[]);
    let (a, b) = (lua.get("/about"), js.get("/about"));
    assert_eq!((a.status, b.status), (200, 200));
    assert_eq!(a.text(), b.text());
    let home = lua.get("/").text();
    assert!(home.contains("href=\"/static/style.css\""), "{home}");
    // Only the JSON key order differs (sorted in Lua, insertion order in JS).
    let strip = |s: String| {
        s.lines()
            .filter(|l| !l.contains("<script>"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(home), strip(js.get("/").text()));
}
