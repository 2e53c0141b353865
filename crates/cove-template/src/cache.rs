//! Compiling templates by name: reading them through a [`Loader`] (the
//! app's `templates/` directory or its built-in pack), resolving `extends`
//! and `include` to compiled templates, and caching the result by name.
//!
//! The cache belongs to one VM (each worker's Lua state or JS context holds
//! its own). `cove dev` builds new VMs on every change of an app file, so a
//! changed template is picked up without any invalidation of its own.

use std::collections::HashMap;
use std::io;
use std::rc::Rc;

use cove_core::AppFiles;

use crate::ast::{BlockDef, Node};
use crate::error::{Error, ErrorKind};
use crate::names::{Key, Names};
use crate::parser::parse;

/// Bounds on what one template may cost.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest template file, in bytes.
    pub max_size: usize,
    /// Largest rendered output, in bytes.
    pub max_output: usize,
    /// Most nodes and loop iterations one render may visit.
    pub max_steps: u64,
    /// Cached templates; the cache is emptied when it is full (as in Hull).
    pub max_cached: usize,
    /// Longest `extends` chain.
    pub max_extends: usize,
    /// Deepest `include` nesting.
    pub max_includes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_size: 10 * 1024 * 1024,
            max_output: 64 * 1024 * 1024,
            max_steps: 20_000_000,
            max_cached: 1024,
            max_extends: 8,
            max_includes: 16,
        }
    }
}

/// Where template text comes from.
pub trait Loader {
    /// The text of template `name` (already checked to be a clean relative path).
    fn load(&self, name: &str) -> io::Result<Vec<u8>>;
    /// How `name` is shown in errors (`templates/pages/home.html`).
    fn describe(&self, name: &str) -> String {
        format!("templates/{name}")
    }
    /// Every template name, for [`Templates::compile_all`]; none by default.
    fn names(&self) -> io::Result<Vec<String>> {
        Ok(Vec::new())
    }
}

/// Templates live under `templates/` of the app, on disk or in the pack.
impl Loader for AppFiles {
    fn load(&self, name: &str) -> io::Result<Vec<u8>> {
        self.read(&format!("templates/{name}"))
            .map(|c| c.into_owned())
    }
    fn names(&self) -> io::Result<Vec<String>> {
        crate::check::names(self)
    }
}

/// A compiled template, ready to render any number of times.
#[derive(Debug)]
pub struct Template {
    /// `templates/pages/home.html`, or `(string)` for `render_string`.
    pub(crate) file: String,
    pub(crate) source: Box<str>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) blocks: Vec<BlockDef>,
    pub(crate) includes: Vec<Rc<Template>>,
    pub(crate) parent: Option<Rc<Template>>,
    pub(crate) limits: Limits,
    /// The size of the last output, to size the next one's buffer at once.
    pub(crate) last_len: std::cell::Cell<usize>,
    /// Every interned field name a render may read (its blocks, partials
    /// and parents included), by id: handed to [`crate::Host::prepare`].
    pub(crate) keys: Box<[Key]>,
}

impl Template {
    /// The file it came from, as shown in errors.
    pub fn file(&self) -> &str {
        &self.file
    }

