//! ES module resolution and loading (Hull §2.3): `hull:*` modules from Rust,
//! and the app's own files by relative path, confined to the app directory.

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::{Declarations, Exports, ModuleDef};
use rquickjs::{Ctx, Exception, Function, Module, Object, Result, Value};

/// Hull's built-in modules: (specifier, export name), from the API catalog
/// (crates/cove-caps/src/api): its native `hull:*` modules. Each re-exports
/// one object the prelude or a binding built, through the internal
/// `cove:native` module.
fn builtins() -> impl Iterator<Item = (&'static str, &'static str)> {
    cove_caps::api::modules()
        .iter()
        .filter(|m| m.native && m.js.starts_with("hull:"))
        .map(|m| (m.js, m.object_name()))
}

// Embedded JS stdlib modules: `STDLIB`, (specifier, source) for every file
// under stdlib/js (listed by build.rs).
include!(concat!(env!("OUT_DIR"), "/stdlib.rs"));

const NATIVE: &str = "cove:native";

/// What `hull:db` resolves to when a stdlib module imports it: a `db` whose
/// statements may use the reserved tables (caps.rs `stdlib_db`). Not a name an
/// app can import (it is no module of the catalog).
const STDLIB_DB: &str = "hull:_db";

/// The export of [`NATIVE`] that module re-exports as `db`.
pub(crate) const STDLIB_DB_EXPORT: &str = "stdlibDb";

/// Modules larger than this are refused (as in Hull).
const MAX_MODULE: u64 = 10 * 1024 * 1024;

pub(crate) use crate::bind::NativeObjects;

struct Native;

impl ModuleDef for Native {
    fn declare<'js>(decl: &Declarations<'js>) -> Result<()> {
        for (_, name) in builtins() {
            decl.declare(name)?;
        }
        decl.declare(STDLIB_DB_EXPORT)?;
        Ok(())
    }

    fn evaluate<'js>(ctx: &Ctx<'js>, exports: &Exports<'js>) -> Result<()> {
        let objects = ctx
            .userdata::<NativeObjects<'js>>()
            .ok_or_else(|| Exception::throw_internal(ctx, "hull modules are not ready"))?;
        for name in builtins().map(|(_, name)| name).chain([STDLIB_DB_EXPORT]) {
            let obj: Option<Object> = objects.get(name)?;
            let obj = obj.ok_or_else(|| {
                Exception::throw_internal(ctx, &format!("hull module {name} missing"))
            })?;
            exports.export(name, obj)?;
        }
        Ok(())
    }
}

/// Turns import specifiers into module names: `hull:*` as is, app files as
/// paths relative to the app directory (`lib/util.js`).
pub(crate) struct AppResolver {
    pub(crate) files: cove_core::AppFiles,
}

/// Stdlib modules only the stdlib may import: their db calls run with its
/// right to the reserved tables, which an app must not borrow through them.
const PRIVATE_PREFIX: &str = "hull:_";

/// Every module an app may import by name: the catalog's, which the
/// stdlib files must match (the test below).
fn module_names() -> impl Iterator<Item = &'static str> {
    cove_caps::api::modules()
        .iter()
        .filter(|m| !m.private && m.js.starts_with("hull:"))
        .map(|m| m.js)
}

