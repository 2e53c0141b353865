//! From lexed items to nodes: `if/elif/else`, `for`, `block`, `extends`,
//! `include`, each closed by `{% end %}` (Hull has no `endif`/`endfor`).

use crate::ast::{BlockDef, Expr, Filter, Node, Parsed};
use crate::expr::ExprParser;
use crate::lexer::{fail, lex, Fail, Item, Tok, TokKind};
use crate::names::{Key, Names};

/// Deepest nesting of `if`/`for`/`block`.
const MAX_NESTING: usize = 64;

/// A block being parsed; its body collects the nodes until `{% end %}`.
enum Frame {
    If {
        branches: Vec<(Expr, Vec<Node>)>,
        cond: Expr,
        in_else: bool,
    },
    For {
        key: Option<Key>,
        var: Key,
        iter: Expr,
        pos: u32,
    },
    Block {
        name: Box<str>,
    },
}

struct Open {
    frame: Frame,
    body: Vec<Node>,
    /// The opening tag, for "never closed" errors.
    pos: u32,
    tag: &'static str,
}

struct Parser<'n> {
    names: &'n mut Names,
    stack: Vec<Open>,
    out: Parsed,
    top: Vec<Node>,
}

/// Parse a whole template.
pub(crate) fn parse(src: &str, names: &mut Names) -> Result<Parsed, Fail> {
    let mut p = Parser {
        names,
        stack: Vec::new(),
        out: Parsed::default(),
        top: Vec::new(),
    };
    for item in lex(src)? {
        match item {
            Item::Text(t) => p.push(Node::Text(t.into())),
            Item::Output { raw, toks, pos } => p.output(raw, &toks, pos)?,
            Item::Tag { toks, pos } => p.tag(&toks, pos)?,
        }
    }
    if let Some(open) = p.stack.last() {
        return fail(
            open.pos as usize,
            format!("{{% {} %}} is never closed: add {{% end %}}", open.tag),
        );
    }
    p.out.nodes = p.top;
    Ok(p.out)
}

