//! `req`'s objects: `params`, `query` and `headers` as plain objects of
//! strings (a route's params with their shape kept, raw/shapes.rs), and
//! the fields the `req` getters define on it.
#![allow(unsafe_code)]

use rquickjs::{qjs, Ctx, Value};

use super::shapes::{keep, new_atom, Keepers};

/// A plain object with string `pairs` as properties (for `req.params`,
/// `req.query`, `req.headers`); `keep_shape` when the key list recurs
/// (a route's params) so its shape stays cached.
pub(crate) fn object_from_pairs<'js, K: AsRef<str>, V: AsRef<str>>(
    ctx: &Ctx<'js>,
    pairs: &[(K, V)],
    keep_shape: bool,
) -> rquickjs::Result<Value<'js>> {
    let raw = ctx.as_raw().as_ptr();
    let atoms = match keep_shape {
        true => param_atoms(ctx, pairs),
        false => pairs
            .iter()
            .map(|(k, _)| new_atom(raw, k.as_ref()))
            .collect(),
    };
    // SAFETY: a new object we own (wrapped in a Value at once), and new
    // strings whose references JS_DefinePropertyValue takes over.
    let obj = unsafe { Value::from_raw(ctx.clone(), qjs::JS_NewObject(raw)) };
    let mut failed = obj.is_exception();
    for ((_, v), &atom) in pairs.iter().zip(&atoms) {
        let v = v.as_ref();
        if !failed {
            // SAFETY: a new string whose reference JS_DefinePropertyValue
            // takes over (an exception value needs no freeing), defined on
            // our live object with an atom we hold.
            unsafe {
                let s = qjs::JS_NewStringLen(raw, v.as_ptr().cast(), v.len() as _);
                failed = qjs::JS_DefinePropertyValue(
                    raw,
                    obj.as_raw(),
                    atom,
                    s,
                    qjs::JS_PROP_C_W_E as i32,
                ) < 0;
            }
        }
        // SAFETY: releases the reference new_atom took.
        unsafe { qjs::JS_FreeAtom(raw, atom) };
    }
    if failed {
        return Err(rquickjs::Error::Exception);
    }
    Ok(obj)
}

/// Param name lists remembered at most.
const MAX_PARAM_LISTS: usize = 64;

/// Atoms for the names of `pairs` (the caller owns a reference to each),
/// their shapes kept: from the list of param names seen before when the
/// names are there, else made, kept and remembered.
fn param_atoms<K: AsRef<str>, V>(ctx: &Ctx<'_>, pairs: &[(K, V)]) -> Vec<qjs::JSAtom> {
    let raw = ctx.as_raw().as_ptr();
    let keepers = ctx.userdata::<Keepers>();
    let mut lists = keepers
        .as_ref()
        .and_then(|k| k.params.try_borrow_mut().ok());
    let same = |names: &[Box<str>]| {
        names.len() == pairs.len()
            && names
                .iter()
                .zip(pairs)
                .all(|(n, (k, _))| **n == *k.as_ref())
    };
    if let Some((_, atoms)) = lists.as_ref().and_then(|l| l.iter().find(|(n, _)| same(n))) {
        // SAFETY: the caller's references to atoms the list holds.
        return atoms
            .iter()
            .map(|&a| unsafe { qjs::JS_DupAtom(raw, a) })
            .collect();
    }
    let atoms: Vec<qjs::JSAtom> = pairs
        .iter()
        .map(|(k, _)| new_atom(raw, k.as_ref()))
        .collect();
    keep(ctx, &atoms);
    if let Some(lists) = lists.as_mut().filter(|l| l.len() < MAX_PARAM_LISTS) {
        let names = pairs.iter().map(|(k, _)| k.as_ref().into()).collect();
        // SAFETY: the list's own reference to each atom.
        let held = atoms
            .iter()
            .map(|&a| unsafe { qjs::JS_DupAtom(raw, a) })
            .collect();
        lists.push((names, held));
    }
    atoms
}

/// Make `value` the own, writable, enumerable property number `field` (of
/// the names given to `shapes::init`) of `obj`.
pub(crate) fn define_field(
    ctx: &Ctx<'_>,
    obj: &Value<'_>,
    field: usize,
    value: &Value<'_>,
) -> rquickjs::Result<()> {
    let Some(atom) = ctx
        .userdata::<Keepers>()
        .and_then(|k| k.fields.get(field).copied())
    else {
        return Ok(());
    };
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: defines a property on a live object; the dup'd value
    // reference is taken over by QuickJS.
    let rc = unsafe {
        qjs::JS_DefinePropertyValue(
            raw,
            obj.as_raw(),
            atom,
            qjs::JS_DupValue(raw, value.as_raw()),
            qjs::JS_PROP_C_W_E as i32,
        )
    };
    if rc < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}
