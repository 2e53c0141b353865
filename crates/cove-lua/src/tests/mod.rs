//! Differential property tests of the hand-written `unsafe` paths (issue
//! 38): each fast path is run on generated values next to a reference that
//! shares none of its code, and the two must agree. A wrong length, a stale
//! pointer or a misread layout shows up as a difference (or as garbage that
//! does not parse); `tools/memcheck` runs the request path under Valgrind
//! for what a comparison cannot see.
//!
//! Case counts default to a few hundred per property and follow
//! `PROPTEST_CASES` when it is set.

mod canonical;
mod json_prop;
mod rows_prop;
mod support;
mod template_prop;
mod values;
