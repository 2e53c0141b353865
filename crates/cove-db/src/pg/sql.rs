//! A lexer for PostgreSQL SQL text: turns Hull's `?` placeholders into `$1`, `$2`, … and
//! reports the statement's shape (first keyword, `RETURNING`, several statements).
//!
//! Apps written for Hull use SQLite's `?`; PostgreSQL only knows `$n`. Rewriting must not
//! touch a `?` inside a string, quoted identifier, comment or function body, so this is a
//! real lexer for the regions PostgreSQL's own scanner treats as opaque:
//!
//! * `'…'` strings (a doubled `''` is a quote), also `B'…'`, `X'…'`, `N'…'` and `U&'…'`;
//! * `E'…'` strings, where a backslash escapes the next character (`E'\''`);
//! * `"…"` quoted identifiers (a doubled `""` is a quote), also `U&"…"`;
//! * `-- …` line comments and `/* … */` block comments, which nest in PostgreSQL;
//! * dollar-quoted bodies `$$…$$` and `$tag$…$tag$`.
//!
//! A region left open at the end of the text runs to the end (PostgreSQL will report the
//! error; the lexer only must not panic or rewrite inside it).
//!
//! `??` stands for one literal `?`: PostgreSQL has operators spelled with `?` (jsonb's
//! `?`, `?|`, `?&`, geometric `?-`, `?|`, …), which would otherwise be taken for a
//! placeholder. Write `data ?? 'key'` or `tags ??| array['a']`, or call the functions
//! behind them (`jsonb_exists(data, 'key')`). `??` becomes `?` in every statement, also
//! in one that uses `$n` placeholders.

use std::fmt::Write as _;

/// PostgreSQL's limit on parameters of one statement (the protocol counts them in 16 bits).
const MAX_PARAMS: usize = 65_535;

/// SQL text ready for PostgreSQL, with what the caller needs to know about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rewritten {
    /// The text with every `?` placeholder numbered (`$1`, `$2`, …) and `??` made `?`.
    pub sql: String,
    /// Number of parameters the statement takes: the count of `?`, or the highest `$n`.
    pub params: usize,
    /// True when the text holds more than one non-blank statement (`SELECT 1; SELECT 2`).
    pub several: bool,
    /// The statement's first keyword.
    pub kind: Kind,
    /// True when a `RETURNING` keyword appears outside strings, identifiers and comments.
    pub returning: bool,
}

/// The first keyword of a statement (leading comments and parentheses skipped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `SELECT …`
    Select,
    /// `INSERT …`
    Insert,
    /// `UPDATE …`
    Update,
    /// `DELETE …`
    Delete,
    /// `WITH …` (a CTE in front of any of the above).
    With,
    /// Anything else (`CREATE`, `VALUES`, `BEGIN`, …) or nothing at all.
    Other,
}

/// Rewrites `?` placeholders of `sql` to `$n` and describes the statement.
///
/// Text that already uses `$n` placeholders (and no `?`) passes through with `params` the
/// highest `n`. Mixing both styles is refused: the numbering would be ambiguous.
pub(crate) fn rewrite(sql: &str) -> Result<Rewritten, String> {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    // `sql[copied..i]` is scanned but not yet copied to `out`.
    let mut copied = 0;
    let mut i = 0;
    let mut questions = 0;
    let mut highest_dollar = 0;
    let mut shape = Shape::default();
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        match (c, next) {
            (b'-', Some(b'-')) => i = line_comment_end(b, i),
            (b'/', Some(b'*')) => i = block_comment_end(b, i),
            (b';', _) => {
                shape.semicolon();
                i += 1;
            }
            (b'?', Some(b'?')) => {
                shape.token(Token::Other);
                out.push_str(&sql[copied..=i]);
                i += 2;
                copied = i;
            }
            (b'?', _) => {
                shape.token(Token::Other);
                questions += 1;
                if questions > MAX_PARAMS {
                    return Err(format!(
                        "too many placeholders: PostgreSQL takes at most {MAX_PARAMS}"
                    ));
                }
                out.push_str(&sql[copied..i]);
                // Writing to a String cannot fail.
                let _ = write!(out, "${questions}");
                i += 1;
                copied = i;
            }
            (b'\'', _) => {
                shape.token(Token::Other);
                i = quoted_end(b, i + 1, b'\'');
            }
            (b'"', _) => {
                shape.token(Token::Other);
                i = quoted_end(b, i + 1, b'"');
            }
            (b'$', _) => {
                shape.token(Token::Other);
                let (end, param) = dollar(b, i)?;
                highest_dollar = highest_dollar.max(param.unwrap_or(0));
                i = end;
            }
            (b'(', _) => {
                shape.token(Token::Open);
                i += 1;
            }
            _ if is_word_byte(c) => {
                let end = word_end(b, i);
                i = after_word(b, &sql[i..end], end, &mut shape);
            }
            _ => {
                shape.token(Token::Other);
                i += 1;
            }
        }
    }
    out.push_str(&sql[copied..]);
    if questions > 0 && highest_dollar > 0 {
        return Err("use either ? or $1-style placeholders, not both".to_owned());
    }
    Ok(Rewritten {
        sql: out,
        params: questions.max(highest_dollar),
        several: shape.several,
        kind: shape.kind.unwrap_or(Kind::Other),
        returning: shape.returning,
    })
}