impl AppResolver {
    /// `base:line` of the import of `name` in `base`: QuickJS does not tell
    /// the resolver where the import is, so the line is found by the
    /// quoted specifier in the source (the first one; `base` alone if none).
    fn site(&self, base: &str, name: &str) -> String {
        let Some(source) = (!base.starts_with("hull:"))
            .then(|| self.files.read(base).ok())
            .flatten()
        else {
            return base.to_string();
        };
        let at = ['"', '\'', '`'].iter().find_map(|q| {
            let quoted = format!("{q}{name}{q}");
            source
                .windows(quoted.len())
                .position(|w| w == quoted.as_bytes())
        });
        match at {
            Some(at) => {
                let line = source[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                format!("{base}:{line}:1")
            }
            None => base.to_string(),
        }
    }

    /// A ReferenceError whose stack is the import's line, so that it reads
    /// `app.js:3: ReferenceError: …` like any error of the app's own.
    fn fail<'js>(&self, ctx: &Ctx<'js>, base: &str, name: &str, msg: &str) -> rquickjs::Error {
        let site = self.site(base, name);
        let made = (|| -> Result<Value<'js>> {
            let ctor: Function = ctx.globals().get("ReferenceError")?;
            let e: Object = ctor.call((msg,))?;
            e.set("stack", format!("    at {site}\n"))?;
            Ok(e.into_value())
        })();
        match made {
            Ok(e) => ctx.throw(e),
            Err(e) => e,
        }
    }

    /// `; did you mean "./lib.ts"?` when `name` (resolved to `path`) lacks
    /// the extension of a file that exists, or names `.js` for a `.ts` file
    /// (imports name files exactly, extension included).
    fn other_extension(&self, name: &str, path: &str) -> String {
        let file = path.rsplit('/').next().unwrap_or(path);
        let tries: Vec<(String, String)> = match name.strip_suffix(".js") {
            Some(stem) => vec![(
                format!("{stem}.ts"),
                format!("{}.ts", &path[..path.len() - 3]),
            )],
            None if !file.contains('.') => [".ts", ".js"]
                .iter()
                .map(|ext| (format!("{name}{ext}"), format!("{path}{ext}")))
                .collect(),
            None => Vec::new(),
        };
        tries
            .into_iter()
            .find(|(_, p)| self.files.is_file(p))
            .map(|(n, _)| format!("; did you mean {n:?}?"))
            .unwrap_or_default()
    }

    fn invalid<'js>(&self, ctx: &Ctx<'js>, name: &str, base: &str, why: &str) -> rquickjs::Error {
        let msg = format!("invalid module path {name:?} imported from {base}: {why}");
        self.fail(ctx, base, name, &msg)
    }
}

impl Resolver for AppResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<String> {
        if name == "hull:db" && base.starts_with("hull:") {
            return Ok(STDLIB_DB.to_string());
        }
        if name.starts_with("hull:") {
            let stdlib_private = name.starts_with(PRIVATE_PREFIX)
                && base.starts_with("hull:")
                && STDLIB.iter().any(|(spec, _)| *spec == name);
            if stdlib_private || module_names().any(|spec| spec == name) {
                return Ok(name.to_string());
            }
            let hint = cove_core::hint(name, module_names(), "modules");
            let msg = format!("unknown hull module: {name}{hint}");
            return Err(self.fail(ctx, base, name, &msg));
        }
        if name == NATIVE && base.starts_with("hull:") {
            return Ok(name.to_string());
        }
        if name.starts_with('/') {
            return Err(self.invalid(
                ctx,
                name,
                base,
                "absolute paths are not allowed; use ./path",
            ));
        }
        if name.split('/').any(|part| part == "..") {
            return Err(self.invalid(
                ctx,
                name,
                base,
                "`..` is not allowed; modules stay inside the app directory",
            ));
        }
        let Some(rel) = name.strip_prefix("./") else {
            let msg = format!(
                "cannot import {name:?} from {base}: import app files as \"./path.js\" and Cove modules as \"hull:name\""
            );
            return Err(self.fail(ctx, base, name, &msg));
        };
        if base.starts_with("hull:") {
            return Err(self.invalid(ctx, name, base, "stdlib modules import hull:* only"));
        }
        let dir = base.rsplit_once('/').map_or("", |(d, _)| d);
        let parts = dir
            .split('/')
            .chain(rel.split('/'))
            .filter(|p| !p.is_empty() && *p != ".");
        let path = parts.collect::<Vec<_>>().join("/");
        // Module names starting with `hull:` are Cove's own, and db calls
        // from them may use the reserved tables: no app file gets one.
        if path.starts_with("hull:") {
            return Err(self.invalid(ctx, name, base, "app file names may not start with hull:"));
        }
        if !self.files.is_file(&path) {
            let hint = self.other_extension(name, &path);
            let msg = format!("cannot import {name}: no file {path} in the app directory{hint}");
            return Err(self.fail(ctx, base, name, &msg));
        }
        Ok(path)
    }
}

