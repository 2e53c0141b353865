//! Objects as the value view reads them ([`Obj`]): class, identity,
//! shape, properties by name or index, own keys ([`Keys`]), and the
//! property slots of an object of a kept shape ([`Obj::slot`]).
#![allow(unsafe_code)]

use std::marker::PhantomData;

use rquickjs::{qjs, Ctx};

use super::layout;
use super::shapes::Known;
use super::value::{Thrown, Val};

/// An object value (any class: plain, array, function, …).
#[derive(Clone, Copy)]
pub(crate) struct Obj<'a, 'js>(pub(super) &'a Val<'js>);

/// An object's class, as the readers tell them apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Class {
    /// `JS_CLASS_OBJECT`: `{}`, `Object.create(…)`, class instances.
    Plain,
    Array,
    Other,
}

const CLASS_OBJECT: u32 = 1;
const CLASS_ARRAY: u32 = 2;

/// A property name. Atoms Cove makes are held until the runtime is
/// freed (`'static`: valid in the runtime that made them); those of a
/// property list are lent while the list is borrowed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(transparent)]
pub(crate) struct Atom<'a>(qjs::JSAtom, PhantomData<&'a ()>);

impl Atom<'static> {
    /// `toJSON`, built in.
    pub(crate) const TO_JSON: Atom<'static> = Atom(qjs::JS_ATOM_toJSON as qjs::JSAtom, PhantomData);

    /// The atom of `name`, never freed (the runtime frees its atoms); if
    /// QuickJS could not make it, the null atom, which names no property
    /// (a read of it finds nothing).
    pub(crate) fn interned(ctx: &Ctx<'_>, name: &str) -> Atom<'static> {
        let raw = ctx.as_raw().as_ptr();
        // SAFETY: making an atom from a string; its reference is never freed.
        let atom = unsafe { qjs::JS_NewAtomLen(raw, name.as_ptr().cast(), name.len() as _) };
        Atom(atom, PhantomData)
    }
}

impl Atom<'_> {
    /// For raw/: an atom held at least as long as the result is used.
    #[inline(always)]
    pub(super) fn held(atom: qjs::JSAtom) -> Self {
        Atom(atom, PhantomData)
    }

    #[inline(always)]
    pub(super) fn raw(self) -> qjs::JSAtom {
        self.0
    }
}

impl<'a, 'js> Obj<'a, 'js> {
    #[inline(always)]
    pub(crate) fn class(self) -> Class {
        // SAFETY: the class id of a live object.
        match unsafe { qjs::JS_GetClassID(self.0.v) } {
            CLASS_OBJECT => Class::Plain,
            CLASS_ARRAY => Class::Array,
            _ => Class::Other,
        }
    }

    #[inline]
    pub(crate) fn is_array(self) -> bool {
        self.class() == Class::Array
    }

    pub(crate) fn is_function(self) -> bool {
        // SAFETY: a class check on a live value.
        unsafe { qjs::JS_IsFunction(self.0.raw, self.0.v) }
    }

    /// The object's identity (its address, compared, never dereferenced).
    #[inline]
    pub(crate) fn id(self) -> usize {
        // SAFETY: the payload of a live object.
        unsafe { qjs::JS_VALUE_GET_PTR(self.0.v) as usize }
    }

    /// Its shape's address (compared, never dereferenced); `None` if the
    /// layout is unknown.
    #[inline(always)]
    pub(crate) fn shape(self) -> Option<usize> {
        // SAFETY: `self` is a live object.
        unsafe { layout::shape_of(self.0.v) }
    }