/// A significant token, as far as the statement's shape cares.
enum Token<'a> {
    /// A keyword or unquoted identifier.
    Word(&'a str),
    /// `(`: skipped when looking for the first keyword (`(SELECT …) UNION …`).
    Open,
    /// Anything else that is not blank: literals, operators, placeholders, quoted names.
    Other,
}

/// What is learnt about the statements while scanning.
#[derive(Default)]
struct Shape {
    /// Decided by the first significant token other than `(`.
    kind: Option<Kind>,
    returning: bool,
    /// A significant token was seen (in this statement or an earlier one).
    seen: bool,
    /// A `;` followed a significant token: any further token starts another statement.
    ended: bool,
    several: bool,
}

impl Shape {
    fn token(&mut self, token: Token<'_>) {
        if self.ended {
            self.several = true;
        }
        self.seen = true;
        match token {
            Token::Word(w) => {
                if self.kind.is_none() {
                    self.kind = Some(keyword_kind(w));
                }
                self.returning |= w.eq_ignore_ascii_case("returning");
            }
            Token::Open => {}
            Token::Other => {
                self.kind.get_or_insert(Kind::Other);
            }
        }
    }

    fn semicolon(&mut self) {
        if self.seen {
            self.ended = true;
        }
    }
}

/// The statement kind a first keyword names.
fn keyword_kind(word: &str) -> Kind {
    const KINDS: [(&str, Kind); 5] = [
        ("select", Kind::Select),
        ("insert", Kind::Insert),
        ("update", Kind::Update),
        ("delete", Kind::Delete),
        ("with", Kind::With),
    ];
    KINDS
        .iter()
        .find(|(k, _)| word.eq_ignore_ascii_case(k))
        .map_or(Kind::Other, |&(_, kind)| kind)
}

/// Handles the word `sql[..end]` just scanned; returns where scanning goes on.
///
/// A word is also the prefix of some quoted tokens: `E'…'` (backslash escapes) and
/// `U&'…'` / `U&"…"`. `B'…'`, `X'…'` and `N'…'` need nothing special: the quote that
/// follows is lexed as a plain string.
fn after_word(b: &[u8], word: &str, end: usize, shape: &mut Shape) -> usize {
    let next = b.get(end).copied();
    if word.eq_ignore_ascii_case("e") && next == Some(b'\'') {
        shape.token(Token::Other);
        return escape_string_end(b, end + 1);
    }
    if word.eq_ignore_ascii_case("u") && next == Some(b'&') {
        if let Some(&q @ (b'\'' | b'"')) = b.get(end + 1) {
            shape.token(Token::Other);
            return quoted_end(b, end + 2, q);
        }
    }
    shape.token(Token::Word(word));
    end
}

/// True for bytes that may start a keyword, identifier or number. Bytes of non-ASCII
/// characters count as letters, as in PostgreSQL.
fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// Index just past the word starting at `i`; `$` continues a word (`a$b` is one identifier,
/// so `x$1` holds no placeholder).
fn word_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| !(is_word_byte(c) || c == b'$'))
        .map_or(b.len(), |p| i + p)
}

/// Index just past the newline ending the `--` comment that starts at `i`.
fn line_comment_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p + 1)
}

