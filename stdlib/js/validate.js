// hull:validate — check an object of input against a schema (Hull §10.8).
//
//   const [ok, errors] = validate.check(body, {
//     email: { required: true, email: true },
//     password: { required: true, min: 8, message: "too short" },
//   });
//
// Per field the rules run in this order and stop at the first failure:
// trim, required, type, min, max, pattern (a RegExp or its source), oneof,
// email, fn. `message` replaces the built-in message of every rule but `fn`.

const TYPES = {
  string: ["a string", (v) => typeof v === "string"],
  number: ["a number", (v) => typeof v === "number"],
  integer: ["an integer", (v) => Number.isInteger(v)],
  boolean: ["a boolean", (v) => typeof v === "boolean"],
};

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

// Characters (code points), not UTF-16 units as in Hull's JS, so "é" and
// "😀" count 1 here and in Lua.
const length = (s) => {
  let n = 0;
  for (const _ of s) n += 1;
  return n;
};

// The built-in message for the first rule `value` fails, or null.
function firstFailure(value, rule, field) {
  if (rule.required && (value === undefined || value === null || value === "")) {
    return "is required";
  }
  if (rule.type !== undefined) {
    if (!Object.hasOwn(TYPES, rule.type)) {
      throw new TypeError(
        `validate.check: field "${field}" has unknown type "${rule.type}" (use string, number, integer or boolean)`,
      );
    }
    const [name, test] = TYPES[rule.type];
    if (!test(value)) return `must be ${name}`;
  }
  let size = null;
  let unit = "";
  if (typeof value === "string") {
    size = length(value);
    unit = " characters";
  } else if (typeof value === "number") {
    size = value;
  }
  if (rule.min !== undefined && size !== null && size < rule.min) {
    return `must be at least ${rule.min}${unit}`;
  }
  if (rule.max !== undefined && size !== null && size > rule.max) {
    return `must be at most ${rule.max}${unit}`;
  }
  if (rule.pattern !== undefined) {
    const re = rule.pattern instanceof RegExp ? rule.pattern : new RegExp(rule.pattern);
    // A global or sticky RegExp remembers lastIndex between calls; reset it.
    re.lastIndex = 0;
    if (typeof value !== "string" || !re.test(value)) return "does not match the required pattern";
  }
  if (Array.isArray(rule.oneof) && !rule.oneof.includes(value)) {
    return `must be one of: ${rule.oneof.join(", ")}`;
  }
  if (rule.email && (typeof value !== "string" || !EMAIL.test(value))) {
    return "is not a valid email";
  }
  return null;
}

// [ok, errors]: [true, null], or [false, { field: message }] (one per field).
function check(data, schema) {
  if (typeof data !== "object" || data === null) data = {};
  if (typeof schema !== "object" || schema === null) return [true, null];
  let errors = null;
  for (const [field, rule] of Object.entries(schema)) {
    if (typeof rule !== "object" || rule === null) {
      throw new TypeError(`validate.check: the rules of field "${field}" must be an object`);
    }
    if (rule.trim && typeof data[field] === "string") data[field] = data[field].trim();
    const value = data[field];
    // An optional field that is absent is not checked further.
    if (!rule.required && (value === undefined || value === null)) continue;
    let message = firstFailure(value, rule, field);
    if (message !== null) {
      message = rule.message ?? message;
    } else if (typeof rule.fn === "function") {
      const custom = rule.fn(value, field, data);
      if (typeof custom === "string" && custom !== "") message = custom;
    }
    if (message !== null) {
      errors ??= {};
      errors[field] = message;
    }
  }
  return [errors === null, errors];
}

export const validate = { check };
