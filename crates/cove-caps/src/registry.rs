//! What an app file registers while it loads (Hull §3.1, §11.2): routes and
//! middleware with their handlers, and the manifest. One per script VM;
//! `H` is the runtime's handle to a script function.

use cove_core::{CapError, HandlerId, RouteError, RouteTable};

use crate::{Csp, Manifest, ManifestError};

pub struct Registry<H> {
    /// Registration is only allowed while the app file runs.
    loading: bool,
    routes: RouteTable,
    handlers: Vec<H>,
    manifest: Option<Manifest>,
    /// `cove test`: http and smtp are never configured (Hull §9.1).
    outbound_off: bool,
}

impl<H> Default for Registry<H> {
    fn default() -> Self {
        Registry {
            loading: true,
            routes: RouteTable::new(),
            handlers: Vec::new(),
            manifest: None,
            outbound_off: false,
        }
    }
}

/// What the app registered, once it has loaded.
pub struct Registered<H> {
    pub routes: RouteTable,
    pub handlers: Vec<H>,
    /// The Content-Security-Policy `res.html` sends.
    pub csp: Csp,
}

impl<H> Registry<H> {
    /// Add `handler` through `add` (`app.{api}`); fails once loading ended
    /// (`app.loaded`) or when the route table refuses it (`app.invalid`).
    pub fn register(
        &mut self,
        api: &str,
        handler: H,
        add: impl FnOnce(&mut RouteTable, HandlerId) -> Result<(), RouteError>,
    ) -> Result<(), CapError> {
        if !self.loading {
            return Err(CapError::new(
                "app.loaded",
                format!("app.{api}: routes and middleware must be registered while the app loads (at the top level of the app file)"),
            ));
        }
        let id = self.handlers.len() as HandlerId;
        add(&mut self.routes, id)
            .map_err(|e| CapError::new("app.invalid", format!("app.{api}: {e}")))?;
        self.handlers.push(handler);
        Ok(())
    }

    /// `app.manifest(value)`: allowed once, while the app loads. A call
    /// from a handler must not grant `env`, `http` or `smtp` to the worker
    /// that runs it (`app.loaded`); a second call, or a field of the wrong
    /// shape, is refused (`app.invalid`).
    pub fn set_manifest(&mut self, raw: serde_json::Value) -> Result<(), CapError> {
        if !self.loading {
            return Err(CapError::new(
                "app.loaded",
                "app.manifest: only at load time (at the top level of the app file)",
            ));
        }
        if self.manifest.is_some() {
            return Err(CapError::new(
                "app.invalid",
                ManifestError::Twice.to_string(),
            ));
        }
        let manifest =
            Manifest::from_value(raw).map_err(|e| CapError::new("app.invalid", e.to_string()))?;
        self.manifest = Some(manifest);
        Ok(())
    }

    /// The manifest's `env` allow-list (`None`: no manifest or no list).
    pub fn env_allow(&self) -> Option<&[String]> {
        self.manifest.as_ref().and_then(|m| m.env.as_deref())
    }

    /// The manifest's `hosts`: what http and smtp may reach (empty: they
    /// are not configured).
    pub fn hosts(&self) -> &[String] {
        match &self.manifest {
            Some(m) if !self.outbound_off => &m.hosts,
            _ => &[],
        }
    }

    /// Leave http and smtp unconfigured whatever the manifest says, as
    /// Hull's test runner does.
    pub fn disable_outbound(&mut self) {
        self.outbound_off = true;
    }

    /// End registration and hand over what was registered. The route table
    /// stays readable through [`Registry::routes`].
    pub fn finish(&mut self) -> Registered<H> {
        self.loading = false;
        Registered {
            routes: self.routes.clone(),
            handlers: std::mem::take(&mut self.handlers),
            csp: self
                .manifest
                .as_ref()
                .map(|m| m.csp.clone())
                .unwrap_or_default(),
        }
    }

    pub fn routes(&self) -> &RouteTable {
        &self.routes
    }

    /// What `app.manifest(...)` declared, if it was called.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }
}

impl<H> Registered<H> {
    /// An app that registered no route serves nothing: refuse it, naming
    /// the app file and showing `example` (a route in the app's language).
    pub fn require_routes(self, display: &str, example: &str) -> Result<Self, String> {
        if self.routes.route_count() == 0 {
            return Err(format!(
                "{display}: no routes registered; add one, e.g. {example}"
            ));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_while_loading_only() {
        let mut r: Registry<&str> = Registry::default();
        r.register("get", "h0", |t, id| t.add_route("GET", "/", id))
            .unwrap();
        let err = r.register("use", "h1", |t, id| {
            t.add_middleware(cove_core::Phase::Pre, "GET", "no-slash", id)
        });
        let err = err.unwrap_err();
        assert!(err.message.starts_with("app.use: "), "{err}");
        assert_eq!(err.code, "app.invalid");
        let done = r.finish();
        assert_eq!(done.handlers, vec!["h0"]);
        assert_eq!(done.routes.route_count(), 1);
        let late = r.register("post", "h2", |t, id| t.add_route("POST", "/", id));
        let late = late.unwrap_err();
        assert!(late.message.contains("while the app loads"), "{late}");
        assert_eq!(late.code, "app.loaded");
    }

    #[test]
    fn an_app_without_routes_is_refused() {
        let mut r: Registry<()> = Registry::default();
        let err = r.finish().require_routes("app.js", "EXAMPLE").err();
        assert_eq!(
            err.as_deref(),
            Some("app.js: no routes registered; add one, e.g. EXAMPLE")
        );
        let mut r: Registry<()> = Registry::default();
        r.register("get", (), |t, id| t.add_route("GET", "/", id))
            .unwrap();
        assert!(r.finish().require_routes("app.js", "EXAMPLE").is_ok());
    }

    #[test]
    fn the_manifest_is_set_once() {
        let mut r: Registry<()> = Registry::default();
        r.set_manifest(serde_json::json!({"env": ["A"]})).unwrap();
        assert_eq!(r.env_allow(), Some(&["A".to_string()][..]));
        let twice = r.set_manifest(serde_json::json!({})).unwrap_err();
        assert_eq!(
            (twice.code, twice.message.as_str()),
            ("app.invalid", "app.manifest() can only be called once")
        );
    }

    #[test]
    fn the_manifest_is_set_while_loading_only() {
        let mut r: Registry<()> = Registry::default();
        r.finish();
        let err = r
            .set_manifest(serde_json::json!({"hosts": ["x.com"], "env": ["A"]}))
            .unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                "app.loaded",
                "app.manifest: only at load time (at the top level of the app file)"
            )
        );
        assert!(r.hosts().is_empty());
        assert_eq!(r.env_allow(), None);
    }

    #[test]
    fn hosts_can_be_switched_off_for_tests() {
        let mut r: Registry<()> = Registry::default();
        assert!(r.hosts().is_empty());
        r.set_manifest(serde_json::json!({"hosts": ["x.com"]}))
            .unwrap();
        assert_eq!(r.hosts(), &["x.com".to_string()][..]);
        r.disable_outbound();
        assert!(r.hosts().is_empty());
    }
}
