// bench_template: the pages of the template benchmarks (bench/): a simple
// page, a 50-item loop, and a layout with a partial, a loop, a filter and
// conditions. The data is built once, at load. The JavaScript twin of app.lua.
//
//   cove -p 8080 examples/bench_template/app.js
//   wrk -t4 -c100 -d10s http://localhost:8080/full

import { app } from "hull:app";
import { template } from "hull:template";
import { time } from "hull:time";

const items = Array.from({ length: 50 }, (_, i) => ({
  id: i + 1,
  name: `Item ${i + 1}`,
  active: (i + 1) % 3 !== 0,
}));
const year = time.date().slice(0, 4);

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.get("/simple", (req, res) => {
  res.html(template.render("pages/simple.html", { title: "Simple", message: "Hello from Cove!" }));
});

app.get("/loop", (req, res) => {
  res.html(template.render("pages/loop.html", { title: "Loop", items }));
});

app.get("/full", (req, res) => {
  res.html(template.render("pages/full.html", {
    title: "Full", message: "Layout, partial, loop, filter, conditions.", items, year,
  }));
});
