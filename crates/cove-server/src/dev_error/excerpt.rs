//! The source lines around the line an error names, read from the app's
//! own files.

use cove_core::AppFiles;

use cove_core::location::Location;

/// Lines shown before and after the failing one.
pub(crate) const CONTEXT: usize = 5;
/// Longer lines (minified code) are cut, in characters.
const MAX_LINE_CHARS: usize = 300;
/// A larger file is not read for an excerpt.
const MAX_FILE: u64 = 8 * 1024 * 1024;

/// One line of source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// 1-based.
    pub number: usize,
    pub text: String,
}

/// The lines around `loc`, or `None` if its file cannot be shown: it is
/// not in the app directory (paths that leave it are refused, symlinks
/// included, by [`AppFiles`]), it is a dot-file (`.env`), it is too large,
/// or it has no such line.
pub(crate) fn read(files: &AppFiles, loc: &Location) -> Option<Vec<Line>> {
    let hidden = loc
        .file
        .split('/')
        .any(|part| part.starts_with('.') && part != "." && part != "..");
    if hidden || files.len(&loc.file).ok()? > MAX_FILE {
        return None;
    }
    let bytes = files.read(&loc.file).ok()?;
    around(&String::from_utf8_lossy(&bytes), loc.line, CONTEXT)
}

/// Lines `line - context ..= line + context` of `text` (as far as it
/// goes); `None` if it has no line `line`.
pub(crate) fn around(text: &str, line: usize, context: usize) -> Option<Vec<Line>> {
    let first = line.checked_sub(1)?.saturating_sub(context);
    let lines: Vec<Line> = text
        .lines()
        .enumerate()
        .skip(first)
        .take(line - first + context)
        .map(|(i, text)| Line {
            number: i + 1,
            text: cut(text),
        })
        .collect();
    lines
        .last()
        .is_some_and(|l| l.number >= line)
        .then_some(lines)
}

fn cut(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(lines: &[Line]) -> Vec<usize> {
        lines.iter().map(|l| l.number).collect()
    }

    #[test]
    fn takes_the_lines_either_side() {
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let lines = around(&text, 10, 5).unwrap();
        assert_eq!(numbers(&lines), (5..=15).collect::<Vec<_>>());
        assert_eq!(lines[5].text, "line 10");
        // Clipped at both ends of the file.
        assert_eq!(
            numbers(&around(&text, 2, 5).unwrap()),
            (1..=7).collect::<Vec<_>>()
        );
        assert_eq!(
            numbers(&around(&text, 20, 5).unwrap()),
            (15..=20).collect::<Vec<_>>()
        );
    }

    #[test]
    fn no_such_line_is_none() {
        assert_eq!(around("a\nb\n", 3, 5), None);
        assert_eq!(around("a\nb\n", 0, 5), None);
        assert_eq!(around("", 1, 5), None);
    }

    #[test]
    fn crlf_and_long_lines() {
        let lines = around("a\r\nb\r\n", 2, 5).unwrap();
        assert_eq!(lines[1].text, "b");
        let long = "é".repeat(MAX_LINE_CHARS + 10);
        let cut = &around(&long, 1, 0).unwrap()[0].text;
        assert_eq!(cut.chars().count(), MAX_LINE_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn reads_only_inside_the_app_directory() {
        let root = tempfile::tempdir().unwrap();
        let app = root.path().join("app");
        std::fs::create_dir_all(app.join("lib")).unwrap();
        std::fs::write(app.join("app.lua"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(app.join(".env"), "SECRET=1\n").unwrap();
        std::fs::write(root.path().join("outside.lua"), "secret\n").unwrap();
        std::os::unix::fs::symlink(root.path().join("outside.lua"), app.join("lib/link.lua"))
            .unwrap();
        let files = AppFiles::Dir(app);
        let at = |file: &str, line| Location {
            file: file.into(),
            line,
            column: None,
        };
        let lines = read(&files, &at("app.lua", 2)).unwrap();
        assert_eq!(numbers(&lines), vec![1, 2, 3]);
        assert_eq!(lines[1].text, "two");
        for file in [
            "../outside.lua",
            "/etc/passwd",
            "lib/link.lua",
            ".env",
            "lib/../.env",
            "nope.lua",
        ] {
            assert_eq!(read(&files, &at(file, 1)), None, "{file}");
        }
    }
}
