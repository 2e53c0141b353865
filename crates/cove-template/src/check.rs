//! Compiling every template of an app at once. `cove dev` does it in each
//! VM it builds, so that a template that does not parse fails the (re)load
//! with its file and line rather than the first request for it, and so that
//! a VM goes on rendering the templates it was built with after they are
//! edited on disk.

use std::io;

use cove_core::{walk_app_dir, AppFiles};

use crate::cache::Templates;
use crate::error::{Error, ErrorKind};

impl Templates {
    /// Compile every template the loader lists (see [`crate::Loader::names`])
    /// into the cache, as `render` would (`extends` and `include`
    /// resolved). The errors come each once: a broken partial is not
    /// reported again by every template that includes it. Files that are not
    /// UTF-8 text (an image kept beside the templates) are not templates and
    /// are left out. Returns how many compiled. More templates than
    /// [`crate::Limits::max_cached`] are all checked, but only the last
    /// ones stay cached.
    pub fn compile_all(&mut self) -> Result<usize, Vec<Error>> {
        let names = self.loader().names().map_err(|e| {
            vec![Error::bare(
                ErrorKind::NotFound,
                format!("cannot list the templates: {e}"),
            )]
        })?;
        let mut errors: Vec<Error> = Vec::new();
        let mut compiled = 0;
        for name in names {
            let is_text = self
                .loader()
                .load(&name)
                .is_ok_and(|bytes| std::str::from_utf8(&bytes).is_ok());
            if !is_text {
                continue;
            }
            match self.get(&name) {
                Ok(_) => compiled += 1,
                Err(e) if !errors.contains(&e) => errors.push(e),
                Err(_) => {}
            }
        }
        if errors.is_empty() {
            Ok(compiled)
        } else {
            Err(errors)
        }
    }
}

/// The files under `templates/` of an app, relative to it, sorted: the
/// files it ships (see [`walk_app_dir`]; no dot-files).
pub(crate) fn names(files: &AppFiles) -> io::Result<Vec<String>> {
    let all = match files {
        AppFiles::Dir(root) => walk_app_dir(root)?,
        AppFiles::Pack(pack) => pack.files.keys().cloned().collect(),
    };
    Ok(all
        .iter()
        .filter_map(|rel| rel.strip_prefix("templates/"))
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cove_core::Pack;

    use super::*;

    fn pack(files: &[(&str, &[u8])]) -> Templates {
        let mut pack = Pack::default();
        for (name, text) in files {
            pack.files.insert((*name).into(), text.to_vec());
        }
        Templates::new(AppFiles::Pack(Arc::new(pack)))
    }

    #[test]
    fn every_template_compiles_into_the_cache() {
        let mut t = pack(&[
            ("app.lua", b"x"),
            (
                "templates/base.html",
                b"<main>{% block body %}{% end %}</main>",
            ),
            (
                "templates/pages/home.html",
                b"{% extends \"base.html\" %}{% block body %}{{ x }}{% end %}",
            ),
            ("templates/logo.png", b"\x89PNG\r\n\x1a\n\xff"),
            ("other/not.html", b"{% if %}"),
        ]);
        assert_eq!(t.compile_all(), Ok(2));
        assert_eq!(
            t.get("pages/home.html").unwrap().file(),
            "templates/pages/home.html"
        );
        assert_eq!(pack(&[("app.lua", b"x")]).compile_all(), Ok(0));
    }

    #[test]
    fn names_each_broken_template_once() {
        let mut t = pack(&[
            ("templates/a.html", b"{% include \"partials/bad.html\" %}"),
            ("templates/b.html", b"{% include \"partials/bad.html\" %}"),
            ("templates/partials/bad.html", b"ok\n{{ x | uper }}"),
            ("templates/c.html", b"{% if x %}"),
            ("templates/d.html", b"{% include \"missing.html\" %}"),
        ]);
        let errors: Vec<String> = t
            .compile_all()
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            errors[0].starts_with("templates/partials/bad.html:2:"),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("templates/c.html:1:1: "),
            "{errors:?}"
        );
        assert!(errors[2].starts_with("templates/d.html:1:"), "{errors:?}");
        assert!(
            errors[2].contains("template not found: missing.html"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_compiled_template_outlives_its_edit() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("templates/ok.html", "{{ a }}");
        write("templates/.swp.html", "{% if %}");
        let files = AppFiles::Dir(dir.path().into());
        let mut t = Templates::new(files.clone());
        assert_eq!(t.compile_all(), Ok(1));
        write("templates/ok.html", "{% if %}");
        assert!(t.get("ok.html").is_ok(), "the cached version is kept");
        write("templates/deep/er/bad.html", "\n\n{% for %}");
        let errors = Templates::new(files).compile_all().unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0]
                .location
                .starts_with("templates/deep/er/bad.html:3:"),
            "{errors:?}"
        );
        assert!(
            errors[1].location.starts_with("templates/ok.html:1:"),
            "{errors:?}"
        );
    }
}
