//! TypeScript apps: `app.ts` and `.ts` imports run with their types stripped
//! (tests/fixtures/typescript), errors name the `.ts` file and line, syntax
//! that cannot be stripped is a clear load error, `cove test` runs
//! `test_*.ts`, `cove new --runtime ts` passes its own tests, `cove build`
//! packs and runs a TypeScript app, and `cove dev` reloads on a `.ts` edit.

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::migrate::cove_in;
use crate::util::{line_of, run, write_file as write, Server};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/typescript")
        .join(name)
}

/// `cove <app>` that must fail to load; returns stderr.
fn load_error(app: &Path) -> String {
    let r = run(&["-p", "0", "-d", ":memory:", app.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    r.stderr
}

#[test]
fn a_typescript_app_and_its_ts_imports_serve() {
    let s = Server::start(&fixture("app").join("app.ts"), &[]);
    assert_eq!(
        s.get("/items?name=cake").json(),
        json!({"found": true, "item": {"name": "cake", "price": 4.5}})
    );
    assert_eq!(
        s.get("/items?name=pie").json(),
        json!({"found": false, "item": null})
    );
    assert_eq!(
        s.get("/total").json(),
        json!({"total": 7.5, "first": "tea", "size": 2})
    );
}

#[test]
fn a_directory_with_app_ts_is_served() {
    let s = Server::start(&fixture("app"), &[]);
    assert_eq!(s.get("/total").json()["total"], json!(7.5));
}

#[test]
fn a_handler_error_names_the_ts_file_and_line() {
    let app = fixture("app").join("app.ts");
    let s = Server::start(&app, &[]);
    assert_eq!(s.get("/boom").status, 500);
    let line = line_of(&app, "marker: boom");
    s.wait_for_log(&format!(
        "app.ts:{line}: TypeError: cannot read property 'value' of undefined"
    ));
}

#[test]
fn an_enum_is_a_load_error_naming_its_line_and_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.ts");
    write(
        dir.path(),
        "app.ts",
        "import { app } from \"hull:app\";\n\nconst n: number = 1;\nenum Color { Red, Green }\napp.get(\"/\", (req, res) => res.json({ n }));\n",
    );
    let err = load_error(&app);
    assert!(
        err.contains(
            "app.ts:4: enum is not supported: TypeScript is run by stripping types; use a const object"
        ),
        "{err}"
    );

    // In an imported file: its own name and line.
    let app = fixture("enum_import").join("app.ts");
    let line = line_of(&fixture("enum_import").join("colors.ts"), "marker: enum");
    let err = load_error(&app);
    assert!(
        err.contains(&format!("colors.ts:{line}: enum is not supported")),
        "{err}"
    );
}

#[test]
fn other_load_errors_name_the_ts_line() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.ts");
    write(
        dir.path(),
        "app.ts",
        "import { app } from \"hull:app\";\nclass P {\n  constructor(private x: number) {}\n}\napp.get(\"/\", (req, res) => res.text(\"hi\"));\n",
    );
    let err = load_error(&app);
    assert!(
        err.contains(
            "app.ts:3: parameter properties (`constructor(private x: T)`) are not supported"
        ),
        "{err}"
    );

    write(
        dir.path(),
        "app.ts",
        "import { app } from \"hull:app\";\nconst n: number = ;\n",
    );
    let err = load_error(&app);
    assert!(err.contains("app.ts:2: SyntaxError: "), "{err}");

    // A thrown error at load names the .ts line like any other.
    write(
        dir.path(),
        "app.ts",
        "import { app } from \"hull:app\";\ntype T = { a: number };\nconst t = {} as T;\nthrow new Error(`no a: ${t.a}`);\n",
    );
    let err = load_error(&app);
    assert!(err.contains("app.ts:4: no a: undefined"), "{err}");
}

#[test]
fn an_import_without_its_extension_suggests_the_ts_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lib.ts", "export const n: number = 1;\n");
    for (spec, want) in [("./lib", "\"./lib.ts\""), ("./lib.js", "\"./lib.ts\"")] {
        write(
            dir.path(),
            "app.ts",
            &format!("import {{ app }} from \"hull:app\";\nimport {{ n }} from \"{spec}\";\napp.get(\"/\", (req, res) => res.json({{ n }}));\n"),
        );
        let err = load_error(&dir.path().join("app.ts"));
        assert!(err.contains(&format!("did you mean {want}?")), "{err}");
        assert!(err.contains("app.ts:2"), "{err}");
    }
}

#[test]
fn a_type_imported_as_a_value_suggests_import_type() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "shapes.ts",
        "export interface Item {\n  name: string;\n}\n",
    );
    write(
        dir.path(),
        "app.ts",
        "import { app } from \"hull:app\";\nimport { Item } from \"./shapes.ts\";\nconst i: Item = { name: \"x\" };\napp.get(\"/\", (req, res) => res.json(i));\n",
    );
    let err = load_error(&dir.path().join("app.ts"));
    assert!(
        err.contains("Could not find export 'Item' in module 'shapes.ts'; if it is a type, import it with `import type { … }`"),
        "{err}"
    );
}