    /// Property `atom` (may run a getter).
    #[inline]
    pub(crate) fn get(self, atom: Atom<'_>) -> Result<Val<'js>, Thrown> {
        // SAFETY: a property read on a live object with a held atom.
        Val::own(self.0.raw, unsafe {
            qjs::JS_GetProperty(self.0.raw, self.0.v, atom.0)
        })
    }

    /// Property `name`, through a temporary atom.
    pub(crate) fn get_named(self, name: &str) -> Result<Val<'js>, Thrown> {
        let raw = self.0.raw;
        // SAFETY: an atom made, used and freed here.
        unsafe {
            let atom = qjs::JS_NewAtomLen(raw, name.as_ptr().cast(), name.len() as _);
            if atom == qjs::JS_ATOM_NULL {
                return Err(Thrown);
            }
            let v = qjs::JS_GetProperty(raw, self.0.v, atom);
            qjs::JS_FreeAtom(raw, atom);
            Val::own(raw, v)
        }
    }

    /// Element `i` (arrays take QuickJS's fast path).
    #[inline]
    pub(crate) fn index(self, i: u32) -> Result<Val<'js>, Thrown> {
        // SAFETY: an indexed read on a live object.
        Val::own(self.0.raw, unsafe {
            qjs::JS_GetPropertyUint32(self.0.raw, self.0.v, i)
        })
    }

    /// `length`, as an integer (may run a getter).
    pub(crate) fn len(self) -> Result<u64, Thrown> {
        let mut n: i64 = 0;
        // SAFETY: reading `length` of a live object.
        if unsafe { qjs::JS_GetLength(self.0.raw, self.0.v, &mut n) } < 0 {
            return Err(Thrown);
        }
        Ok(n.max(0) as u64)
    }

    /// Its prototype (`null` if none).
    pub(crate) fn proto(self) -> Result<Val<'js>, Thrown> {
        // SAFETY: the prototype of a live object, owned.
        Val::own(self.0.raw, unsafe {
            qjs::JS_GetPrototype(self.0.raw, self.0.v)
        })
    }

    /// Its own string-keyed properties, in `Object.keys` order:
    /// enumerable ones only, or all with their enumerable flag.
    pub(crate) fn own_keys(self, enumerable_only: bool) -> Result<Keys<'js>, Thrown> {
        let raw = self.0.raw;
        let mut tab = std::ptr::null_mut();
        let mut len = 0;
        let flags = if enumerable_only {
            qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY
        } else {
            qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_SET_ENUM
        };
        // SAFETY: own string keys of a live object; the list is freed by Keys.
        if unsafe { qjs::JS_GetOwnPropertyNames(raw, &mut tab, &mut len, self.0.v, flags as i32) }
            < 0
        {
            return Err(Thrown);
        }
        Ok(Keys {
            raw,
            tab,
            len,
            _js: PhantomData,
        })
    }

    /// Member `i` of an object of a kept shape (`known`): a primitive
    /// (number, boolean, null or ASCII string) is handed to `write` as
    /// read in place, with `out` and `prefix`, the rest dup'd;
    /// [`Slot::ByName`] if the object no longer has that shape or the
    /// layout is unknown. `write` is a plain function of a byte buffer: it
    /// reaches no context, so no JS runs while the slot is lent to it.
    #[inline(always)]
    pub(crate) fn slot(
        self,
        known: &Known,
        i: usize,
        out: &mut Vec<u8>,
        prefix: &[u8],
        write: fn(&mut Vec<u8>, &[u8], Prim<'_>),
    ) -> Slot<'js> {
        if i >= known.members().len() {
            return Slot::ByName;
        }
        // SAFETY: `self` is a live object; objects of a kept shape have a
        // plain data property at each of its members' entries (shapes.rs).
        let Some(v) = (unsafe { layout::slot_of_shape(self.0.v, known.shape(), i) }) else {
            return Slot::ByName;
        };
        // SAFETY: the slot's value is live while `self` keeps it, and no
        // JS runs before `write` returns. One dispatch on the tag, `write`
        // inlined in each arm.
        unsafe {
            match qjs::JS_VALUE_GET_TAG(v) {
                qjs::JS_TAG_INT => write(out, prefix, Prim::Int(qjs::JS_VALUE_GET_INT(v))),
                qjs::JS_TAG_FLOAT64 => {
                    write(out, prefix, Prim::Float(qjs::JS_VALUE_GET_FLOAT64(v)))
                }
                qjs::JS_TAG_BOOL => write(out, prefix, Prim::Bool(qjs::JS_VALUE_GET_BOOL(v))),
                qjs::JS_TAG_NULL => write(out, prefix, Prim::Null),
                qjs::JS_TAG_STRING => match layout::ascii_bytes(v) {
                    Some(bytes) => write(out, prefix, Prim::Ascii(bytes)),
                    None => return self.slot_value(v),
                },
                _ => return self.slot_value(v),
            }
        }
        Slot::Written
    }

    /// A slot's value that is not written in place, with a reference of its own.
    #[inline(always)]
    fn slot_value(self, v: qjs::JSValue) -> Slot<'js> {
        Slot::Value(Val {
            raw: self.0.raw,
            // SAFETY: a live value (read from `self` just now); the new
            // reference is the Val's.
            v: unsafe { layout::dup(self.0.raw, v) },
            _js: PhantomData,
        })
    }
}

