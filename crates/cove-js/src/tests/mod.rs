//! Differential property tests of the hand-written `unsafe` paths (issue
//! 38): `res.json`'s serializer (json.rs, with the kept shapes of
//! raw/shapes.rs and the slots raw/layout.rs reads), `db.query`'s row objects and
//! the template bindings, each run on generated values next to
//! `JSON.stringify` or another reference in the same QuickJS context. A
//! misread slot, a stale shape or a wrong reference count shows up as a
//! difference; `tools/memcheck` runs the request path under Valgrind for
//! what a comparison cannot see.
//!
//! Case counts default to a few hundred per property and follow
//! `PROPTEST_CASES` when it is set.

mod js_source;
mod json_prop;
mod rows_prop;
mod support;
mod template_prop;
mod values;
