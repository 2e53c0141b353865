//! Walking a compiled template against the app's data.
//!
//! Values are read through the binding's [`Host`] as they are needed; what
//! the renderer makes itself (literals, filter results, `loop.*`) stays in
//! Rust ([`Val`]). Host values made while evaluating outputs and
//! conditions are released every few nodes, and each loop item's at its
//! end, so a Lua binding's stack does not grow with the size of the data.

use std::borrow::Cow;

use crate::ast::{CmpOp, Expr, Filter, Lit, Node};
use crate::cache::Template;
use crate::error::{Error, ErrorKind};
use crate::format;
use crate::host::{Flavor, Host, ItemKey, Shape};
use crate::names::{Key, LOOP};
use cove_core::append;

/// Nodes whose host values may be held before they are released together
/// (bounds how far a Lua binding's stack grows between releases).
const HOLD: u32 = 8;

/// Loop items whose host values may be held before they are released
/// together.
const HOLD_ITEMS: usize = 8;

/// A `done` mark for [`Renderer::nodes_then`]: release nothing at the end.
const KEEP: usize = usize::MAX;

/// Errors are boxed inside the renderer: a `Result` the size of a pointer
/// is returned in registers on every node.
pub(crate) type Res<T> = Result<T, Box<Error>>;

/// A value during rendering: the host's, or one the renderer made.
#[derive(Clone)]
#[repr(u8)]
pub(crate) enum Val<'t, V> {
    Host(V),
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'t, [u8]>),
}

/// The innermost loop's position, for `loop.index` and friends.
#[derive(Clone, Copy)]
struct LoopState {
    index0: usize,
    length: usize,
}

pub(crate) struct Renderer<'t, 'h, H: Host> {
    pub(crate) host: &'h mut H,
    pub(crate) flavor: Flavor,
    pub(crate) out: Vec<u8>,
    data: H::Value,
    vars: Vec<(&'t Key, Val<'t, H::Value>)>,
    loops: Vec<LoopState>,
    steps: u64,
}

/// Render `t` with the host's data.
pub fn render<H: Host>(t: &Template, host: &mut H) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    render_into(t, host, &mut out).map(|()| out)
}

/// Render `t` with the host's data into `out`, which is cleared first and
/// keeps its capacity: a binding that renders page after page into one
/// buffer allocates nothing for the output.
pub fn render_into<H: Host>(t: &Template, host: &mut H, out: &mut Vec<u8>) -> Result<(), Error> {
    out.clear();
    out.reserve(t.last_len.get().max(t.source.len()) + 256);
    let mark = host.mark();
    let data = host.data();
    host.prepare(&t.keys);
    let mut r = Renderer {
        flavor: host.flavor(),
        host,
        out: std::mem::take(out),
        data,
        vars: Vec::new(),
        loops: Vec::new(),
        steps: 0,
    };
    let result = r.template(t);
    *out = std::mem::take(&mut r.out);
    drop(r);
    t.last_len.set(out.len());
    host.release(mark);
    result.map_err(|e| *e)
}

/// `leaf` and its `extends` ancestors, most derived first (the chain a
/// block is looked up in; passed around as its leaf, not as a list made
/// per render).
fn ancestry(leaf: &Template) -> impl Iterator<Item = &Template> {
    std::iter::successors(Some(leaf), |c| c.parent.as_deref())
}

/// `a` and `b` name the same field.
fn same(a: &Key, b: &Key) -> bool {
    a.id == b.id && (a.id != Key::UNCACHED || a.name == b.name)
}

