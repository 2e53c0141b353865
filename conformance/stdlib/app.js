// The stdlib modules cookie, jwt, form, validate and i18n, route by route;
// conformance/specs/stdlib_*.toml. app.lua is the same app.
import { app } from "hull:app";
import { json } from "hull:json";
import { cookie } from "hull:cookie";
import { jwt } from "hull:jwt";
import { form } from "hull:form";
import { validate } from "hull:validate";
import { i18n } from "hull:i18n";

const isEmpty = (o) => Object.keys(o).length === 0;

// ------------------------------------------------------------- cookie

app.get("/cookie/parse", (req, res) => {
  res.json(cookie.parse(req.header("cookie")));
});

app.get("/cookie/parse-empty", (req, res) => {
  res.json({
    none: isEmpty(cookie.parse(null)), blank: isEmpty(cookie.parse("")),
    number: isEmpty(cookie.parse(42)), only_junk: isEmpty(cookie.parse("; =x; flag")),
  });
});

app.get("/cookie/defaults", (req, res) => {
  res.json({
    default: cookie.serialize("sid", "abc"),
    no_flags: cookie.serialize("a", "b", { path: false, httpOnly: false, secure: false, sameSite: false }),
    samesite_none: cookie.serialize("a", "b", { sameSite: "none" }),
    nil_value: cookie.serialize("a", null, { secure: false }),
  });
});

app.get("/cookie/all", (req, res) => {
  res.json({ all: cookie.serialize("a", "b", {
    path: "/x", domain: "example.com", maxAge: 60, expires: "Wed, 21 Oct 2026 07:28:00 GMT",
    httpOnly: false, secure: false, sameSite: "Strict",
  }) });
});

app.get("/cookie/encoding", (req, res) => {
  res.json({ value: cookie.serialize("v", "a b,é", { secure: false }) });
});

app.get("/cookie/clear", (req, res) => {
  res.json({ clear: cookie.clear("sid", { path: "/app" }) });
});

app.get("/cookie/set", (req, res) => {
  res.header("Set-Cookie", cookie.serialize("a", "1"));
  res.header("Set-Cookie", cookie.serialize("b", "2", { secure: false }));
  res.json({ ok: true });
});

app.get("/cookie/bad-name", () => {
  cookie.serialize("a b", "1");
});

app.get("/cookie/bad-path", () => {
  cookie.serialize("a", "1", { path: "/x;y" });
});

app.get("/cookie/bad-samesite", () => {
  cookie.serialize("a", "1", { sameSite: "sometimes" });
});

// ------------------------------------------------------------- jwt

const SECRET = "conformance-secret";

app.get("/jwt/sign-fixed", (req, res) => {
  res.json({ token: jwt.sign({ exp: 4000000000, iat: 1700000000, name: "José", sub: "42" }, SECRET) });
});

app.post("/jwt/verify", (req, res) => {
  const result = jwt.verify(req.body, SECRET);
  if (Array.isArray(result)) return res.json({ ok: false, reason: result[1] });
  res.json({ ok: true, claims: result });
});

// Hull's JS keeps `exp` as given: 60 is 1970, already expired.
app.get("/jwt/relative-exp", (req, res) => {
  const token = jwt.sign({ sub: 1, exp: 60 }, SECRET);
  const claims = jwt.decode(token);
  res.json({ relative: claims.exp === claims.iat + 60, verified: !Array.isArray(jwt.verify(token, SECRET)) });
});

app.get("/jwt/wrong-secret", (req, res) => {
  const [, reason] = jwt.verify(jwt.sign({ sub: 1 }, SECRET), "another-secret");
  res.json({ reason });
});

app.get("/jwt/decode", (req, res) => {
  const token = jwt.sign({ sub: "7", iat: 1 }, SECRET);
  const forged = token.replace(/\.[^.]+$/, ".AAAA");
  res.json({ decoded: jwt.decode(forged), garbage_is_nil: jwt.decode("garbage") === null });
});

app.get("/jwt/sign-without-payload", (req, res) => {
  try {
    jwt.sign(null, SECRET);
    res.json({ token_is_nil: false });
  } catch (e) {
    res.json({ token_is_nil: true, error: e.message });
  }
});

// ------------------------------------------------------------- form

app.post("/form/parse", (req, res) => {
  res.json(form.parse(req.body));
});

app.get("/form/empty", (req, res) => {
  res.json({
    none: isEmpty(form.parse(null)), blank: isEmpty(form.parse("")),
    number: isEmpty(form.parse(5)), junk: isEmpty(form.parse("&&=x&novalue")),
  });
});

