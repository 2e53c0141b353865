-- Server-rendered pages: a base layout, a nav partial, two pages.
-- cove -p 8080 examples/templates/app.lua, then open http://localhost:8080/
local template = require("hull.template")

local site = "Cove templates"
local year = time.date():sub(1, 4)
local nav = {
  { href = "/", label = "Home" },
  { href = "/about", label = "About" },
}

local users = {
  { name = "Alice", email = "alice@example.com" },
  { name = "Bob", email = "  bob@example.com " },
  { name = "Charlie" },
}

local features = {
  { name = "Layouts with extends", stars = 3 },
  { name = "Partials with include", stars = 2 },
  { name = "Loop variables", stars = 0 },
}

local function page(name, current, data)
  data.site, data.year, data.nav, data.current = site, year, nav, current
  return template.render(name, data)
end

app.get("/", function(req, res)
  res:html(page("pages/home.html", "/", {
    users = users,
    features = features,
    snippet = "<b>bold</b>",
  }))
end)

app.get("/about", function(req, res)
  res:html(page("pages/about.html", "/about", {}))
end)

app.get("/users", function(req, res)
  res:json(users)
end)
