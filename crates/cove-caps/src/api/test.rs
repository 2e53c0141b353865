//! The test API of `cove test`: the global `test` of test files, in both
//! languages (crates/cove-lua/src/testing.rs, crates/cove-js/src/testing.rs).
//!
//! It is a global in both runtimes and no `hull:test` module exists: its
//! `js` is the bare name `"test"` (no `hull:` prefix), which the renderers
//! read as "a global of that name" (render/markdown.rs `js_access`), and
//! `lua_global` is `test`. `test(name, fn)` itself, the object being
//! callable (Lua: a `__call` metamethod), is the entry named like the
//! object: the renderers write it as the object's call signature.

use super::types::{f, f_opt, TypeDef};
use super::{opt, p, Module, Sig, Ty};

const OPTIONS: Ty = Ty::Named("TestOptions");
const RESULT: Ty = Ty::Named("TestResult");

const FUNCTIONS: &[Sig] = &[
    Sig::both(
        "test",
        &[p("name", Ty::Str), p("fn", Ty::Fn)],
        Ty::Nil,
        "register a test: fn runs against a fresh in-memory database; an error fails it",
    ),
    Sig::both(
        "get",
        &[p("path", Ty::Str), opt("options", OPTIONS)],
        RESULT,
        "dispatch a GET request in-process (the path may carry a ?query) and return the result",
    ),
    Sig::both(
        "post",
        &[p("path", Ty::Str), opt("options", OPTIONS)],
        RESULT,
        "dispatch a POST request in-process and return the result",
    ),
    Sig::both(
        "put",
        &[p("path", Ty::Str), opt("options", OPTIONS)],
        RESULT,
        "dispatch a PUT request in-process and return the result",
    ),
    Sig::both(
        "patch",
        &[p("path", Ty::Str), opt("options", OPTIONS)],
        RESULT,
        "dispatch a PATCH request in-process and return the result",
    ),
    Sig::both(
        "delete",
        &[p("path", Ty::Str), opt("options", OPTIONS)],
        RESULT,
        "dispatch a DELETE request in-process and return the result",
    ),
    Sig::both(
        "eq",
        &[
            p("actual", Ty::Any),
            p("expected", Ty::Any),
            opt("msg", Ty::Str),
        ],
        Ty::Nil,
        "fail unless the two are equal (numbers by value, tables/objects and arrays deeply)",
    ),
    Sig::both(
        "ok",
        &[p("value", Ty::Any), opt("msg", Ty::Str)],
        Ty::Nil,
        "fail unless the value is truthy",
    ),
    Sig::both(
        "err",
        &[p("fn", Ty::Fn), opt("substring", Ty::Str)],
        Ty::Nil,
        "call fn and fail unless it raises (with a message containing substring, if given)",
    ),
];

const TYPES: &[TypeDef] = &[
    TypeDef {
        name: "TestOptions",
        doc: "A test request's options",
        fields: &[
            f_opt("body", Ty::Str, "the request body (Lua: also a number)"),
            f_opt(
                "headers",
                Ty::Record,
                "header names to string values (names lower-cased)",
            ),
            f_opt(
                "middleware",
                Ty::Bool,
                "true runs the app's middleware too (default: only the route handler, as in Hull)",
            ),
        ],
        methods: &[],
    },
    TypeDef {
        name: "TestResult",
        doc: "The response to a test request",
        fields: &[
            f(
                "status",
                Ty::Int,
                "the status code (404 for no route, 500 for a handler error)",
            ),
            f_opt("body", Ty::Str, "the body, when not empty"),
            f_opt(
                "json",
                Ty::Any,
                "the decoded body, when it is a JSON object or array",
            ),
            f(
                "headers",
                Ty::Record,
                "response headers by lower-case name (duplicates joined with \", \")",
            ),
        ],
        methods: &[],
    },
];

/// The global `test` of test files (see the module doc for its spec).
pub(super) fn module() -> Module {
    Module {
        js: "test",
        lua_global: Some("test"),
        lua_require: None,
        native: true,
        private: false,
        default_export: false,
        doc: "The global of cove test files: test(name, fn) registers a case (run in file order; an async JS fn is awaited), and its functions dispatch requests and assert",
        functions: FUNCTIONS.to_vec(),
        types: TYPES,
    }
}
