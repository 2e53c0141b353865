//! `env.get(name)`: a variable the manifest allows, or nil/null.

use cove_core::CapError;

use super::{CapValue, Runtime, Scope, Started};

pub(super) fn get(scope: &Scope, args: &[CapValue]) -> Result<Started, CapError> {
    let v = args.first().unwrap_or(&CapValue::Nothing);
    // JS reads the name as `String(name)` would, nil/undefined as "".
    let name = match (v.text(scope.runtime), scope.runtime) {
        (Some(name), _) => name,
        (None, Runtime::Js) if v.is_absent() => String::new(),
        (None, _) => {
            return Err(CapError::new(
                "env.argument",
                format!(
                    "env.get: the name must be a string, got {}",
                    v.type_name(scope.runtime)
                ),
            ))
        }
    };
    match crate::env::get(scope.env_allow, &name) {
        Ok(Some(value)) => Ok(Started::Done(CapValue::Str(value.into_bytes()))),
        Ok(None) => Ok(Started::Done(CapValue::Null)),
        Err(e) => Err(e.cap()),
    }
}
