//! `env.get` (Hull §6.4): environment variables, only those the manifest
//! allow-lists.

/// Why `env.get` refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EnvError {
    #[error("env is not configured: declare the variables the app reads, e.g. app.manifest({{ env = {{\"{0}\"}} }})")]
    NotConfigured(String),
}

impl EnvError {
    pub fn code(&self) -> &'static str {
        "env.not_configured"
    }

    /// As scripts see it: `env.get: <why>`, with its code.
    pub fn cap(&self) -> cove_core::CapError {
        cove_core::CapError::new(self.code(), format!("env.get: {self}"))
    }
}

/// Read `name` if `allow` (the manifest's `env` list) contains it exactly.
/// No list at all is an error, so a missing manifest is noticed.
/// With the audit log on, each read is logged by name and outcome; the value
/// never is.
pub fn get(allow: Option<&[String]>, name: &str) -> Result<Option<String>, EnvError> {
    let (result, outcome) = read(allow, name);
    if cove_core::audit::enabled() {
        cove_core::audit::Event::new("env.get")
            .str("name", name)
            .str("result", outcome)
            .emit();
    }
    result
}

/// The value, and the audit log's word for what happened.
fn read(allow: Option<&[String]>, name: &str) -> (Result<Option<String>, EnvError>, &'static str) {
    let allow = match allow {
        Some(list) if !list.is_empty() => list,
        _ => {
            let err = EnvError::NotConfigured(name.to_string());
            return (Err(err), "not_configured");
        }
    };
    if !allow.iter().any(|a| a == name) {
        return (Ok(None), "denied");
    }
    match std::env::var(name) {
        Ok(v) => (Ok(Some(v)), "ok"),
        Err(_) => (Ok(None), "missing"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_is_enforced() {
        let allow = vec!["PATH".to_string()];
        assert!(get(Some(&allow), "PATH").unwrap().is_some());
        assert_eq!(get(Some(&allow), "HOME"), Ok(None));
        assert!(get(None, "PATH").is_err());
        assert!(get(Some(&[]), "PATH").is_err());
    }

    #[test]
    fn outcomes_are_named_for_the_audit_log() {
        let allow = vec!["PATH".to_string(), "COVE_SURELY_UNSET_VAR".to_string()];
        assert_eq!(read(Some(&allow), "PATH").1, "ok");
        assert_eq!(read(Some(&allow), "COVE_SURELY_UNSET_VAR").1, "missing");
        assert_eq!(read(Some(&allow), "HOME").1, "denied");
        assert_eq!(read(None, "PATH").1, "not_configured");
    }
}
