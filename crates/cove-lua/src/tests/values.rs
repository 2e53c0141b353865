//! Generated Lua values, as the Lua source that builds them: tables made by
//! constructors (array part) and by assignments (hash part), keys removed
//! again, holes, metatables, cycles, keys from a small per-case pool (so
//! sibling tables share keys in other orders and with other value types),
//! strings with escapes, control bytes and invalid UTF-8, and the numbers
//! JSON cannot hold.

use std::fmt::Write;

use proptest::prelude::*;

/// A value, or the recipe of a table.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    Table(Box<Table>),
    /// The table whose constructor or assignments it appears in: a cycle.
    Itself,
    /// A function (cannot be JSON).
    Func,
}

/// `local t = {items...}`, then `t[k] = v` for each of `sets` in order (a
/// nil value removes the key), then the metatable.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    pub(crate) items: Vec<Node>,
    pub(crate) sets: Vec<(Key, Node)>,
    /// A metatable whose `__index`, `__len` and `__pairs` lie: raw readers
    /// must not see them.
    pub(crate) meta: bool,
}

#[derive(Clone, Debug)]
pub(crate) enum Key {
    Str(Vec<u8>),
    Int(i64),
    /// Never NaN (not a valid key); an integral one is an integer key.
    Float(f64),
    Bool(bool),
}

/// Byte strings built from pieces that stress escaping and UTF-8 repair.
pub(crate) fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        8 => "[a-zA-Z0-9 _-]{1,6}".prop_map(String::into_bytes),
        2 => prop::sample::select(vec![
            &b"\""[..], b"\\", b"/", b"<", b"\x7f", b"\0", b"\n", b"\r", b"\t",
            b"\x08", b"\x0c", b"\x01", b"\x1f",
        ])
        .prop_map(<[u8]>::to_vec),
        2 => prop::sample::select(vec!["é", "日本", "😀", "\u{2028}", "\u{FEFF}", "\u{10FFFF}"])
            .prop_map(|s| s.as_bytes().to_vec()),
        // Invalid UTF-8: stray continuation bytes, bad leads, a cut
        // sequence, an overlong form, a surrogate, past U+10FFFF.
        1 => prop::sample::select(vec![
            &b"\x80"[..], b"\xbf", b"\xc0\xaf", b"\xc2", b"\xe6\x97", b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80", b"\xf0\x9f\x98", b"\xff", b"\xfe\xfe",
        ])
        .prop_map(<[u8]>::to_vec),
    ];
    (
        prop::collection::vec(piece, 0..8),
        prop_oneof![6 => Just(1usize), 1 => 8..40usize],
    )
        .prop_map(|(pieces, times)| pieces.concat().repeat(times))
}

/// Keys as apps write them, and look-alikes of numbers and of each other.
pub(crate) fn key_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z_]{1,8}".prop_map(String::into_bytes),
        2 => prop::sample::select(vec![
            "", " ", "1", "01", "-1", "1.5", "1e3", "0", "4294967295", "9007199254740993",
            "a", "aa", "ab", "a\0", "A", "__index", "n", "id", "ids", "é", "\u{10FFFF}",
            "a key longer than forty bytes, so a long string",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => bytes(),
    ]
}

/// Finite floats, and with `faults` the ones JSON cannot hold.
pub(crate) fn float(faults: bool) -> BoxedStrategy<f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    let finite = prop_oneof![
        4 => POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,
        2 => (-1_000_000i64..1_000_000).prop_map(|i| i as f64 / 8.0),
        2 => prop::sample::select(vec![
            0.0, -0.0, 0.1, 1.0 / 3.0, 1e21, 1e-7, 1e300, -1e300, 5e-324, f64::MAX,
            f64::MIN_POSITIVE, 9007199254740992.0, 9007199254740993.0, -9007199254740991.0,
            4294967296.5, 1e15, 1e16,
        ]),
    ];
    if !faults {
        return finite.boxed();
    }
    prop_oneof![
        20 => finite,
        1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY]),
    ]
    .boxed()
}

