//! Expressions inside `{{ }}` and `{% if %}`: dot paths (Hull), plus
//! string/number/boolean literals, comparisons, `and`/`or`/`not`,
//! parentheses and filters (`x | default: "none"`).
//!
//! Precedence, loosest first: `or`, `and`, `not`, comparison, `|` filter.

use crate::ast::{CmpOp, Expr, Filter, Lit};
use crate::lexer::{fail, Fail, Tok, TokKind};
use crate::names::Names;

/// Deepest nesting of parentheses and `not`s; keeps the recursive descent
/// (and the renderer that follows it) far from the end of the stack.
const MAX_DEPTH: u32 = 64;

const KEYWORDS: &[&str] = &["and", "or", "not", "in", "true", "false"];

pub(crate) struct ExprParser<'a, 's> {
    toks: &'a [Tok<'s>],
    i: usize,
    /// Where to report "expected …" when the tokens run out.
    end: u32,
    names: &'a mut Names,
    depth: u32,
}

fn describe(t: &TokKind<'_>) -> String {
    match t {
        TokKind::Ident(s) => format!("{s:?}"),
        TokKind::Str(s) => format!("the string {s:?}"),
        TokKind::Int(n) => n.to_string(),
        TokKind::Float(f) => f.to_string(),
        TokKind::Dot => "'.'".into(),
        TokKind::Pipe => "'|'".into(),
        TokKind::Colon => "':'".into(),
        TokKind::Comma => "','".into(),
        TokKind::LParen => "'('".into(),
        TokKind::RParen => "')'".into(),
        TokKind::Eq => "'=='".into(),
        TokKind::Ne => "'!='".into(),
        TokKind::Lt => "'<'".into(),
        TokKind::Le => "'<='".into(),
        TokKind::Gt => "'>'".into(),
        TokKind::Ge => "'>='".into(),
    }
}

