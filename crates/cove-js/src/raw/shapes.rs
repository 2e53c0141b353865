//! Keeping QuickJS object shapes alive between requests.
//!
//! QuickJS gives every object a shape (its prototype and property list) and
//! finds existing shapes in a cache when a property is added, but frees a
//! shape as soon as no object uses it, and an object grows its shape one
//! property at a time. So the `{id, path, ts}` rows of every query, the
//! `params` of every request and the object literal every handler passes to
//! `res.json` rebuilt their shapes from scratch on every request (a new
//! shape and a reallocation per property). For key lists seen there, this
//! module keeps one object per prefix of the list alive (`{}`, `{id}`,
//! `{id, path}`, …), so later objects find every step cached.
//!
//! The kept objects live in the runtime's userdata, released (through the
//! runtime) when it is freed.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use rquickjs::{qjs, Ctx, JsLifetime};

use cove_caps::json::write_utf8;

use super::value::{Atom, Keys};

/// Distinct key lists kept at most (each costs one object per key).
const MAX_LISTS: usize = 256;
/// Longer key lists are not kept.
const MAX_KEYS: usize = 16;

/// Atoms are small integers: hash them as they are.
#[derive(Default)]
pub(crate) struct AtomHasher(u64);

impl Hasher for AtomHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u32(n as u32);
    }
}

type AtomMap<V> = HashMap<Vec<qjs::JSAtom>, V, BuildHasherDefault<AtomHasher>>;

pub(crate) struct Keepers {
    rt: *mut qjs::JSRuntime,
    /// Empty objects: a plain `{}`, and an empty `req` (see
    /// [`keep_empty`]). While one lives, every new object of its prototype
    /// finds its empty shape cached instead of making one and freeing it
    /// again at its first property (~250 instructions per object).
    empty: RefCell<Vec<qjs::JSValue>>,
    /// Key list (atoms, each held by us) → the objects for its prefixes.
    lists: RefCell<AtomMap<Vec<qjs::JSValue>>>,
    /// The atoms of `req`'s field names (req.rs `FIELDS` order).
    pub(super) fields: Vec<qjs::JSAtom>,
    /// Property name atom (held by us) → the name as a JSON string.
    keys: RefCell<HashMap<qjs::JSAtom, Box<[u8]>, BuildHasherDefault<AtomHasher>>>,
    /// Shape address of a kept full key list's object → its members.
    known: RefCell<HashMap<usize, Rc<[Member]>, BuildHasherDefault<AtomHasher>>>,
    /// Param name lists seen (a route's, e.g. `["id"]`) → their atoms, held
    /// by us and kept (`lists`): a route's `params` then need no atom
    /// lookup and no `keep` per request.
    pub(super) params: RefCell<Vec<ParamList>>,
}

/// A list of param names and their atoms.
pub(super) type ParamList = (Box<[Box<str>]>, Box<[qjs::JSAtom]>);

/// A property of a known shape: its atom (held by `Keepers::lists`) and
/// its name as a JSON string, written as `,"name":` (the comma left off
/// for the first member written).
pub(crate) struct Member {
    atom: qjs::JSAtom,
    prefix: Box<[u8]>,
}

/// A kept key list's shape (its address, compared, never dereferenced)
/// and its members, in slot order.
#[derive(Clone)]
pub(crate) struct Known {
    shape: usize,
    members: Rc<[Member]>,
}

impl Known {
    #[inline(always)]
    pub(crate) fn shape(&self) -> usize {
        self.shape
    }

    #[inline(always)]
    pub(crate) fn members(&self) -> &[Member] {
        &self.members
    }
}

impl Member {
    /// Its name (held by the keepers until the runtime is freed).
    #[inline(always)]
    pub(crate) fn atom(&self) -> Atom<'static> {
        Atom::held(self.atom)
    }

    /// The name as a JSON string.
    pub(crate) fn json(&self) -> &[u8] {
        &self.prefix[1..self.prefix.len() - 1]
    }

    /// The name as written before its value: `,"name":`, or without the
    /// comma when `first`.
    #[inline]
    pub(crate) fn prefix(&self, first: bool) -> &[u8] {
        &self.prefix[usize::from(first)..]
    }
}

// SAFETY: Keepers holds no `'js` values, only raw references it frees itself.
unsafe impl<'js> JsLifetime<'js> for Keepers {
    type Changed<'to> = Keepers;
}

impl Drop for Keepers {
    fn drop(&mut self) {
        // Runs when rquickjs clears the runtime's userdata, before
        // JS_FreeRuntime: the runtime is still valid.
        for obj in self.empty.get_mut().drain(..) {
            // SAFETY: we own one reference to each empty object.
            unsafe { qjs::JS_FreeValueRT(self.rt, obj) };
        }
        for (atoms, objects) in self.lists.get_mut().drain() {
            // SAFETY: we own one reference to each object and atom.
            unsafe {
                for obj in objects {
                    qjs::JS_FreeValueRT(self.rt, obj);
                }
                for atom in atoms {
                    qjs::JS_FreeAtomRT(self.rt, atom);
                }
            }
        }
        let params = self.params.get_mut().drain(..).flat_map(|(_, a)| a);
        for atom in self
            .fields
            .drain(..)
            .chain(self.keys.get_mut().drain().map(|(a, _)| a))
            .chain(params)
        {
            // SAFETY: we own one reference to each cached key atom.
            unsafe { qjs::JS_FreeAtomRT(self.rt, atom) };
        }
    }
}