// ------------------------------------------------------------- validate

const schemas = {
  signup: {
    name: { required: true, trim: true, min: 2, max: 10 },
    email: { required: true, email: true },
    age: { type: "integer", min: 18, max: 130 },
    role: { oneof: ["admin", "user"] },
    code: { pattern: "^\\d{3}$" },
    nick: { type: "string", message: "nick must be text" },
    password: {
      required: true, min: 8,
      fn: (v) => (v === "password1" ? "too common" : undefined),
    },
  },
  types: {
    s: { type: "string" }, n: { type: "number" }, b: { type: "boolean" }, i: { type: "integer" },
    flag: { required: true },
  },
  custom: {
    title: { required: true, message: "title please" },
    password: { required: true },
    // fn sees (value, field, data); `message` does not replace its message.
    confirm: {
      message: "ignored",
      fn: (v, field, data) => (v !== data.password ? `${field} does not match` : undefined),
    },
    agree: { fn: () => true }, // not a string: no error
  },
  bad_type: { x: { type: "date" } },
};

app.post("/validate/:schema", (req, res) => {
  const data = json.decode(req.body);
  const [ok, errors] = validate.check(data, schemas[req.params.schema]);
  // Lua leaves out nil fields; so does this reply.
  const name = typeof data === "object" && data !== null ? data.name : undefined;
  res.json({ ok, ...(errors && { errors }), ...(name !== undefined && { name }) });
});

// ------------------------------------------------------------- i18n

function setup() {
  i18n.load("en", {
    greet: "Hello, ${name}!",
    count: "${n} items",
    errors: { not_found: "not found" },
    format: { decimalSep: ".", thousandsSep: ",", datePattern: "MM/DD/YYYY",
      currency: { USD: { symbol: "$", decimalDigits: 2 } } },
  });
  // Hull's JS ignored these snake_case keys; Cove reads both spellings.
  i18n.load("hu", {
    greet: "Szia, ${name}!",
    count: "${n} elem",
    errors: { not_found: "nem található" },
    format: { decimal_sep: ",", thousands_sep: " ", date_pattern: "YYYY.MM.DD. HH:mm",
      currency: { HUF: { symbol: "Ft", position: "after", decimal_digits: 0 },
        EUR: { symbol: "€", position: "after" } } },
  });
  i18n.load("de", { format: { date_pattern: "DD.MM.YYYY (DD)" } });
  i18n.load("pt-BR", { greet: "Olá, ${name}!" });
}
setup();

// Every i18n route sets the locale first (it is per worker, not per request).
const use = (req) => i18n.locale(req.query.lang ?? "none");

app.get("/i18n/t", (req, res) => {
  use(req);
  res.json({
    greet: i18n.t("greet", { name: "Anna" }), nested: i18n.t("errors.not_found"),
    missing: i18n.t("no.such.key"), param_missing: i18n.t("greet"), not_text: i18n.t("errors"),
    explicit: i18n.t("greet", { name: "Bob" }, "en"), number_param: i18n.t("count", { n: 5 }),
    locale: i18n.locale(),
  });
});

app.get("/i18n/number", (req, res) => {
  use(req);
  res.json({
    int: i18n.number(1234567), neg: i18n.number(-1234.5), frac: i18n.number(0.1 + 0.2),
    small: i18n.number(0.00001), long: i18n.number(12345678.123456), zero: i18n.number(0),
    thousand: i18n.number(1000), text: i18n.number("x"),
  });
});

app.get("/i18n/date", (req, res) => {
  use(req);
  res.json({ date: i18n.date(1700000000), epoch: i18n.date(0), leap: i18n.date(951782400) });
});

app.get("/i18n/currency", (req, res) => {
  use(req);
  res.json({
    usd: i18n.currency(1234.5, "USD"), huf: i18n.currency(1234567.4, "HUF"),
    eur: i18n.currency(-9.999, "EUR"), unknown: i18n.currency(5, "XYZ"),
  });
});

app.get("/i18n/detect", (req, res) => {
  res.json({
    lang: i18n.detect(req.header("accept-language")) ?? "none",
    from_req: i18n.detect(req) ?? "none",
  });
});

app.get("/i18n/reset", (req, res) => {
  i18n.locale("hu");
  i18n.reset();
  const after = { locale_is_nil: i18n.locale() === null, t: i18n.t("greet"), detect: i18n.detect("hu") ?? "none" };
  setup();
  res.json(after);
});

app.get("/i18n/bad-load", () => {
  i18n.load(5, {});
});
