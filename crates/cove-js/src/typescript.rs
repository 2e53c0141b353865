//! TypeScript apps: an `app.ts`, its `.ts` imports and `test_*.ts` files run
//! as JavaScript once their type syntax is stripped (swc's strip-only mode).
//! Types become whitespace of the same length and line breaks stay, so every
//! line and column QuickJS reports (errors, stack traces) is the `.ts`
//! file's own: no source map. Checking the types is left to `tsc`.
//!
//! Syntax that means something at run time (`enum`, a namespace with
//! values, parameter properties, `import x = require(…)`, `export =`) cannot
//! be stripped; loading such a file fails with its line and what to write.

use std::sync::{Arc, Mutex};

use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{BytePos, SourceMap};
use swc_ts_fast_strip::{operate, ErrorCode, Mode, Options};

/// Whether a module or test file is TypeScript (by name).
pub(crate) fn is_typescript(name: &str) -> bool {
    name.ends_with(".ts")
}

/// Why a `.ts` file cannot run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TsError {
    /// 1-based line in the `.ts` file, when known.
    pub(crate) line: Option<usize>,
    /// A parse error (QuickJS would call it a SyntaxError).
    pub(crate) syntax: bool,
    pub(crate) message: String,
}

impl TsError {
    /// `file:line: message`, as Cove reports every load error.
    pub(crate) fn describe(&self, name: &str) -> String {
        let kind = if self.syntax { "SyntaxError: " } else { "" };
        match self.line {
            Some(line) => format!("{name}:{line}: {kind}{}", self.message),
            None => format!("{name}: {kind}{}", self.message),
        }
    }
}

/// `source` as QuickJS runs it: stripped if `name` is a `.ts` file, as is
/// otherwise.
pub(crate) fn prepare(name: &str, source: Vec<u8>) -> Result<Vec<u8>, TsError> {
    if !is_typescript(name) {
        return Ok(source);
    }
    let text = String::from_utf8(source).map_err(|_| TsError {
        line: None,
        syntax: false,
        message: "not UTF-8; TypeScript files must be UTF-8".into(),
    })?;
    strip(name, text).map(String::into_bytes)
}

/// QuickJS's error for an import of a name a `.ts` module does not export,
/// with the likely cause: a type imported as a value. Stripping erases
/// `import type { T }` and `import { type T }`, but a plain `import { T }`
/// stays, and the type it names is gone from the module it came from.
pub(crate) fn import_hint(message: String) -> String {
    let from_ts =
        message.starts_with("SyntaxError: Could not find export '") && message.ends_with(".ts'");
    if from_ts {
        format!(
            "{message}; if it is a type, import it with `import type {{ … }}` or `import {{ type … }}` (types are stripped at load)"
        )
    } else {
        message
    }
}

/// The diagnostics swc emitted: message and where it starts.
type Seen = Arc<Mutex<Vec<(String, Option<BytePos>)>>>;

struct Collect(Seen);

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let at = db.span.primary_span().map(|s| s.lo);
        if let Ok(mut seen) = self.0.lock() {
            seen.push((db.message(), at));
        }
    }
}

/// The stack swc strips on. Its parser and visitors recurse once per level
/// of nesting, and a worker's stack (2 MiB) holds a few hundred levels in a
/// debug build; this one holds [`MAX_NESTING`] many times over. Reserved,
/// not committed: the pages a strip does not touch cost nothing.
const STRIP_STACK: usize = 256 << 20;

/// Deeper nesting of brackets is refused before parsing (QuickJS, whose
/// parser stops at its 1 MiB stack, refuses far less in a `.js` file).
const MAX_NESTING: usize = 1000;

/// The JavaScript of a TypeScript module: same length, same lines. Runs on
/// a thread of its own, with a large stack, so that neither deep nesting
/// nor a panic in swc takes the worker down.
pub(crate) fn strip(name: &str, source: String) -> Result<String, TsError> {
    if let Some(line) = too_deep(&source) {
        return Err(TsError {
            line: Some(line),
            syntax: false,
            message: format!(
                "nested more than {MAX_NESTING} levels deep (brackets, braces, parentheses)"
            ),
        });
    }
    let crashed = || TsError {
        line: None,
        syntax: false,
        message: "stripping the types failed (a panic in swc_ts_fast_strip)".into(),
    };
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("cove-ts-strip".into())
            .stack_size(STRIP_STACK)
            .spawn_scoped(scope, || strip_here(name, &source));
        match spawned {
            Ok(thread) => thread.join().unwrap_or_else(|_| Err(crashed())),
            // No thread to be had: this one's stack does for ordinary code.
            Err(_) => strip_here(name, &source),
        }
    })
}

