-- hull.jwt: HS256 JSON Web Tokens (Hull §10.7, RFC 7519).
--
-- The signature is crypto.hs256_sign: base64url(HMAC-SHA256), keyed with the
-- secret's own bytes, so tokens interoperate with any JWT library.
-- Hull's Lua semantics are kept: `exp` below 2e9 is relative to now, verify
-- returns `nil, reason` on failure. Cove also checks `nbf` (Hull's JS does).

local M = {}

local HEADER = crypto.base64url_encode('{"alg":"HS256","typ":"JWT"}')

-- Timestamps above this are absolute epoch seconds (2e9 is the year 2033).
local RELATIVE_LIMIT = 2e9

function M.sign(payload, secret)
  if type(payload) ~= "table" or type(secret) ~= "string" or secret == "" then
    return nil, "payload and secret are required"
  end
  local now = time.now()
  local claims = {}
  for k, v in pairs(payload) do
    claims[k] = v
  end
  if claims.iat == nil then
    claims.iat = now
  end
  if type(claims.exp) == "number" and claims.exp < RELATIVE_LIMIT then
    claims.exp = now + claims.exp
  end
  local input = HEADER .. "." .. crypto.base64url_encode(json.encode(claims))
  return input .. "." .. crypto.hs256_sign(input, secret)
end

-- header, payload, signature segments of a token, or nil.
local function split(token)
  if type(token) ~= "string" then
    return nil
  end
  return token:match("^([^.]+)%.([^.]+)%.([^.]+)$")
end

-- The payload table of a segment, or nil and why not.
local function claims_of(segment)
  local text = crypto.base64url_decode(segment)
  if not text then
    return nil, "invalid payload encoding"
  end
  local ok, claims = pcall(json.decode, text)
  if not ok then
    return nil, "invalid payload JSON"
  end
  -- A JSON array decodes to a sequence; object keys are always strings.
  if type(claims) ~= "table" or claims[1] ~= nil then
    return nil, "payload is not an object"
  end
  return claims
end

-- Only HS256 is accepted, whatever else the header says ("alg":"none" and
-- RS256 tokens are refused before the signature is looked at).
local function is_hs256(segment)
  local text = crypto.base64url_decode(segment)
  local ok, header = pcall(json.decode, text or "")
  return ok and type(header) == "table" and header.alg == "HS256"
end

-- A claim that must be a number when present; anything else fails closed.
local function past(claim, now)
  return claim ~= nil and (type(claim) ~= "number" or now >= claim)
end

function M.verify(token, secret)
  if type(token) ~= "string" or type(secret) ~= "string" or token == "" or secret == "" then
    return nil, "token and secret are required"
  end
  local header, body, signature = split(token)
  if not header then
    return nil, "invalid token format"
  end
  if not is_hs256(header) then
    return nil, "unsupported algorithm"
  end
  if not crypto.hs256_verify(header .. "." .. body, secret, signature) then
    return nil, "invalid signature"
  end
  local claims, why = claims_of(body)
  if not claims then
    return nil, why
  end
  local now = time.now()
  if past(claims.exp, now) then
    return nil, "token expired"
  end
  if claims.nbf ~= nil and (type(claims.nbf) ~= "number" or now < claims.nbf) then
    return nil, "token not yet valid"
  end
  return claims
end

-- The payload without checking the signature (for display, never for trust).
function M.decode(token)
  local _, body = split(token)
  if not body then
    return nil
  end
  return (claims_of(body))
end

return M