/// A primitive read from an object's slot, see [`Obj::slot`].
#[derive(Clone, Copy)]
pub(crate) enum Prim<'a> {
    Null,
    Bool(bool),
    Int(i32),
    Float(f64),
    Ascii(&'a [u8]),
}

/// What [`Obj::slot`] did.
pub(crate) enum Slot<'js> {
    Written,
    Value(Val<'js>),
    ByName,
}

/// Own property names from `JS_GetOwnPropertyNames`, freed on drop.
pub(crate) struct Keys<'js> {
    raw: *mut qjs::JSContext,
    tab: *mut qjs::JSPropertyEnum,
    len: u32,
    _js: PhantomData<Ctx<'js>>,
}

impl Keys<'_> {
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    fn entries(&self) -> &[qjs::JSPropertyEnum] {
        if self.tab.is_null() {
            return &[];
        }
        // SAFETY: `tab` holds `len` entries until drop.
        unsafe { std::slice::from_raw_parts(self.tab, self.len as usize) }
    }

    /// Each name and whether it is enumerable.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Atom<'_>, bool)> + '_ {
        self.entries()
            .iter()
            .map(|e| (Atom(e.atom, PhantomData), e.is_enumerable))
    }

    /// Name `atom` as text (invalid UTF-8 replaced).
    pub(crate) fn name(&self, atom: Atom<'_>) -> Option<String> {
        let mut len = 0;
        // SAFETY: a held atom's name as a C string, freed after the copy.
        unsafe {
            let p = qjs::JS_AtomToCStringLen(self.raw, &mut len, atom.0);
            if p.is_null() {
                return None;
            }
            let bytes = std::slice::from_raw_parts(p.cast::<u8>(), len as usize);
            let s = String::from_utf8_lossy(bytes).into_owned();
            qjs::JS_FreeCString(self.raw, p);
            Some(s)
        }
    }
}

impl Drop for Keys<'_> {
    fn drop(&mut self) {
        // SAFETY: `tab`/`len` came from a successful
        // JS_GetOwnPropertyNames on this context, freed once.
        unsafe { qjs::JS_FreePropertyEnum(self.raw, self.tab, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use rquickjs::Value;

    use crate::raw::value::{Val, View};

    #[test]
    fn own_keys_list_names_in_order() {
        let rt = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&rt).unwrap();
        context.with(|ctx| {
            let v: Value = ctx
                .eval("Object.defineProperty({b: 1, 2: 'x', a: 2}, 'h', {value: 3})")
                .unwrap();
            let v = Val::lend(&v);
            let View::Object(o) = v.view() else { panic!() };
            let all = o.own_keys(false).unwrap();
            let names: Vec<_> = all.iter().map(|(a, e)| (all.name(a).unwrap(), e)).collect();
            assert_eq!(
                names,
                [
                    ("2".to_string(), true),
                    ("b".into(), true),
                    ("a".into(), true),
                    ("h".into(), false)
                ]
            );
            assert_eq!(o.own_keys(true).unwrap().len(), 3);
            let a = o.get_named("a").unwrap();
            assert!(matches!(a.view(), View::Int(2)));
        });
    }
}
