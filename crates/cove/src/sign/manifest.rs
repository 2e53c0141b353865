//! The app manifest in a signature. `app.manifest(...)` runs while the app
//! loads, so `cove build --sign` loads the app once (against an in-memory
//! database with its migrations applied, as `cove routes` does) to record
//! it, and under `--verify-sig` every worker compares what its app declared
//! with the signed value before it serves.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use serde_json::Value;

use cove_caps::Shared;
use cove_core::{Limits, Pack};
use cove_js::JsEngine;
use cove_lua::LuaEngine;

use super::statement::sorted;
use crate::app::{self, Runtime};
use crate::scratch::memory_with_migrations;

/// What the app packed from `files` declares with `app.manifest(...)`:
/// the entry the built file will serve is loaded, as that file would.
pub fn declared_manifest(name: &str, files: &BTreeMap<String, Vec<u8>>) -> Result<Option<Value>> {
    let pack = Pack {
        name: name.to_string(),
        files: files.clone(),
    };
    let app = app::from_pack(pack)?;
    let fail = |e: String| {
        anyhow!(
            "cannot sign: the signature records the app's manifest, so the app must load, and \
             {} failed against an in-memory database with its migrations applied: {e}",
            app.entry
        )
    };
    let db = memory_with_migrations(&app.files).map_err(|e| fail(format!("{e:#}")))?;
    let config = app.script_config(Limits::default(), false);
    let shared = Shared::default();
    let manifest = match app.runtime {
        Runtime::Lua => LuaEngine::load(&config, db, &shared)
            .map_err(fail)?
            .engine
            .manifest(),
        Runtime::Js => JsEngine::load(&config, db, &shared)
            .map_err(fail)?
            .engine
            .manifest(),
    };
    Ok(manifest)
}

/// The manifest a verified signature holds; workers share it.
#[derive(Debug, Clone)]
pub struct SignedManifest(Arc<Option<Value>>);

impl SignedManifest {
    pub fn new(signed: Option<Value>) -> SignedManifest {
        SignedManifest(Arc::new(signed))
    }

    /// `Ok` when the app declared what was signed (key order aside); the
    /// error shows both.
    pub fn check(&self, declared: Option<Value>) -> Result<(), String> {
        let declared = declared.as_ref().map(sorted);
        if declared == *self.0 {
            return Ok(());
        }
        let show = |v: &Option<Value>| match v {
            Some(v) => v.to_string(),
            None => "no manifest".to_string(),
        };
        Err(format!(
            "the app's manifest does not match its signature (--verify-sig): it declared {}, \
             the signed one is {}; refusing to start (a manifest computed from the database, \
             the time or the environment cannot be signed)",
            show(&declared),
            show(&self.0)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_manifest_must_be_the_signed_one() {
        let signed = SignedManifest::new(Some(json!({"env": ["A"], "hosts": ["x.com"]})));
        // Key order is the script's business; values are not.
        assert!(signed
            .check(Some(json!({"hosts": ["x.com"], "env": ["A"]})))
            .is_ok());
        let err = signed
            .check(Some(json!({"env": ["A"], "hosts": ["evil.com"]})))
            .unwrap_err();
        assert!(err.contains("evil.com") && err.contains("x.com"), "{err}");
        let err = signed.check(None).unwrap_err();
        assert!(err.contains("declared no manifest"), "{err}");
        assert!(SignedManifest::new(None).check(None).is_ok());
    }

    fn files(entry: &str, source: &str) -> BTreeMap<String, Vec<u8>> {
        let mut f = BTreeMap::new();
        f.insert(entry.to_string(), source.as_bytes().to_vec());
        f.insert(
            "migrations/001_init.sql".to_string(),
            b"CREATE TABLE cfg (host TEXT); INSERT INTO cfg VALUES ('db.example');".to_vec(),
        );
        f
    }

    #[test]
    fn the_manifest_is_read_by_loading_the_app_in_either_language() {
        let lua = files(
            "app.lua",
            r#"local row = db.query("SELECT host FROM cfg")[1]
               app.manifest({hosts = {row.host}, env = {"K"}})
               app.get("/", function(req, res) res:text("hi") end)"#,
        );
        let got = declared_manifest("demo", &lua).unwrap();
        assert_eq!(got, Some(json!({"hosts": ["db.example"], "env": ["K"]})));

        let js = files(
            "app.js",
            r#"import { app } from "hull:app";
               app.manifest({ env: ["K"] });
               app.get("/", (req, res) => res.text("hi"));"#,
        );
        assert_eq!(
            declared_manifest("demo", &js).unwrap(),
            Some(json!({"env": ["K"]}))
        );

        let none = files(
            "app.lua",
            r#"app.get("/", function(req, res) res:text("hi") end)"#,
        );
        assert_eq!(declared_manifest("demo", &none).unwrap(), None);

        let broken = files("app.lua", "app.get(");
        let err = format!("{:#}", declared_manifest("demo", &broken).unwrap_err());
        assert!(
            err.contains("cannot sign") && err.contains("app.lua"),
            "{err}"
        );
    }
}
