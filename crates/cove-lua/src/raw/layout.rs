//! Reading a plain table's string-keyed scalar entries straight from its
//! hash part, for the JSON encoder (json.rs).
//!
//! Through the C API, `lua_next` finds each key's slot again by hashing it
//! (~135 instructions an entry) and every key and value read is one more
//! call through the stack: a 3-member object cost ~2.2k instructions. Lua's
//! structs are private, so their layout (lobject.h of the Lua 5.4 that mlua
//! vendors) is written out here and checked once per process on tables of
//! known contents (see [`probe`]). When it does not match, the encoder
//! keeps to `lua_next`.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::OnceLock;

use mlua::Lua;

/// `Table` (lobject.h).
#[repr(C)]
struct Table {
    next: *mut c_void,
    tt: u8,
    marked: u8,
    flags: u8,
    lsizenode: u8,
    alimit: u32,
    array: *mut c_void,
    node: *const Node,
    lastfree: *mut c_void,
    metatable: *mut c_void,
    gclist: *mut c_void,
}

/// `Node` (lobject.h): the value's fields, then the key's.
#[repr(C)]
struct Node {
    value: u64,
    value_tt: u8,
    key_tt: u8,
    next: i32,
    key: *const TString,
}

/// `TString` (lobject.h); the bytes follow the header.
#[repr(C)]
struct TString {
    next: *mut c_void,
    tt: u8,
    marked: u8,
    extra: u8,
    /// The length of a short string.
    shrlen: u8,
    hash: u32,
    /// `lnglen` for a long string.
    len: usize,
}

// Type tags with their variant bits (lobject.h's `makevariant` and
// `BIT_ISCOLLECTABLE`).
const FALSE: u8 = 0x01;
const TRUE: u8 = 0x11;
const INT: u8 = 0x03;
const FLOAT: u8 = 0x13;
const SHORT_STR: u8 = 0x44;
const LONG_STR: u8 = 0x54;
/// In an object's own header the tag has no collectable bit.
const TABLE: u8 = 0x05;

/// A value the encoder writes without looking further.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A string's bytes, anchored by the table while it is read.
    Str(*const u8, usize),
}

/// One entry of an object: the key's bytes and the value.
#[derive(Clone, Copy)]
pub(super) struct Member {
    pub(super) key: *const u8,
    pub(super) len: usize,
    pub(super) value: Scalar,
}

impl Member {
    /// # Safety
    /// The table the member was read from is alive and unchanged.
    pub(super) unsafe fn key<'a>(&self) -> &'a [u8] {
        std::slice::from_raw_parts(self.key, self.len)
    }
}

/// Whether the layout above is the VM's: set by [`probe`].
static CHECKED: OnceLock<bool> = OnceLock::new();

/// The entries of the table at `t` (`lua_topointer` of a table), when they
/// all have string keys and scalar values and there is no array part, into
/// `out`; `false` (with `out` in any state) when the table needs the
/// general walk, or the layout did not pass its check.
///
/// # Safety
/// `t` points to a live table that stays unchanged (and reachable) while
/// `out`'s members are used: nothing may run Lua code or the collector.
pub(super) unsafe fn scalar_members(t: *const c_void, out: &mut Vec<Member>) -> bool {
    CHECKED.get() == Some(&true) && read(t, out)
}

/// [`scalar_members`] of a table without a metatable: the encoder's first
/// try, before it asks the VM for the metatable (a query result, a req
/// table) and the length (~130 instructions an object).
///
/// # Safety
/// As for [`scalar_members`].
pub(super) unsafe fn plain_scalar_members(t: *const c_void, out: &mut Vec<Member>) -> bool {
    CHECKED.get() == Some(&true) && (*t.cast::<Table>()).metatable.is_null() && read(t, out)
}

unsafe fn read(t: *const c_void, out: &mut Vec<Member>) -> bool {
    let t = &*t.cast::<Table>();
    if t.tt != TABLE || t.alimit != 0 {
        return false;
    }
    let size = 1usize << t.lsizenode;
    let nodes = std::slice::from_raw_parts(t.node, size);
    for n in nodes {
        // Any nil variant (a free slot, a removed key) is skipped, as
        // `lua_next` skips it.
        if n.value_tt & 0x0F == 0 {
            continue;
        }
        if n.key_tt != SHORT_STR && n.key_tt != LONG_STR {
            return false;
        }
        let value = match n.value_tt {
            FALSE => Scalar::Bool(false),
            TRUE => Scalar::Bool(true),
            INT => Scalar::Int(n.value as i64),
            FLOAT => Scalar::Float(f64::from_bits(n.value)),
            SHORT_STR | LONG_STR => {
                let (p, len) = string(n.value as *const TString, n.value_tt);
                Scalar::Str(p, len)
            }
            _ => return false,
        };
        let (key, len) = string(n.key, n.key_tt);
        out.push(Member { key, len, value });
    }
    true
}

