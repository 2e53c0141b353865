// hull:form — application/x-www-form-urlencoded bodies (Hull §10.9).

// `+` is a space, then each run of valid %XX escapes is decoded as UTF-8. An
// invalid escape (`%ZZ`, a lone `%`) or a run that is not UTF-8 is kept as
// written. (Hull fell back to the raw text of the whole value on any bad
// escape; Cove decodes what it can, as the Lua module does.)
function decode(s) {
  return s.replace(/\+/g, " ").replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

// body → { name: value }. Pairs without `=` or with an empty name are
// skipped; a repeated name keeps its last value. Anything but a non-empty
// string gives an empty object.
function parse(body) {
  const out = {};
  if (typeof body !== "string") return out;
  for (const pair of body.split("&")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    const key = decode(pair.slice(0, eq));
    const value = decode(pair.slice(eq + 1));
    // A plain assignment to `__proto__` would replace the prototype instead.
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export const form = { parse };
