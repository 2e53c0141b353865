//! Generated JavaScript values (js_source.rs writes the expression that
//! builds each): objects made by literals, by assignment, without a
//! prototype or from a class, then changed (keys deleted, added, hidden,
//! turned into getters, frozen, or changed by a getter of one of their own
//! members while they are being serialized); arrays with holes; rows of
//! objects with one key list (one shape); strings with escapes, Latin-1,
//! astral characters and lone surrogates; keys from a small per-case pool,
//! so that objects with the same keys in other orders or with values of
//! other types are common.

use proptest::prelude::*;

#[derive(Clone, Debug)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i32),
    Num(f64),
    Str(Text),
    /// `None` is a hole.
    Arr(Vec<Option<Node>>),
    Obj(Box<Obj>),
    /// Objects built with the same keys in the same order (one shape):
    /// the key list and each object's values.
    Rows(Vec<Key>, Vec<Vec<Node>>),
    /// A value JSON leaves out of objects and writes `null` for in arrays
    /// (`undefined`, a function, a symbol), as its source.
    Skipped(&'static str),
    /// A value the serializer hands to `JSON.stringify` (a `toJSON`, a
    /// boxed primitive, a BigInt, a Proxy, ...), as its source.
    Declined(&'static str),
    /// The object being changed (a cycle; only in [`Later::Set`]).
    Itself,
}

#[derive(Clone, Debug)]
pub(crate) struct Obj {
    pub(crate) build: Build,
    pub(crate) props: Vec<(Key, Node)>,
    pub(crate) later: Vec<Later>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Build {
    /// `{["k"]: v, …}`
    Literal,
    /// `{}` then `o["k"] = v` (`__proto__` then sets the prototype).
    Assign,
    /// `Object.create(null)` then assignments.
    NullProto,
    /// An instance of a class, then assignments.
    Class,
}

/// What happens to an object after it is built.
#[derive(Clone, Debug)]
pub(crate) enum Later {
    Delete(Key),
    Set(Key, Node),
    /// Made non-enumerable.
    Hide(Key),
    /// Made an enumerable getter returning the value.
    Getter(Key, Node),
    Freeze,
    /// Member `child` (if it is an object) gets an enumerable getter that,
    /// when read (while the object is being serialized), does these to the
    /// object itself.
    FromChild(Key, Vec<Later>),
}

/// A property name: the text between the quotes of its JS string literal.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Key(pub(crate) String);

/// A string value: pieces of JS string literal text, written as one
/// literal, or built at run time (ropes, repeats, slices).
#[derive(Clone, Debug)]
pub(crate) enum Text {
    Literal(String),
    Concat(String, String),
    Repeat(String, usize),
    Slice(String),
}

const LONE: [&str; 3] = ["\\ud800", "\\udc00", "\\udbff"];

fn pieces(faults: bool) -> BoxedStrategy<String> {
    let piece = prop_oneof![
        8 => "[a-zA-Z0-9 ]{1,6}",
        2 => prop::sample::select(vec![
            "\\\"", "\\\\", "/", "<", "</script>", "\\u007f", "\\u0000", "\\n", "\\r", "\\t",
            "\\b", "\\f", "\\u0001", "\\u001f", "\\u2028", "\\u2029", "`",
        ])
        .prop_map(String::from),
        2 => prop::sample::select(vec![
            "é", "\\u00e9", "ÿ", "\\u00ff", "日本", "\\ud83d\\ude00", "😀", "\\uffff",
        ])
        .prop_map(String::from),
    ];
    let piece = if faults {
        prop_oneof![30 => piece, 1 => prop::sample::select(LONE.to_vec()).prop_map(String::from)]
            .boxed()
    } else {
        piece.boxed()
    };
    prop::collection::vec(piece, 0..8)
        .prop_map(|p| p.concat())
        .boxed()
}

fn text(faults: bool) -> impl Strategy<Value = Text> {
    let p = pieces(faults);
    prop_oneof![
        8 => p.clone().prop_map(Text::Literal),
        1 => (p.clone(), p.clone()).prop_map(|(a, b)| Text::Concat(a, b)),
        1 => (p.clone(), 2..60usize).prop_map(|(a, n)| Text::Repeat(a, n)),
        1 => p.prop_map(Text::Slice),
    ]
}

/// Keys as apps write them, array-index look-alikes, names with a meaning
/// elsewhere (`__proto__`, `length`), and the same name spelt two ways.
pub(crate) fn key(faults: bool) -> BoxedStrategy<Key> {
    let plain = prop_oneof![
        4 => "[a-z_]{1,6}",
        3 => prop::sample::select(vec![
            "", " ", "0", "1", "01", "-1", "1.5", "4294967294", "4294967295", "__proto__",
            "constructor", "length", "id", "name", "é", "\\u00e9", "日本", "\\ud83d\\ude00",
            "a\\\"b", "a\\\\b", "\\n", "\\u0000", "zz_get",
        ])
        .prop_map(String::from),
    ];
    if !faults {
        return plain.prop_map(Key).boxed();
    }
    prop_oneof![
        30 => plain,
        1 => prop::sample::select(vec!["toJSON", "\\ud800", "\\udfff"]).prop_map(String::from),
    ]
    .prop_map(Key)
    .boxed()
}

/// Numbers; NaN and the infinities are no fault in JS (they are `null`).
pub(crate) fn num() -> BoxedStrategy<f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    prop_oneof![
        4 => POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,
        2 => (-1_000_000i64..1_000_000).prop_map(|i| i as f64 / 8.0),
        2 => prop::sample::select(vec![
            0.0, -0.0, 0.1, 1.0 / 3.0, 1e21, 1e-7, 1e300, -1e300, 5e-324, f64::MAX,
            f64::MIN_POSITIVE, 9007199254740992.0, 9007199254740993.0, 2147483648.0,
            -2147483649.0, 4294967296.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
        ]),
    ]
    .boxed()
}

fn leaf(faults: bool) -> BoxedStrategy<Node> {
    let skipped = prop::sample::select(vec![
        "undefined",
        "(function () {})",
        "Symbol('s')",
        "(() => 1)",
    ])
    .prop_map(Node::Skipped);
    let declined = prop::sample::select(vec![
        "new Date(0)",
        "new Map([[1, 2]])",
        "new Boolean(false)",
        "10n",
        "new Proxy({}, {})",
        "({toJSON() { return 'T'; }})",
        "new Uint8Array(2)",
        "new Number(3)",
    ])
    .prop_map(Node::Declined);
    let mut arms: Vec<(u32, BoxedStrategy<Node>)> = vec![
        (2, Just(Node::Null).boxed()),
        (2, any::<bool>().prop_map(Node::Bool).boxed()),
        (4, any::<i32>().prop_map(Node::Int).boxed()),
        (4, num().prop_map(Node::Num).boxed()),
        (6, text(faults).prop_map(Node::Str).boxed()),
        (1, skipped.boxed()),
    ];
    if faults {
        arms.push((1, declined.boxed()));
    }
    prop::strategy::Union::new_weighted(arms).boxed()
}

/// Values a few levels deep, mostly objects and arrays. Keys come from a
/// pool of a few per case. A quarter of the cases may hold what the
/// serializer hands to `JSON.stringify` (each such part makes it hand
/// over the whole value, so they are rare within it).
pub(crate) fn node() -> impl Strategy<Value = Node> {
    (
        prop::collection::vec(key(false), 2..8),
        prop::bool::weighted(0.25),
    )
        .prop_flat_map(|(pool, faults)| {
            let tables = pool.clone();
            let any = leaf(faults).prop_recursive(4, 96, 8, move |inner| {
                compound(inner, tables.clone(), faults)
            });
            prop_oneof![1 => any.clone(), 4 => compound(any.boxed(), pool, faults)]
        })
}

fn pool_key(pool: Vec<Key>, faults: bool) -> BoxedStrategy<Key> {
    prop_oneof![6 => prop::sample::select(pool), 1 => key(faults)].boxed()
}

fn compound(inner: BoxedStrategy<Node>, pool: Vec<Key>, faults: bool) -> BoxedStrategy<Node> {
    let build = prop::sample::select(vec![
        Build::Literal,
        Build::Literal,
        Build::Literal,
        Build::Assign,
        Build::NullProto,
        Build::Class,
    ]);
    let k = pool_key(pool.clone(), faults);
    let prop = (k.clone(), inner.clone());
    let parent_op = prop_oneof![
        3 => k.clone().prop_map(Later::Delete),
        2 => (k.clone(), inner.clone()).prop_map(|(k, v)| Later::Set(k, v)),
        2 => (k.clone(), inner.clone()).prop_map(|(k, v)| Later::Getter(k, v)),
        1 => k.clone().prop_map(Later::Hide),
    ];
    let mut later_arms: Vec<(u32, BoxedStrategy<Later>)> = vec![
        (3, k.clone().prop_map(Later::Delete).boxed()),
        (
            3,
            (k.clone(), inner.clone())
                .prop_map(|(k, v)| Later::Set(k, v))
                .boxed(),
        ),
        (1, k.clone().prop_map(Later::Hide).boxed()),
        (
            1,
            (k.clone(), inner.clone())
                .prop_map(|(k, v)| Later::Getter(k, v))
                .boxed(),
        ),
        // Deleting eight or more keys makes QuickJS compact the object's
        // property slots.
        (
            2,
            (k.clone(), prop::collection::vec(parent_op, 1..12))
                .prop_map(|(c, ops)| Later::FromChild(c, ops))
                .boxed(),
        ),
    ];
    if faults {
        later_arms.push((
            1,
            (k.clone(), Just(Node::Itself))
                .prop_map(|(k, v)| Later::Set(k, v))
                .boxed(),
        ));
    }
    let later = prop::collection::vec(prop::strategy::Union::new_weighted(later_arms), 0..4);
    let obj = (
        build,
        prop::collection::vec(prop, 0..14),
        later,
        prop::bool::weighted(0.05),
    )
        .prop_map(|(build, props, mut later, freeze)| {
            if freeze {
                later.push(Later::Freeze);
            }
            Node::Obj(Box::new(Obj {
                build,
                props,
                later,
            }))
        });
    let item = prop_oneof![12 => inner.clone().prop_map(Some), 1 => Just(None)];
    let arr = prop::collection::vec(item, 0..10).prop_map(Node::Arr);
    let rows = (prop::collection::vec(k, 1..8), 1..5usize).prop_flat_map(move |(keys, n)| {
        let width = keys.len();
        let row = prop::collection::vec(inner.clone(), width..=width);
        (Just(keys), prop::collection::vec(row, n..=n)).prop_map(|(k, r)| Node::Rows(k, r))
    });
    prop_oneof![5 => obj, 3 => arr, 2 => rows].boxed()
}

impl Node {
    /// Whether the serializer may hand this value to `JSON.stringify`: it
    /// holds (anywhere, even in a part later removed) a declined value, a
    /// lone surrogate, a `toJSON` key or a cycle.
    pub(crate) fn may_decline(&self) -> bool {
        match self {
            Node::Declined(_) | Node::Itself => true,
            Node::Str(t) => t.may_decline(),
            Node::Arr(items) => items.iter().flatten().any(Node::may_decline),
            Node::Rows(keys, rows) => {
                keys.iter().any(Key::may_decline) || rows.iter().flatten().any(Node::may_decline)
            }
            Node::Obj(o) => {
                o.props
                    .iter()
                    .any(|(k, v)| k.may_decline() || v.may_decline())
                    || o.later.iter().any(Later::may_decline)
            }
            _ => false,
        }
    }
}

impl Node {
    /// Whether reading it runs a getter that changes an object being
    /// serialized ([`Later::FromChild`]): a serializer that hands the
    /// value to `JSON.stringify` then hands it over changed.
    pub(crate) fn changes_while_read(&self) -> bool {
        match self {
            Node::Arr(items) => items.iter().flatten().any(Node::changes_while_read),
            Node::Rows(_, rows) => rows.iter().flatten().any(Node::changes_while_read),
            Node::Obj(o) => {
                o.props.iter().any(|(_, v)| v.changes_while_read())
                    || o.later.iter().any(Later::changes_while_read)
            }
            _ => false,
        }
    }
}

impl Later {
    fn changes_while_read(&self) -> bool {
        match self {
            Later::FromChild(..) => true,
            Later::Set(_, v) | Later::Getter(_, v) => v.changes_while_read(),
            Later::Delete(_) | Later::Hide(_) | Later::Freeze => false,
        }
    }

    fn may_decline(&self) -> bool {
        match self {
            Later::Delete(k) | Later::Hide(k) => k.may_decline(),
            Later::Set(k, v) | Later::Getter(k, v) => k.may_decline() || v.may_decline(),
            Later::Freeze => false,
            Later::FromChild(k, ops) => k.may_decline() || ops.iter().any(Later::may_decline),
        }
    }
}

impl Key {
    fn may_decline(&self) -> bool {
        self.0 == "toJSON" || LONE.iter().any(|l| self.0.contains(l)) || self.0.contains("\\udfff")
    }
}

impl Text {
    fn may_decline(&self) -> bool {
        let lone = |s: &String| LONE.iter().any(|l| s.contains(l));
        match self {
            Text::Literal(a) | Text::Repeat(a, _) => lone(a),
            Text::Concat(a, b) => lone(a) || lone(b),
            // Slicing may cut a surrogate pair.
            Text::Slice(a) => lone(a) || a.contains("\\ud83d") || a.contains('😀'),
        }
    }
}
