//! One read of a Lua value on the stack for every reader in this crate: the
//! JSON encoder (json.rs), `db` parameters, `res:*` arguments, a
//! middleware's result and the capability converter (caps.rs), through
//! [`super::Stack::view`], and the template host (template.rs), through
//! [`of_type`] with the type it read when it pushed the slot. [`view`] gives the
//! type and, for a scalar, the value, read in place: no conversion
//! (`lua_tolstring` only on strings, so a number is never turned into one),
//! no allocation.
#![allow(unsafe_code)]

use std::ffi::c_int;

use mlua::ffi;

/// A Lua value as Cove's readers see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum View<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A string's bytes, alive while the value stays where it was read.
    Str(&'a [u8]),
    Table,
    Function,
    Thread,
    /// Full or light userdata.
    Userdata,
}

impl View<'_> {
    /// Its type, as messages name it.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            View::Nil => "nil",
            View::Bool(_) => "boolean",
            View::Int(_) | View::Float(_) => "number",
            View::Str(_) => "string",
            View::Table => "table",
            View::Function => "function",
            View::Thread => "coroutine",
            View::Userdata => "userdata",
        }
    }
}

/// The value at `idx`.
///
/// # Safety
/// `idx` is a valid (or the "none") index of `state`; the bytes of a
/// [`View::Str`] are used only while the value stays at `idx`.
#[inline(always)]
pub(super) unsafe fn view<'a>(state: *mut ffi::lua_State, idx: c_int) -> View<'a> {
    of_type(state, idx, ffi::lua_type(state, idx))
}

/// The value at `idx`, whose type `ty` the caller has read already (from
/// `lua_type`, `lua_rawgeti`, `lua_next`…).
///
/// # Safety
/// As [`view`], and `ty` is the type of the value at `idx`.
#[inline(always)]
pub(super) unsafe fn of_type<'a>(state: *mut ffi::lua_State, idx: c_int, ty: c_int) -> View<'a> {
    match ty {
        ffi::LUA_TNIL | ffi::LUA_TNONE => View::Nil,
        ffi::LUA_TBOOLEAN => View::Bool(ffi::lua_toboolean(state, idx) != 0),
        ffi::LUA_TNUMBER if ffi::lua_isinteger(state, idx) != 0 => {
            View::Int(ffi::lua_tointegerx(state, idx, std::ptr::null_mut()))
        }
        ffi::LUA_TNUMBER => View::Float(ffi::lua_tonumberx(state, idx, std::ptr::null_mut())),
        ffi::LUA_TSTRING => View::Str(stack_bytes(state, idx)),
        ffi::LUA_TTABLE => View::Table,
        ffi::LUA_TFUNCTION => View::Function,
        ffi::LUA_TTHREAD => View::Thread,
        _ => View::Userdata,
    }
}

/// The bytes of the string at `idx`; callers check the type first (on a
/// number `lua_tolstring` would convert in place, which allocates).
///
/// # Safety
/// As [`view`], and the value at `idx` is a string.
#[inline(always)]
pub(super) unsafe fn stack_bytes<'a>(state: *mut ffi::lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    let ptr = ffi::lua_tolstring(state, idx, &mut len);
    if ptr.is_null() {
        return &[];
    }
    std::slice::from_raw_parts(ptr as *const u8, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::Lua;

    #[test]
    fn every_type_reads_back_without_converting() {
        let lua = Lua::new();
        let values: mlua::MultiValue = lua
            .load("return nil, true, 7, 2.5, 'a\\0b', {}, print, coroutine.create(print), 12")
            .eval()
            .unwrap();
        let mut names = Vec::new();
        let mut still_a_number = false;
        crate::raw::exec::<()>(&lua, values, |s| {
            let n = s.top();
            for i in 1..=n {
                names.push(match s.view(i) {
                    View::Int(n) => format!("int {n}"),
                    View::Float(f) => format!("float {f}"),
                    View::Str(b) => format!("str {b:?}"),
                    View::Bool(b) => format!("bool {b}"),
                    other => other.type_name().to_string(),
                });
            }
            still_a_number = s.ty(n) == ffi::LUA_TNUMBER;
        })
        .unwrap();
        assert_eq!(
            names,
            [
                "nil",
                "bool true",
                "int 7",
                "float 2.5",
                "str [97, 0, 98]",
                "table",
                "function",
                "coroutine",
                "int 12",
            ]
        );
        assert!(still_a_number, "nothing was converted");
    }
}
