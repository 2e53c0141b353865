//! Which app file a `/static/…` request names, if any.

use cove_core::percent_decode;

/// `/static/a/my%20b.css` → `static/a/my b.css`. `None` (the request falls
/// through to routing) for anything that could name a file outside
/// `static/` or that a built app would not have: each segment is
/// percent-decoded first and then must be non-empty, must not start with
/// `.` (`.`, `..`, dot-files: `cove build` packs no dot-files, so a
/// directory must not serve them either) and must not hold `/`, `\` or NUL
/// (an encoded `%2f` or `%00`). Symlinks are checked when the file is opened.
pub(super) fn file_of(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/static/")?;
    let mut rel = String::with_capacity("static".len() + 1 + rest.len());
    rel.push_str("static");
    for segment in rest.split('/') {
        let segment = percent_decode(segment, false);
        if segment.is_empty() || segment.starts_with('.') || segment.contains(['/', '\\', '\0']) {
            return None;
        }
        rel.push('/');
        rel.push_str(&segment);
    }
    Some(rel)
}

#[cfg(test)]
mod tests {
    use super::file_of;

    #[test]
    fn maps_and_decodes() {
        assert_eq!(file_of("/static/a.css").as_deref(), Some("static/a.css"));
        assert_eq!(
            file_of("/static/sub/my%20file.css").as_deref(),
            Some("static/sub/my file.css")
        );
        assert_eq!(file_of("/static/a.b.c").as_deref(), Some("static/a.b.c"));
    }

    #[test]
    fn refuses_what_could_escape() {
        for bad in [
            "/static/",
            "/static",
            "/staticx/a.css",
            "/other/a.css",
            "/static//etc/passwd",
            "/static/../app.lua",
            "/static/a/../../app.lua",
            "/static/%2e%2e/app.lua",
            "/static/%2E%2E/app.lua",
            "/static/.%2e/app.lua",
            "/static/%2fetc%2fpasswd",
            "/static/a%2F..%2F..%2Fapp.lua",
            "/static/..%5capp.lua",
            "/static/a\\..\\app.lua",
            "/static/a%00.css",
            "/static/./a.css",
            "/static/.env",
            "/static/sub/",
        ] {
            assert_eq!(file_of(bad), None, "{bad}");
        }
    }
}
