//! The values that cross between a script and a capability.

/// A script runtime, where a capability's messages or results differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Lua,
    Js,
}

/// A script value as a capability reads it, and a result as a binding
/// writes it back. Each binding converts its values to and from these with
/// one function each way.
#[derive(Debug, Clone, PartialEq)]
pub enum CapValue {
    /// Lua `nil`; JS `undefined` (an argument not given).
    Nothing,
    /// JS `null` (Lua: `nil`).
    Null,
    Bool(bool),
    /// An integer: a Lua integer; a JS number that is whole and below 2^53
    /// in size.
    Int(i64),
    Num(f64),
    /// Text: a Lua string's bytes as they are; a JS string as UTF-8 (and
    /// back to JS as UTF-8, invalid bytes replaced).
    Str(Vec<u8>),
    /// Binary: from JS an `ArrayBuffer`, typed array or `DataView`; to JS
    /// an `ArrayBuffer`; a string in Lua.
    Bytes(Vec<u8>),
    /// A Lua sequence, a JS array.
    List(Vec<CapValue>),
    /// A Lua table or JS object with named fields, in the runtime's order.
    Record(Vec<(String, CapValue)>),
    /// What no capability takes (a function, a coroutine): its type name.
    Other(&'static str),
    /// Several results: Lua returns them in order, JS an object of them.
    Results(Vec<(&'static str, CapValue)>),
    /// A query's rows, as a result only: the binding writes them through
    /// its own result builder (an array of rows keyed by column name).
    Rows(cove_db::ResultSet),
    /// JSON text, as a result only: the binding returns the value it
    /// holds, decoded by the runtime's rules (Lua: `null` is nil, integers
    /// stay integers; JS: `JSON.parse`).
    Json(Vec<u8>),
}

impl CapValue {
    /// Its type as the runtime names it in a message (`got nil`, `got undefined`).
    pub fn type_name(&self, rt: Runtime) -> &'static str {
        let lua = rt == Runtime::Lua;
        match self {
            CapValue::Nothing if lua => "nil",
            CapValue::Nothing => "undefined",
            CapValue::Null if lua => "nil",
            CapValue::Null => "null",
            CapValue::Bool(_) => "boolean",
            CapValue::Int(_) | CapValue::Num(_) => "number",
            CapValue::Str(_) | CapValue::Json(_) => "string",
            CapValue::Bytes(_) if lua => "string",
            CapValue::Bytes(_) => "object",
            CapValue::List(_) | CapValue::Rows(_) if lua => "table",
            CapValue::List(_) | CapValue::Rows(_) => "array",
            CapValue::Record(_) | CapValue::Results(_) if lua => "table",
            CapValue::Record(_) | CapValue::Results(_) => "object",
            CapValue::Other(name) => name,
        }
    }

    /// `nil`, `null` or `undefined`.
    pub fn is_absent(&self) -> bool {
        matches!(self, CapValue::Nothing | CapValue::Null)
    }

    /// Text as the runtime writes it: strings as they are, numbers as
    /// `tostring` / `String(n)` print them; `None` for anything else.
    pub fn text(&self, rt: Runtime) -> Option<String> {
        match self {
            CapValue::Str(b) => Some(String::from_utf8_lossy(b).into_owned()),
            CapValue::Int(n) => Some(n.to_string()),
            CapValue::Num(f) if rt == Runtime::Lua => Some(cove_core::lua_float(*f)),
            CapValue::Num(f) => Some(cove_core::js_number(*f)),
            _ => None,
        }
    }

    /// A field of a record (the first of that name).
    pub fn field(&self, name: &str) -> Option<&CapValue> {
        match self {
            CapValue::Record(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// As JSON (for options a capability reads as JSON): `undefined`
    /// fields are left out, as `JSON.stringify` leaves them.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            CapValue::Nothing | CapValue::Null | CapValue::Other(_) => J::Null,
            CapValue::Bool(b) => J::Bool(*b),
            CapValue::Int(n) => J::from(*n),
            CapValue::Num(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            CapValue::Str(b) | CapValue::Bytes(b) => J::String(String::from_utf8_lossy(b).into()),
            CapValue::Json(text) => serde_json::from_slice(text).unwrap_or(J::Null),
            CapValue::List(items) => J::Array(items.iter().map(CapValue::to_json).collect()),
            CapValue::Record(fields) => J::Object(
                fields
                    .iter()
                    .filter(|(_, v)| !matches!(v, CapValue::Nothing | CapValue::Other(_)))
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
            CapValue::Results(fields) => J::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_json()))
                    .collect(),
            ),
            CapValue::Rows(set) => J::Array(
                set.rows
                    .iter()
                    .map(|row| {
                        let cells = set.columns.iter().zip(row);
                        J::Object(cells.map(|(k, v)| (k.clone(), cell_json(v))).collect())
                    })
                    .collect(),
            ),
        }
    }
}

/// A column's value as JSON (text and blobs as text).
fn cell_json(v: &cove_db::Value) -> serde_json::Value {
    use cove_db::Value as V;
    use serde_json::Value as J;
    match v {
        V::Null => J::Null,
        V::Integer(n) => J::from(*n),
        V::Real(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        V::Text(b) | V::Blob(b) => J::String(String::from_utf8_lossy(b).into()),
    }
}