/// The line where bracket nesting first exceeds [`MAX_NESTING`]. Brackets
/// inside strings and comments count too: a guard, not a parser.
fn too_deep(source: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut line = 1;
    for b in source.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(line);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => line += 1,
            _ => {}
        }
    }
    None
}

fn strip_here(name: &str, source: &str) -> Result<String, TsError> {
    let source = source.to_string();
    let cm: Lrc<SourceMap> = Lrc::default();
    let seen = Seen::default();
    let handler = Handler::with_emitter(false, false, Box::new(Collect(seen.clone())));
    let options = Options {
        module: Some(true),
        filename: Some(name.to_string()),
        mode: Mode::StripOnly,
        ..Options::default()
    };
    let failed = match operate(&cm, &handler, source, options) {
        Ok(out) => return Ok(out.code),
        Err(e) => e,
    };
    let syntax = matches!(failed.code, ErrorCode::InvalidSyntax);
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    // The first error in the file; the rest follow once it is fixed.
    let first = seen
        .iter()
        .min_by_key(|(_, at)| at.map_or(u32::MAX, |p| p.0));
    let Some((message, at)) = first else {
        return Err(TsError {
            line: None,
            syntax,
            message: failed.message,
        });
    };
    let line = at.map(|p| cm.lookup_char_pos(p).line);
    let message = if syntax {
        message.clone()
    } else {
        unsupported(message)
    };
    Err(TsError {
        line,
        syntax,
        message,
    })
}

