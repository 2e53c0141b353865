//! `metrics`: the app's own Prometheus series (`metrics.counter("signups")
//! :inc()`), next to Cove's `cove_*` ones on `--metrics`.
//!
//! Declared once ([`KINDS`]: each kind's constructor and methods), as
//! entries of the capability table (crate::cap: a constructor returns the
//! metric's object, [`Metric::object`], which each binding gives its kind's
//! methods; a method gets that object first, [`call_on`]); the catalog
//! reads it too (api/tables.rs).
//!
//! A metric is made by name, once ([`Metric::new`]); labels go with each
//! recording (`c:inc(1, {plan = "pro"})`), so one object serves every
//! label set. Series are named `app_<name>` (counters `app_<name>_total`)
//! so they never clash with Cove's, and carry the worker's `worker` label
//! as Cove's do. Names and label names are checked on every call, metrics
//! on or off, so `cove test` fails where the server would.
//!
//! Off (no `--metrics`, and in `cove test`), a call checks its arguments
//! and returns. On, each worker keeps the handles it made in a map of its
//! own, keyed by series name and labels: a recording is one lookup and an
//! atomic add; only a worker's first use of a series takes the process-wide
//! lock that counts series against [`MAX_SERIES`], so a label taken from
//! user input cannot grow the exporter's memory without bound.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::{Mutex, OnceLock};

use cove_core::CapError;

use crate::cap::{CapValue, Runtime};

/// Distinct series (name and label values; each worker's copy counted
/// once) an app may make in one process.
pub const MAX_SERIES: usize = 1000;
/// Longest metric or label name, in bytes.
pub const MAX_NAME: usize = 100;
/// Longest label value, in bytes.
pub const MAX_VALUE: usize = 200;
/// Labels one recording may carry.
pub const MAX_LABELS: usize = 10;

/// What a metric is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// What a method does with its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Add (default 1); a counter takes whole numbers of at least 0.
    Inc,
    /// Subtract (default 1).
    Dec,
    /// Set to the number.
    Set,
    /// Add a sample.
    Observe,
}

/// A method of a metric's object (the same name in Lua and JS).
pub struct Method {
    pub name: &'static str,
    pub op: Op,
    /// The number may be left out (it is then 1).
    pub default_one: bool,
    pub doc: &'static str,
}

/// A kind of metric: the `metrics.<name>` that makes it, the type of the
/// object it returns and that object's methods.
pub struct KindDef {
    pub kind: Kind,
    pub name: &'static str,
    pub type_name: &'static str,
    pub doc: &'static str,
    pub methods: &'static [Method],
}

pub static KINDS: &[KindDef] = &[
    KindDef {
        kind: Kind::Counter,
        name: "counter",
        type_name: "Counter",
        doc: "a counter named app_<name>_total (made once per name; later calls return the same series)",
        methods: &[Method {
            name: "inc",
            op: Op::Inc,
            default_one: true,
            doc: "add n (a whole number >= 0, default 1) to the series of these labels",
        }],
    },
    KindDef {
        kind: Kind::Gauge,
        name: "gauge",
        type_name: "Gauge",
        doc: "a gauge named app_<name>: a value that goes up and down",
        methods: &[
            Method {
                name: "set",
                op: Op::Set,
                default_one: false,
                doc: "set the series of these labels to v",
            },
            Method {
                name: "inc",
                op: Op::Inc,
                default_one: true,
                doc: "add n (default 1) to the series of these labels",
            },
            Method {
                name: "dec",
                op: Op::Dec,
                default_one: true,
                doc: "subtract n (default 1) from the series of these labels",
            },
        ],
    },
    KindDef {
        kind: Kind::Histogram,
        name: "histogram",
        type_name: "Histogram",
        doc: "a histogram named app_<name>, in the server's buckets (0.0005 to 10: seconds suit it)",
        methods: &[Method {
            name: "observe",
            op: Op::Observe,
            default_one: false,
            doc: "add the sample v to the series of these labels",
        }],
    },
];

impl Kind {
    pub fn def(self) -> &'static KindDef {
        match self {
            Kind::Counter => &KINDS[0],
            Kind::Gauge => &KINDS[1],
            Kind::Histogram => &KINDS[2],
        }
    }
}

