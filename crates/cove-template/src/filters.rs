//! Hull's filters: `upper lower trim length default json raw`.

use std::borrow::Cow;

use crate::ascii;
use crate::ast::{Expr, Filter};
use crate::cache::Template;
use crate::error::ErrorKind;
use crate::format;
use crate::host::{Flavor, Host, Shape};
use crate::render::{shape_of, Renderer, Res, Val};
use cove_core::append;

impl<'t, H: Host> Renderer<'t, '_, H> {
    pub(crate) fn filter(
        &mut self,
        t: &'t Template,
        filter: Filter,
        v: Val<'t, H::Value>,
        arg: Option<&'t Expr>,
        pos: u32,
    ) -> Res<Val<'t, H::Value>> {
        let flavor = self.flavor;
        Ok(match filter {
            Filter::Raw => v,
            Filter::Upper | Filter::Lower | Filter::Trim => {
                let text = self.text(&v);
                Val::Str(Cow::Owned(match filter {
                    Filter::Upper => upper(text, flavor),
                    Filter::Lower => lower(text, flavor),
                    _ => trim(&text, flavor).to_vec(),
                }))
            }
            Filter::Length => {
                let n = match self.shape(&v) {
                    Shape::Nil => 0,
                    Shape::Str(s) => str_len(&s, flavor),
                    Shape::Table => match &v {
                        Val::Host(h) => self.host.count(h),
                        _ => 0,
                    },
                    _ => {
                        let text = self.text(&v);
                        str_len(&text, flavor)
                    }
                };
                Val::Int(n as i64)
            }
            Filter::Default => {
                let empty = match self.shape(&v) {
                    Shape::Nil | Shape::Bool(false) => true,
                    Shape::Str(s) => s.is_empty(),
                    _ => false,
                };
                match (empty, arg) {
                    (false, _) => v,
                    (true, Some(arg)) => self.eval(t, arg)?,
                    (true, None) => Val::Str(Cow::Borrowed(b"")),
                }
            }
            Filter::Json => {
                let mut out = Vec::new();
                match &v {
                    Val::Host(h) => self
                        .host
                        .json(h, &mut out)
                        .map_err(|m| t.error(ErrorKind::Render, pos, format!("json: {m}")))?,
                    other => {
                        let shape = self.shape(other);
                        prim_json(&mut out, &shape, flavor);
                    }
                }
                Val::Str(Cow::Owned(guard_script(out)))
            }
        })
    }

    /// `{{ v | upper }}` (or `lower`, `trim`) written straight into the
    /// output: the text goes in raw, is changed where it lies, and is
    /// escaped afterwards only if it has a character to escape. The general
    /// path would make, fill and free a buffer per output.
    #[inline(always)]
    pub(crate) fn write_filtered(&mut self, v: &Val<'t, H::Value>, filter: Filter, raw: bool) {
        let flavor = self.flavor;
        let start = self.out.len();
        self.write_raw(v);
        let in_place = flavor == Flavor::Lua || self.out[start..].is_ascii();
        match filter {
            Filter::Upper if in_place => ascii::upper(&mut self.out[start..]),
            Filter::Lower if in_place => ascii::lower(&mut self.out[start..]),
            Filter::Trim => {
                let (from, to) = trim_range(&self.out[start..], flavor);
                self.out.copy_within(start + from..start + to, start);
                self.out.truncate(start + to - from);
            }
            _ => {
                let text = self.out.split_off(start);
                let changed = match filter {
                    Filter::Upper => upper(text, flavor),
                    _ => lower(text, flavor),
                };
                self.out.extend_from_slice(&changed);
            }
        }
        if !raw && format::needs_escape(&self.out[start..], flavor) {
            let text = self.out.split_off(start);
            format::escape(&mut self.out, &text, flavor);
        }
    }

    /// `v` as the text an unescaped output would show.
    fn text(&mut self, v: &Val<'t, H::Value>) -> Vec<u8> {
        let saved = std::mem::take(&mut self.out);
        let shown = self.write_raw(v);
        let text = std::mem::replace(&mut self.out, saved);
        debug_assert!(shown);
        text
    }

    #[inline(always)]
    fn write_raw(&mut self, v: &Val<'t, H::Value>) -> bool {
        let flavor = self.flavor;
        let shape = shape_of(self.host, v);
        let out = &mut self.out;
        match shape {
            Shape::Nil => {}
            Shape::Bool(b) => append(out, if b { b"true" } else { b"false" }),
            Shape::Int(n) => append(out, itoa::Buffer::new().format(n).as_bytes()),
            Shape::Float(f) => format::float(out, f, flavor),
            Shape::Str(s) => append(out, &s),
            Shape::Table => {
                if let Val::Host(h) = v {
                    let mut text = Vec::new();
                    self.host.display(h, &mut text);
                    self.out.extend_from_slice(&text);
                }
            }
        }
        true
    }
}

