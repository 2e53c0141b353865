// app.lua's twin for the budget probe of tools/stress: the same loops, so
// the time each runtime takes to be stopped by the budget can be compared.
import { app } from "hull:app";

app.get("/json", (req, res) => res.json({ message: "Hello, World!" }));

// Runs until the instruction budget stops it: a 500.
app.get("/loop", (req, res) => {
  let x = 0;
  for (;;) {
    x++;
  }
});

// The cheapest loop there is.
app.get("/empty", (req, res) => {
  for (;;) {}
});