/// One metric as a script holds it: its kind and series name.
#[derive(Debug, Clone)]
pub struct Metric {
    kind: Kind,
    /// `app_<name>` (`app_<name>_total` for a counter).
    series: Rc<str>,
}

/// Who is calling, for messages (`metrics.counter`, `counter.inc`): made
/// only when one is written, so a call that succeeds allocates nothing
/// for it.
#[derive(Clone, Copy)]
struct Called(&'static str, &'static str);

impl std::fmt::Display for Called {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

fn argument(msg: String) -> CapError {
    CapError::new("metrics.argument", msg)
}

/// `[a-zA-Z_][a-zA-Z0-9_]*`, at most [`MAX_NAME`] bytes.
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && !name[0].is_ascii_digit()
        && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// A name argument, checked; `what` names it in the message.
fn name_of<'a>(
    called: Called,
    what: &str,
    v: &'a CapValue,
    rt: Runtime,
) -> Result<&'a str, CapError> {
    match v {
        CapValue::Str(b) if valid_name(b) => Ok(std::str::from_utf8(b).unwrap_or_default()),
        CapValue::Str(b) => Err(argument(format!(
            "{called}: {what} {:?} must match [a-zA-Z_][a-zA-Z0-9_]* (at most {MAX_NAME} characters)",
            String::from_utf8_lossy(b)
        ))),
        other => Err(argument(format!(
            "{called}: {what} must be a string, got {}",
            other.type_name(rt)
        ))),
    }
}