pub(crate) fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -1000i64..1000,
        2 => any::<i64>(),
        1 => prop::sample::select(vec![
            i64::MIN, i64::MAX, i32::MIN as i64, i32::MAX as i64 + 1,
            (1 << 53) + 1, -(1 << 53) - 1,
        ]),
    ]
}

/// A scalar other than nil (which removes a key from a table, or makes a
/// hole in an array: its own case).
fn leaf(faults: bool) -> impl Strategy<Value = Node> {
    prop_oneof![
        2 => any::<bool>().prop_map(Node::Bool),
        4 => int().prop_map(Node::Int),
        4 => float(faults).prop_map(Node::Float),
        6 => bytes().prop_map(Node::Str),
    ]
}

/// An object's key: strings, mostly from `pool`; with `faults`, rarely one
/// that makes the table not an object.
fn key(pool: Vec<Vec<u8>>, faults: bool) -> BoxedStrategy<Key> {
    let string = prop_oneof![
        4 => prop::sample::select(pool).prop_map(Key::Str),
        1 => key_bytes().prop_map(Key::Str),
    ];
    if !faults {
        return string.boxed();
    }
    prop_oneof![
        40 => string,
        1 => prop_oneof![
            int().prop_map(Key::Int),
            Just(Key::Float(2.0)),
            Just(Key::Float(1.5)),
            any::<bool>().prop_map(Key::Bool),
        ],
    ]
    .boxed()
}

/// Values up to a few levels deep, mostly tables. Keys come from a pool
/// of a few per case, so objects with the same keys in other orders, or
/// with values of other types, are common. Most values are ones JSON can
/// hold; a quarter may hold what makes the encoding fail (each such part
/// fails the whole value, so they are rare within it).
pub(crate) fn node() -> impl Strategy<Value = Node> {
    let pool = prop::collection::vec(key_bytes(), 1..6);
    (pool, prop::bool::weighted(0.25)).prop_flat_map(|(pool, faults)| {
        let tables = pool.clone();
        let any = leaf(faults)
            .prop_recursive(4, 96, 8, move |inner| table(inner, tables.clone(), faults));
        prop_oneof![
            1 => Just(Node::Nil),
            4 => any.clone(),
            16 => table(any.boxed(), pool, faults),
        ]
    })
}

/// A table of `inner` values: an object, or an array made by its
/// constructor and maybe grown or overwritten by assignments after it
/// (integer keys in the hash part); with `faults`, also holed, mixed,
/// cyclic or holding a function.
fn table(inner: BoxedStrategy<Node>, pool: Vec<Vec<u8>>, faults: bool) -> BoxedStrategy<Node> {
    let empty = Node::Table(Box::new(Table {
        items: vec![],
        sets: vec![],
        meta: false,
    }));
    let rare = u32::from(faults);
    let item = weighted(vec![
        (60, inner.clone()),
        (3, Just(empty).boxed()),
        (rare, Just(Node::Nil).boxed()),
    ]);
    // Removing a key from an object is no fault: removing one from an
    // array is.
    let object_value = weighted(vec![
        (60, inner.clone()),
        (4, Just(Node::Nil).boxed()),
        (rare, Just(Node::Itself).boxed()),
        (rare, Just(Node::Func).boxed()),
    ]);
    let array_value = weighted(vec![(60, inner), (rare, Just(Node::Nil).boxed())]);
    let object = prop::collection::vec((key(pool.clone(), faults), object_value), 0..10)
        .prop_map(|sets| (Vec::new(), sets));
    let array = prop::collection::vec(item, 0..10).prop_flat_map(move |items| {
        let n = items.len() as i64;
        let value = array_value.clone();
        let index = |keys: std::ops::Range<i64>| {
            prop::collection::vec((keys.prop_map(Key::Int), value.clone()), 1..3).boxed()
        };
        let mixed = (key(pool.clone(), true), value.clone());
        let after = weighted(vec![
            (12, Just(Vec::new()).boxed()),
            // Grown by one, or overwritten.
            (3, index(n + 1..n + 2)),
            (2 * u32::from(n > 0), index(1..n.max(1) + 1)),
            // Past the end: a hole; or a key no array has.
            (rare, index(n + 2..n + 5)),
            (rare, prop::collection::vec(mixed, 1..2).boxed()),
        ]);
        (Just(items), after)
    });
    (
        prop_oneof![5 => object, 3 => array],
        prop::bool::weighted(0.1),
    )
        .prop_map(|((items, sets), meta)| Node::Table(Box::new(Table { items, sets, meta })))
        .boxed()
}

