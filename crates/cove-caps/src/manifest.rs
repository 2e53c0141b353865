//! `app.manifest(...)` (Hull §11.2): what the app declares it needs.

use serde_json::Value;

use cove_core::DEFAULT_CSP;

/// Content-Security-Policy for `res:html`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Csp {
    #[default]
    Default,
    Custom(String),
    Disabled,
}

impl Csp {
    /// The header value to send, if any.
    pub fn header(&self) -> Option<&str> {
        match self {
            Csp::Default => Some(DEFAULT_CSP),
            Csp::Custom(s) => Some(s),
            Csp::Disabled => None,
        }
    }
}

/// The parsed manifest, plus the value as the app wrote it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub env: Option<Vec<String>>,
    pub hosts: Vec<String>,
    pub csp: Csp,
    pub raw: Value,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ManifestError {
    #[error("app.manifest: `{0}` must be a list of strings")]
    NotAList(&'static str),
    #[error("app.manifest: `csp` must be a string or false")]
    BadCsp,
    #[error("app.manifest: `csp` must not contain CR or LF")]
    CspNewline,
    #[error("app.manifest() can only be called once")]
    Twice,
}

fn string_list(v: &Value, key: &'static str) -> Result<Option<Vec<String>>, ManifestError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        // Lua's empty table encodes as an empty object or array.
        Some(Value::Object(o)) if o.is_empty() => Ok(Some(Vec::new())),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or(ManifestError::NotAList(key))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(ManifestError::NotAList(key)),
    }
}

impl Manifest {
    pub fn from_value(raw: Value) -> Result<Manifest, ManifestError> {
        let env = string_list(&raw, "env")?;
        let hosts = string_list(&raw, "hosts")?.unwrap_or_default();
        let csp = match raw.get("csp") {
            None | Some(Value::Null) => Csp::Default,
            Some(Value::Bool(false)) => Csp::Disabled,
            Some(Value::String(s)) if s.contains(['\r', '\n']) => {
                return Err(ManifestError::CspNewline)
            }
            Some(Value::String(s)) => Csp::Custom(s.clone()),
            Some(_) => return Err(ManifestError::BadCsp),
        };
        Ok(Manifest {
            env,
            hosts,
            csp,
            raw,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_fields() {
        let m =
            Manifest::from_value(json!({"env": ["A"], "hosts": ["x.com"], "csp": false})).unwrap();
        assert_eq!(m.env, Some(vec!["A".to_string()]));
        assert_eq!(m.hosts, vec!["x.com".to_string()]);
        assert_eq!(m.csp.header(), None);
        let m = Manifest::from_value(json!({})).unwrap();
        assert_eq!((m.env, m.csp.header()), (None, Some(DEFAULT_CSP)));
    }

    #[test]
    fn rejects_bad_shapes() {
        assert!(Manifest::from_value(json!({"env": "A"})).is_err());
        assert!(Manifest::from_value(json!({"env": [1]})).is_err());
        assert!(Manifest::from_value(json!({"csp": "a\nb"})).is_err());
        assert!(Manifest::from_value(json!({"csp": true})).is_err());
    }
}