pub(super) fn new_atom(raw: *mut qjs::JSContext, name: &str) -> qjs::JSAtom {
    // SAFETY: creates (or finds) an atom; the caller owns the reference.
    unsafe { qjs::JS_NewAtomLen(raw, name.as_ptr().cast(), name.len() as _) }
}

/// Keep an empty object of prototype `proto` for the life of the runtime
/// (the engine does for `Req.prototype`: a `req` that gains `params` or
/// `body` would otherwise leave no empty one behind).
pub(crate) fn keep_empty(ctx: &Ctx<'_>, proto: &rquickjs::Object<'_>) {
    let Some(keepers) = ctx.userdata::<Keepers>() else {
        return;
    };
    // SAFETY: a new object; the keepers own the reference.
    let obj = unsafe { qjs::JS_NewObjectProto(ctx.as_raw().as_ptr(), proto.as_raw()) };
    // SAFETY: reading the tag of a value just returned.
    if unsafe { qjs::JS_VALUE_GET_TAG(obj) } == qjs::JS_TAG_OBJECT {
        if let Ok(mut empty) = keepers.empty.try_borrow_mut() {
            empty.push(obj);
            return;
        }
    }
    // SAFETY: our reference to an object we could not keep.
    unsafe { qjs::JS_FreeValue(ctx.as_raw().as_ptr(), obj) };
}

/// Start keeping shapes in `ctx`'s runtime; `fields` are the names of the
/// fields `fields::define_field` defines.
pub(crate) fn init(ctx: &Ctx<'_>, fields: &[&str]) -> rquickjs::Result<()> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: the runtime of a live context.
    let rt = unsafe { qjs::JS_GetRuntime(raw) };
    // SAFETY: a new object; the keepers own the reference (an exception
    // value, if creation failed, needs no freeing).
    let empty = unsafe { qjs::JS_NewObject(raw) };
    ctx.store_userdata(Keepers {
        rt,
        empty: RefCell::new(vec![empty]),
        fields: fields.iter().map(|f| new_atom(raw, f)).collect(),
        lists: RefCell::new(AtomMap::default()),
        keys: RefCell::new(HashMap::default()),
        known: RefCell::new(HashMap::default()),
        params: RefCell::new(Vec::new()),
    })
    .map_err(|_| rquickjs::Error::new_from_js("userdata", "shape keepers"))?;
    Ok(())
}

/// Make sure the shapes of objects with these keys, in this order, stay
/// cached. Cheap when already kept (one hash lookup).
pub(super) fn keep(ctx: &Ctx<'_>, atoms: &[qjs::JSAtom]) {
    let raw = ctx.as_raw().as_ptr();
    if atoms.is_empty() || atoms.len() > MAX_KEYS {
        return;
    }
    let Some(keepers) = ctx.userdata::<Keepers>() else {
        return;
    };
    let Ok(mut lists) = keepers.lists.try_borrow_mut() else {
        return;
    };
    if lists.len() >= MAX_LISTS || lists.contains_key(atoms) {
        return;
    }
    // An object has a key once, where it was first set: a list naming one
    // twice (the columns of `SELECT a.id, b.id`) is kept as its distinct
    // keys. Kept whole, its shape (that of the distinct keys) was known
    // with a member per name, and objects of it were read past their
    // property slots (issue 38).
    if atoms
        .iter()
        .enumerate()
        .any(|(i, a)| atoms[..i].contains(a))
    {
        drop(lists);
        let mut distinct = Vec::with_capacity(atoms.len());
        for &a in atoms {
            if !distinct.contains(&a) {
                distinct.push(a);
            }
        }
        return keep(ctx, &distinct);
    }
    let mut objects = Vec::with_capacity(atoms.len());
    for n in 1..=atoms.len() {
        // SAFETY: plain object creation and property definition on a
        // live context; we own the returned object reference.
        unsafe {
            let obj = qjs::JS_NewObject(raw);
            if qjs::JS_VALUE_GET_TAG(obj) == qjs::JS_TAG_EXCEPTION {
                break;
            }
            for &atom in &atoms[..n] {
                qjs::JS_DefinePropertyValue(
                    raw,
                    obj,
                    atom,
                    qjs::JS_NULL,
                    qjs::JS_PROP_C_W_E as i32,
                );
            }
            objects.push(obj);
        }
    }
    if let (true, Some(&full)) = (objects.len() == atoms.len(), objects.last()) {
        // SAFETY: `full` is a live object, kept until the runtime goes, so
        // its shape's address is not reused for another shape meanwhile.
        if let Some(shape) = unsafe { super::layout::shape_of(full) } {
            know(raw, &keepers, shape, atoms);
        }
    }
    // SAFETY: the key list holds its own reference to each atom.
    let held = atoms
        .iter()
        .map(|&a| unsafe { qjs::JS_DupAtom(raw, a) })
        .collect();
    lists.insert(held, objects);
}