impl<'a, 's> ExprParser<'a, 's> {
    pub(crate) fn new(toks: &'a [Tok<'s>], end: u32, names: &'a mut Names) -> Self {
        ExprParser {
            toks,
            i: 0,
            end,
            names,
            depth: 0,
        }
    }

    pub(crate) fn peek(&self) -> Option<&'a Tok<'s>> {
        self.toks.get(self.i)
    }

    fn peek_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok { kind: TokKind::Ident(w), .. }) if *w == word)
    }

    fn pos(&self) -> u32 {
        self.peek().map_or(self.end, |t| t.pos)
    }

    /// Fail unless every token was used.
    pub(crate) fn finish(&self, what: &str) -> Result<(), Fail> {
        match self.peek() {
            None => Ok(()),
            Some(t) => fail(
                t.pos as usize,
                format!("unexpected {} after {what}", describe(&t.kind)),
            ),
        }
    }

    /// A whole expression.
    pub(crate) fn expr(&mut self) -> Result<Expr, Fail> {
        let mut a = self.and()?;
        while self.peek_ident("or") {
            self.i += 1;
            let b = self.and()?;
            a = Expr::Or(Box::new(a), Box::new(b));
        }
        Ok(a)
    }

    fn and(&mut self) -> Result<Expr, Fail> {
        let mut a = self.not()?;
        while self.peek_ident("and") {
            self.i += 1;
            let b = self.not()?;
            a = Expr::And(Box::new(a), Box::new(b));
        }
        Ok(a)
    }

    fn deeper(&mut self) -> Result<(), Fail> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return fail(
                self.pos() as usize,
                format!("expression nested deeper than {MAX_DEPTH} levels"),
            );
        }
        Ok(())
    }

    fn not(&mut self) -> Result<Expr, Fail> {
        if self.peek_ident("not") {
            self.i += 1;
            self.deeper()?;
            let e = self.not()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(e)));
        }
        self.cmp()
    }

    fn cmp(&mut self) -> Result<Expr, Fail> {
        let a = self.filtered()?;
        let op = match self.peek().map(|t| &t.kind) {
            Some(TokKind::Eq) => CmpOp::Eq,
            Some(TokKind::Ne) => CmpOp::Ne,
            Some(TokKind::Lt) => CmpOp::Lt,
            Some(TokKind::Le) => CmpOp::Le,
            Some(TokKind::Gt) => CmpOp::Gt,
            Some(TokKind::Ge) => CmpOp::Ge,
            _ => return Ok(a),
        };
        let pos = self.pos();
        self.i += 1;
        let b = self.filtered()?;
        Ok(Expr::Cmp {
            op,
            a: Box::new(a),
            b: Box::new(b),
            pos,
        })
    }

    fn filtered(&mut self) -> Result<Expr, Fail> {
        let mut e = self.primary()?;
        while matches!(
            self.peek(),
            Some(Tok {
                kind: TokKind::Pipe,
                ..
            })
        ) {
            self.i += 1;
            let pos = self.pos();
            let name = match self.peek() {
                Some(Tok {
                    kind: TokKind::Ident(name),
                    ..
                }) => *name,
                _ => return fail(pos as usize, "expected a filter name after '|'"),
            };
            self.i += 1;
            let Some(filter) = Filter::by_name(name) else {
                return fail(
                    pos as usize,
                    format!(
                        "unknown filter {name:?} (filters: upper, lower, trim, length, default, json, raw)"
                    ),
                );
            };
            let mut arg = None;
            if matches!(
                self.peek(),
                Some(Tok {
                    kind: TokKind::Colon,
                    ..
                })
            ) {
                if filter != Filter::Default {
                    return fail(pos as usize, format!("filter {name:?} takes no argument"));
                }
                self.i += 1;
                arg = Some(Box::new(self.primary()?));
            }
            e = Expr::Filter {
                input: Box::new(e),
                filter,
                arg,
                pos,
            };
        }
        Ok(e)
    }

    fn primary(&mut self) -> Result<Expr, Fail> {
        let pos = self.pos();
        let Some(tok) = self.peek() else {
            return fail(
                pos as usize,
                "expected a value (a name, a string or a number)",
            );
        };
        self.i += 1;
        Ok(match &tok.kind {
            TokKind::Str(s) => Expr::Lit(Lit::Str(s.as_str().into())),
            TokKind::Int(n) => Expr::Lit(Lit::Int(*n)),
            TokKind::Float(f) => Expr::Lit(Lit::Float(*f)),
            TokKind::Ident("true") => Expr::Lit(Lit::Bool(true)),
            TokKind::Ident("false") => Expr::Lit(Lit::Bool(false)),
            TokKind::Ident(name) if !KEYWORDS.contains(name) => self.path(name, pos)?,
            TokKind::LParen => {
                self.deeper()?;
                let e = self.expr()?;
                self.depth -= 1;
                match self.peek() {
                    Some(Tok {
                        kind: TokKind::RParen,
                        ..
                    }) => self.i += 1,
                    _ => return fail(self.pos() as usize, "expected ')'"),
                }
                e
            }
            other => {
                return fail(
                    pos as usize,
                    format!(
                        "expected a value (a name, a string or a number), found {}",
                        describe(other)
                    ),
                )
            }
        })
    }

    fn path(&mut self, first: &str, pos: u32) -> Result<Expr, Fail> {
        let root = self.names.key(first);
        let mut rest = Vec::new();
        while matches!(
            self.peek(),
            Some(Tok {
                kind: TokKind::Dot,
                ..
            })
        ) {
            self.i += 1;
            match self.peek() {
                Some(Tok {
                    kind: TokKind::Ident(name),
                    ..
                }) => {
                    rest.push(self.names.key(name));
                    self.i += 1;
                }
                _ => {
                    return fail(
                        self.pos() as usize,
                        "expected a field name after '.' (indexes like items.0 are not supported)",
                    )
                }
            }
        }
        Ok(Expr::Path {
            root,
            rest: rest.into(),
            pos,
        })
    }

    /// The interned key for `name`.
    pub(crate) fn key(&mut self, name: &str) -> crate::names::Key {
        self.names.key(name)
    }

    /// A plain name (loop variables, block names).
    pub(crate) fn name(&mut self, what: &str) -> Result<&'s str, Fail> {
        match self.peek() {
            Some(Tok {
                kind: TokKind::Ident(name),
                ..
            }) if !KEYWORDS.contains(name) => {
                self.i += 1;
                Ok(name)
            }
            _ => fail(self.pos() as usize, format!("expected {what}")),
        }
    }

    /// The keyword `word`.
    pub(crate) fn keyword(&mut self, word: &str) -> Result<(), Fail> {
        if self.peek_ident(word) {
            self.i += 1;
            Ok(())
        } else {
            fail(self.pos() as usize, format!("expected '{word}'"))
        }
    }

    /// `,` if it is next.
    pub(crate) fn comma(&mut self) -> bool {
        let is = matches!(
            self.peek(),
            Some(Tok {
                kind: TokKind::Comma,
                ..
            })
        );
        if is {
            self.i += 1;
        }
        is
    }

    /// A quoted template name (`extends`/`include`).
    pub(crate) fn string(&mut self, what: &str) -> Result<String, Fail> {
        match self.peek() {
            Some(Tok {
                kind: TokKind::Str(s),
                ..
            }) => {
                self.i += 1;
                Ok(s.clone())
            }
            _ => fail(
                self.pos() as usize,
                format!("expected {what} as a quoted string"),
            ),
        }
    }
}
