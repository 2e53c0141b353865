//! MCP resources: the API reference pages built into the binary
//! (`cove://docs/api/<page>.md`) and the app's text files
//! (`cove://app/<relative path>`).

use std::path::Path;
use std::sync::OnceLock;

use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents};
use rmcp::ErrorData as McpError;

const DOCS: &str = "cove://docs/api/";
const APP: &str = "cove://app/";
/// Larger app files are left out: resources are for reading, not data.
const MAX_FILE: u64 = 1 << 20;

/// (page file name, markdown), rendered once.
fn docs() -> &'static [(String, String)] {
    static DOCS_PAGES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    DOCS_PAGES.get_or_init(|| {
        cove_caps::api::render::committed()
            .into_iter()
            .filter_map(|g| {
                let page = g.path.strip_prefix("docs/api/")?.to_string();
                page.ends_with(".md").then_some((page, g.text))
            })
            .collect()
    })
}

/// The app's files (as `walk_app_dir` lists them: no dot-directories such
/// as .cove/, no databases) that are UTF-8 text of at most 1 MiB.
fn app_files(dir: &Path) -> Vec<(String, String)> {
    let names = cove_core::walk_app_dir(dir).unwrap_or_default();
    names
        .into_iter()
        .filter_map(|rel| {
            let path = dir.join(&rel);
            if path.metadata().ok()?.len() > MAX_FILE {
                return None;
            }
            let text = String::from_utf8(std::fs::read(&path).ok()?).ok()?;
            Some((rel, text))
        })
        .collect()
}

fn mime(name: &str) -> &'static str {
    match name.rsplit_once('.').map_or("", |(_, ext)| ext) {
        "md" => "text/markdown",
        "lua" => "text/x-lua",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "json" => "application/json",
        "sql" => "application/sql",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        _ => "text/plain",
    }
}

pub fn list(dir: &Path) -> Result<ListResourcesResult, McpError> {
    let docs = docs().iter().map(|(page, _)| {
        Resource::new(format!("{DOCS}{page}"), format!("docs/api/{page}"))
            .with_description("Cove API reference")
            .with_mime_type("text/markdown")
    });
    let files = app_files(dir).into_iter().map(|(rel, _)| {
        Resource::new(format!("{APP}{rel}"), rel.clone())
            .with_description("a file of the app")
            .with_mime_type(mime(&rel))
    });
    Ok(ListResourcesResult::with_all_items(
        docs.chain(files).collect(),
    ))
}

pub fn read(dir: &Path, uri: &str) -> Result<ReadResourceResult, McpError> {
    let found = if let Some(page) = uri.strip_prefix(DOCS) {
        docs()
            .iter()
            .find(|(p, _)| p == page)
            .map(|(p, t)| (mime(p), t.clone()))
    } else if let Some(rel) = uri.strip_prefix(APP) {
        // Only what `list` offers: no `..`, no .cove/, no databases.
        app_files(dir)
            .into_iter()
            .find(|(r, _)| r == rel)
            .map(|(r, t)| (mime(&r), t))
    } else {
        None
    };
    let Some((mime_type, text)) = found else {
        return Err(McpError::resource_not_found(
            format!(
                "no resource {uri} (resources/list names them: cove://docs/api/… and cove://app/…)"
            ),
            None,
        ));
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::TextResourceContents {
            uri: uri.to_string(),
            mime_type: Some(mime_type.to_string()),
            text,
            meta: None,
        },
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_and_app_files_are_listed_and_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.lua"), "-- hi\n").unwrap();
        std::fs::write(dir.path().join("data.db"), "x").unwrap();
        std::fs::write(dir.path().join("blob.bin"), [0xff, 0xfe]).unwrap();
        std::fs::create_dir(dir.path().join(".cove")).unwrap();
        std::fs::write(dir.path().join(".cove/dev.json"), "{}").unwrap();
        let listed = list(dir.path()).unwrap();
        let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
        assert!(uris.contains(&"cove://docs/api/README.md"), "{uris:?}");
        let app: Vec<&&str> = uris.iter().filter(|u| u.starts_with(APP)).collect();
        assert_eq!(app, [&"cove://app/app.lua"]);
        let read_text = |uri: &str| match &read(dir.path(), uri).unwrap().contents[0] {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(read_text("cove://app/app.lua"), "-- hi\n");
        assert!(read_text("cove://docs/api/README.md").contains("# API reference"));
        for missing in [
            "cove://app/../etc/passwd",
            "cove://app/.cove/dev.json",
            "cove://app/data.db",
            "file:///x",
        ] {
            assert!(read(dir.path(), missing).is_err(), "{missing}");
        }
    }
}