/// Remember the members of `shape`, unless a name is `toJSON`, is not
/// valid UTF-8, or is an array index (listed before the other keys,
/// whatever the insertion order): such objects take the general path.
fn know(raw: *mut qjs::JSContext, keepers: &Keepers, shape: usize, atoms: &[qjs::JSAtom]) {
    let members: Option<Vec<Member>> = atoms
        .iter()
        .map(|&atom| {
            let to_json = atom == qjs::JS_ATOM_toJSON as qjs::JSAtom;
            let json = (!to_json).then(|| atom_json(raw, atom)).flatten()?;
            let digits = &json[1..json.len() - 1];
            let index = !digits.is_empty() && digits.iter().all(u8::is_ascii_digit);
            (!index).then(|| {
                let mut prefix = Vec::with_capacity(json.len() + 2);
                prefix.push(b',');
                prefix.extend_from_slice(&json);
                prefix.push(b':');
                Member {
                    atom,
                    prefix: prefix.into(),
                }
            })
        })
        .collect();
    if let (Some(members), Ok(mut known)) = (members, keepers.known.try_borrow_mut()) {
        known.insert(shape, members.into());
    }
}

/// The members of objects with this shape, if it is a kept key list's.
pub(crate) fn known_members(ctx: &Ctx<'_>, shape: usize) -> Option<Known> {
    let keepers = ctx.userdata::<Keepers>()?;
    let known = keepers.known.try_borrow().ok()?;
    let members = known.get(&shape)?.clone();
    Some(Known { shape, members })
}

/// `keep` the enumerable names of `keys`, in their order.
pub(crate) fn keep_keys(ctx: &Ctx<'_>, keys: &Keys<'_>) {
    let atoms: Vec<qjs::JSAtom> = keys
        .iter()
        .filter(|(_, e)| *e)
        .map(|(a, _)| a.raw())
        .collect();
    keep(ctx, &atoms);
}

/// Property name `atom` as a JSON string; `None` if it is not valid UTF-8.
pub(super) fn atom_json(raw: *mut qjs::JSContext, atom: qjs::JSAtom) -> Option<Vec<u8>> {
    let mut len = 0;
    // SAFETY: the caller holds the atom; the C string is freed below.
    let ptr = unsafe { qjs::JS_AtomToCStringLen(raw, &mut len, atom) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `len` bytes at `ptr`, alive until freed below.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize) };
    let mut out = Vec::with_capacity(bytes.len() + 2);
    let ok = write_utf8(&mut out, bytes);
    // SAFETY: the C string from JS_AtomToCStringLen, freed once.
    unsafe { qjs::JS_FreeCString(raw, ptr) };
    ok.then_some(out)
}

/// `keep` for keys given as strings.
pub(crate) fn keep_names<S: AsRef<str>>(ctx: &Ctx<'_>, names: impl IntoIterator<Item = S>) {
    let raw = ctx.as_raw().as_ptr();
    let atoms: Vec<qjs::JSAtom> = names
        .into_iter()
        .map(|n| new_atom(raw, n.as_ref()))
        .collect();
    keep(ctx, &atoms);
    for atom in atoms {
        // SAFETY: releases the reference new_atom took.
        unsafe { qjs::JS_FreeAtom(raw, atom) };
    }
}

/// Keys cached at most by [`write_key`].
const MAX_KEYS_CACHED: usize = 4096;

/// Append property name `atom` as a JSON string, from a per-runtime cache
/// (converting an atom to UTF-8 and escaping it cost ~300 instructions per
/// key per response); false, with nothing written, if the name is not
/// valid UTF-8.
pub(crate) fn write_key(ctx: &Ctx<'_>, atom: Atom<'_>, out: &mut Vec<u8>) -> bool {
    let atom = atom.raw();
    let keepers = ctx.userdata::<Keepers>();
    let mut keys = keepers.as_ref().and_then(|k| k.keys.try_borrow_mut().ok());
    if let Some(bytes) = keys.as_ref().and_then(|k| k.get(&atom)) {
        out.extend_from_slice(bytes);
        return true;
    }
    let raw = ctx.as_raw().as_ptr();
    let Some(json) = atom_json(raw, atom) else {
        return false;
    };
    out.extend_from_slice(&json);
    if let Some(keys) = keys.as_mut().filter(|k| k.len() < MAX_KEYS_CACHED) {
        // SAFETY: the cache holds its own reference to the atom, so its
        // number is not reused for another name while cached.
        let held = unsafe { qjs::JS_DupAtom(raw, atom) };
        keys.insert(held, json.into());
    }
    true
}