    pub(crate) fn error(&self, kind: ErrorKind, pos: u32, msg: impl Into<String>) -> Error {
        Error::at(kind, &self.file, &self.source, pos, msg)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Edge {
    /// The template asked for by `render`.
    Root,
    Extends,
    Include,
}

/// The per-VM template cache.
pub struct Templates {
    loader: Box<dyn Loader>,
    names: Names,
    cache: HashMap<String, Rc<Template>>,
    limits: Limits,
}

impl Templates {
    pub fn new(loader: impl Loader + 'static) -> Templates {
        Templates::with_limits(loader, Limits::default())
    }

    pub fn with_limits(loader: impl Loader + 'static, limits: Limits) -> Templates {
        Templates {
            loader: Box::new(loader),
            names: Names::new(),
            cache: HashMap::new(),
            limits,
        }
    }

    pub(crate) fn loader(&self) -> &dyn Loader {
        &*self.loader
    }

    /// The field names compiled so far (see [`Names`]).
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Forget every compiled template (`template.clear_cache()`).
    pub fn clear(&mut self) {
        self.cache.clear();
    }

    /// Template `name` (relative to `templates/`), compiled once and cached.
    pub fn get(&mut self, name: &str) -> Result<Rc<Template>, Error> {
        if let Some(t) = self.cache.get(name) {
            return Ok(t.clone());
        }
        check_name(name).map_err(|m| Error::bare(ErrorKind::InvalidName, m))?;
        self.load(name, &mut vec![(name.to_string(), Edge::Root)])
    }

    /// Compile `source` (not cached; its `extends`/`include` names are).
    pub fn compile_str(&mut self, source: &str) -> Result<Rc<Template>, Error> {
        self.compile("(string)".into(), source, &mut Vec::new())
            .map(Rc::new)
    }

    fn load(&mut self, name: &str, stack: &mut Vec<(String, Edge)>) -> Result<Rc<Template>, Error> {
        if let Some(t) = self.cache.get(name) {
            return Ok(t.clone());
        }
        let file = self.loader.describe(name);
        let bytes = self.loader.load(name).map_err(|e| {
            let why = if e.kind() == io::ErrorKind::NotFound {
                "no such file".to_string()
            } else {
                e.to_string()
            };
            Error::bare(
                ErrorKind::NotFound,
                format!("template not found: {name} ({file}: {why})"),
            )
        })?;
        let source = String::from_utf8(bytes)
            .map_err(|_| Error::bare(ErrorKind::Syntax, format!("{file}: not valid UTF-8")))?;
        let t = Rc::new(self.compile(file, &source, stack)?);
        if self.cache.len() >= self.limits.max_cached {
            self.cache.clear();
        }
        self.cache.insert(name.to_string(), t.clone());
        Ok(t)
    }

    fn compile(
        &mut self,
        file: String,
        source: &str,
        stack: &mut Vec<(String, Edge)>,
    ) -> Result<Template, Error> {
        if source.len() > self.limits.max_size {
            return Err(Error::bare(
                ErrorKind::Limit,
                format!(
                    "{file}: template too large ({} bytes; at most {})",
                    source.len(),
                    self.limits.max_size
                ),
            ));
        }
        let parsed = parse(source, &mut self.names)
            .map_err(|f| Error::at(ErrorKind::Syntax, &file, source, f.pos, f.msg))?;
        let at = |kind, pos, msg: String| Error::at(kind, &file, source, pos, msg);
        let mut includes = Vec::with_capacity(parsed.includes.len());
        for (name, pos) in &parsed.includes {
            let t = self
                .resolve(name, Edge::Include, stack)
                .map_err(|(kind, msg)| at(kind, *pos, msg))??;
            includes.push(t);
        }
        let parent = match &parsed.extends {
            Some((name, pos)) => Some(
                self.resolve(name, Edge::Extends, stack)
                    .map_err(|(kind, msg)| at(kind, *pos, msg))??,
            ),
            None => None,
        };
        let mut keys = Vec::new();
        for n in parsed
            .nodes
            .iter()
            .chain(parsed.blocks.iter().flat_map(|b| &b.body))
        {
            n.keys(&mut keys);
        }
        for t in includes.iter().chain(&parent) {
            keys.extend(t.keys.iter().cloned());
        }
        keys.retain(|k| k.id != Key::UNCACHED);
        keys.sort_by_key(|k| k.id);
        keys.dedup_by_key(|k| k.id);
        Ok(Template {
            keys: keys.into(),
            file,
            source: source.into(),
            nodes: parsed.nodes,
            blocks: parsed.blocks,
            includes,
            parent,
            limits: self.limits,
            last_len: std::cell::Cell::new(0),
        })
    }

    /// Compile a template named by `extends`/`include`. The outer error is
    /// about the tag itself (placed at the tag by the caller); the inner one
    /// comes from the named template and already says where.
    #[allow(clippy::type_complexity)]
    fn resolve(
        &mut self,
        name: &str,
        edge: Edge,
        stack: &mut Vec<(String, Edge)>,
    ) -> Result<Result<Rc<Template>, Error>, (ErrorKind, String)> {
        check_name(name).map_err(|m| (ErrorKind::InvalidName, m))?;
        let tag = if edge == Edge::Extends {
            "extends"
        } else {
            "include"
        };
        if stack.iter().any(|(n, _)| n == name) {
            let chain: Vec<&str> = stack.iter().map(|(n, _)| n.as_str()).collect();
            return Err((
                ErrorKind::Limit,
                format!("circular {tag}: {} → {name}", chain.join(" → ")),
            ));
        }
        let limit = if edge == Edge::Extends {
            self.limits.max_extends
        } else {
            self.limits.max_includes
        };
        let count = stack.iter().filter(|(_, e)| *e == edge).count();
        if count >= limit {
            return Err((
                ErrorKind::Limit,
                format!("{tag} depth limit exceeded (max {limit})"),
            ));
        }
        stack.push((name.to_string(), edge));
        let result = self.load(name, stack);
        stack.pop();
        match result {
            Err(e) if e.location.is_empty() => Err((e.kind, e.message)),
            other => Ok(other),
        }
    }
}

/// A template name must be a clean path below `templates/`.
fn check_name(name: &str) -> Result<(), String> {
    let bad = name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || name.split('/').any(|p| p == ".." || p.is_empty());
    if bad {
        Err(format!(
            "invalid template name: {name:?} (use a path under templates/, such as \"pages/home.html\")"
        ))
    } else {
        Ok(())
    }
}
