-- bench_template: the pages of the template benchmarks (bench/): a simple
-- page, a 50-item loop, and a layout with a partial, a loop, a filter and
-- conditions. The data is built once, at load.
--
--   cove -p 8080 examples/bench_template/app.lua
--   wrk -t4 -c100 -d10s http://localhost:8080/full

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
  res:html(template.render("pages/simple.html", { title = "Simple", message = "Hello from Cove!" }))
end)

app.get("/loop", function(req, res)
  res:html(template.render("pages/loop.html", { title = "Loop", items = items }))
end)

app.get("/full", function(req, res)
  res:html(template.render("pages/full.html", {
    title = "Full", message = "Layout, partial, loop, filter, conditions.", items = items, year = year,
  }))
end)