/// The end of a token list, for errors about what is missing.
fn end_of(toks: &[Tok<'_>], pos: u32) -> u32 {
    toks.last().map_or(pos + 2, |t| t.pos + 1)
}

impl Parser<'_> {
    fn push(&mut self, node: Node) {
        match self.stack.last_mut() {
            Some(open) => open.body.push(node),
            None => self.top.push(node),
        }
    }

    fn output(&mut self, raw: bool, toks: &[Tok<'_>], pos: u32) -> Result<(), Fail> {
        if toks.is_empty() {
            return fail(pos as usize, "empty output: put a value between the braces");
        }
        let mut ep = ExprParser::new(toks, end_of(toks, pos), self.names);
        let mut expr = ep.expr()?;
        ep.finish("the value")?;
        // `| raw` anywhere in the output's own filter chain turns escaping off.
        let mut raw = raw;
        strip_raw(&mut expr, &mut raw);
        self.push(Node::Output { expr, raw });
        Ok(())
    }

    fn open(&mut self, frame: Frame, pos: u32, tag: &'static str) -> Result<(), Fail> {
        if self.stack.len() >= MAX_NESTING {
            return fail(
                pos as usize,
                format!("blocks nested deeper than {MAX_NESTING} levels"),
            );
        }
        self.stack.push(Open {
            frame,
            body: Vec::new(),
            pos,
            tag,
        });
        Ok(())
    }

    fn tag(&mut self, toks: &[Tok<'_>], pos: u32) -> Result<(), Fail> {
        let Some(Tok {
            kind: TokKind::Ident(word),
            ..
        }) = toks.first()
        else {
            return fail(
                pos as usize,
                "empty or invalid tag: expected a tag name such as if, for, end",
            );
        };
        let mut ep = ExprParser::new(&toks[1..], end_of(toks, pos), self.names);
        match *word {
            "if" => {
                let cond = ep.expr()?;
                ep.finish("the condition")?;
                let frame = Frame::If {
                    branches: Vec::new(),
                    cond,
                    in_else: false,
                };
                self.open(frame, pos, "if")
            }
            "elif" | "else" => {
                let cond = if *word == "elif" {
                    let c = ep.expr()?;
                    ep.finish("the condition")?;
                    Some(c)
                } else {
                    ep.finish("else")?;
                    None
                };
                let Some(Open {
                    frame: Frame::If {
                        branches,
                        cond: cur,
                        in_else,
                    },
                    body,
                    ..
                }) = self.stack.last_mut()
                else {
                    return fail(pos as usize, format!("unexpected {{% {word} %}} outside {{% if %}}"));
                };
                if *in_else {
                    return fail(pos as usize, format!("unexpected {{% {word} %}} after {{% else %}}"));
                }
                let done = std::mem::take(body);
                match cond {
                    Some(c) => branches.push((std::mem::replace(cur, c), done)),
                    None => {
                        branches.push((cur.clone(), done));
                        *in_else = true;
                    }
                }
                Ok(())
            }
            "for" => {
                let first = ep.name("a loop variable name after 'for'")?;
                let first = ep.key(first);
                let (key, var) = if ep.comma() {
                    let second = ep.name("a second loop variable name after ','")?;
                    (Some(first), ep.key(second))
                } else {
                    (None, first)
                };
                ep.keyword("in")?;
                let iter = ep.expr()?;
                ep.finish("the loop")?;
                let frame = Frame::For {
                    key,
                    var,
                    iter,
                    pos,
                };
                self.open(frame, pos, "for")
            }
            "block" => {
                let name = ep.name("a block name")?;
                ep.finish("the block name")?;
                if self.out.blocks.iter().any(|b| &*b.name == name)
                    || self.stack.iter().any(|o| matches!(&o.frame, Frame::Block { name: n } if &**n == name))
                {
                    return fail(pos as usize, format!("block {name:?} is defined twice"));
                }
                self.open(Frame::Block { name: name.into() }, pos, "block")
            }
            "end" => {
                ep.finish("end")?;
                let Some(open) = self.stack.pop() else {
                    return fail(pos as usize, "unexpected {% end %}: nothing to close");
                };
                let node = match open.frame {
                    Frame::If {
                        mut branches,
                        cond,
                        in_else,
                    } => {
                        if in_else {
                            Node::If {
                                branches,
                                otherwise: open.body,
                            }
                        } else {
                            branches.push((cond, open.body));
                            Node::If {
                                branches,
                                otherwise: Vec::new(),
                            }
                        }
                    }
                    Frame::For {
                        key,
                        var,
                        iter,
                        pos,
                    } => Node::For {
                        key,
                        var,
                        iter,
                        body: open.body,
                        pos,
                    },
                    Frame::Block { name } => {
                        self.out.blocks.push(BlockDef {
                            name,
                            body: open.body,
                        });
                        Node::Block(self.out.blocks.len() - 1)
                    }
                };
                self.push(node);
                Ok(())
            }
            "extends" => {
                let name = ep.string("the parent template's name")?;
                ep.finish("the template name")?;
                if !self.stack.is_empty() {
                    return fail(pos as usize, "{% extends %} must be at the top level of the template");
                }
                if self.out.extends.is_some() {
                    return fail(pos as usize, "a template can extend only one parent");
                }
                self.out.extends = Some((name, pos));
                Ok(())
            }
            "include" => {
                let name = ep.string("the included template's name")?;
                ep.finish("the template name")?;
                self.out.includes.push((name, pos));
                self.push(Node::Include(self.out.includes.len() - 1));
                Ok(())
            }
            other => fail(
                pos as usize,
                format!(
                    "unknown tag {{% {other} %}} (tags: if, elif, else, for, block, extends, include, end)"
                ),
            ),
        }
    }
}

/// Remove `raw` filters from the outermost filter chain of an output,
/// noting that the output is unescaped.
fn strip_raw(expr: &mut Expr, raw: &mut bool) {
    loop {
        match expr {
            Expr::Filter {
                filter: Filter::Raw,
                input,
                ..
            } => {
                *raw = true;
                let inner =
                    std::mem::replace(&mut **input, Expr::Lit(crate::ast::Lit::Bool(false)));
                *expr = inner;
            }
            Expr::Filter { input, .. } => {
                strip_raw(input, raw);
                return;
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(src: &str) -> Parsed {
        parse(src, &mut Names::new()).unwrap()
    }

    fn err(src: &str) -> (u32, String) {
        let e = parse(src, &mut Names::new()).unwrap_err();
        (e.pos, e.msg)
    }

    #[test]
    fn nests_blocks() {
        let p =
            parse_ok("{% if a %}x{% elif b %}y{% else %}{% for i in c %}{{ i }}{% end %}{% end %}");
        let [Node::If {
            branches,
            otherwise,
        }] = &p.nodes[..]
        else {
            panic!("{:?}", p.nodes)
        };
        assert_eq!(branches.len(), 2);
        assert!(matches!(otherwise[0], Node::For { .. }));
    }

    #[test]
    fn records_blocks_extends_and_includes() {
        let p = parse_ok("{% extends 'base.html' %}{% block a %}{% block b %}{% end %}{% end %}{% include \"p.html\" %}");
        assert_eq!(p.extends, Some(("base.html".into(), 0)));
        assert_eq!(p.blocks.len(), 2);
        assert_eq!(&*p.blocks[0].name, "b");
        assert_eq!(p.includes, vec![("p.html".into(), 69)]);
    }

    #[test]
    fn raw_filter_turns_escaping_off() {
        let p = parse_ok("{{ a | raw | upper }}{{ b | upper }}");
        assert!(
            matches!(&p.nodes[0], Node::Output { raw: true, expr: Expr::Filter { filter: Filter::Upper, input, .. } } if matches!(**input, Expr::Path { .. }))
        );
        assert!(matches!(&p.nodes[1], Node::Output { raw: false, .. }));
    }

    #[test]
    fn errors_name_the_tag() {
        assert_eq!(
            err("ab{% if x %}"),
            (2, "{% if %} is never closed: add {% end %}".into())
        );
        assert_eq!(err("{% end %}").1, "unexpected {% end %}: nothing to close");
        assert!(err("{% else %}").1.contains("outside {% if %}"));
        assert!(err("{% if a %}{% else %}{% elif b %}{% end %}")
            .1
            .contains("after {% else %}"));
        assert!(err("{% endif %}").1.contains("unknown tag {% endif %}"));
        assert_eq!(
            err("{{ x | uper }}"),
            (
                7,
                "unknown filter \"uper\" (filters: upper, lower, trim, length, default, json, raw)"
                    .into()
            )
        );
        assert!(err("{{ x | upper: 'a' }}").1.contains("takes no argument"));
        assert!(err("{% for in x %}").1.contains("loop variable"));
        assert!(err("{% for a b %}").1.contains("'in'"));
        assert!(err("{% if %}").1.contains("expected a value"));
        assert!(err("{{ a b }}").1.contains("unexpected \"b\""));
        assert!(err("{{ }}").1.contains("empty output"));
        assert!(err("{% if a %}{% extends 'x' %}{% end %}")
            .1
            .contains("top level"));
        assert!(err("{% block a %}{% end %}{% block a %}{% end %}")
            .1
            .contains("twice"));
        assert!(err("{{ items.0 }}").1.contains("items.0"));
        assert!(err("{% extends base %}").1.contains("quoted"));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "{% if a %}".repeat(65);
        assert!(err(&deep).1.contains("deeper than 64"));
        let parens = format!("{{{{ {}a{} }}}}", "(".repeat(70), ")".repeat(70));
        assert!(err(&parens).1.contains("deeper than 64"));
        let nots = format!("{{% if {} a %}}{{% end %}}", "not ".repeat(70));
        assert!(err(&nots).1.contains("deeper than 64"));
    }
}
