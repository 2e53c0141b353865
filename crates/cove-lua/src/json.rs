//! Lua values ⇄ JSON in one pass, with Hull's Lua rules: object keys sorted,
//! an empty table is `[]`, a table with `t[1] ~= nil` must be a sequence,
//! `null` decodes to nil. Unlike Hull, integers keep every digit.

use std::fmt;

use cove_caps::json::JsonError;
use mlua::{Lua, Value};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::raw::Lifted;

/// Encode a Lua value as JSON text (the walker lives in raw/json.rs).
pub(crate) fn encode(lua: &Lua, value: &Value) -> Result<Vec<u8>, JsonError> {
    crate::raw::json::encode(lua, value)
}

/// Decode JSON text into Lua values (objects and arrays become tables).
pub(crate) fn decode(lua: &Lua, text: &[u8]) -> Result<Value, String> {
    let mut failed = None;
    let value = crate::raw::exec::<Value>(lua, (), |s| {
        if let Err(e) = decode_onto(s, text) {
            failed = Some(e);
        }
    })
    .map_err(|e| e.to_string())?;
    match failed {
        Some(e) => Err(e),
        None => Ok(value),
    }
}

/// Push the value JSON text holds; on a failure nothing is pushed.
pub(crate) fn decode_onto(s: &mut Lifted<'_, '_>, text: &[u8]) -> Result<(), String> {
    let top = s.top();
    let mut de = serde_json::Deserializer::from_slice(text);
    let read = Push(s).deserialize(&mut de).and_then(|()| de.end());
    read.map_err(|e| {
        s.set_top(top);
        e.to_string()
    })
}

/// Pushes the value it reads onto the frame.
struct Push<'a, 'b, 'l>(&'a mut Lifted<'b, 'l>);

impl<'de> DeserializeSeed<'de> for Push<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Push<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.push_nil();
        Ok(())
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.0.push_bool(v);
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.0.push_int(v);
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        match i64::try_from(v) {
            Ok(i) => self.0.push_int(i),
            Err(_) => self.0.push_float(v as f64),
        }
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.0.push_float(v);
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.0.push_bytes(v.as_bytes());
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let s = self.0;
        s.new_table(seq.size_hint().unwrap_or(0), 0);
        let t = s.top();
        let mut i = 0;
        while let Some(()) = seq.next_element_seed(Push(s))? {
            i += 1;
            // null leaves a hole, as in Hull.
            if s.ty(-1) == mlua::ffi::LUA_TNIL {
                s.pop(1);
            } else {
                s.raw_seti(t, i);
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let s = self.0;
        s.new_table(0, map.size_hint().unwrap_or(0));
        let t = s.top();
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            s.push_bytes(k.as_bytes());
            map.next_value_seed(Push(s))?;
            if s.ty(-1) == mlua::ffi::LUA_TNIL {
                s.pop(2);
            } else {
                s.raw_set(t);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(lua: &Lua, src: &str) -> Result<String, JsonError> {
        let v: Value = lua.load(src).eval().unwrap();
        encode(lua, &v).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn encodes_like_hull() {
        let lua = Lua::new();
        assert_eq!(enc(&lua, "{}").unwrap(), "[]");
        assert_eq!(
            enc(&lua, "{b=1, a={1,2,'x'}, c=true}").unwrap(),
            r#"{"a":[1,2,"x"],"b":1,"c":true}"#
        );
        assert_eq!(enc(&lua, "{x=3.0, y=0.5}").unwrap(), r#"{"x":3,"y":0.5}"#);
        assert_eq!(enc(&lua, "9007199254740993").unwrap(), "9007199254740993");
        assert_eq!(enc(&lua, "'a\\nb'").unwrap(), r#""a\nb""#);
    }

    /// Objects of scalars are read straight from their table (raw/layout.rs):
    /// the same bytes as the walk through the stack gives.
    #[test]
    fn objects_read_from_their_table_encode_like_hull() {
        let lua = Lua::new();
        crate::raw::layout::probe(&lua).unwrap();
        let long = "k".repeat(50);
        lua.globals().set("long", long.as_str()).unwrap();
        let src = r#"(function()
          local t = { b = 1, a = -9223372036854775807 - 1, ["é"] = "ü\n\"", f = 0.1,
                      g = 3.0, t = true, n = false, gone = 1, [long] = long .. "\0" }
          t.gone = nil
          return t
        end)()"#;
        let want = format!(
            r#"{{"a":-9223372036854775808,"b":1,"f":0.1,"g":3,"{long}":"{long}\u0000","n":false,"t":true,"é":"ü\n\""}}"#
        );
        assert_eq!(enc(&lua, src).unwrap(), want);
        assert_eq!(enc(&lua, "{ x = 1/0 }").unwrap_err(), JsonError::NotFinite);
        let emptied = "(function() local t = { a = 1 } t.a = nil return t end)()";
        assert_eq!(enc(&lua, emptied).unwrap(), "[]");
        assert_eq!(
            enc(&lua, "{ [true] = 1 }").unwrap_err(),
            JsonError::MixedKeys
        );
        assert_eq!(
            enc(&lua, "{ a = { b = 'c' } }").unwrap(),
            r#"{"a":{"b":"c"}}"#
        );
        // Keys that share their first byte, and the empty key.
        assert_eq!(
            enc(
                &lua,
                r#"{ ab = 1, aa = 2, a = 3, b = 4, [""] = 5, ["a\0"] = 6 }"#
            )
            .unwrap(),
            r#"{"":5,"a":3,"a\u0000":6,"aa":2,"ab":1,"b":4}"#
        );
        // With a metatable: its own members only, as without one.
        let meta = "setmetatable({ a = 1 }, { __index = { b = 2 } })";
        assert_eq!(enc(&lua, meta).unwrap(), r#"{"a":1}"#);
    }

    #[test]
    fn rejects_what_json_cannot_hold() {
        let lua = Lua::new();
        assert_eq!(
            enc(&lua, "{1, nil, 3}").unwrap_err(),
            JsonError::SparseArray
        );
        assert_eq!(enc(&lua, "{1, x=2}").unwrap_err(), JsonError::MixedKeys);
        assert_eq!(enc(&lua, "{[2]='x'}").unwrap_err(), JsonError::MixedKeys);
        assert_eq!(enc(&lua, "0/0").unwrap_err(), JsonError::NotFinite);
        assert!(enc(&lua, "{f=print}").is_err());
        assert_eq!(
            enc(&lua, "(function() local t = {} t.t = t return t end)()").unwrap_err(),
            JsonError::TooDeep
        );
    }

    #[test]
    fn decodes_into_lua() {
        let lua = Lua::new();
        let v = decode(
            &lua,
            br#"{"a":[1,2.5,"x",null,true],"n":null,"big":9007199254740993}"#,
        )
        .unwrap();
        lua.globals().set("v", v).unwrap();
        let ok: bool = lua
            .load("return v.a[1] == 1 and math.type(v.a[1]) == 'integer' and v.a[2] == 2.5 and v.a[3] == 'x' and v.a[4] == nil and v.a[5] == true and v.n == nil and v.big == 9007199254740993")
            .eval()
            .unwrap();
        assert!(ok);
    }

    #[test]
    fn decode_errors_name_the_position() {
        let lua = Lua::new();
        let e = decode(&lua, b"{\"a\":}").unwrap_err();
        assert!(e.contains("line 1 column"), "{e}");
        assert!(decode(&lua, b"[1] x").is_err());
    }
}