impl<'t, H: Host> Renderer<'t, '_, H> {
    /// Render `t`: through its `extends` chain if it has one (the root
    /// ancestor's nodes, each block taken from the most derived template
    /// that defines it).
    fn template(&mut self, t: &'t Template) -> Res<()> {
        self.step(t, 0)?;
        let mut root = t;
        while let Some(p) = root.parent.as_deref() {
            root = p;
        }
        self.nodes(root, t, &root.nodes)
    }

    /// Counted per loop iteration and per template entered: each visits a
    /// bounded number of nodes, so this bounds the work of a render.
    #[inline]
    fn step(&mut self, t: &Template, pos: u32) -> Res<()> {
        self.steps += 1;
        let limits = &t.limits;
        if self.steps > limits.max_steps || self.out.len() > limits.max_output {
            return Err(self.over(t, pos));
        }
        Ok(())
    }

    /// The error of a render over one of its limits.
    #[cold]
    #[inline(never)]
    fn over(&self, t: &Template, pos: u32) -> Box<Error> {
        let limits = &t.limits;
        let over = if self.steps > limits.max_steps {
            format!("rendering took more than {} steps", limits.max_steps)
        } else {
            format!("output is larger than {} bytes", limits.max_output)
        };
        t.error(ErrorKind::Limit, pos, over).into()
    }

    #[inline(always)]
    fn nodes(&mut self, t: &'t Template, leaf: &'t Template, nodes: &'t [Node]) -> Res<()> {
        // Branches of an `if` are often one piece of text (` class="on"`):
        // written here, without a walk of their own.
        match nodes {
            [] => return Ok(()),
            [Node::Text(s)] => {
                append(&mut self.out, s.as_bytes());
                return Ok(());
            }
            _ => {}
        }
        let mark = self.host.mark();
        self.nodes_then(t, leaf, nodes, mark)
    }

    /// Render `nodes`, then release the host values made since `done`
    /// (unless it is [`KEEP`]).
    fn nodes_then(
        &mut self,
        t: &'t Template,
        leaf: &'t Template,
        nodes: &'t [Node],
        done: usize,
    ) -> Res<()> {
        self.walk(t, leaf, nodes, done)
    }

    /// [`Renderer::nodes_then`], inlined where it runs per loop item (a
    /// call per item cost its prologue and epilogue each time).
    ///
    /// What an output, condition or loop leaves behind is garbage once it
    /// is written, but it is released in batches of [`HOLD`] nodes rather
    /// than one by one (each release is a `lua_settop` call): after any
    /// node, everything made since `base` is garbage, since nested node
    /// lists, loops and includes release their own values.
    #[inline(always)]
    fn walk(
        &mut self,
        t: &'t Template,
        leaf: &'t Template,
        nodes: &'t [Node],
        done: usize,
    ) -> Res<()> {
        let base = self.host.mark();
        let mut held = 0;
        for node in nodes {
            if !self.node(t, leaf, node)? || !H::RELEASES {
                continue;
            }
            held += 1;
            if held == HOLD {
                self.host.release(base);
                held = 0;
            }
        }
        if done != KEEP {
            self.host.release(done);
        }
        Ok(())
    }

    /// Render one node; `false` if it made no host values (text).
    #[inline(always)]
    fn node(&mut self, t: &'t Template, leaf: &'t Template, node: &'t Node) -> Res<bool> {
        match node {
            Node::Text(s) => {
                append(&mut self.out, s.as_bytes());
                return Ok(false);
            }
            Node::Output {
                expr:
                    Expr::Filter {
                        input,
                        filter: f @ (Filter::Upper | Filter::Lower | Filter::Trim),
                        ..
                    },
                raw,
            } => {
                let v = match self.read(input) {
                    Some(h) => Val::Host(h),
                    None => self.eval(t, input)?,
                };
                self.write_filtered(&v, *f, *raw);
            }
            Node::Output { expr, raw } => match self.read(expr) {
                Some(h) => self.write_host(&h, *raw),
                None => {
                    let v = self.eval(t, expr)?;
                    self.write(&v, *raw);
                }
            },
            Node::If {
                branches,
                otherwise,
            } => {
                let mut body = otherwise;
                for (cond, b) in branches {
                    let yes = match self.read(cond) {
                        Some(h) => self.host_truthy(&h),
                        None => {
                            let v = self.eval(t, cond)?;
                            self.truthy(&v)
                        }
                    };
                    if yes {
                        body = b;
                        break;
                    }
                }
                self.nodes(t, leaf, body)?;
            }
            Node::For {
                key,
                var,
                iter,
                body,
                pos,
            } => self.for_loop(t, leaf, key.as_ref(), var, iter, body, *pos)?,
            Node::Block(i) => {
                let name = &t.blocks[*i].name;
                let found = ancestry(leaf).find_map(|c| {
                    c.blocks
                        .iter()
                        .find(|b| b.name == *name)
                        .map(|b| (c, &b.body))
                });
                let (owner, body) = found.unwrap_or((t, &t.blocks[*i].body));
                self.nodes(owner, leaf, body)?;
            }
            Node::Include(i) => self.template(&t.includes[*i])?,
        }
        Ok(true)
    }

    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        t: &'t Template,
        leaf: &'t Template,
        key: Option<&'t Key>,
        var: &'t Key,
        iter: &'t Expr,
        body: &'t [Node],
        pos: u32,
    ) -> Res<()> {
        let list = self.eval(t, iter)?;
        let list = match list {
            Val::Nil => return Ok(()),
            Val::Host(v) => match self.host.shape(&v) {
                Shape::Nil => return Ok(()),
                Shape::Table => v,
                other => {
                    return Err(t
                        .error(ErrorKind::Render, pos, cannot_loop(shape_name(&other)))
                        .into())
                }
            },
            other => {
                return Err(t
                    .error(ErrorKind::Render, pos, cannot_loop(val_name(&other)))
                    .into())
            }
        };
        let fail = |e: String| t.error(ErrorKind::Render, pos, e);
        match key {
            None => {
                let n = self.host.items(&list).map_err(fail)?;
                // What an item leaves behind is released every few items,
                // not after each one (a `lua_settop` call each).
                let mark = self.host.mark();
                // The loop variable and `loop` state are pushed once and
                // updated per item (what the body pushes, it pops).
                let depth = self.vars.len();
                self.vars.push((var, Val::Nil));
                self.loops.push(LoopState {
                    index0: 0,
                    length: n,
                });
                let mut result = Ok(());
                for i in 0..n {
                    let item = self.host.item(&list, i);
                    self.vars[depth].1 = Val::Host(item);
                    if let Some(state) = self.loops.last_mut() {
                        state.index0 = i;
                    }
                    let done = if i % HOLD_ITEMS == HOLD_ITEMS - 1 || i + 1 == n {
                        mark
                    } else {
                        KEEP
                    };
                    result = self
                        .walk(t, leaf, body, done)
                        .and_then(|()| self.step(t, pos));
                    if result.is_err() {
                        break;
                    }
                }
                self.loops.pop();
                self.vars.truncate(depth);
                result?;
                self.host.end_items(&list);
            }
            Some(k) => {
                let entries = self.host.entries(&list).map_err(fail)?;
                let n = entries.len();
                for (i, (key_val, item)) in entries.into_iter().enumerate() {
                    let kv = match key_val {
                        ItemKey::Int(n) => Val::Int(n),
                        ItemKey::Str(s) => Val::Str(Cow::Owned(s.into_bytes())),
                    };
                    let (mark, depth) = (self.host.mark(), self.vars.len());
                    self.vars.push((k, kv));
                    self.vars.push((var, Val::Host(item)));
                    self.iteration(t, leaf, body, (mark, depth), i, n)?;
                    self.step(t, pos)?;
                }
            }
        }
        Ok(())
    }

    /// One loop item: the caller has pushed its variables above `depth`
    /// (moved, not cloned); they go at the end, and so do the host values
    /// made since `done` unless it is [`KEEP`].
    #[allow(clippy::too_many_arguments)]
    fn iteration(
        &mut self,
        t: &'t Template,
        leaf: &'t Template,
        body: &'t [Node],
        (done, depth): (usize, usize),
        index0: usize,
        length: usize,
    ) -> Res<()> {
        self.loops.push(LoopState { index0, length });
        let result = self.nodes_then(t, leaf, body, done);
        self.loops.pop();
        self.vars.truncate(depth);
        result
    }

    pub(crate) fn eval(&mut self, t: &'t Template, e: &'t Expr) -> Res<Val<'t, H::Value>> {
        Ok(match e {
            Expr::Path { root, rest, pos } => return self.path(t, root, rest, *pos),
            Expr::Lit(lit) => match lit {
                Lit::Str(s) => Val::Str(Cow::Borrowed(s.as_bytes())),
                Lit::Int(n) => Val::Int(*n),
                Lit::Float(f) => Val::Float(*f),
                Lit::Bool(b) => Val::Bool(*b),
            },
            Expr::Not(e) => {
                let v = self.eval(t, e)?;
                Val::Bool(!self.truthy(&v))
            }
            Expr::And(a, b) => {
                let v = self.eval(t, a)?;
                if self.truthy(&v) {
                    self.eval(t, b)?
                } else {
                    v
                }
            }
            Expr::Or(a, b) => {
                let v = self.eval(t, a)?;
                if self.truthy(&v) {
                    v
                } else {
                    self.eval(t, b)?
                }
            }
            Expr::Cmp { op, a, b, pos } => {
                let a = self.eval(t, a)?;
                let b = self.eval(t, b)?;
                Val::Bool(
                    self.compare(*op, &a, &b)
                        .map_err(|m| t.error(ErrorKind::Render, *pos, m))?,
                )
            }
            Expr::Filter {
                input,
                filter,
                arg,
                pos,
            } => {
                let v = self.eval(t, input)?;
                return self.filter(t, *filter, v, arg.as_deref(), *pos);
            }
        })
    }

    fn path(
        &mut self,
        t: &'t Template,
        root: &'t Key,
        rest: &'t [Key],
        pos: u32,
    ) -> Res<Val<'t, H::Value>> {
        if root.id == LOOP {
            if let Some(state) = self.loops.last().copied() {
                return loop_field(state, rest)
                    .map_err(|m| t.error(ErrorKind::Render, pos, m).into());
            }
        }
        let var = self.vars.iter().rev().find(|(k, _)| same(k, root));
        let (mut cur, rest) = match (var, rest) {
            // `item.name`: read the field from the variable where it lies; a
            // clone of a JS value costs a reference count pair.
            (Some((_, Val::Host(v))), [first, more @ ..]) => {
                (Val::Host(self.host.field(v, first)), more)
            }
            (Some((_, v)), _) => (v.clone(), rest),
            (None, _) => (Val::Host(self.host.field(&self.data, root)), rest),
        };
        for key in rest {
            cur = match cur {
                Val::Host(v) => Val::Host(self.host.field(&v, key)),
                _ => Val::Nil,
            };
        }
        Ok(cur)
    }

    /// The common case of an expression, read without [`Val`] or
    /// `Result`: a path that is a field of a loop variable holding a host
    /// value, or of the data (`item.name`, `title`, `user.address.city`).
    /// `None` for anything else (`loop.*`, a variable holding a value the
    /// renderer made, literals, operators), which [`Renderer::eval`] takes.
    #[inline(always)]
    fn read(&mut self, e: &Expr) -> Option<H::Value> {
        let Expr::Path { root, rest, .. } = e else {
            return None;
        };
        if root.id == LOOP {
            return None;
        }
        let var = self.vars.iter().rev().find(|(k, _)| same(k, root));
        let (mut cur, rest) = match (var, &rest[..]) {
            (Some((_, Val::Host(v))), [first, more @ ..]) => (self.host.field(v, first), more),
            (Some(_), _) => return None,
            (None, rest) => (self.host.field(&self.data, root), rest),
        };
        for key in rest {
            cur = self.host.field(&cur, key);
        }
        Some(cur)
    }

    /// [`Renderer::truthy`] of a host value.
    #[inline(always)]
    fn host_truthy(&mut self, v: &H::Value) -> bool {
        let flavor = self.flavor;
        match self.host.shape(v) {
            Shape::Nil => false,
            Shape::Bool(b) => b,
            _ if flavor == Flavor::Lua => true,
            Shape::Int(n) => n != 0,
            Shape::Float(f) => !(f == 0.0 || f.is_nan()),
            Shape::Str(s) => !s.is_empty(),
            Shape::Table => true,
        }
    }

    /// [`Renderer::write`] of a host value.
    #[inline(always)]
    fn write_host(&mut self, v: &H::Value, raw: bool) {
        let flavor = self.flavor;
        let shape = self.host.shape(v);
        if put(&mut self.out, shape, raw, flavor) {
            return;
        }
        let mut text = Vec::new();
        self.host.display(v, &mut text);
        if raw {
            self.out.extend_from_slice(&text);
        } else {
            format::escape(&mut self.out, &text, flavor);
        }
    }

    /// The shape of any value (host values are asked).
    pub(crate) fn shape<'a>(&'a mut self, v: &'a Val<'t, H::Value>) -> Shape<'a> {
        shape_of(self.host, v)
    }

    pub(crate) fn truthy(&mut self, v: &Val<'t, H::Value>) -> bool {
        let flavor = self.flavor;
        match self.shape(v) {
            Shape::Nil => false,
            Shape::Bool(b) => b,
            _ if flavor == Flavor::Lua => true,
            Shape::Int(n) => n != 0,
            Shape::Float(f) => !(f == 0.0 || f.is_nan()),
            Shape::Str(s) => !s.is_empty(),
            Shape::Table => true,
        }
    }

    fn compare(
        &mut self,
        op: CmpOp,
        a: &Val<'t, H::Value>,
        b: &Val<'t, H::Value>,
    ) -> Result<bool, String> {
        let a = owned(self.shape(a));
        let b = self.shape(b);
        use std::cmp::Ordering;
        let ord: Option<Ordering> = match (&a, &b) {
            (Shape::Int(x), Shape::Int(y)) => Some(x.cmp(y)),
            (Shape::Int(_) | Shape::Float(_), Shape::Int(_) | Shape::Float(_)) => {
                num(&a).partial_cmp(&num(&b))
            }
            (Shape::Str(x), Shape::Str(y)) => Some(x.as_ref().cmp(y.as_ref())),
            _ => {
                let equal = match (&a, &b) {
                    (Shape::Nil, Shape::Nil) => true,
                    (Shape::Bool(x), Shape::Bool(y)) => x == y,
                    _ => false,
                };
                return match op {
                    CmpOp::Eq => Ok(equal),
                    CmpOp::Ne => Ok(!equal),
                    // Missing data compares false rather than failing the page.
                    _ if matches!(a, Shape::Nil) || matches!(b, Shape::Nil) => Ok(false),
                    _ => Err(format!(
                        "cannot compare {} {} {}: only numbers with numbers and strings with strings",
                        shape_name(&a),
                        op.symbol(),
                        shape_name(&b)
                    )),
                };
            }
        };
        // NaN compares false with everything, and unequal to itself.
        Ok(match (op, ord) {
            (CmpOp::Ne, None) => true,
            (_, None) => false,
            (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
            (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
            (CmpOp::Lt, Some(o)) => o == Ordering::Less,
            (CmpOp::Le, Some(o)) => o != Ordering::Greater,
            (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
            (CmpOp::Ge, Some(o)) => o != Ordering::Less,
        })
    }

    /// Append `v` as text, escaped unless `raw`.
    fn write(&mut self, v: &Val<'t, H::Value>, raw: bool) {
        let flavor = self.flavor;
        let out = &mut self.out;
        // A free function, not `self.shape`: `out` stays borrowable.
        let shape = shape_of(self.host, v);
        if put(out, shape, raw, flavor) {
            return;
        }
        let Val::Host(h) = v else { return };
        let mut text = Vec::new();
        self.host.display(h, &mut text);
        if raw {
            self.out.extend_from_slice(&text);
        } else {
            format::escape(&mut self.out, &text, flavor);
        }
    }
}

/// Append a value of any shape but [`Shape::Table`] as text, escaped
/// unless `raw`; `false` for a table (the caller asks the host to display
/// it).
#[inline(always)]
fn put(out: &mut Vec<u8>, shape: Shape<'_>, raw: bool, flavor: Flavor) -> bool {
    match shape {
        Shape::Nil => {}
        Shape::Bool(b) => append(out, if b { b"true" } else { b"false" }),
        Shape::Int(n) => append(out, itoa::Buffer::new().format(n).as_bytes()),
        Shape::Float(f) => format::float(out, f, flavor),
        Shape::Str(s) if raw => out.extend_from_slice(&s),
        Shape::Str(s) => format::escape(out, &s, flavor),
        Shape::Table => return false,
    }
    true
}

fn num(s: &Shape<'_>) -> f64 {
    match s {
        Shape::Int(n) => *n as f64,
        Shape::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn owned(s: Shape<'_>) -> Shape<'static> {
    match s {
        Shape::Nil => Shape::Nil,
        Shape::Bool(b) => Shape::Bool(b),
        Shape::Int(n) => Shape::Int(n),
        Shape::Float(f) => Shape::Float(f),
        Shape::Str(s) => Shape::Str(Cow::Owned(s.into_owned())),
        Shape::Table => Shape::Table,
    }
}

pub(crate) fn shape_name(s: &Shape<'_>) -> &'static str {
    match s {
        Shape::Nil => "nil",
        Shape::Bool(_) => "a boolean",
        Shape::Int(_) | Shape::Float(_) => "a number",
        Shape::Str(_) => "a string",
        Shape::Table => "a table",
    }
}

fn val_name<V>(v: &Val<'_, V>) -> &'static str {
    match v {
        Val::Host(_) => "a table",
        Val::Nil => "nil",
        Val::Bool(_) => "a boolean",
        Val::Int(_) | Val::Float(_) => "a number",
        Val::Str(_) => "a string",
    }
}

fn cannot_loop(what: &str) -> String {
    format!(
        "cannot loop over {what}: {{% for %}} needs a list (or a table/object with `for k, v in`)"
    )
}

fn loop_field<'t, V>(state: LoopState, rest: &[Key]) -> Result<Val<'t, V>, String> {
    let field = match rest {
        [field] => &*field.name,
        _ => "",
    };
    Ok(match field {
        "index" => Val::Int(state.index0 as i64 + 1),
        "index0" => Val::Int(state.index0 as i64),
        "first" => Val::Bool(state.index0 == 0),
        "last" => Val::Bool(state.index0 + 1 == state.length),
        "length" => Val::Int(state.length as i64),
        _ => {
            return Err(
                "inside {% for %}, `loop` has only loop.index, loop.index0, loop.first, loop.last and loop.length".into(),
            )
        }
    })
}

/// The shape of any value (host values are asked); borrows only the host.
pub(crate) fn shape_of<'a, 't, H: Host>(host: &'a mut H, v: &'a Val<'t, H::Value>) -> Shape<'a> {
    match v {
        Val::Host(h) => host.shape(h),
        Val::Nil => Shape::Nil,
        Val::Bool(b) => Shape::Bool(*b),
        Val::Int(n) => Shape::Int(*n),
        Val::Float(f) => Shape::Float(*f),
        Val::Str(s) => Shape::Str(Cow::Borrowed(s)),
    }
}