/// Cove's words for what strip-only mode refuses: what it is, and what to
/// write instead.
fn unsupported(swc: &str) -> String {
    const WHY: &str = "TypeScript is run by stripping types";
    let known = [
        (
            "enum",
            "enum is not supported",
            "use a const object (`const Color = { Red: \"red\" } as const`)",
        ),
        (
            "namespace",
            "a namespace with values is not supported",
            "use a module (a file of its own) or a plain object; `declare namespace` and type-only namespaces are fine",
        ),
        (
            "import equals",
            "`import x = …` is not supported",
            "use `import … from \"./file.ts\"`",
        ),
        (
            "export assignment",
            "`export =` is not supported",
            "use `export default`",
        ),
        (
            "parameter property",
            "parameter properties (`constructor(private x: T)`) are not supported",
            "declare the field in the class and assign it in the constructor",
        ),
        (
            "angle-bracket",
            "`<T>expr` type assertions are not supported",
            "write `expr as T`",
        ),
    ];
    for (needle, what, instead) in known {
        if swc.contains(needle) {
            return format!("{what}: {WHY}; {instead}");
        }
    }
    swc.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(ts: &str) -> String {
        strip("app.ts", ts.to_string()).expect("strips")
    }

    /// An erased statement: spaces, after a `;` where one keeps the
    /// statements apart.
    fn blank(line: &str) -> bool {
        matches!(line.trim(), "" | ";")
    }

    fn error(ts: &str) -> String {
        strip("app.ts", ts.to_string())
            .expect_err("refused")
            .describe("app.ts")
    }

    #[test]
    fn plain_javascript_is_unchanged() {
        let src = "import { app } from \"hull:app\";\n\
                   const xs = [1, 2, 3].map((x) => x * 2);\n\
                   app.get(\"/\", (req, res) => res.json({ xs, s: `é ✓ ${xs.length}` }));\n";
        assert_eq!(js(src), src);
        // Only .ts files are touched.
        let bytes = b"let x = 1 as number;".to_vec();
        assert_eq!(prepare("app.js", bytes.clone()).unwrap(), bytes);
    }

    #[test]
    fn types_become_whitespace_in_place() {
        let src = "import type { Foo } from \"./types.ts\";\n\
                   import { x, type Y } from \"./lib.ts\";\n\
                   interface User {\n  id: number;\n  name: string;\n}\n\
                   function first<T>(xs: T[]): T | undefined { return xs[0]; }\n\
                   const u = { id: 1, name: \"é\" } as User;\n\
                   const v = u satisfies User;\n\
                   let n!: number;\n\
                   class A<T> implements Foo { private y: number = 1; m?(): void; }\n\
                   throw new Error(first<string>([\"at line 12\"]));\n";
        let out = js(src);
        assert_eq!(out.len(), src.len());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), src.lines().count());
        // Every line keeps its length, and code keeps its column.
        for (a, b) in src.lines().zip(out.lines()) {
            assert_eq!(a.len(), b.len(), "{a:?} → {b:?}");
        }
        assert!(blank(lines[0]), "{out}");
        assert_eq!(
            lines[1].trim_end(),
            "import { x,        } from \"./lib.ts\";"
        );
        assert!(lines[2..6].iter().all(|l| blank(l)), "{out}");
        assert_eq!(
            lines[6].trim_end(),
            "function first   (xs     )                { return xs[0]; }"
        );
        assert!(lines[7].starts_with("const u = { id: 1, name: \"é\" }"));
        assert!(!lines[7].contains("User"));
        assert_eq!(lines[11].find("throw"), Some(0));
        assert!(lines[11].contains("first        ([\"at line 12\"])"));
    }

    #[test]
    fn an_enum_names_its_line_and_what_to_write() {
        let e = error("const a = 1;\n\nenum Color { Red, Green }\n");
        assert_eq!(
            e,
            "app.ts:3: enum is not supported: TypeScript is run by stripping types; \
             use a const object (`const Color = { Red: \"red\" } as const`)"
        );
    }

    #[test]
    fn other_runtime_syntax_is_refused_with_its_line() {
        for (src, line, what) in [
            (
                "namespace N { export const z = 1 }\n",
                1,
                "namespace with values",
            ),
            (
                "let a;\nimport fs = require(\"fs\");\n",
                2,
                "`import x = …`",
            ),
            ("\n\n\nexport = 1;\n", 4, "`export =`"),
            (
                "class P {\n  constructor(private x: number) {}\n}\n",
                2,
                "parameter properties",
            ),
            ("const s = <string>\"x\";\n", 1, "`<T>expr`"),
        ] {
            let e = error(src);
            assert!(e.starts_with(&format!("app.ts:{line}: ")), "{src:?}: {e}");
            assert!(e.contains(what), "{src:?}: {e}");
            assert!(e.contains("stripping types"), "{e}");
        }
        // Type-only namespaces and `declare` go like any other type.
        let out = js("declare namespace G { const v: number }\nlet a = 1;\n");
        assert!(blank(out.lines().next().unwrap()), "{out}");
        assert_eq!(out.lines().nth(1), Some("let a = 1;"));
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let e = strip("lib/x.ts", "let ok = 1;\nlet x: number = foo(;\n".into()).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.syntax);
        assert!(
            e.describe("lib/x.ts")
                .starts_with("lib/x.ts:2: SyntaxError: "),
            "{e:?}"
        );
    }

    #[test]
    fn a_missing_export_of_a_ts_module_suggests_import_type() {
        let quickjs = "SyntaxError: Could not find export 'Item' in module 'lib/shapes.ts'";
        let hinted = import_hint(quickjs.to_string());
        assert!(hinted.starts_with(quickjs), "{hinted}");
        assert!(hinted.contains("`import type { … }`"), "{hinted}");
        let js = "SyntaxError: Could not find export 'x' in module 'lib.js'";
        assert_eq!(import_hint(js.to_string()), js);
    }

    #[test]
    fn deep_nesting_is_refused_and_deep_chains_strip() {
        let deep = format!(
            "let a: number =\n{}1{};\n",
            "(".repeat(5000),
            ")".repeat(5000)
        );
        let e = error(&deep);
        assert!(
            e.starts_with("app.ts:2: nested more than 1000 levels deep"),
            "{e}"
        );
        // What the guard lets through strips on the large stack, whatever
        // the caller's (a worker's is 2 MiB).
        let nested = format!(
            "let a: number = {}1{};\n",
            "(".repeat(1000),
            ")".repeat(1000)
        );
        let chain = format!("let s: string = {}\"\";\n", "\"x\" + ".repeat(50_000));
        for src in [nested, chain] {
            let out = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || strip("app.ts", src))
                .unwrap()
                .join()
                .unwrap();
            assert!(out.is_ok(), "{out:?}");
        }
    }

    #[test]
    fn not_utf8_is_refused() {
        let e = prepare("app.ts", vec![b'a', 0xff]).unwrap_err();
        assert!(e.describe("app.ts").contains("not UTF-8"), "{e:?}");
    }
}