/// Index just past the `*/` closing the `/*` comment at `i`, counting nested comments.
fn block_comment_end(b: &[u8], i: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j + 1 < b.len() {
        match (b[j], b[j + 1]) {
            (b'/', b'*') => {
                depth += 1;
                j += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return j;
                }
            }
            _ => j += 1,
        }
    }
    b.len()
}

/// Index just past the `quote` closing a token whose body starts at `i`. A doubled quote
/// reads as closing and reopening, which scans the same.
fn quoted_end(b: &[u8], i: usize, quote: u8) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == quote)
        .map_or(b.len(), |p| i + p + 1)
}

/// Index just past the `'` closing an `E'…'` string whose body starts at `i`.
///
/// A backslash escapes the next byte. PostgreSQL goes on with the same (escaping) string
/// when whitespace holding a newline and another `'` follow (`E'a'\n'b\'c'`).
fn escape_string_end(b: &[u8], mut i: usize) -> usize {
    loop {
        while i < b.len() && b[i] != b'\'' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        if i >= b.len() {
            return b.len();
        }
        i += 1;
        match continuation(b, i) {
            Some(body) => i = body,
            None => return i,
        }
    }
}

/// Where the body of a continued string starts when whitespace with a newline and then
/// `'` follow index `i`.
fn continuation(b: &[u8], i: usize) -> Option<usize> {
    let gap = b[i..].iter().position(|c| !c.is_ascii_whitespace())?;
    let newline = b[i..i + gap].iter().any(|&c| c == b'\n' || c == b'\r');
    (newline && b[i + gap] == b'\'').then_some(i + gap + 1)
}

