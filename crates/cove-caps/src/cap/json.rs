//! `json.encode/decode`: the runtime does the encoding and decoding, by its
//! own rules, as the entry's converters ([`super::ArgForm::Json`] for the
//! argument, [`CapValue::Json`] for the result); what is left here is
//! which way, and the check of decode's argument.

use cove_core::CapError;

use super::{CapValue, Runtime, Scope, Started};
use crate::json::{JsonFn, JsonOp};

/// The arguments are owned: the text is handed on, not copied.
pub(super) fn start(f: &JsonFn, scope: &Scope, args: Vec<CapValue>) -> Result<Started, CapError> {
    let first = args.into_iter().next().unwrap_or(CapValue::Nothing);
    let out = match (f.op, first) {
        (JsonOp::Encode, CapValue::Str(text)) => CapValue::Str(text),
        // No argument: what `nil` / `undefined` encode as.
        (JsonOp::Encode, _) => CapValue::Str(b"null".to_vec()),
        (JsonOp::Decode, CapValue::Str(text)) => CapValue::Json(text),
        // JSON.parse reads any value as `String(v)` gives it: `null`,
        // booleans and numbers parse; the rest is a SyntaxError.
        (JsonOp::Decode, other) if scope.runtime == Runtime::Js => {
            CapValue::Json(js_string(&other).into_bytes())
        }
        (JsonOp::Decode, other) => {
            return Err(CapError::new(
                "json.argument",
                format!(
                    "json.decode: expected a string, got {}",
                    other.type_name(scope.runtime)
                ),
            ))
        }
    };
    Ok(Started::Done(out))
}

/// `String(v)` of a value other than a string, as far as JSON.parse can
/// tell (an object's text never parses).
fn js_string(v: &CapValue) -> String {
    match v {
        CapValue::Null => "null".into(),
        CapValue::Bool(b) => b.to_string(),
        CapValue::Nothing => "undefined".into(),
        other => other
            .text(Runtime::Js)
            .unwrap_or_else(|| "[object Object]".into()),
    }
}