impl Metric {
    /// `metrics.<kind>(name [, help])`: the name checked; with metrics on,
    /// registered (a name is one kind for the whole process) and, the
    /// first time, described by `help`.
    pub fn new(kind: Kind, args: &[CapValue], rt: Runtime) -> Result<Metric, CapError> {
        let called = Called("metrics", kind.def().name);
        let nothing = CapValue::Nothing;
        let name = name_of(called, "name", args.first().unwrap_or(&nothing), rt)?;
        let help = match args.get(1).unwrap_or(&nothing) {
            v if v.is_absent() => None,
            CapValue::Str(b) => Some(String::from_utf8_lossy(b).into_owned()),
            other => {
                return Err(argument(format!(
                    "{called}: help must be a string, got {}",
                    other.type_name(rt)
                )))
            }
        };
        let series: Rc<str> = match kind {
            // Prometheus counters end in `_total`; one already there is kept.
            Kind::Counter if name.ends_with("_total") => format!("app_{name}").into(),
            Kind::Counter => format!("app_{name}_total").into(),
            _ => format!("app_{name}").into(),
        };
        let metric = Metric { kind, series };
        if cove_core::telemetry::on() {
            metric.register(called, help)?;
        }
        Ok(metric)
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The series' name (`app_signups_total`).
    pub fn series(&self) -> &str {
        &self.series
    }

    /// Note the name's kind for the process, once per worker.
    fn register(&self, called: Called, help: Option<String>) -> Result<(), CapError> {
        let known = KNOWN.with(|k| k.borrow().get(&*self.series).map(|m| m.kind));
        if known == Some(self.kind) {
            return Ok(());
        }
        let first = registry()
            .lock()
            .map_err(|_| poisoned())?
            .name(self, called)?;
        KNOWN.with(|k| k.borrow_mut().insert(self.series.to_string(), self.clone()));
        if first {
            if let Some(help) = help {
                let name = self.series.to_string();
                match self.kind {
                    Kind::Counter => metrics::describe_counter!(name, help),
                    Kind::Gauge => metrics::describe_gauge!(name, help),
                    Kind::Histogram => metrics::describe_histogram!(name, help),
                }
            }
        }
        Ok(())
    }

    fn record(
        &self,
        method: &Method,
        n: f64,
        labels: Vec<(String, String)>,
    ) -> Result<(), CapError> {
        with_handle(self, labels, |h| match (h, method.op) {
            (Handle::Counter(c), _) => c.increment(n as u64),
            (Handle::Gauge(g), Op::Set) => g.set(n),
            (Handle::Gauge(g), Op::Dec) => g.decrement(n),
            (Handle::Gauge(g), _) => g.increment(n),
            (Handle::Histogram(h), _) => h.record(n),
        })
    }

    /// The object a script holds for it (what `metrics.<kind>` returns,
    /// with its kind's methods): a record of its series' name.
    pub fn object(&self) -> CapValue {
        CapValue::Record(vec![(
            "series".to_string(),
            CapValue::Str(self.series.as_bytes().to_vec()),
        )])
    }
}

/// A method called on a metric's object (the first of `args`, as
/// [`Metric::object`] made it; the method's own arguments follow). With
/// metrics on, the object must name a metric of `kind` this worker made.
pub fn call_on(
    kind: Kind,
    method: &Method,
    args: &[CapValue],
    rt: Runtime,
) -> Result<(), CapError> {
    let called = Called(kind.def().name, method.name);
    let series = match args.first().and_then(|o| o.field("series")) {
        Some(CapValue::Str(b)) => String::from_utf8_lossy(b),
        _ => {
            let how = match rt {
                Runtime::Lua => format!("as a method, with a colon (m:{}(...))", method.name),
                Runtime::Js => format!(
                    "on the object metrics.{} returned (m.{}(...))",
                    kind.def().name,
                    method.name
                ),
            };
            return Err(argument(format!("{called}: call it {how}")));
        }
    };
    let (n, labels) = checked(kind, called, method, &args[1..], rt)?;
    if !cove_core::telemetry::on() {
        return Ok(());
    }
    let metric = KNOWN.with(|k| k.borrow().get(&*series).filter(|m| m.kind == kind).cloned());
    let metric = metric.ok_or_else(|| {
        argument(format!(
            "{called}: {series} is not a {} made by metrics.{}",
            kind.def().name,
            kind.def().name
        ))
    })?;
    metric.record(method, n, labels)
}

/// A method's number (1 when it may be left out and is) and labels,
/// checked.
fn checked(
    kind: Kind,
    called: Called,
    method: &Method,
    args: &[CapValue],
    rt: Runtime,
) -> Result<(f64, Vec<(String, String)>), CapError> {
    let nothing = CapValue::Nothing;
    let number = args.first().unwrap_or(&nothing);
    let n = match number {
        v if v.is_absent() && method.default_one => 1.0,
        CapValue::Int(n) => *n as f64,
        CapValue::Num(n) if n.is_finite() => *n,
        other => {
            let what = if method.default_one { "n" } else { "v" };
            return Err(argument(format!(
                "{called}: {what} must be a finite number, got {}",
                match other {
                    CapValue::Num(n) => n.to_string(),
                    _ => other.type_name(rt).to_string(),
                }
            )));
        }
    };
    if kind == Kind::Counter && (n < 0.0 || n.fract() != 0.0) {
        return Err(argument(format!(
            "{called}: n must be a whole number of at least 0 (a counter only goes up), got {n}"
        )));
    }
    let labels = labels_of(called, args.get(1).unwrap_or(&nothing), rt)?;
    Ok((n, labels))
}

/// The labels argument: absent, or a table/object of names to strings,
/// numbers or booleans; sorted by name, so one label set is one key.
fn labels_of(called: Called, v: &CapValue, rt: Runtime) -> Result<Vec<(String, String)>, CapError> {
    let fields = match v {
        v if v.is_absent() => return Ok(Vec::new()),
        CapValue::Record(fields) => fields,
        other => {
            return Err(argument(format!(
                "{called}: labels must be a table of names to values, got {}",
                match (other, rt) {
                    (CapValue::List(_), Runtime::Lua) => "a list",
                    _ => other.type_name(rt),
                }
            )))
        }
    };
    if fields.len() > MAX_LABELS {
        return Err(argument(format!(
            "{called}: at most {MAX_LABELS} labels, got {}",
            fields.len()
        )));
    }
    let mut out = Vec::with_capacity(fields.len());
    for (name, value) in fields {
        if !valid_name(name.as_bytes()) || name.starts_with("__") || name == "worker" {
            return Err(argument(format!(
                "{called}: label name {name:?} must match [a-zA-Z_][a-zA-Z0-9_]* (not `worker`, not starting with __)"
            )));
        }
        let text = match value {
            CapValue::Bool(b) => b.to_string(),
            v => v.text(rt).ok_or_else(|| {
                argument(format!(
                    "{called}: label {name} must be a string, number or boolean, got {}",
                    v.type_name(rt)
                ))
            })?,
        };
        if text.len() > MAX_VALUE {
            return Err(argument(format!(
                "{called}: label {name} is longer than {MAX_VALUE} bytes"
            )));
        }
        out.push((name.clone(), text));
    }
    out.sort_unstable();
    Ok(out)
}

/// A recorder handle of one series on this worker.
enum Handle {
    Counter(metrics::Counter),
    Gauge(metrics::Gauge),
    Histogram(metrics::Histogram),
}

type SeriesKey = (Rc<str>, Vec<(String, String)>);

thread_local! {
    /// This worker's handles, by series name and sorted labels: at most
    /// [`MAX_SERIES`] (every key was admitted by the registry).
    static HANDLES: RefCell<HashMap<SeriesKey, Handle>> = RefCell::new(HashMap::new());
    /// The names this worker registered, and their metrics.
    static KNOWN: RefCell<HashMap<String, Metric>> = RefCell::new(HashMap::new());
}

fn with_handle(
    metric: &Metric,
    labels: Vec<(String, String)>,
    record: impl FnOnce(&Handle),
) -> Result<(), CapError> {
    let key = (metric.series.clone(), labels);
    HANDLES.with(|handles| {
        if let Some(h) = handles.borrow().get(&key) {
            record(h);
            return Ok(());
        }
        registry()
            .lock()
            .map_err(|_| poisoned())?
            .series(&key.0, &key.1)?;
        let h = make_handle(metric.kind, &key.0, &key.1);
        record(&h);
        handles.borrow_mut().insert(key, h);
        Ok(())
    })
}

fn make_handle(kind: Kind, name: &str, labels: &[(String, String)]) -> Handle {
    let worker = cove_core::audit::context()
        .worker
        .map_or_else(|| "0".to_string(), |n| n.to_string());
    let mut all: Vec<metrics::Label> = labels
        .iter()
        .map(|(k, v)| metrics::Label::new(k.clone(), v.clone()))
        .collect();
    all.push(metrics::Label::new("worker", worker));
    let name = name.to_string();
    match kind {
        Kind::Counter => Handle::Counter(metrics::counter!(name, all)),
        Kind::Gauge => Handle::Gauge(metrics::gauge!(name, all)),
        Kind::Histogram => Handle::Histogram(metrics::histogram!(name, all)),
    }
}

/// What the whole process has made: each name's kind, and the series
/// (without the worker label) counted against [`MAX_SERIES`].
#[derive(Default)]
struct Registry {
    names: HashMap<String, Kind>,
    series: HashSet<(String, Vec<(String, String)>)>,
}

impl Registry {
    /// Note `m`'s name; whether it is new. A name already of another kind,
    /// or a new one past the bound, is refused.
    fn name(&mut self, m: &Metric, called: Called) -> Result<bool, CapError> {
        match self.names.get(&*m.series) {
            Some(kind) if *kind == m.kind => Ok(false),
            Some(kind) => Err(argument(format!(
                "{called}: {} is already a {}",
                m.series,
                kind.def().name
            ))),
            None if self.names.len() >= MAX_SERIES => Err(too_many()),
            None => {
                self.names.insert(m.series.to_string(), m.kind);
                Ok(true)
            }
        }
    }

