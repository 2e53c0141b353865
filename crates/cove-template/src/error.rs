//! One error type for the capability. Every error that comes from a template
//! names the file, line and column (`templates/home.html:3:14: …`); the
//! stable [`ErrorKind::code`] lets bindings map it once per runtime.

use std::fmt;

/// What went wrong, with a stable code (`template.syntax`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The template text does not parse.
    Syntax,
    /// A template named by `render`, `include` or `extends` does not exist
    /// or cannot be read.
    NotFound,
    /// A name that is empty, absolute or climbs out of `templates/`.
    InvalidName,
    /// Rendering failed (a value of the wrong kind, a host error).
    Render,
    /// A size, depth or work limit was reached.
    Limit,
}

impl ErrorKind {
    /// The stable code scripts can match on.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "template.syntax",
            ErrorKind::NotFound => "template.not_found",
            ErrorKind::InvalidName => "template.invalid_name",
            ErrorKind::Render => "template.render",
            ErrorKind::Limit => "template.limit",
        }
    }
}

/// A template error: `file:line:col: message` (the position is left out
/// when there is none, as for a missing top-level template).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// `file:line:col`, or empty.
    pub location: String,
    pub message: String,
}

impl Error {
    /// An error with no position (e.g. `render("missing.html")`).
    pub fn bare(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            location: String::new(),
            message: message.into(),
        }
    }

    /// An error at byte offset `pos` of `source`, in the file `file`.
    pub(crate) fn at(
        kind: ErrorKind,
        file: &str,
        source: &str,
        pos: u32,
        message: impl Into<String>,
    ) -> Error {
        let (line, col) = line_col(source, pos as usize);
        Error {
            kind,
            location: format!("{file}:{line}:{col}"),
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.location.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.location, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// 1-based line and column (in characters) of byte offset `pos`.
pub(crate) fn line_col(source: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(source.len());
    while !source.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &source[..pos];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_count_characters() {
        assert_eq!(line_col("abc", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 3), (2, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é{{", 2), (1, 2));
        assert_eq!(line_col("x", 99), (1, 2));
    }

    #[test]
    fn display_names_the_place() {
        let e = Error::at(ErrorKind::Syntax, "templates/a.html", "x\n  {{", 4, "boom");
        assert_eq!(e.to_string(), "templates/a.html:2:3: boom");
        assert_eq!(e.kind.code(), "template.syntax");
        assert_eq!(Error::bare(ErrorKind::NotFound, "nope").to_string(), "nope");
    }
}
