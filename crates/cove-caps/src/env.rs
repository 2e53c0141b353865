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
}

/// Read `name` if `allow` (the manifest's `env` list) contains it exactly.
/// No list at all is an error, so a missing manifest is noticed.
pub fn get(allow: Option<&[String]>, name: &str) -> Result<Option<String>, EnvError> {
    let allow = match allow {
        Some(list) if !list.is_empty() => list,
        _ => return Err(EnvError::NotConfigured(name.to_string())),
    };
    if !allow.iter().any(|a| a == name) {
        return Ok(None);
    }
    Ok(std::env::var(name).ok())
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
}