/// One of `arms` by weight, leaving out those of weight 0.
fn weighted<T: std::fmt::Debug + 'static>(arms: Vec<(u32, BoxedStrategy<T>)>) -> BoxedStrategy<T> {
    let arms = arms.into_iter().filter(|(w, _)| *w > 0).collect();
    prop::strategy::Union::new_weighted(arms).boxed()
}

/// A Lua string literal of any bytes.
pub(crate) fn lua_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b == b' ' || b == b'_' {
            s.push(b as char);
        } else {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
    s.push('"');
    s
}

pub(crate) fn lua_float(f: f64) -> String {
    if f.is_nan() {
        // 0/0 is a negative NaN on x86; keep the sign (templates print it).
        if f.is_sign_negative() {
            "(-math.abs(0/0))"
        } else {
            "(math.abs(0/0))"
        }
        .into()
    } else if f.is_infinite() {
        if f > 0.0 { "(1/0)" } else { "(-1/0)" }.into()
    } else {
        // Debug output is the shortest round-trip form, always with a
        // `.` or an exponent, so Lua reads a float.
        format!("({f:?})")
    }
}

pub(crate) fn lua_int(i: i64) -> String {
    // The literal 9223372036854775808 would read as a float.
    if i == i64::MIN {
        "math.mininteger".into()
    } else {
        format!("({i})")
    }
}

fn lua_key(k: &Key) -> String {
    match k {
        Key::Str(b) => lua_string(b),
        Key::Int(i) => lua_int(*i),
        Key::Float(f) => lua_float(*f),
        Key::Bool(b) => b.to_string(),
    }
}

/// Lua source of an expression that builds `n`.
pub(crate) fn to_lua(n: &Node) -> String {
    let mut s = String::new();
    write_lua(n, &mut s, false);
    s
}

fn write_lua(n: &Node, s: &mut String, in_table: bool) {
    match n {
        Node::Nil => s.push_str("nil"),
        Node::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => s.push_str(&lua_int(*i)),
        Node::Float(f) => s.push_str(&lua_float(*f)),
        Node::Str(b) => s.push_str(&lua_string(b)),
        Node::Itself if in_table => s.push('t'),
        Node::Itself => s.push_str("nil"),
        Node::Func => s.push_str("(function() end)"),
        Node::Table(t) => {
            s.push_str("(function() local t = {");
            for (i, item) in t.items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_lua(item, s, true);
            }
            s.push_str("} ");
            for (k, v) in &t.sets {
                let _ = write!(s, "t[{}] = ", lua_key(k));
                write_lua(v, s, true);
                s.push(' ');
            }
            if t.meta {
                s.push_str("setmetatable(t, LIAR) ");
            }
            s.push_str("return t end)()");
        }
    }
}

/// The metatable of [`Table::meta`] tables, installed as the global `LIAR`.
pub(crate) const LIAR: &str = r#"
LIAR = {
  __index = function() return "from __index" end,
  __len = function() return 3 end,
  __pairs = function() error("__pairs must not be called") end,
}
"#;
