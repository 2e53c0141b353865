// Server-rendered pages: a base layout, a nav partial, two pages.
// cove -p 8080 examples/templates/app.js, then open http://localhost:8080/
import { app } from "hull:app";
import { template } from "hull:template";
import { time } from "hull:time";

const site = "Cove templates";
const year = time.date().slice(0, 4);
const nav = [
  { href: "/", label: "Home" },
  { href: "/about", label: "About" },
];

const users = [
  { name: "Alice", email: "alice@example.com" },
  { name: "Bob", email: "  bob@example.com " },
  { name: "Charlie" },
];

const features = [
  { name: "Layouts with extends", stars: 3 },
  { name: "Partials with include", stars: 2 },
  { name: "Loop variables", stars: 0 },
];

const page = (name, current, data) =>
  template.render(name, { ...data, site, year, nav, current });

app.get("/", (req, res) => {
  res.html(page("pages/home.html", "/", { users, features, snippet: "<b>bold</b>" }));
});

app.get("/about", (req, res) => {
  res.html(page("pages/about.html", "/about", {}));
});

app.get("/users", (req, res) => {
  res.json(users);
});
