//! Small lexical checks on SQL text: reserved names, NUL bytes, blank text, several statements.

use crate::error::DbError;

/// The reserved table prefix, compared ASCII case-insensitively.
const RESERVED: &[u8] = b"_hull_";

/// True when `sql` mentions `_hull_` anywhere (any ASCII case), even inside a string literal.
///
/// Hull's reserved-table check, kept for PostgreSQL, which has no authorizer
/// (SQLite's check is sqlite/guard.rs), and for the bindings to tell a stdlib
/// query from an app's before it waits on the network.
pub fn mentions_reserved(sql: &str) -> bool {
    sql.as_bytes()
        .windows(RESERVED.len())
        .any(|w| w.eq_ignore_ascii_case(RESERVED))
}

/// An error for SQL text with a NUL byte: SQLite would stop reading there and
/// silently ignore the rest.
pub(crate) fn refuse_nul(sql: &str) -> Result<(), DbError> {
    if sql.contains('\0') {
        return Err(DbError::Sql("the SQL contains a NUL byte".to_owned()));
    }
    Ok(())
}

/// True when `sql` holds nothing but whitespace, comments and `;`.
pub(crate) fn is_blank(sql: &str) -> bool {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_whitespace() || c == b';' => i += 1,
            b'-' if b.get(i + 1) == Some(&b'-') => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_end(b, i),
            _ => return false,
        }
    }
    true
}

/// True when text other than whitespace/comments follows the first top-level `;`.
///
/// Quotes (`'`, `"`, `` ` ``, `[...]`) and comments are skipped. A `CREATE TRIGGER` body
/// counts as several statements; callers only consult this after SQLite refused to prepare.
pub(crate) fn has_several_statements(sql: &str) -> bool {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        i = match b[i] {
            b';' => return !is_blank(&sql[i + 1..]),
            b'-' if b.get(i + 1) == Some(&b'-') => line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => block_end(b, i),
            q @ (b'\'' | b'"' | b'`') => closing(b, i, q),
            b'[' => closing(b, i, b']'),
            _ => i + 1,
        };
    }
    false
}

/// Index just past the newline ending the `--` comment that starts at `i`.
fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p + 1)
}

/// Index just past the `*/` closing the comment that starts at `i` (or the end of text).
fn block_end(b: &[u8], i: usize) -> usize {
    b[i + 2..]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(b.len(), |p| i + 2 + p + 2)
}

/// Index just past the `close` byte ending the quoted token that starts at `i`.
/// A doubled quote (`''`) reads as closing and reopening, which scans the same.
fn closing(b: &[u8], i: usize, close: u8) -> usize {
    b[i + 1..]
        .iter()
        .position(|&c| c == close)
        .map_or(b.len(), |p| i + 1 + p + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_is_found_in_any_case_and_place() {
        assert!(mentions_reserved("SELECT * FROM _hull_sessions"));
        assert!(mentions_reserved("select * from _HULL_Migrations"));
        assert!(mentions_reserved("SELECT '_Hull_x'"));
        assert!(!mentions_reserved("SELECT * FROM hull_sessions"));
        assert!(!mentions_reserved("SELECT '_hul_'"));
    }

    #[test]
    fn blank_text_is_whitespace_comments_and_semicolons() {
        assert!(is_blank(""));
        assert!(is_blank("  \n\t;; -- note\n /* block\n */ ;"));
        assert!(is_blank("-- only a comment"));
        assert!(is_blank("/* unterminated"));
        assert!(!is_blank("-- c\nSELECT 1"));
        assert!(!is_blank("/* c */ x"));
    }

    #[test]
    fn several_statements_are_told_apart_from_one() {
        assert!(!has_several_statements("SELECT 1"));
        assert!(!has_several_statements("SELECT 1;  -- done\n ; "));
        assert!(!has_several_statements(
            "SELECT 'a;b', \"c;d\", `e;f`, [g;h] /* ; */ -- ;\n"
        ));
        assert!(!has_several_statements("SELECT 'it''s; fine'"));
        assert!(has_several_statements(
            "CREATE TABLE t(x); INSERT INTO t VALUES(1)"
        ));
        assert!(has_several_statements("SELECT 1;SELECT 2;"));
    }
}