    /// Admit a series: one already made, or a new one under the bound.
    fn series(&mut self, name: &str, labels: &[(String, String)]) -> Result<(), CapError> {
        let key = (name.to_string(), labels.to_vec());
        if self.series.contains(&key) {
            return Ok(());
        }
        if self.series.len() >= MAX_SERIES {
            return Err(too_many());
        }
        self.series.insert(key);
        Ok(())
    }
}

fn too_many() -> CapError {
    CapError::new(
        "metrics.limit",
        format!(
            "metrics: the app has made {MAX_SERIES} series, the most it may; a label taken from input (an id, a path) makes one per value: use a few fixed values"
        ),
    )
}

fn poisoned() -> CapError {
    CapError::new("internal", "metrics: the registry is poisoned")
}

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(Mutex::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> CapValue {
        CapValue::Str(v.as_bytes().to_vec())
    }

    fn labels(pairs: &[(&str, CapValue)]) -> CapValue {
        CapValue::Record(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    impl Metric {
        /// `method(args…)` called on this metric's object.
        fn call(&self, method: &Method, args: &[CapValue], rt: Runtime) -> Result<(), CapError> {
            let mut all = vec![self.object()];
            all.extend_from_slice(args);
            call_on(self.kind, method, &all, rt)
        }
    }

    #[test]
    fn names_are_checked() {
        for good in ["signups", "_x", "a1_b2", "A"] {
            assert!(valid_name(good.as_bytes()), "{good}");
        }
        for bad in ["", "1a", "sign-ups", "a.b", "é", &"x".repeat(MAX_NAME + 1)] {
            assert!(!valid_name(bad.as_bytes()), "{bad}");
        }
        let e = Metric::new(Kind::Counter, &[s("sign-ups")], Runtime::Lua).unwrap_err();
        assert_eq!(e.code, "metrics.argument");
        assert_eq!(
            e.message,
            "metrics.counter: name \"sign-ups\" must match [a-zA-Z_][a-zA-Z0-9_]* (at most 100 characters)"
        );
        let e = Metric::new(Kind::Gauge, &[], Runtime::Js).unwrap_err();
        assert_eq!(
            e.message,
            "metrics.gauge: name must be a string, got undefined"
        );
        let e =
            Metric::new(Kind::Histogram, &[s("h"), CapValue::Int(1)], Runtime::Lua).unwrap_err();
        assert_eq!(
            e.message,
            "metrics.histogram: help must be a string, got number"
        );
    }

    #[test]
    fn series_are_named_app_and_counters_end_in_total() {
        let m = |k, n| Metric::new(k, &[s(n)], Runtime::Lua).unwrap();
        assert_eq!(m(Kind::Counter, "signups").series(), "app_signups_total");
        assert_eq!(m(Kind::Counter, "bytes_total").series(), "app_bytes_total");
        assert_eq!(m(Kind::Gauge, "queue").series(), "app_queue");
        assert_eq!(
            m(Kind::Histogram, "work_seconds").series(),
            "app_work_seconds"
        );
    }

    #[test]
    fn numbers_and_labels_are_checked_with_metrics_off() {
        let c = Metric::new(Kind::Counter, &[s("c")], Runtime::Lua).unwrap();
        let inc = &Kind::Counter.def().methods[0];
        assert!(c.call(inc, &[], Runtime::Lua).is_ok());
        assert!(c.call(inc, &[CapValue::Int(3)], Runtime::Lua).is_ok());
        let e = c.call(inc, &[CapValue::Int(-1)], Runtime::Lua).unwrap_err();
        assert!(
            e.message
                .starts_with("counter.inc: n must be a whole number"),
            "{}",
            e.message
        );
        assert!(c.call(inc, &[CapValue::Num(0.5)], Runtime::Lua).is_err());
        let e = c.call(inc, &[s("1")], Runtime::Lua).unwrap_err();
        assert_eq!(
            e.message,
            "counter.inc: n must be a finite number, got string"
        );
        let h = Metric::new(Kind::Histogram, &[s("h")], Runtime::Js).unwrap();
        let observe = &Kind::Histogram.def().methods[0];
        let e = h.call(observe, &[], Runtime::Js).unwrap_err();
        assert_eq!(
            e.message,
            "histogram.observe: v must be a finite number, got undefined"
        );
        assert!(h
            .call(observe, &[CapValue::Num(f64::NAN)], Runtime::Js)
            .is_err());
        let ok = labels(&[
            ("plan", s("pro")),
            ("n", CapValue::Int(2)),
            ("b", CapValue::Bool(true)),
        ]);
        assert!(h
            .call(observe, &[CapValue::Num(0.1), ok], Runtime::Js)
            .is_ok());
        for (bad, want) in [
            (labels(&[("a-b", s("x"))]), "label name \"a-b\" must match"),
            (labels(&[("worker", s("x"))]), "label name \"worker\""),
            (labels(&[("__x", s("x"))]), "label name \"__x\""),
            (
                labels(&[("a", CapValue::Record(vec![]))]),
                "label a must be a string, number or boolean, got object",
            ),
            (
                labels(&[("a", s(&"x".repeat(MAX_VALUE + 1)))]),
                "longer than",
            ),
            (
                CapValue::List(vec![s("x")]),
                "labels must be a table of names to values, got array",
            ),
            (
                s("plan=pro"),
                "labels must be a table of names to values, got string",
            ),
        ] {
            let e = h
                .call(observe, &[CapValue::Num(1.0), bad], Runtime::Js)
                .unwrap_err();
            assert_eq!(e.code, "metrics.argument");
            assert!(e.message.contains(want), "{} / {want}", e.message);
        }
        let many: Vec<(String, CapValue)> = (0..=MAX_LABELS)
            .map(|i| (format!("l{i}"), s("v")))
            .collect();
        let e = h
            .call(
                observe,
                &[CapValue::Num(1.0), CapValue::Record(many)],
                Runtime::Js,
            )
            .unwrap_err();
        assert!(e.message.contains("at most 10 labels"), "{}", e.message);
    }

    #[test]
    fn methods_read_their_object_first() {
        let c = Metric::new(Kind::Counter, &[s("objs")], Runtime::Lua).unwrap();
        let object = c.object();
        assert_eq!(object.field("series"), Some(&s("app_objs_total")));
        let inc = &Kind::Counter.def().methods[0];
        assert!(call_on(
            Kind::Counter,
            inc,
            &[object.clone(), CapValue::Int(2)],
            Runtime::Lua
        )
        .is_ok());
        let e = call_on(
            Kind::Counter,
            inc,
            &[object, CapValue::Int(-2)],
            Runtime::Lua,
        )
        .unwrap_err();
        assert!(e.message.contains("whole number"), "{}", e.message);
        // Called with a dot, or detached from its object.
        for (rt, how) in [
            (
                Runtime::Lua,
                "counter.inc: call it as a method, with a colon (m:inc(...))",
            ),
            (
                Runtime::Js,
                "counter.inc: call it on the object metrics.counter returned (m.inc(...))",
            ),
        ] {
            let e = call_on(Kind::Counter, inc, &[CapValue::Int(1)], rt).unwrap_err();
            assert_eq!((e.code, e.message.as_str()), ("metrics.argument", how));
        }
    }

    #[test]
    fn labels_are_one_key_whatever_their_order() {
        let a = labels_of(
            Called("x", "y"),
            &labels(&[("b", s("2")), ("a", s("1"))]),
            Runtime::Lua,
        )
        .unwrap();
        let b = labels_of(
            Called("x", "y"),
            &labels(&[("a", s("1")), ("b", s("2"))]),
            Runtime::Lua,
        )
        .unwrap();
        assert_eq!(a, b);
        let n = labels_of(
            Called("x", "y"),
            &labels(&[("a", CapValue::Num(1.5))]),
            Runtime::Lua,
        )
        .unwrap();
        assert_eq!(n, [("a".to_string(), "1.5".to_string())]);
    }

    #[test]
    fn the_number_of_series_is_bounded() {
        let mut r = Registry::default();
        for i in 0..MAX_SERIES {
            r.series("app_x", &[("id".into(), i.to_string())]).unwrap();
        }
        // One already made is still admitted; a new one is not.
        r.series("app_x", &[("id".into(), "0".into())]).unwrap();
        let e = r
            .series("app_x", &[("id".into(), "new".into())])
            .unwrap_err();
        assert_eq!(e.code, "metrics.limit");
        assert!(e.message.contains("1000 series"), "{}", e.message);
    }

    #[test]
    fn a_name_is_one_kind() {
        let mut r = Registry::default();
        let c = Metric {
            kind: Kind::Gauge,
            series: "app_q".into(),
        };
        assert!(r.name(&c, Called("metrics", "gauge")).unwrap());
        assert!(!r.name(&c, Called("metrics", "gauge")).unwrap());
        let h = Metric {
            kind: Kind::Histogram,
            series: "app_q".into(),
        };
        let e = r.name(&h, Called("metrics", "histogram")).unwrap_err();
        assert_eq!(e.message, "metrics.histogram: app_q is already a gauge");
    }

    #[test]
    fn every_kind_is_declared_in_order() {
        for k in [Kind::Counter, Kind::Gauge, Kind::Histogram] {
            assert_eq!(k.def().kind, k);
        }
    }
}