/// Lua's `string.upper` changes ASCII letters only; JS's `toUpperCase` all.
fn upper(mut text: Vec<u8>, flavor: Flavor) -> Vec<u8> {
    match flavor {
        // For ASCII text both runtimes agree, and it changes in place.
        _ if flavor == Flavor::Lua || text.is_ascii() => {
            ascii::upper(&mut text);
            text
        }
        _ => String::from_utf8_lossy(&text).to_uppercase().into_bytes(),
    }
}

fn lower(mut text: Vec<u8>, flavor: Flavor) -> Vec<u8> {
    match flavor {
        _ if flavor == Flavor::Lua || text.is_ascii() => {
            ascii::lower(&mut text);
            text
        }
        _ => String::from_utf8_lossy(&text).to_lowercase().into_bytes(),
    }
}

/// Lua's `%s` is ASCII whitespace; JS's `trim` also strips Unicode spaces.
fn trim(text: &[u8], flavor: Flavor) -> &[u8] {
    let (from, to) = trim_range(text, flavor);
    &text[from..to]
}

/// Where the trimmed text starts and ends in `text`.
fn trim_range(text: &[u8], flavor: Flavor) -> (usize, usize) {
    match flavor {
        Flavor::Lua => {
            let is = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
            let start = text.iter().position(|b| !is(b)).unwrap_or(text.len());
            let end = text.iter().rposition(|b| !is(b)).map_or(start, |i| i + 1);
            (start, end)
        }
        Flavor::Js => match std::str::from_utf8(text) {
            Ok(s) => {
                let is = |c: char| c.is_whitespace() || c == '\u{feff}';
                let rest = s.trim_start_matches(is);
                let start = s.len() - rest.len();
                (start, start + rest.trim_end_matches(is).len())
            }
            Err(_) => (0, text.len()),
        },
    }
}

/// String length as the runtime counts it: Lua bytes, JS UTF-16 units.
fn str_len(s: &[u8], flavor: Flavor) -> usize {
    match flavor {
        Flavor::Lua => s.len(),
        Flavor::Js => String::from_utf8_lossy(s).encode_utf16().count(),
    }
}

fn prim_json(out: &mut Vec<u8>, shape: &Shape<'_>, flavor: Flavor) {
    match shape {
        Shape::Nil | Shape::Table => out.extend_from_slice(b"null"),
        Shape::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Shape::Int(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        Shape::Float(f) if !f.is_finite() => out.extend_from_slice(b"null"),
        // JSON numbers: integral floats without a fraction in both runtimes.
        Shape::Float(f) => format::float(out, *f, Flavor::Js),
        Shape::Str(s) => format::json_string(out, s),
    }
    let _ = flavor;
}

/// `<` as `\u003c`, so `{{ data | json | raw }}` inside `<script>` cannot
/// close the element (the same JSON value either way).
fn guard_script(json: Vec<u8>) -> Vec<u8> {
    if !json.contains(&b'<') {
        return json;
    }
    let mut out = Vec::with_capacity(json.len() + 16);
    for b in json {
        if b == b'<' {
            out.extend_from_slice(b"\\u003c");
        } else {
            out.push(b);
        }
    }
    out
}