/// Scans the `$` at `i`: a positional parameter `$n` (returned as `Some(n)`), a
/// dollar-quoted body `$tag$…$tag$`, or a lone `$`. Returns the index just past it.
fn dollar(b: &[u8], i: usize) -> Result<(usize, Option<usize>), String> {
    let rest = &b[i + 1..];
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        let n = std::str::from_utf8(&rest[..digits])
            .ok()
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|&n| n <= MAX_PARAMS)
            .ok_or_else(|| format!("placeholder numbers go up to ${MAX_PARAMS}"))?;
        return Ok((i + 1 + digits, Some(n)));
    }
    // A tag is identifier characters without `$`, not starting with a digit.
    let tag = rest.iter().take_while(|&&c| is_word_byte(c)).count();
    if rest.get(tag) != Some(&b'$') {
        return Ok((i + 1, None));
    }
    let delimiter = &b[i..i + tag + 2];
    let body = i + tag + 2;
    let end = b[body..]
        .windows(delimiter.len())
        .position(|w| w == delimiter)
        .map_or(b.len(), |p| body + p + delimiter.len());
    Ok((end, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str) -> String {
        rewrite(text).expect("rewrites").sql
    }

    fn params(text: &str) -> usize {
        rewrite(text).expect("rewrites").params
    }

    #[test]
    fn question_marks_are_numbered_in_order() {
        let r = rewrite("SELECT * FROM t WHERE a = ? AND b IN (?, ?)").unwrap();
        assert_eq!(r.sql, "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)");
        assert_eq!(r.params, 3);
        assert_eq!(sql("?"), "$1");
        assert_eq!(sql("x=?::int"), "x=$1::int");
        assert_eq!(params("SELECT 1"), 0);
    }

    #[test]
    fn strings_keep_their_question_marks() {
        assert_eq!(sql("SELECT 'it''s ?', ?"), "SELECT 'it''s ?', $1");
        assert_eq!(sql("SELECT '?''?', ?"), "SELECT '?''?', $1");
        assert_eq!(
            sql("SELECT B'1?', X'?', N'?' || ?"),
            "SELECT B'1?', X'?', N'?' || $1"
        );
        // In a standard string a backslash is an ordinary character.
        assert_eq!(sql(r"SELECT '\', ?"), r"SELECT '\', $1");
    }

    #[test]
    fn escape_strings_honour_backslashes() {
        // SQL text E'\' ?' is one string holding `' ?`.
        assert_eq!(params(r"SELECT E'\' ?'"), 0);
        // SQL text E'\\' ? is an escaped backslash, then a placeholder.
        assert_eq!(sql(r"SELECT E'\\' ?"), r"SELECT E'\\' $1");
        assert_eq!(sql(r"SELECT e'\n?' , ?"), r"SELECT e'\n?' , $1");
        assert_eq!(sql("SELECT E'a''?', ?"), "SELECT E'a''?', $1");
        // An identifier ending in e is no escape-string prefix.
        assert_eq!(sql(r"SELECT some'\', ?"), r"SELECT some'\', $1");
        // Continued on the next line, the string is still an escape string.
        assert_eq!(sql("SELECT E'a'\n'\\' ?', ?"), "SELECT E'a'\n'\\' ?', $1");
    }

    #[test]
    fn unicode_escape_strings_and_identifiers_are_skipped() {
        assert_eq!(sql(r"SELECT U&'d\0061t?', ?"), r"SELECT U&'d\0061t?', $1");
        assert_eq!(
            sql(r#"SELECT u&"c?" FROM t WHERE x = ?"#),
            r#"SELECT u&"c?" FROM t WHERE x = $1"#
        );
    }

    #[test]
    fn quoted_identifiers_keep_their_question_marks() {
        assert_eq!(
            sql(r#"SELECT "col?" FROM t WHERE x = ?"#),
            r#"SELECT "col?" FROM t WHERE x = $1"#
        );
        assert_eq!(sql(r#"SELECT "a""?" , ?"#), r#"SELECT "a""?" , $1"#);
    }

    #[test]
    fn comments_keep_their_question_marks() {
        assert_eq!(sql("SELECT -- ?\n ?"), "SELECT -- ?\n $1");
        assert_eq!(sql("SELECT ? -- ?"), "SELECT $1 -- ?");
        assert_eq!(sql("SELECT /* ? */ ?"), "SELECT /* ? */ $1");
    }

    #[test]
    fn block_comments_nest() {
        assert_eq!(sql("SELECT /* /* ? */ ? */ ?"), "SELECT /* /* ? */ ? */ $1");
        assert_eq!(sql("/*/**/?*/?"), "/*/**/?*/$1");
        assert_eq!(params("/* /* ? */ ?"), 0, "unterminated outer comment");
    }

    #[test]
    fn dollar_quoted_bodies_are_skipped() {
        assert_eq!(sql("SELECT $$ ? $$, ?"), "SELECT $$ ? $$, $1");
        assert_eq!(sql("DO $fn$ ? $fn$"), "DO $fn$ ? $fn$");
        // A different tag does not close the body.
        assert_eq!(params("SELECT $a$ $b$ ? $b$ ? $a$"), 0);
        // Tags are case-sensitive.
        assert_eq!(params("SELECT $t$ ? $T$ ? $t$"), 0);
        assert_eq!(
            sql("CREATE FUNCTION f() RETURNS int AS $body$ SELECT '?' $body$ LANGUAGE sql"),
            "CREATE FUNCTION f() RETURNS int AS $body$ SELECT '?' $body$ LANGUAGE sql"
        );
        assert_eq!(params("SELECT $$ ?"), 0, "unterminated body");
        // `$` inside an identifier is no dollar quote.
        assert_eq!(sql("SELECT a$b, ?"), "SELECT a$b, $1");
        // A lone `$` is just a character.
        assert_eq!(sql("SELECT $ ?"), "SELECT $ $1");
    }

    #[test]
    fn dollar_placeholders_pass_through() {
        let r = rewrite("SELECT $1, $3, $2").unwrap();
        assert_eq!(r.sql, "SELECT $1, $3, $2");
        assert_eq!(r.params, 3);
        assert_eq!(params("SELECT $1, $1"), 1);
        assert_eq!(params("SELECT '$9', $2"), 2);
        // `$1` is a parameter, never the start of a dollar quote: here a `?` follows.
        assert!(rewrite("SELECT $1$ ? $1$").is_err());
        assert_eq!(params("SELECT $1, $2$"), 2);
        assert!(rewrite("SELECT $65536").is_err());
        assert!(rewrite("SELECT $99999999999999999999999").is_err());
    }

    #[test]
    fn mixed_placeholder_styles_are_refused() {
        assert_eq!(
            rewrite("SELECT ?, $1"),
            Err("use either ? or $1-style placeholders, not both".to_owned())
        );
        // A `$1` inside a string does not count.
        assert_eq!(sql("SELECT '$1', ?"), "SELECT '$1', $1");
    }

    #[test]
    fn double_question_mark_is_a_literal_one() {
        assert_eq!(sql("SELECT data ?? 'k', ?"), "SELECT data ? 'k', $1");
        assert_eq!(sql("SELECT tags ??| ?"), "SELECT tags ?| $1");
        assert_eq!(sql("SELECT ???"), "SELECT ?$1");
        assert_eq!(sql("SELECT d ?? $1"), "SELECT d ? $1");
        assert_eq!(params("SELECT d ?? 'k'"), 0);
    }

    #[test]
    fn unterminated_regions_run_to_the_end() {
        assert_eq!(sql("SELECT ?, 'abc ?"), "SELECT $1, 'abc ?");
        assert_eq!(sql("SELECT ?, E'abc\\"), "SELECT $1, E'abc\\");
        assert_eq!(sql("SELECT ?, \"abc ?"), "SELECT $1, \"abc ?");
        assert_eq!(sql("SELECT ? -- ?"), "SELECT $1 -- ?");
        assert_eq!(sql("SELECT ?, U&"), "SELECT $1, U&");
        assert_eq!(sql("SELECT ?, E"), "SELECT $1, E");
        assert_eq!(sql("/"), "/");
        assert_eq!(sql("$"), "$");
        assert_eq!(sql("$$"), "$$");
        assert_eq!(sql(""), "");
    }

    #[test]
    fn non_ascii_text_survives() {
        assert_eq!(
            sql("SELECT 'é?', ?, \"ü?\", ß"),
            "SELECT 'é?', $1, \"ü?\", ß"
        );
        assert_eq!(sql("SELECT $é$ ? $é$, ?"), "SELECT $é$ ? $é$, $1");
    }

    #[test]
    fn several_statements_are_told_apart_from_one() {
        assert!(!rewrite("SELECT 1").unwrap().several);
        assert!(!rewrite("SELECT 1;").unwrap().several);
        assert!(!rewrite("SELECT 1;  -- done\n ; /* c */").unwrap().several);
        assert!(!rewrite(";; SELECT 1").unwrap().several);
        assert!(
            !rewrite("SELECT 'a;b', \"c;d\", $$;$$ /* ; */ -- ;\n")
                .unwrap()
                .several
        );
        assert!(
            rewrite("CREATE TABLE t(x); INSERT INTO t VALUES(1)")
                .unwrap()
                .several
        );
        assert!(rewrite("SELECT 1;SELECT 2;").unwrap().several);
        assert!(rewrite("SELECT 1; ?").unwrap().several);
    }

    #[test]
    fn kind_is_the_first_keyword() {
        let kind = |s: &str| rewrite(s).unwrap().kind;
        assert_eq!(kind("select 1"), Kind::Select);
        assert_eq!(
            kind("  -- c\n /* c */ INSERT INTO t VALUES (1)"),
            Kind::Insert
        );
        assert_eq!(kind("Update t SET x = 1"), Kind::Update);
        assert_eq!(kind("DELETE FROM t"), Kind::Delete);
        assert_eq!(kind("WITH a AS (SELECT 1) SELECT * FROM a"), Kind::With);
        assert_eq!(kind("((SELECT 1)) UNION SELECT 2"), Kind::Select);
        assert_eq!(kind("CREATE TABLE t(x int)"), Kind::Other);
        assert_eq!(kind("VALUES (1)"), Kind::Other);
        assert_eq!(kind("selected"), Kind::Other);
        assert_eq!(kind(""), Kind::Other);
        assert_eq!(kind("'select'"), Kind::Other);
    }

    #[test]
    fn returning_is_found_outside_strings_and_comments() {
        let returning = |s: &str| rewrite(s).unwrap().returning;
        assert!(returning("INSERT INTO t(x) VALUES (?) RETURNING id"));
        assert!(returning("delete from t returning *"));
        assert!(returning(
            "WITH d AS (DELETE FROM t RETURNING id) SELECT * FROM d"
        ));
        assert!(!returning("INSERT INTO t(x) VALUES ('RETURNING')"));
        assert!(!returning(
            "INSERT INTO t(\"returning\") VALUES (1) -- returning"
        ));
        assert!(!returning("SELECT returning_id FROM t"));
    }
}
