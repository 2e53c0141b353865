//! Lua values ⇄ JSON in one pass, with Hull's Lua rules: object keys sorted,
//! an empty table is `[]`, a table with `t[1] ~= nil` must be a sequence,
//! `null` decodes to nil. Unlike Hull, integers keep every digit.

use std::fmt;

use cove_caps::json::JsonError;
use mlua::{Lua, Value};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Encode a Lua value as JSON text (the walker lives in raw/json.rs).
pub(crate) fn encode(lua: &Lua, value: &Value) -> Result<Vec<u8>, JsonError> {
    crate::raw::json::encode(lua, value)
}

/// Decode JSON text into Lua values (objects and arrays become tables).
pub(crate) fn decode(lua: &Lua, text: &[u8]) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = LuaSeed(lua)
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

struct LuaSeed<'a>(&'a Lua);

fn lua_err<E: serde::de::Error>(e: mlua::Error) -> E {
    E::custom(e.to_string())
}

impl<'de> DeserializeSeed<'de> for LuaSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LuaSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Boolean(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Integer(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => Value::Integer(i),
            Err(_) => Value::Number(v as f64),
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.create_string(v).map(Value::String).map_err(lua_err)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let t = self
            .0
            .create_table_with_capacity(seq.size_hint().unwrap_or(0), 0)
            .map_err(lua_err)?;
        let mut i = 0usize;
        while let Some(v) = seq.next_element_seed(LuaSeed(self.0))? {
            i += 1;
            // null leaves a hole, as in Hull.
            if !v.is_nil() {
                t.raw_set(i, v).map_err(lua_err)?;
            }
        }
        Ok(Value::Table(t))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let t = self.0.create_table().map_err(lua_err)?;
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let v = map.next_value_seed(LuaSeed(self.0))?;
            if !v.is_nil() {
                t.raw_set(k.as_ref(), v).map_err(lua_err)?;
            }
        }
        Ok(Value::Table(t))
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