/// Loads what [`AppResolver`] named.
pub(crate) struct AppLoader {
    pub(crate) files: cove_core::AppFiles,
}

impl Loader for AppLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<Module<'js, rquickjs::module::Declared>> {
        if name == NATIVE {
            return Module::declare_def::<Native, _>(ctx.clone(), name);
        }
        if name == "hull:template" {
            crate::template::prepare(ctx, &self.files);
        }
        if name == STDLIB_DB {
            let source = format!("export {{ {STDLIB_DB_EXPORT} as db }} from \"{NATIVE}\";");
            return Module::declare(ctx.clone(), name, source);
        }
        if let Some((_, export)) = builtins().find(|(spec, _)| *spec == name) {
            let source = format!("export {{ {export} }} from \"{NATIVE}\";");
            return Module::declare(ctx.clone(), name, source);
        }
        if let Some((_, source)) = STDLIB.iter().find(|(spec, _)| *spec == name) {
            return Module::declare(ctx.clone(), name, *source);
        }
        let fail = |why: String| {
            Exception::throw_reference(ctx, &format!("cannot import ./{name}: {why}"))
        };
        let len = self.files.len(name).map_err(|e| fail(e.to_string()))?;
        if len > MAX_MODULE {
            return Err(fail(format!("larger than {MAX_MODULE} bytes")));
        }
        let source = self
            .files
            .read(name)
            .map_err(|e| fail(e.to_string()))?
            .into_owned();
        let source =
            crate::typescript::prepare(name, source).map_err(|e| stripped(ctx, name, &e))?;
        if name.ends_with(".json") {
            let text = String::from_utf8(source).map_err(|_| fail("not UTF-8".into()))?;
            let literal = serde_json::to_string(&text).map_err(|e| fail(e.to_string()))?;
            return Module::declare(
                ctx.clone(),
                name,
                format!("export default JSON.parse({literal});"),
            );
        }
        Module::declare(ctx.clone(), name, source)
    }
}

/// A `.ts` module that cannot be stripped, thrown so that it reads
/// `lib.ts:4: enum is not supported: …` like any error of the app's own:
/// the stack is the offending line.
fn stripped<'js>(ctx: &Ctx<'js>, name: &str, e: &crate::typescript::TsError) -> rquickjs::Error {
    let made = (|| -> Result<Value<'js>> {
        let ctor: Function = ctx
            .globals()
            .get(if e.syntax { "SyntaxError" } else { "Error" })?;
        let (message, stack) = match e.line {
            Some(line) => (e.message.clone(), format!("    at {name}:{line}:1\n")),
            None => (e.describe(name), String::new()),
        };
        let err: Object = ctor.call((message,))?;
        err.set("stack", stack)?;
        Ok(err.into_value())
    })();
    match made {
        Ok(err) => ctx.throw(err),
        Err(err) => err,
    }
}

#[cfg(test)]
mod catalog_tests {
    use super::*;

    /// The embedded stdlib files are the catalog's stdlib modules, and the
    /// private ones are the catalog's private ones.
    #[test]
    fn every_stdlib_file_is_a_catalog_module() {
        let wrong = cove_caps::api::stdlib_mismatches(
            cove_caps::api::Lang::Js,
            STDLIB.iter().map(|(n, _)| *n),
        );
        assert!(wrong.is_empty(), "{wrong:#?}");
        for (name, _) in STDLIB {
            let private = cove_caps::api::module_by_js(name).is_some_and(|m| m.private);
            assert_eq!(private, name.starts_with(PRIVATE_PREFIX), "{name}");
        }
        assert_eq!(builtins().count(), 12);
    }
}