#[test]
fn cove_test_runs_test_ts_files() {
    let out = cove_in(&fixture("app"), &["test"]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("--- tests/test_app.ts ---"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\n2/2 tests passed\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn cove_test_reports_failures_with_the_ts_file_and_line() {
    let dir = fixture("failing");
    let out = cove_in(&dir, &["test"]);
    let text = &out.stdout;
    assert_eq!(out.code, Some(1), "{text}\n{}", out.stderr);
    let test_file = dir.join("tests/test_fail.ts");
    let eq_line = line_of(&test_file, "marker: failing eq");
    let call_line = line_of(&test_file, "marker: handler error");
    let boom = line_of(&dir.join("app.ts"), "marker: boom");
    let enum_line = line_of(&dir.join("tests/test_broken.ts"), "marker: enum");
    for expected in [
        "  PASS  a passing case\n".to_string(),
        format!("  FAIL  a failing eq\n    tests/test_fail.ts:{eq_line}: test.eq failed: sum\n"),
        format!("  FAIL  a handler error\n    tests/test_fail.ts:{call_line}: test.eq failed\n"),
        format!("    GET /boom → 500, handler error: app.ts:{boom}: TypeError: cannot read property 'id' of undefined\n"),
        format!("--- tests/test_broken.ts ---\n  ERROR  the file failed to load\n    tests/test_broken.ts:{enum_line}: enum is not supported"),
    ] {
        assert!(text.contains(&expected), "missing {expected:?} in:\n{text}");
    }
}

#[test]
fn cove_new_runtime_ts_writes_an_app_whose_tests_pass() {
    let cwd = tempfile::tempdir().unwrap();
    let made = cove_in(cwd.path(), &["new", "shop", "--runtime", "ts"]).expect(0);
    assert!(made.stdout.contains("a TypeScript app"), "{}", made.stdout);
    let app = cwd.path().join("shop");
    for rel in ["app.ts", "tests/test_app.ts", "tsconfig.json"] {
        assert!(app.join(rel).is_file(), "{rel} missing");
    }
    assert!(!app.join("app.js").exists());
    let tsconfig: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(app.join("tsconfig.json")).unwrap()).unwrap();
    let opts = &tsconfig["compilerOptions"];
    for (key, want) in [
        ("noEmit", json!(true)),
        ("strict", json!(true)),
        ("module", json!("ESNext")),
        ("moduleResolution", json!("Bundler")),
        ("allowImportingTsExtensions", json!(true)),
        ("target", json!("ES2020")),
        ("types", json!([])),
    ] {
        assert_eq!(opts[key], want, "{key}");
    }
    assert_eq!(
        tsconfig["include"],
        json!(["**/*.ts", ".cove/types/*.d.ts"])
    );
    let readme = fs::read_to_string(app.join("README.md")).unwrap();
    assert!(readme.contains("npx -p typescript tsc -p ."), "{readme}");

    let tested = cove_in(&app, &["test"]).expect(0);
    assert!(
        tested.stdout.contains("--- tests/test_app.ts ---")
            && tested.stdout.contains("tests passed"),
        "{}",
        tested.stdout
    );
    assert!(!tested.stdout.contains("FAIL"), "{}", tested.stdout);
}

#[test]
fn cove_build_packs_and_runs_a_typescript_app() {
    let src = tempfile::tempdir().unwrap();
    let dir = src.path().join("shop");
    for rel in ["app.ts", "lib.ts", "shapes.ts", "tests/test_app.ts"] {
        write(
            &dir,
            rel,
            &fs::read_to_string(fixture("app").join(rel)).unwrap(),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let exe = out.path().join("shop");
    let built = run(&["build", "-o", exe.to_str().unwrap(), dir.to_str().unwrap()]);
    assert_eq!(built.code, Some(0), "{}", built.stderr);
    drop(src);
    let listed = run(&["build", "--list", exe.to_str().unwrap()]);
    assert!(listed.stdout.contains("lib.ts"), "{}", listed.stdout);

    let s = Server::start_exe(&exe, &["--workers", "1"]).unwrap_or_else(|log| panic!("{log}"));
    assert_eq!(
        s.get("/total").json(),
        json!({"total": 7.5, "first": "tea", "size": 2})
    );
    assert_eq!(s.get("/boom").status, 500);
    let line = line_of(&fixture("app").join("app.ts"), "marker: boom");
    s.wait_for_log(&format!("app.ts:{line}: TypeError"));
}

#[test]
fn cove_dev_reloads_on_a_ts_edit() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app.ts",
        "import { app } from \"hull:app\";\nimport { name } from \"./lib.ts\";\napp.get(\"/v\", (req, res) => res.json({ name }));\n",
    );
    write(
        dir.path(),
        "lib.ts",
        "export const name: string = \"one\";\n",
    );
    let s = Server::start(dir.path(), &["dev"]);
    assert_eq!(s.get("/v").json(), json!({"name": "one"}));

    let until = |want: serde_json::Value| {
        let start = Instant::now();
        while s.get("/v").json() != want {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "never served {want}:\n{}",
                s.log()
            );
            thread::sleep(Duration::from_millis(50));
        }
    };
    write(
        dir.path(),
        "lib.ts",
        "export const name: string = \"two!\";\n",
    );
    until(json!({"name": "two!"}));

    // A broken edit keeps the last good version serving, and says why.
    write(
        dir.path(),
        "lib.ts",
        "export enum Name { Three }\nexport const name: string = \"three\";\n",
    );
    s.wait_for_log("lib.ts:1: enum is not supported");
    assert_eq!(s.get("/v").json(), json!({"name": "two!"}));
}
