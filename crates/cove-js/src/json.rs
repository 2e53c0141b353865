//! `res.json`'s serializer: JSON text straight from QuickJS values, without
//! `JSON.stringify`'s wrapper objects, key arrays and intermediate JS string
//! (which made it a third of a JSON route's instructions).
//!
//! It handles what API responses are made of: plain objects, arrays,
//! strings, numbers, booleans and null, with `JSON.stringify`'s rules
//! (insertion order, integer keys first; `undefined`, functions and symbols
//! skipped in objects and `null` in arrays). Anything else (a `toJSON`
//! method, Date, Map, boxed primitives, Proxy, BigInt, lone surrogates, very
//! deep nesting or cycles) returns [`Step::Unsupported`] and the caller uses
//! `JSON.stringify` for the whole value, so results never differ.

use rquickjs::{Ctx, Value};

use cove_caps::json::write_utf8;
use cove_core::append;

use crate::raw::shapes::{self, Known, Member};
use crate::raw::value::{Atom, Class, Obj, Prim, Slot, Str, Thrown, Val, View};

/// Deeper than this is handed to `JSON.stringify` (which reports cycles).
const MAX_DEPTH: u32 = 128;

/// From this depth the objects on the path are kept, and one met again (a
/// cycle) is handed to `JSON.stringify` at once: walked to [`MAX_DEPTH`],
/// a cycle whose members call getters could reach QuickJS's stack limit
/// first (in a debug build ~70 levels did), and the encode then threw
/// "Maximum call stack size exceeded" where `JSON.stringify` reports the
/// cycle. Shallower, nothing is kept: API responses are rarely deeper.
const WATCHED_DEPTH: u32 = 8;

/// What happened to one value.
#[derive(PartialEq, Eq)]
enum Step {
    Written,
    /// `undefined`, a function or a symbol: no JSON of its own.
    Skip,
    Unsupported,
}

struct Encoder<'a, 'js> {
    ctx: &'a Ctx<'js>,
    out: &'a mut Vec<u8>,
    depth: u32,
    protos: Option<Protos>,
    /// Whether Object.prototype / Array.prototype lack `toJSON`, once known.
    clean: [Option<bool>; 2],
    /// The last known shape looked up, and its members: the rows of an
    /// array share one shape, so they share one lookup.
    last_known: Option<Known>,
    /// A known shape (0: none) whose prototype was found standard and
    /// without `toJSON` in this encode.
    clean_shape: usize,
    /// The objects being written at [`WATCHED_DEPTH`] and deeper.
    path: Vec<usize>,
}

/// Where this thread's context keeps `Object.prototype` and
/// `Array.prototype` (pointers compared, never dereferenced).
#[derive(Clone, Copy)]
struct Protos {
    ctx: usize,
    object: usize,
    array: usize,
}

thread_local! {
    static PROTOS: std::cell::Cell<Option<Protos>> = const { std::cell::Cell::new(None) };
}

/// The identity of a context (its address, compared only).
fn ctx_id(ctx: &Ctx<'_>) -> usize {
    ctx.as_raw().as_ptr() as usize
}

/// Note `ctx`'s standard prototypes, so plain objects skip the `toJSON`
/// lookup along their prototype chain.
pub(crate) fn register_protos(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let id = |o: Option<rquickjs::Object<'_>>| o.map_or(0, |o| Val::lend(o.as_value()).object_id());
    let object = id(rquickjs::Object::new(ctx.clone())?.get_prototype());
    let array = id(rquickjs::Array::new(ctx.clone())?
        .into_object()
        .get_prototype());
    let ctx = ctx_id(ctx);
    PROTOS.with(|p| p.set(Some(Protos { ctx, object, array })));
    Ok(())
}

/// Write a number, boolean, null or ASCII string read in place (from an
/// object's slot, see [`Obj::slot`]) after `prefix`.
#[inline(always)]
fn write_prim(out: &mut Vec<u8>, prefix: &[u8], p: Prim<'_>) {
    append(out, prefix);
    match p {
        Prim::Null => out.extend_from_slice(b"null"),
        Prim::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Prim::Int(n) => write_int(out, n),
        Prim::Float(f) => write_float(out, f),
        // ASCII is UTF-8: always written.
        Prim::Ascii(bytes) => {
            write_utf8(out, bytes);
        }
    }
}

