//! Splitting template text into text, `{{ }}` / `{{{ }}}` outputs and
//! `{% %}` tags (comments are dropped here), and the insides of outputs and
//! tags into tokens.
//!
//! Unlike Hull, which cut a tag at the first `}}` or `%}`, the closer is
//! found while tokenizing, so a string literal may contain `}}`
//! (`{{ "{{ var }}" }}`). A `-` just inside a delimiter (`{%-`, `-%}`,
//! `{{-`, `-}}`, `{#-`, `-#}`) removes the whitespace on that side.

/// A lexing or parsing failure at a byte offset (the caller adds the file).
#[derive(Debug)]
pub(crate) struct Fail {
    pub pos: u32,
    pub msg: String,
}

pub(crate) fn fail<T>(pos: usize, msg: impl Into<String>) -> Result<T, Fail> {
    Err(Fail {
        pos: pos as u32,
        msg: msg.into(),
    })
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokKind<'s> {
    Ident(&'s str),
    Str(String),
    Int(i64),
    Float(f64),
    Dot,
    Pipe,
    Colon,
    Comma,
    LParen,
    RParen,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tok<'s> {
    pub kind: TokKind<'s>,
    pub pos: u32,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Item<'s> {
    Text(&'s str),
    /// `{{ … }}` (`raw: false`) or `{{{ … }}}` (`raw: true`).
    Output {
        raw: bool,
        toks: Vec<Tok<'s>>,
        pos: u32,
    },
    /// `{% … %}`.
    Tag {
        toks: Vec<Tok<'s>>,
        pos: u32,
    },
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Output,
    Raw,
    Tag,
}

impl Mode {
    fn closer(self) -> &'static str {
        match self {
            Mode::Output => "}}",
            Mode::Raw => "}}}",
            Mode::Tag => "%}",
        }
    }
    fn opener(self) -> &'static str {
        match self {
            Mode::Output => "{{",
            Mode::Raw => "{{{",
            Mode::Tag => "{%",
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Split `src` into items.
pub(crate) fn lex(src: &str) -> Result<Vec<Item<'_>>, Fail> {
    let b = src.as_bytes();
    let mut items = Vec::new();
    let mut text_start = 0;
    let mut trim_next = false;
    let mut i = 0;
    while let Some(off) = src[i..].find('{') {
        let open = i + off;
        let (mode, mut body) = match (b.get(open + 1), b.get(open + 2)) {
            (Some(b'{'), Some(b'{')) => (Some(Mode::Raw), open + 3),
            (Some(b'{'), _) => (Some(Mode::Output), open + 2),
            (Some(b'%'), _) => (Some(Mode::Tag), open + 2),
            (Some(b'#'), _) => (None, open + 2),
            _ => {
                i = open + 1;
                continue;
            }
        };
        let trim_before = mode != Some(Mode::Raw) && b.get(body) == Some(&b'-');
        if trim_before {
            body += 1;
        }
        push_text(&mut items, &src[text_start..open], trim_next, trim_before);
        let (end, trim_after) = match mode {
            None => comment_end(src, open, body)?,
            Some(mode) => {
                let (toks, end, trim_after) = tokens(src, open, body, mode)?;
                items.push(match mode {
                    Mode::Tag => Item::Tag {
                        toks,
                        pos: open as u32,
                    },
                    _ => Item::Output {
                        raw: mode == Mode::Raw,
                        toks,
                        pos: open as u32,
                    },
                });
                (end, trim_after)
            }
        };
        trim_next = trim_after;
        i = end;
        text_start = end;
    }
    push_text(&mut items, &src[text_start..], trim_next, false);
    Ok(items)
}

fn push_text<'s>(items: &mut Vec<Item<'s>>, mut text: &'s str, trim_start: bool, trim_end: bool) {
    if trim_start {
        text = text.trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
    }
    if trim_end {
        text = text.trim_end_matches(|c: char| c.is_ascii() && is_space(c as u8));
    }
    if !text.is_empty() {
        items.push(Item::Text(text));
    }
}

/// End of a `{# … #}` comment opened at `open`: (offset after it, trims after).
fn comment_end(src: &str, open: usize, body: usize) -> Result<(usize, bool), Fail> {
    match src[body..].find("#}") {
        Some(off) => {
            let close = body + off;
            let trim = close > body && src.as_bytes()[close - 1] == b'-';
            Ok((close + 2, trim))
        }
        None => fail(open, "unclosed {# comment: close it with #}"),
    }
}

/// Tokens of an output or tag whose body starts at `i`, up to its closer.
/// Returns the tokens, the offset after the closer and whether the closer
/// asked to trim the whitespace after it.
fn tokens(
    src: &str,
    open: usize,
    mut i: usize,
    mode: Mode,
) -> Result<(Vec<Tok<'_>>, usize, bool), Fail> {
    let b = src.as_bytes();
    let closer = mode.closer();
    let mut toks = Vec::new();
    loop {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        let Some(&c) = b.get(i) else {
            return fail(
                open,
                format!("unclosed {}: close it with {closer}", mode.opener()),
            );
        };
        let rest = &src[i..];
        if rest.starts_with(closer) {
            return Ok((toks, i + closer.len(), false));
        }
        if mode != Mode::Raw && c == b'-' && rest[1..].starts_with(closer) {
            return Ok((toks, i + 1 + closer.len(), true));
        }
        let start = i;
        let kind = match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                tokens_push(&mut toks, TokKind::Ident(&src[start..i]), start);
                continue;
            }
            b'0'..=b'9' => {
                let (kind, end) = number(src, i)?;
                i = end;
                tokens_push(&mut toks, kind, start);
                continue;
            }
            b'-' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let (kind, end) = number(src, i + 1)?;
                i = end;
                let kind = match kind {
                    TokKind::Int(n) => TokKind::Int(-n),
                    TokKind::Float(f) => TokKind::Float(-f),
                    k => k,
                };
                tokens_push(&mut toks, kind, start);
                continue;
            }
            b'"' | b'\'' => {
                let (s, end) = string(src, i)?;
                i = end;
                tokens_push(&mut toks, TokKind::Str(s), start);
                continue;
            }
            b'.' => TokKind::Dot,
            b'|' => TokKind::Pipe,
            b':' => TokKind::Colon,
            b',' => TokKind::Comma,
            b'(' => TokKind::LParen,
            b')' => TokKind::RParen,
            b'=' if b.get(i + 1) == Some(&b'=') => {
                i += 1;
                TokKind::Eq
            }
            b'!' if b.get(i + 1) == Some(&b'=') => {
                i += 1;
                TokKind::Ne
            }
            b'<' if b.get(i + 1) == Some(&b'=') => {
                i += 1;
                TokKind::Le
            }
            b'>' if b.get(i + 1) == Some(&b'=') => {
                i += 1;
                TokKind::Ge
            }
            b'<' => TokKind::Lt,
            b'>' => TokKind::Gt,
            b'=' => return fail(i, "unexpected '=': compare with =="),
            _ => {
                let ch = rest.chars().next().unwrap_or('?');
                return fail(i, format!("unexpected {ch:?} inside {}", mode.opener()));
            }
        };
        i += 1;
        tokens_push(&mut toks, kind, start);
    }
}

