// hull:jwt — HS256 JSON Web Tokens (Hull §10.7, RFC 7519).
//
// The signature is crypto.hs256Sign: base64url(HMAC-SHA256) of the raw MAC
// bytes, keyed with the secret's UTF-8 bytes. Hull's JS re-encoded the MAC
// as UTF-8 text, so its tokens were not standard HS256; Cove's verify with
// any JWT library and with hull.jwt in Lua.
// Hull's JS semantics are kept: `exp` is absolute, verify returns the payload
// or an array `[null, reason]`.

import { crypto } from "hull:crypto";
import { json } from "hull:json";
import { time } from "hull:time";

const HEADER = crypto.base64urlEncode('{"alg":"HS256","typ":"JWT"}');

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

function sign(payload, secret) {
  if (!isObject(payload)) throw new TypeError("jwt.sign: payload must be an object");
  if (typeof secret !== "string" || secret === "") {
    throw new TypeError("jwt.sign: secret is required");
  }
  const claims = { ...payload };
  if (claims.iat === undefined) claims.iat = time.now();
  const input = `${HEADER}.${crypto.base64urlEncode(json.encode(claims))}`;
  return `${input}.${crypto.hs256Sign(input, secret)}`;
}

// The payload of a segment, or a string saying why not.
function claimsOf(segment) {
  const text = crypto.base64urlDecode(segment);
  if (text === null) return "invalid payload encoding";
  let claims;
  try {
    claims = json.decode(text);
  } catch {
    return "invalid payload JSON";
  }
  return isObject(claims) ? claims : "payload is not an object";
}

// Only HS256 is accepted, whatever else the header says ("alg":"none" and
// RS256 tokens are refused before the signature is looked at).
function isHs256(segment) {
  try {
    return json.decode(crypto.base64urlDecode(segment) ?? "")?.alg === "HS256";
  } catch {
    return false;
  }
}

function verify(token, secret) {
  if (typeof token !== "string" || token === "") return [null, "invalid token"];
  if (typeof secret !== "string" || secret === "") return [null, "secret is required"];
  const parts = token.split(".");
  if (parts.length !== 3 || parts.some((p) => p === "")) return [null, "malformed token"];
  const [header, body, signature] = parts;
  if (!isHs256(header)) return [null, "unsupported algorithm"];
  if (!crypto.hs256Verify(`${header}.${body}`, secret, signature)) {
    return [null, "invalid signature"];
  }
  const claims = claimsOf(body);
  if (typeof claims === "string") return [null, claims];
  const now = time.now();
  // A claim that is present but not a number fails closed.
  if (claims.exp !== undefined && !(typeof claims.exp === "number" && now < claims.exp)) {
    return [null, "token expired"];
  }
  if (claims.nbf !== undefined && !(typeof claims.nbf === "number" && now >= claims.nbf)) {
    return [null, "token not yet valid"];
  }
  return claims;
}

// The payload without checking the signature (for display, never for trust).
function decode(token) {
  const parts = typeof token === "string" ? token.split(".") : [];
  if (parts.length !== 3 || parts.some((p) => p === "")) return null;
  const claims = claimsOf(parts[1]);
  return typeof claims === "string" ? null : claims;
}

export const jwt = { sign, verify, decode };
