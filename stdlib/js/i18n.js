// hull:i18n — translations and number/date/currency formats (Hull §10.10).
//
//   import hu from "./locales/hu.json";
//   i18n.load("hu", hu);
//   i18n.locale(i18n.detect(req) ?? "en");
//   i18n.t("greet", { name: "Anna" });      // "Szia, ${name}!" → "Szia, Anna!"
//
// The active locale belongs to this worker's VM, as in Hull: set it at the
// start of every request, before the first t(). An async handler that awaits
// lets the worker run other requests meanwhile, and they may switch it; pass
// the locale to t() explicitly after an await: i18n.t(key, params, "hu").

import { time } from "hull:time";

let locales = new Map(); // name → object, in load order (detect is deterministic)
let active = null;

function load(name, tbl) {
  if (typeof name !== "string" || typeof tbl !== "object" || tbl === null) {
    throw new TypeError("i18n.load: expected (string, object)");
  }
  locales.set(name, tbl);
}

// Get, or set and get, the active locale.
function locale(name) {
  if (name !== undefined && name !== null) active = name;
  return active;
}

function reset() {
  locales = new Map();
  active = null;
}

// Dotted lookup ("errors.not_found") in a locale object, own keys only.
function lookup(tbl, key) {
  let node = tbl;
  for (const part of key.split(".")) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

// The translation of `key` with ${name} placeholders filled from `params`;
// the key itself when there is none. `lang` (a Cove addition) overrides the
// active locale for this call.
function t(key, params, lang) {
  const tbl = locales.get(lang ?? active);
  const text = tbl && typeof key === "string" ? lookup(tbl, key) : undefined;
  if (typeof text !== "string") return key;
  return text.replace(/\$\{(\w+)\}/g, (whole, name) => {
    const value = params?.[name];
    return value === undefined || value === null ? whole : String(value);
  });
}

// The format object of the active locale; both spellings of each key are
// accepted (Hull's JS took only camelCase, its Lua both).
function fmt(name) {
  const f = locales.get(active)?.format ?? {};
  const camel = name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
  return f[camel] ?? f[name];
}

// "1234567" → "1,234,567"
function group(digits, sep) {
  const head = digits.length % 3;
  const parts = head > 0 ? [digits.slice(0, head)] : [];
  for (let i = head; i < digits.length; i += 3) parts.push(digits.slice(i, i + 3));
  return parts.join(sep);
}

// "1,234.5": `abs` rounded half up to `decimals` places (same doubles as Lua).
function fixed(abs, decimals, strip) {
  const scale = 10 ** decimals;
  const scaled = Math.floor(abs * scale + 0.5);
  const frac = scaled % scale;
  const int = (scaled - frac) / scale;
  let text = group(String(int), fmt("thousands_sep") ?? ",");
  let digits = decimals > 0 ? String(frac).padStart(decimals, "0") : "";
  if (strip) digits = digits.replace(/0+$/, "");
  if (digits !== "") text += (fmt("decimal_sep") ?? ".") + digits;
  return text;
}

// Integers in full; fractions to 10 significant digits (at most 10
// decimals), trailing zeros dropped. Non-numbers as String().
function number(n) {
  if (typeof n !== "number" || !Number.isFinite(n) || Math.abs(n) >= 2 ** 53) return String(n);
  const abs = Math.abs(n);
  const intDigits = abs >= 1 ? String(Math.floor(abs)).length : 0;
  const text = fixed(abs, Math.max(0, 10 - intDigits), true);
  return n < 0 && text !== "0" ? `-${text}` : text;
}

const pad = (n, width = 2) => String(n).padStart(width, "0");

// A Unix time (default now) in the locale's date pattern, in UTC. Tokens:
// YYYY MM DD HH mm ss (every occurrence; Hull's JS replaced only the first).
function date(ts) {
  const n = Number(ts);
  const secs = ts !== undefined && ts !== null && Number.isFinite(n) ? Math.floor(n) : time.now();
  const d = new Date(secs * 1000);
  const values = {
    YYYY: pad(d.getUTCFullYear(), 4),
    MM: pad(d.getUTCMonth() + 1),
    DD: pad(d.getUTCDate()),
    HH: pad(d.getUTCHours()),
    mm: pad(d.getUTCMinutes()),
    ss: pad(d.getUTCSeconds()),
  };
  let text = String(fmt("date_pattern") ?? "YYYY-MM-DD");
  for (const token of ["YYYY", "MM", "DD", "HH", "mm", "ss"]) {
    text = text.replaceAll(token, values[token]);
  }
  return text;
}

// An amount with the locale's currency format: format.currency[code] =
// { symbol, position: "after" | "before", decimalDigits: 2 }.
function currency(amount, code) {
  const table = fmt("currency");
  const spec = table && Object.hasOwn(table, code) ? table[code] : undefined;
  if (typeof spec !== "object" || spec === null || typeof amount !== "number" || !(Math.abs(amount) < 2 ** 53)) {
    return `${number(amount)} ${code}`;
  }
  const decimals = spec.decimalDigits ?? spec.decimal_digits ?? 2;
  const text = fixed(Math.abs(amount), decimals, false);
  const sign = amount < 0 ? "-" : "";
  const symbol = spec.symbol ?? code;
  return spec.position === "after" ? `${sign}${text} ${symbol}` : `${sign}${symbol}${text}`;
}

// A loaded locale for a language tag: exact (case-insensitive), its base
// language ("en-US" → "en"), or a loaded variant of the base ("pt" → "pt-BR").
function match(tag) {
  const lower = tag.toLowerCase();
  const base = lower.split(/[-_]/)[0];
  const names = [...locales.keys()];
  return (
    names.find((n) => n.toLowerCase() === lower) ??
    names.find((n) => n.toLowerCase() === base) ??
    names.find((n) => n.toLowerCase().startsWith(`${base}-`) || n.toLowerCase().startsWith(`${base}_`)) ??
    null
  );
}

// The best loaded locale for an Accept-Language value (or a request, whose
// header is read): tags by q-value, highest first, ties in header order;
// q=0 and "*" are skipped. null when nothing matches.
function detect(source) {
  let header = source;
  if (typeof source === "object" && source !== null) {
    header = typeof source.header === "function" ? source.header("accept-language") : source.headers?.["accept-language"];
  }
  if (typeof header !== "string") return null;
  const tags = [];
  for (const item of header.split(",")) {
    const tag = item.match(/^\s*([^;\s]+)/)?.[1];
    const qText = item.match(/;\s*[qQ]\s*=\s*([\d.]+)/)?.[1];
    const q = qText === undefined ? 1 : Number(qText) || 0;
    if (tag && tag !== "*" && q > 0) tags.push({ tag, q, i: tags.length });
  }
  tags.sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of tags) {
    const name = match(tag);
    if (name !== null) return name;
  }
  return null;
}

export const i18n = { load, locale, t, number, date, currency, detect, reset };