#[inline(always)]
fn write_int(out: &mut Vec<u8>, n: i32) {
    // i32 digits directly: `write_int` formats an i64, slower.
    append(out, itoa::Buffer::new().format(n).as_bytes());
}

#[inline(always)]
fn write_float(out: &mut Vec<u8>, f: f64) {
    if f.is_finite() {
        append(out, ryu_js::Buffer::new().format_finite(f).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

impl<'js> Encoder<'_, 'js> {
    fn value(&mut self, v: &Val<'js>) -> rquickjs::Result<Step> {
        match v.view() {
            View::Int(n) => write_int(self.out, n),
            View::Float(f) => write_float(self.out, f),
            View::Bool(b) => self
                .out
                .extend_from_slice(if b { b"true" } else { b"false" }),
            View::Null => self.out.extend_from_slice(b"null"),
            View::Undefined | View::Symbol => return Ok(Step::Skip),
            View::Str(s) => return self.string(s),
            View::Object(o) => return self.object(o),
            View::Other => return Ok(Step::Unsupported),
        }
        Ok(Step::Written)
    }

    fn string(&mut self, s: Str<'_, 'js>) -> rquickjs::Result<Step> {
        if let Some(bytes) = s.ascii() {
            write_utf8(self.out, bytes);
            return Ok(Step::Written);
        }
        let text = s.utf8()?;
        // Lone surrogates come out as invalid UTF-8; JSON.stringify escapes them.
        Ok(if write_utf8(self.out, &text) {
            Step::Written
        } else {
            Step::Unsupported
        })
    }

    /// Whether `obj` may have a `toJSON` method. Objects straight from
    /// `Object.prototype`/`Array.prototype` (checked once per encode) only if
    /// they have their own (seen while listing their keys); others are
    /// looked up along their prototype chain. Also whether `obj`'s
    /// prototype is the standard one.
    fn inherits_to_json(
        &mut self,
        obj: Obj<'_, 'js>,
        class: Class,
    ) -> rquickjs::Result<(bool, bool)> {
        let proto = obj.proto()?;
        let proto_id = proto.object_id();
        let ctx = ctx_id(self.ctx);
        let standard = self.protos.filter(|p| p.ctx == ctx).and_then(|p| {
            let (id, slot) = if class == Class::Array {
                (p.array, 1)
            } else {
                (p.object, 0)
            };
            (id == proto_id).then_some(slot)
        });
        let Some(slot) = standard else {
            return Ok((has_to_json(obj)?, false));
        };
        if self.clean[slot].is_none() {
            let dirty = match proto.view() {
                View::Object(p) => has_to_json(p)?,
                _ => false,
            };
            self.clean[slot] = Some(!dirty);
        }
        Ok((self.clean[slot] == Some(false), true))
    }

    fn object(&mut self, obj: Obj<'_, 'js>) -> rquickjs::Result<Step> {
        let class = obj.class();
        if class == Class::Other {
            return Ok(if obj.is_function() {
                Step::Skip
            } else {
                Step::Unsupported
            });
        }
        if self.depth >= MAX_DEPTH {
            return Ok(Step::Unsupported);
        }
        // A plain object of a known shape whose prototype (the shape's)
        // was found standard and clean in this encode: the rows of an
        // array after the first skip the prototype lookup.
        let checked =
            class == Class::Plain && self.clean_shape != 0 && obj.shape() == Some(self.clean_shape);
        let standard = if checked {
            true
        } else {
            let (inherits, standard) = self.inherits_to_json(obj, class)?;
            if inherits {
                return Ok(Step::Unsupported);
            }
            standard
        };
        let watched = self.depth >= WATCHED_DEPTH;
        if watched {
            if self.path.contains(&obj.id()) {
                return Ok(Step::Unsupported);
            }
            self.path.push(obj.id());
        }
        self.depth += 1;
        let step = if class == Class::Array {
            self.array(obj)
        } else {
            self.members(obj, standard)
        };
        self.depth -= 1;
        if watched {
            self.path.pop();
        }
        step
    }

    fn array(&mut self, obj: Obj<'_, 'js>) -> rquickjs::Result<Step> {
        let len = obj.len()?;
        self.out.push(b'[');
        for i in 0..len {
            if i > 0 {
                self.out.push(b',');
            }
            let item = obj.index(i as u32)?;
            match self.value(&item)? {
                Step::Written => {}
                Step::Skip => self.out.extend_from_slice(b"null"),
                Step::Unsupported => return Ok(Step::Unsupported),
            }
        }
        self.out.push(b']');
        Ok(Step::Written)
    }

    /// A plain object's members; `standard`: its prototype is the
    /// standard one, without `toJSON`.
    fn members(&mut self, obj: Obj<'_, 'js>, standard: bool) -> rquickjs::Result<Step> {
        if let Some(known) = obj.shape().and_then(|s| self.known_shape(s)) {
            // A known shape is kept for the runtime's life: its address
            // names no other shape meanwhile, and its prototype is fixed.
            if standard {
                self.clean_shape = known.shape();
            }
            return self.known_members(obj, &known);
        }
        // Non-enumerable keys too: an own `toJSON` must send us to JSON.stringify.
        let keys = obj.own_keys(false)?;
        if self.depth == 1 {
            // The object handed to res.json, usually a literal the handler
            // builds on every request: keep its shape (raw/shapes.rs).
            shapes::keep_keys(self.ctx, &keys);
        }
        self.out.push(b'{');
        let mut first = true;
        for (atom, enumerable) in keys.iter() {
            if atom == Atom::TO_JSON {
                return Ok(Step::Unsupported);
            }
            if !enumerable {
                continue;
            }
            let key = |e: &mut Self| Ok(shapes::write_key(e.ctx, atom, e.out));
            if !self.member(&mut first, key, |_| obj.get(atom))? {
                return Ok(Step::Unsupported);
            }
        }
        self.out.push(b'}');
        Ok(Step::Written)
    }

    fn known_shape(&mut self, shape: usize) -> Option<Known> {
        match &self.last_known {
            Some(known) if known.shape() == shape => Some(known.clone()),
            _ => {
                let known = shapes::known_members(self.ctx, shape)?;
                self.last_known = Some(known.clone());
                Some(known)
            }
        }
    }

    /// An object whose shape is a kept key list's (raw/shapes.rs): the same
    /// own properties, all enumerable plain values, none named `toJSON`,
    /// so no listing is needed and the names are written from the cache.
    /// Each value is read from its slot (raw/layout.rs) when the layout is known
    /// and the object still has the shape.
    fn known_members(&mut self, obj: Obj<'_, 'js>, known: &Known) -> rquickjs::Result<Step> {
        self.out.push(b'{');
        let mut first = true;
        for (i, m) in known.members().iter().enumerate() {
            // Encoding a member may call a getter further down that changes
            // `obj` itself: a property deleted (its slots compacted, the
            // array shrunk), added, or made an accessor (its slot then
            // holds a getter/setter pair, not a value). The shape changes
            // with each, so `slot` checks it before every read; once it
            // changed, the rest are read by name, as JSON.stringify reads
            // the keys it listed at the start (issue 38). A primitive is
            // written at once, without a reference: nothing runs while it is.
            match obj.slot(known, i, self.out, m.prefix(first), write_prim) {
                Slot::Written => first = false,
                Slot::Value(v) => {
                    if !self.known_member(m, &mut first, Ok(v))? {
                        return Ok(Step::Unsupported);
                    }
                }
                Slot::ByName => {
                    if !self.known_member(m, &mut first, obj.get(m.atom()))? {
                        return Ok(Step::Unsupported);
                    }
                }
            }
        }
        self.out.push(b'}');
        Ok(Step::Written)
    }

    /// Member `m` of an object of a known shape that is not a primitive
    /// read from its slot: `v` is its value, owned (encoding it may call a
    /// getter further down, which could replace it in the object). False
    /// if the value is not ours to write.
    #[inline(never)]
    fn known_member(
        &mut self,
        m: &Member,
        first: &mut bool,
        v: Result<Val<'js>, Thrown>,
    ) -> rquickjs::Result<bool> {
        let cached = |e: &mut Self| {
            append(e.out, m.json());
            Ok(true)
        };
        self.member(first, cached, |_| v)
    }

    /// Write a member: a comma unless `first`, the name (by `key`), `:` and
    /// the value (by `read`); nothing if the value is skipped. False if the
    /// name or the value is not ours to write.
    fn member(
        &mut self,
        first: &mut bool,
        key: impl FnOnce(&mut Self) -> rquickjs::Result<bool>,
        read: impl FnOnce(&Self) -> Result<Val<'js>, Thrown>,
    ) -> rquickjs::Result<bool> {
        let mark = self.out.len();
        if !*first {
            self.out.push(b',');
        }
        if !key(self)? {
            return Ok(false);
        }
        let item = read(self)?;
        self.out.push(b':');
        match self.value(&item)? {
            Step::Written => *first = false,
            Step::Skip => self.out.truncate(mark),
            Step::Unsupported => return Ok(false),
        }
        Ok(true)
    }
}

/// Whether `obj` has (or inherits) a `toJSON` that is not `undefined`.
fn has_to_json(obj: Obj<'_, '_>) -> rquickjs::Result<bool> {
    Ok(!matches!(obj.get(Atom::TO_JSON)?.view(), View::Undefined))
}

/// `v` as JSON text (`res.json`'s body, a message's data): plain
/// values written here, anything else by `JSON.stringify`; `undefined`
/// (and functions) as `null`, so the text is always JSON.
pub(crate) fn json_text<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> rquickjs::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    if encode(ctx, &v, &mut out)? {
        return Ok(out);
    }
    Ok(match ctx.json_stringify(v)? {
        Some(s) => s.to_string()?.into_bytes(),
        None => b"null".to_vec(),
    })
}

/// Append `v` as JSON to `out`. `Ok(false)`: not handled here (`out` is then
/// in an unspecified state); use `JSON.stringify`. A top-level `undefined`,
/// function or symbol is written as `null`.
pub(crate) fn encode<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    out: &mut Vec<u8>,
) -> rquickjs::Result<bool> {
    encode_val(ctx, &Val::lend(v), out)
}

