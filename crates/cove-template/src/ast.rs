//! The compiled form of a template: nodes and expressions, with field names
//! already interned and every position kept as a byte offset for errors.

use std::rc::Rc;

use crate::names::Key;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    Str(Rc<str>),
    Int(i64),
    Float(f64),
    Bool(bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filter {
    Upper,
    Lower,
    Trim,
    Length,
    Default,
    Json,
    Raw,
}

impl Filter {
    pub(crate) fn by_name(name: &str) -> Option<Filter> {
        Some(match name {
            "upper" => Filter::Upper,
            "lower" => Filter::Lower,
            "trim" => Filter::Trim,
            "length" => Filter::Length,
            "default" => Filter::Default,
            "json" => Filter::Json,
            "raw" => Filter::Raw,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
#[repr(u8)]
pub(crate) enum Expr {
    /// `a.b.c`: `root` is a loop variable or a field of the data.
    Path {
        root: Key,
        rest: Box<[Key]>,
        pos: u32,
    },
    Lit(Lit),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Cmp {
        op: CmpOp,
        a: Box<Expr>,
        b: Box<Expr>,
        pos: u32,
    },
    Filter {
        input: Box<Expr>,
        filter: Filter,
        arg: Option<Box<Expr>>,
        pos: u32,
    },
}

impl Expr {
    /// Add every field name the expression reads to `out`.
    pub(crate) fn keys(&self, out: &mut Vec<Key>) {
        match self {
            Expr::Path { root, rest, .. } => {
                out.push(root.clone());
                out.extend(rest.iter().cloned());
            }
            Expr::Lit(_) => {}
            Expr::Not(e) => e.keys(out),
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Cmp { a, b, .. } => {
                a.keys(out);
                b.keys(out);
            }
            Expr::Filter { input, arg, .. } => {
                input.keys(out);
                if let Some(a) = arg {
                    a.keys(out);
                }
            }
        }
    }
}

/// `repr(u8)`: an explicit tag byte first, so the walk dispatches on one
/// byte load instead of decoding a niche in the first field (~8
/// instructions a node).
#[derive(Debug, Clone, PartialEq)]
#[repr(u8)]
pub(crate) enum Node {
    Text(Box<str>),
    Output {
        expr: Expr,
        raw: bool,
    },
    If {
        branches: Vec<(Expr, Vec<Node>)>,
        otherwise: Vec<Node>,
    },
    For {
        key: Option<Key>,
        var: Key,
        iter: Expr,
        body: Vec<Node>,
        pos: u32,
    },
    /// Index into the template's blocks.
    Block(usize),
    /// Index into the template's includes.
    Include(usize),
}

impl Node {
    /// Add every field name the node (and what it contains) reads to `out`.
    pub(crate) fn keys(&self, out: &mut Vec<Key>) {
        match self {
            Node::Text(_) | Node::Block(_) | Node::Include(_) => {}
            Node::Output { expr, .. } => expr.keys(out),
            Node::If {
                branches,
                otherwise,
            } => {
                for (cond, body) in branches {
                    cond.keys(out);
                    body.iter().for_each(|n| n.keys(out));
                }
                otherwise.iter().for_each(|n| n.keys(out));
            }
            Node::For { iter, body, .. } => {
                iter.keys(out);
                body.iter().for_each(|n| n.keys(out));
            }
        }
    }
}

/// A block defined in a template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BlockDef {
    pub name: Box<str>,
    pub body: Vec<Node>,
}

/// What the parser makes of one template, before `extends` and `include`
/// names are resolved to templates.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub nodes: Vec<Node>,
    pub blocks: Vec<BlockDef>,
    /// Names of included templates, with the tag's position.
    pub includes: Vec<(String, u32)>,
    pub extends: Option<(String, u32)>,
}