unsafe fn string(s: *const TString, tag: u8) -> (*const u8, usize) {
    // By the tag: Lua 5.4.0-5.4.6 do not mark long strings in `shrlen`.
    let len = match tag {
        LONG_STR => (*s).len,
        _ => (*s).shrlen as usize,
    };
    (s.add(1).cast::<u8>(), len)
}

/// Check the layout on tables whose contents are known, once per process;
/// [`scalar_members`] reads nothing until this passed.
pub(crate) fn probe(lua: &Lua) -> mlua::Result<()> {
    if CHECKED.get().is_some() {
        return Ok(());
    }
    // SAFETY: `lua_version` only reads the state.
    let version = unsafe {
        lua.exec_raw::<mlua::Number>((), |l| {
            mlua::ffi::lua_pushnumber(l, mlua::ffi::lua_version(l));
        })?
    };
    if version != 504.0 {
        let _ = CHECKED.set(false);
        return Ok(());
    }
    let long = "a key longer than forty bytes, kept as a long string";
    let t = lua.create_table()?;
    t.raw_set("s", "one")?;
    t.raw_set("i", -7)?;
    t.raw_set("f", 2.5)?;
    t.raw_set("t", true)?;
    t.raw_set("n", false)?;
    t.raw_set(long, long)?;
    t.raw_set("gone", 1)?;
    t.raw_set("gone", mlua::Value::Nil)?;
    let want = [
        ("f", Scalar::Float(2.5)),
        ("i", Scalar::Int(-7)),
        ("n", Scalar::Bool(false)),
        ("s", Scalar::Str(std::ptr::null(), 3)),
        ("t", Scalar::Bool(true)),
        (long, Scalar::Str(std::ptr::null(), long.len())),
    ];
    let nested = lua.create_table()?;
    nested.raw_set("x", lua.create_table()?)?;
    let array = lua.create_sequence_from([1])?;
    let empty = lua.create_table()?;
    let with_meta = lua.create_table()?;
    with_meta.raw_set("s", "one")?;
    with_meta.set_metatable(Some(lua.create_table()?))?;
    // SAFETY: `read` only reads; each table is alive (held here) and
    // unchanged, and no Lua code runs while it is read. The structs above
    // are Lua 5.4's (every 5.4 release has them), and the VM is 5.4; the
    // probe catches a vendored Lua whose tags or value encoding differ.
    let ok = unsafe {
        let mut got = Vec::new();
        let plain = read(t.to_pointer(), &mut got) && matches(&got, &want);
        got.clear();
        let metatables = (*t.to_pointer().cast::<Table>()).metatable.is_null()
            && !(*with_meta.to_pointer().cast::<Table>())
                .metatable
                .is_null();
        let empty = read(empty.to_pointer(), &mut got) && got.is_empty();
        plain
            && metatables
            && empty
            && !read(nested.to_pointer(), &mut got)
            && !read(array.to_pointer(), &mut got)
    };
    let _ = CHECKED.set(ok);
    Ok(())
}

/// Whether `got` holds exactly `want` (strings compared by their bytes;
/// `want`'s string values are the keys' own, or `"one"`).
unsafe fn matches(got: &[Member], want: &[(&str, Scalar)]) -> bool {
    let mut got: Vec<(&[u8], Scalar)> = got.iter().map(|m| (m.key(), m.value)).collect();
    got.sort_by(|a, b| a.0.cmp(b.0));
    let mut want = want.to_vec();
    want.sort_by(|a, b| a.0.cmp(b.0));
    got.len() == want.len()
        && got.iter().zip(&want).all(|((k, v), (wk, wv))| {
            *k == wk.as_bytes()
                && match (v, wv) {
                    (Scalar::Str(p, n), Scalar::Str(_, wn)) => {
                        let bytes = std::slice::from_raw_parts(*p, *n);
                        *n == *wn && (bytes == b"one" || bytes == *k)
                    }
                    _ => v == wv,
                }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_matches_the_vendored_lua() {
        let lua = Lua::new();
        probe(&lua).unwrap();
        assert_eq!(CHECKED.get(), Some(&true));
    }
}
