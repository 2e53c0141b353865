-- hull.cookie: parse a Cookie header, build Set-Cookie values (Hull §10.6).
--
-- Hull's Lua semantics: values are neither encoded nor decoded (the JS
-- module does both), and cookies default to HttpOnly, Secure, SameSite=Lax.
-- Cove refuses, with an error, names and values that would break the header
-- (`;`, control characters), which Hull passed through.

local M = {}

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- Cookie header → { name = value }. Pairs without `=` or with an empty name
-- are skipped. When a name repeats the first value wins: browsers send the
-- cookie with the most specific path first (RFC 6265 §5.4).
function M.parse(header)
  local out = {}
  if type(header) ~= "string" then
    return out
  end
  for part in header:gmatch("[^;]+") do
    local name, value = part:match("^([^=]*)=(.*)$")
    if name then
      name = trim(name)
      if name ~= "" and out[name] == nil then
        out[name] = trim(value)
      end
    end
  end
  return out
end

-- RFC 6265 token characters: no separators, spaces or controls.
local function check_name(name)
  if type(name) ~= "string" or name == "" or name:find("[%c%s\"(),/:;<=>?@%[\\%]{}\127-\255]") then
    error("cookie.serialize: invalid cookie name " .. string.format("%q", tostring(name))
      .. " (use letters, digits and !#$%&'*+-.^_`|~)", 3)
  end
end

-- Values and attributes go into the header verbatim: a `;` would start a new
-- attribute and CR/LF a new header, so they are refused.
local function check_text(what, value)
  if value:find("[%c;]") then
    error("cookie.serialize: " .. what .. " contains ';' or a control character"
      .. " (encode it first, e.g. with crypto.base64url_encode)", 3)
  end
  return value
end

local SAMESITE = { strict = "Strict", lax = "Lax", none = "None" }

local function number_text(v)
  if type(v) == "number" and v == math.floor(v) then
    return string.format("%d", v)
  end
  return tostring(v)
end

-- name=value; Path; HttpOnly; Secure; SameSite; Max-Age; Domain; Expires
-- (Hull's Lua order). opts: path httponly secure samesite max_age domain expires.
function M.serialize(name, value, opts)
  opts = opts or {}
  check_name(name)
  local parts = { name .. "=" .. check_text("value", value == nil and "" or tostring(value)) }
  local path = opts.path == nil and "/" or opts.path
  if path then
    parts[#parts + 1] = "Path=" .. check_text("path", tostring(path))
  end
  if opts.httponly ~= false then
    parts[#parts + 1] = "HttpOnly"
  end
  if opts.secure ~= false then
    parts[#parts + 1] = "Secure"
  end
  local samesite = opts.samesite == nil and "Lax" or opts.samesite
  if samesite then
    local canonical = SAMESITE[tostring(samesite):lower()]
    if not canonical then
      error("cookie.serialize: samesite must be \"Strict\", \"Lax\" or \"None\", got "
        .. string.format("%q", tostring(samesite)), 2)
    end
    parts[#parts + 1] = "SameSite=" .. canonical
  end
  if opts.max_age ~= nil and opts.max_age ~= false then
    parts[#parts + 1] = "Max-Age=" .. check_text("max_age", number_text(opts.max_age))
  end
  if opts.domain then
    parts[#parts + 1] = "Domain=" .. check_text("domain", tostring(opts.domain))
  end
  if opts.expires then
    parts[#parts + 1] = "Expires=" .. check_text("expires", tostring(opts.expires))
  end
  return table.concat(parts, "; ")
end

-- A Set-Cookie value that deletes the cookie: empty value, Max-Age=0, with
-- the same path/domain/flags it was set with.
function M.clear(name, opts)
  opts = opts or {}
  return M.serialize(name, "", {
    path = opts.path, domain = opts.domain, httponly = opts.httponly,
    secure = opts.secure, samesite = opts.samesite, max_age = 0,
  })
end

return M
