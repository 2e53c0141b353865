-- hull.form: application/x-www-form-urlencoded bodies (Hull §10.9).

local M = {}

-- `+` is a space, then each valid %XX becomes its byte; an invalid escape
-- (`%ZZ`, a lone `%`) is kept as written.
local function decode(s)
  s = s:gsub("+", " ")
  return (s:gsub("%%(%x%x)", function(hex)
    return string.char(tonumber(hex, 16))
  end))
end

-- body → { name = value }. Pairs without `=` or with an empty name are
-- skipped; a repeated name keeps its last value. Anything but a non-empty
-- string gives an empty table.
function M.parse(body)
  local out = {}
  if type(body) ~= "string" then
    return out
  end
  for pair in body:gmatch("[^&]+") do
    local key, value = pair:match("^([^=]*)=(.*)$")
    if key and key ~= "" then
      out[decode(key)] = decode(value)
    end
  end
  return out
end

return M
