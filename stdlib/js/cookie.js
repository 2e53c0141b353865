// hull:cookie — parse a Cookie header, build Set-Cookie values (Hull §10.6).
//
// Hull's JS semantics: values are percent-encoded on the way out and decoded
// on the way in (the Lua module does neither), and cookies default to
// HttpOnly, Secure, SameSite=Lax. Cove refuses, with an error, names and
// attributes that would break the header (`;`, control characters).

// Cookie header → { name: value }. Pairs without `=` or with an empty name are
// skipped; surrounding double quotes are stripped and %XX decoded (raw text
// when the escapes are invalid). When a name repeats the first value wins:
// browsers send the cookie with the most specific path first (RFC 6265 §5.4).
function parse(header) {
  const out = {};
  if (typeof header !== "string") return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    // `__proto__` would replace the object's prototype instead of adding a key.
    if (name === "" || name === "__proto__" || Object.hasOwn(out, name)) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    try {
      value = decodeURIComponent(value);
    } catch {
      // Not valid percent-encoding: keep the text as sent.
    }
    out[name] = value;
  }
  return out;
}

// RFC 6265 token characters: no separators, spaces or controls.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const SAMESITE = { strict: "Strict", lax: "Lax", none: "None" };

// A `;` would start a new attribute and CR/LF a new header.
function checked(what, text) {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f;]/.test(text)) {
    throw new TypeError(`cookie.serialize: ${what} contains ';' or a control character`);
  }
  return text;
}

// name=value; Path; Domain; Max-Age; Expires; HttpOnly; Secure; SameSite
// (Hull's JS order). opts: path domain maxAge expires httpOnly secure sameSite;
// `expires` is a date string or a number of epoch seconds.
function serialize(name, value, opts = {}) {
  if (typeof name !== "string" || !TOKEN.test(name)) {
    throw new TypeError(
      `cookie.serialize: invalid cookie name ${JSON.stringify(name)} (use letters, digits and !#$%&'*+-.^_\`|~)`,
    );
  }
  const parts = [`${name}=${encodeURIComponent(value ?? "")}`];
  const path = opts.path === undefined ? "/" : opts.path;
  if (path) parts.push(`Path=${checked("path", String(path))}`);
  if (opts.domain) parts.push(`Domain=${checked("domain", String(opts.domain))}`);
  if (typeof opts.maxAge === "number") parts.push(`Max-Age=${Math.floor(opts.maxAge)}`);
  if (typeof opts.expires === "number") {
    parts.push(`Expires=${new Date(opts.expires * 1000).toUTCString()}`);
  } else if (opts.expires) {
    parts.push(`Expires=${checked("expires", String(opts.expires))}`);
  }
  if (opts.httpOnly !== false) parts.push("HttpOnly");
  if (opts.secure !== false) parts.push("Secure");
  const sameSite = opts.sameSite === undefined ? "Lax" : opts.sameSite;
  if (sameSite) {
    const key = String(sameSite).toLowerCase();
    const canonical = Object.hasOwn(SAMESITE, key) ? SAMESITE[key] : undefined;
    if (!canonical) {
      throw new TypeError(
        `cookie.serialize: sameSite must be "Strict", "Lax" or "None", got ${JSON.stringify(sameSite)}`,
      );
    }
    parts.push(`SameSite=${canonical}`);
  }
  return parts.join("; ");
}

// A Set-Cookie value that deletes the cookie: empty value, Max-Age=0 and an
// Expires in 1970, with the same path/domain/flags it was set with.
function clear(name, opts = {}) {
  return serialize(name, "", { ...opts, maxAge: 0, expires: "Thu, 01 Jan 1970 00:00:00 GMT" });
}

export const cookie = { parse, serialize, clear };
