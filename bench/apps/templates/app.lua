-- Hull's bench_template (hull-api.md §12.12) for Cove, Lua version.
local template = require("hull.template")

local items = {}
for i = 1, 50 do
  items[i] = { id = i, name = "Item " .. i, active = i % 3 ~= 0 }
end
local year = time.date():sub(1, 4)

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.get("/simple", function(req, res)
  res:html(template.render("pages/simple.html", { title = "Simple", message = "Hello from a template" }))
end)

app.get("/loop", function(req, res)
  res:html(template.render("pages/loop.html", { items = items }))
end)

app.get("/full", function(req, res)
  res:html(template.render("pages/full.html", {
    title = "Full page",
    subtitle = "extends, include, loop, filters",
    items = items,
    year = year,
  }))
end)
