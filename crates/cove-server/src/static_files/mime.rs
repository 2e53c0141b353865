//! Content types: Hull's table (§8) first, then `mime_guess`'s, then
//! `application/octet-stream`.

/// Hull's table, exactly (lower-case extensions).
const HULL: [(&str, &str); 20] = [
    ("html", "text/html; charset=utf-8"),
    ("css", "text/css"),
    ("js", "application/javascript"),
    ("json", "application/json"),
    ("txt", "text/plain; charset=utf-8"),
    ("xml", "application/xml"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("ico", "image/x-icon"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("ttf", "font/ttf"),
    ("pdf", "application/pdf"),
    ("mp4", "video/mp4"),
    ("webm", "video/webm"),
    ("map", "application/json"),
];

const UNKNOWN: &str = "application/octet-stream";

/// The Content-Type for a file name, by its extension (any case). Hull
/// sends octet-stream for everything outside its table; Cove asks
/// `mime_guess` first, because browsers refuse module scripts (`.mjs`) and
/// stream-compiled WebAssembly (`.wasm`) served as octet-stream.
pub(super) fn content_type(name: &str) -> &'static str {
    let file = name.rsplit('/').next().unwrap_or(name);
    let Some((_, ext)) = file.rsplit_once('.') else {
        return UNKNOWN;
    };
    if let Some((_, t)) = HULL.iter().find(|(e, _)| e.eq_ignore_ascii_case(ext)) {
        return t;
    }
    mime_guess::from_ext(ext).first_raw().unwrap_or(UNKNOWN)
}

/// Whether compressing a body of this type pays: text, scripts, JSON, XML
/// and SVG. Images, fonts, video and archives are compressed already.
pub(super) fn compressible(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/javascript" | "application/json" | "application/xml"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hull_table_wins() {
        assert_eq!(content_type("static/a.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("static/A.CSS"), "text/css");
        assert_eq!(content_type("static/x.js"), "application/javascript");
        assert_eq!(content_type("static/x.js.map"), "application/json");
        assert_eq!(content_type("static/x.ico"), "image/x-icon");
        assert_eq!(content_type("static/t.txt"), "text/plain; charset=utf-8");
        for (ext, t) in HULL {
            assert_eq!(content_type(&format!("f.{ext}")), t);
        }
    }

    #[test]
    fn others_are_guessed_or_octet_stream() {
        assert_eq!(content_type("static/m.mjs"), "application/javascript");
        assert_eq!(content_type("static/w.wasm"), "application/wasm");
        assert_eq!(content_type("static/data.bin_x"), UNKNOWN);
        assert_eq!(content_type("static/Makefile"), UNKNOWN);
        assert_eq!(content_type("static/dir.d/noext"), UNKNOWN);
    }

    #[test]
    fn compressible_types() {
        for t in [
            "text/css",
            "text/html; charset=utf-8",
            "application/javascript",
            "application/json",
            "image/svg+xml",
            "application/xml",
            "application/manifest+json",
        ] {
            assert!(compressible(t), "{t}");
        }
        for t in ["image/png", "font/woff2", "video/mp4", UNKNOWN] {
            assert!(!compressible(t), "{t}");
        }
    }
}