fn tokens_push<'s>(toks: &mut Vec<Tok<'s>>, kind: TokKind<'s>, pos: usize) {
    toks.push(Tok {
        kind,
        pos: pos as u32,
    });
}

/// A number starting at `i` (digits, optionally `.` and digits).
fn number(src: &str, start: usize) -> Result<(TokKind<'static>, usize), Fail> {
    let b = src.as_bytes();
    let mut i = start;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let is_float = b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
    if is_float {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if b.get(i)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return fail(start, format!("invalid number {:?}", &src[start..=i]));
    }
    let text = &src[start..i];
    let kind = if is_float {
        TokKind::Float(text.parse().map_err(|_| Fail {
            pos: start as u32,
            msg: format!("invalid number {text}"),
        })?)
    } else {
        TokKind::Int(text.parse().map_err(|_| Fail {
            pos: start as u32,
            msg: format!("number {text} is too large"),
        })?)
    };
    Ok((kind, i))
}

/// A quoted string starting at `i`. `\\`, `\"` and `\'` are escapes; any
/// other backslash is kept as it is (Hull had no escapes at all).
fn string(src: &str, start: usize) -> Result<(String, usize), Fail> {
    let b = src.as_bytes();
    let quote = b[start];
    let mut out = String::new();
    let mut i = start + 1;
    let mut chunk = i;
    while i < b.len() {
        match b[i] {
            c if c == quote => {
                out.push_str(&src[chunk..i]);
                return Ok((out, i + 1));
            }
            b'\\' if matches!(b.get(i + 1), Some(b'\\' | b'"' | b'\'')) => {
                out.push_str(&src[chunk..i]);
                out.push(b[i + 1] as char);
                i += 2;
                chunk = i;
            }
            _ => i += 1,
        }
    }
    fail(start, "unclosed string: add the closing quote")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokKind<'_>> {
        match lex(src).unwrap().remove(0) {
            Item::Output { toks, .. } | Item::Tag { toks, .. } => {
                toks.into_iter().map(|t| t.kind).collect()
            }
            Item::Text(t) => panic!("text {t}"),
        }
    }

    #[test]
    fn splits_text_outputs_tags_and_comments() {
        let items = lex("a{{ x }}b{{{ y }}}c{% if z %}{# gone #}d{ e").unwrap();
        assert_eq!(items.len(), 7);
        assert_eq!(items[0], Item::Text("a"));
        assert!(matches!(
            items[1],
            Item::Output {
                raw: false,
                pos: 1,
                ..
            }
        ));
        assert!(matches!(items[3], Item::Output { raw: true, .. }));
        assert!(matches!(items[5], Item::Tag { .. }));
        assert_eq!(items[6], Item::Text("d{ e"));
    }

    #[test]
    fn text_is_kept_byte_for_byte() {
        // Hull lost the newline after a tag (Lua) and broke on a text ending in `]`.
        let items = lex("{% if a %}\n[x]\n{% end %}]").unwrap();
        assert_eq!(items[1], Item::Text("\n[x]\n"));
        assert_eq!(items[3], Item::Text("]"));
    }

    #[test]
    fn tokens() {
        use TokKind::*;
        assert_eq!(
            kinds("{% if a.b == 'x}}' and n >= -2.5 or (c != 3) %}"),
            vec![
                Ident("if"),
                Ident("a"),
                Dot,
                Ident("b"),
                Eq,
                Str("x}}".into()),
                Ident("and"),
                Ident("n"),
                Ge,
                Float(-2.5),
                Ident("or"),
                LParen,
                Ident("c"),
                Ne,
                Int(3),
                RParen
            ]
        );
        assert_eq!(
            kinds(r#"{{ x | default: "a\"b\\c\d" }}"#),
            vec![
                Ident("x"),
                Pipe,
                Ident("default"),
                Colon,
                Str(r#"a"b\c\d"#.into())
            ]
        );
    }

    #[test]
    fn whitespace_control_trims_the_marked_side() {
        let items = lex("a \n {%- if x -%} \n b {{- y }} c {#- z -#}\n d").unwrap();
        assert_eq!(items[0], Item::Text("a"));
        assert_eq!(items[2], Item::Text("b"));
        assert_eq!(items[4], Item::Text(" c"));
        assert_eq!(items[5], Item::Text("d"));
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = lex("ab{{ x").unwrap_err();
        assert_eq!(
            (e.pos, e.msg.as_str()),
            (2, "unclosed {{: close it with }}")
        );
        assert!(lex("{% x = 1 %}").unwrap_err().msg.contains("=="));
        assert_eq!(lex("{{ 'abc }}").unwrap_err().pos, 3);
        assert!(lex("{# x").unwrap_err().msg.contains("#}"));
        assert!(lex("{{ @ }}").unwrap_err().msg.contains("'@'"));
        assert!(lex("{{ 99999999999999999999 }}")
            .unwrap_err()
            .msg
            .contains("too large"));
        assert!(lex("{{ 3x }}").is_err());
    }
}
