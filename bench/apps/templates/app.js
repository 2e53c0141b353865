// Hull's bench_template (hull-api.md §12.12) for Cove, JavaScript version.
import { app } from "hull:app";
import { template } from "hull:template";
import { time } from "hull:time";

const items = [];
for (let i = 1; i <= 50; i++) {
  items.push({ id: i, name: `Item ${i}`, active: i % 3 !== 0 });
}
const year = time.date().slice(0, 4);

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.get("/simple", (req, res) => {
  res.html(template.render("pages/simple.html", { title: "Simple", message: "Hello from a template" }));
});

app.get("/loop", (req, res) => {
  res.html(template.render("pages/loop.html", { items }));
});

app.get("/full", (req, res) => {
  res.html(template.render("pages/full.html", {
    title: "Full page",
    subtitle: "extends, include, loop, filters",
    items,
    year,
  }));
});