/// [`encode`] of a [`Val`].
pub(crate) fn encode_val<'js>(
    ctx: &Ctx<'js>,
    v: &Val<'js>,
    out: &mut Vec<u8>,
) -> rquickjs::Result<bool> {
    let mut enc = Encoder {
        ctx,
        out,
        depth: 0,
        protos: PROTOS.with(|p| p.get()),
        clean: [None; 2],
        last_known: None,
        clean_shape: 0,
        path: Vec::new(),
    };
    Ok(match enc.value(v)? {
        Step::Written => true,
        Step::Skip => {
            enc.out.extend_from_slice(b"null");
            true
        }
        Step::Unsupported => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rquickjs::{Context, Runtime};

    /// `encode(v)`, or None when it hands the value to JSON.stringify.
    fn ours<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<String> {
        let mut out = Vec::new();
        let handled = encode(ctx, v, &mut out).expect("no exception");
        handled.then(move || String::from_utf8(out).expect("utf-8"))
    }

    fn with_ctx(f: impl FnOnce(&Ctx<'_>)) {
        let rt = Runtime::new().unwrap();
        let context = Context::full(&rt).unwrap();
        context.with(|ctx| {
            register_protos(&ctx).unwrap();
            f(&ctx)
        });
    }

    #[test]
    fn matches_json_stringify() {
        let cases = [
            "({message: 'Hello, World!'})",
            "({b: 1, a: [1, 2.5, -0, 1e21, 1.5e-7, 0.1 + 0.2, NaN, Infinity], c: null, d: true})",
            "({2: 'two', 1: 'one', z: 'zed', a: 'ay'})",
            "({u: undefined, f() {}, s: Symbol('x'), kept: 1})",
            "[undefined, function () {}, Symbol('y'), , 3]",
            "({nested: {deep: {er: [[], {}]}}, empty: {}, list: []})",
            "({text: 'quote \" backslash \\\\ nl \\n tab \\t ctl \\u0001 del \\u007f é 日本 😀 </script>'})",
            "(() => { class P { constructor() { this.x = 1; } get y() { return 2; } } return new P(); })()",
            "Object.create(null, {a: {value: 1, enumerable: true}, hidden: {value: 2}})",
            "({big: 2 ** 53 + 2, neg: -12345678901234567890, int: 2147483647, over: 2147483648})",
            "'top-level string'",
            "42",
            "null",
        ];
        with_ctx(|ctx| {
            for src in cases {
                assert_stringify(ctx, src);
            }
        });
    }

    /// `encode` of `src` writes what JSON.stringify does.
    fn assert_stringify(ctx: &Ctx<'_>, src: &str) {
        let v: Value = ctx.eval(src).unwrap();
        let expected = ctx
            .json_stringify(v.clone())
            .unwrap()
            .unwrap()
            .to_string()
            .unwrap();
        assert_eq!(ours(ctx, &v).as_deref(), Some(expected.as_str()), "{src}");
    }

    /// Objects whose shape was kept (the second encode of each key list)
    /// are written from the known members; they must still match
    /// JSON.stringify, and look-alikes with other flags must not match.
    #[test]
    fn kept_shapes_match_json_stringify() {
        let cases = [
            "({runtime: 'js', status: 'ok', uptime: 1.5})",
            "({a: 1, u: undefined, f() {}, z: [{a: 1, u: undefined, f() {}, z: 2}]})",
            "({a: 1, u: 2, f: 3, z: 4})",
            "Object.defineProperty({a: 1, u: 2, f: 3, z: 4}, 'u', {enumerable: false})",
            "Object.defineProperty({a: 1, u: 2, f: 3, z: 4}, 'f', {get() { return 'got'; }, enumerable: true})",
            "(() => { const o = {a: 1, u: 2, f: 3, z: 4}; delete o.u; return o; })()",
            "(() => { const o = {a: 1, u: 2, f: 3, z: 4}; o.extra = 5; return o; })()",
            "Object.freeze({a: 1, u: 2, f: 3, z: 4})",
            "({b: 'b', 0: 'zero'})",
            "(() => { const o = {b: 'b'}; o['0'] = 'zero'; return o; })()",
        ];
        with_ctx(|ctx| {
            crate::raw::layout::probe(ctx);
            crate::raw::shapes::init(ctx, &[]).unwrap();
            // Rows as db.query makes them: keys in column order.
            crate::raw::shapes::keep_names(ctx, ["b", "0"]);
            for _round in 0..2 {
                for src in cases {
                    assert_stringify(ctx, src);
                }
            }
        });
    }

    /// A getter inside a member replaces that member (its last other
    /// reference) and the next one while the member is being written: the
    /// member read from its slot must stay alive until it is written.
    #[test]
    fn a_member_replaced_while_it_is_written_stays_alive() {
        let src = "(() => { const o = {a: 1, u: 2, f: 3, z: 4}; \
            o.u = {get g() { o.u = null; o.f = 'x'.repeat(3); return {n: [1, 'two']}; }}; \
            return o; })()";
        with_ctx(|ctx| {
            crate::raw::layout::probe(ctx);
            crate::raw::shapes::init(ctx, &[]).unwrap();
            for round in 0..3 {
                let v: Value = ctx.eval(src).unwrap();
                let got = ours(ctx, &v);
                let want = r#"{"a":1,"u":{"g":{"n":[1,"two"]}},"f":"xxx","z":4}"#;
                assert_eq!(got.as_deref(), Some(want), "round {round}");
            }
        });
    }

    #[test]
    fn hands_over_what_it_does_not_handle() {
        let cases = [
            "({d: new Date(0)})",
            "({toJSON() { return 1; }})",
            "Object.defineProperty({a: 1}, 'toJSON', {value: () => 2})",
            "(() => { class T { toJSON() { return 'T'; } } return [new T()]; })()",
            "({m: new Map()})",
            "({b: new Boolean(false)})",
            "({p: new Proxy({}, {})})",
            "({lone: '\\ud800'})",
            "(() => { const o = {}; o.self = o; return o; })()",
            "({n: 10n})",
        ];
        with_ctx(|ctx| {
            for src in cases {
                let v: Value = ctx.eval(src).unwrap();
                assert_eq!(ours(ctx, &v), None, "{src}");
            }
        });
    }

    #[test]
    fn undefined_and_functions_at_the_top_are_null() {
        with_ctx(|ctx| {
            for src in ["undefined", "(function () {})"] {
                let v: Value = ctx.eval(src).unwrap();
                assert_eq!(ours(ctx, &v).as_deref(), Some("null"), "{src}");
            }
        });
    }

    #[test]
    fn a_to_json_on_the_standard_prototypes_is_honoured() {
        with_ctx(|ctx| {
            let v: Value = ctx
                .eval("Object.prototype.toJSON = () => 'patched'; ({a: 1})")
                .unwrap();
            assert_eq!(ours(ctx, &v), None);
            let v: Value = ctx
                .eval("delete Object.prototype.toJSON; Array.prototype.toJSON = () => 'x'; [1]")
                .unwrap();
            assert_eq!(ours(ctx, &v), None);
        });
    }
}
