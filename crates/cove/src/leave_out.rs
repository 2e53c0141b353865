//! Which files of an app directory `cove build` leaves out: tooling a
//! served app never reads (its tests, top-level Markdown), plus what
//! `--exclude` names; `--include` keeps a file the defaults would leave.

use anyhow::{Context, Result};
use globset::{Glob, GlobSet, GlobSetBuilder};

/// Left out unless `--include` keeps them: `cove test` reads tests/ from
/// the directory, never from a built app, nothing serves README.md, and
/// the editor configs are for `tsc` and editors (`.cove/` and other
/// dot-files are never packed).
pub(crate) const DEFAULTS: [&str; 4] = ["tests/**", "*.md", "tsconfig.json", "jsconfig.json"];

pub(crate) struct LeaveOut {
    exclude: GlobSet,
    include: GlobSet,
}

fn set(patterns: impl IntoIterator<Item = impl AsRef<str>>, flag: &str) -> Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let p = p.as_ref();
        // `*` stays within one directory, as in a shell; `**` crosses them.
        let glob = globset::GlobBuilder::new(p.trim_end_matches('/'))
            .literal_separator(true)
            .build()
            .with_context(|| format!("{flag} {p}: not a valid pattern"))?;
        set.add(glob);
        // `dir` and `dir/` mean everything under it.
        if !p.contains('*') {
            set.add(Glob::new(&format!("{}/**", p.trim_end_matches('/')))?);
        }
    }
    Ok(set.build()?)
}

impl LeaveOut {
    pub(crate) fn new(exclude: &[String], include: &[String]) -> Result<LeaveOut> {
        Ok(LeaveOut {
            exclude: set(
                DEFAULTS
                    .iter()
                    .copied()
                    .chain(exclude.iter().map(String::as_str)),
                "--exclude",
            )?,
            include: set(include, "--include")?,
        })
    }

    /// Whether `rel` (a path relative to the app directory, `/`-separated) stays out.
    pub(crate) fn leaves(&self, rel: &str) -> bool {
        self.exclude.is_match(rel) && !self.include.is_match(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(exclude: &[&str], include: &[&str]) -> LeaveOut {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        LeaveOut::new(&own(exclude), &own(include)).unwrap()
    }

    #[test]
    fn leaves_tests_and_top_level_markdown_by_default() {
        let r = rule(&[], &[]);
        assert!(r.leaves("tests/test_app.lua"));
        assert!(r.leaves("README.md"));
        assert!(!r.leaves("static/docs/guide.md"));
        assert!(!r.leaves("app.lua"));
        assert!(!r.leaves("templates/index.html"));
        assert!(!r.leaves("lib/tests.lua"));
    }

    #[test]
    fn exclude_adds_and_include_keeps() {
        let r = rule(&["scripts", "static/*.map"], &["tests/fixtures/**"]);
        assert!(r.leaves("scripts/seed.sh"));
        assert!(r.leaves("static/app.js.map"));
        assert!(!r.leaves("static/js/app.js.map"));
        assert!(!r.leaves("tests/fixtures/a.json"));
        assert!(r.leaves("tests/test_app.js"));
    }

    #[test]
    fn a_bad_pattern_names_the_flag() {
        let err = LeaveOut::new(&["a[".into()], &[]).err().unwrap();
        assert!(format!("{err:#}").contains("--exclude a["), "{err:#}");
    }
}
