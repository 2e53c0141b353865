// The shared store (hull:kv); conformance/specs/kv.toml.
import { app } from "hull:app";
import { kv } from "hull:kv";

// `mine` counts in this VM only: with several workers it shows that more
// than one VM answered while `n` stays one count (tests/shared_state.rs).
let mine = 0;

app.get("/kv/incr", (req, res) => {
  mine += 1;
  res.json({ n: kv.incr("hits"), by5: kv.incr("fives", 5, 60), mine });
});

app.get("/kv/values", (req, res) => {
  kv.set("s", "text");
  kv.set("i", 42);
  kv.set("f", 1.5);
  kv.set("b", false);
  kv.set("short", "x", 30);
  const ttl = kv.ttl("short");
  res.json({
    s: kv.get("s"), i: kv.get("i"), f: kv.get("f"), b: kv.get("b"),
    missing_is_nil: kv.get("missing") === null,
    ttl_ok: ttl > 29 && ttl <= 30,
    no_ttl_is_nil: kv.ttl("s") === null,
    added: kv.add("once", "a"), added_again: kv.add("once", "b"), once: kv.get("once"),
    deleted: kv.delete("once"), deleted_again: kv.delete("once"),
  });
});

app.get("/kv/bad-value", (req, res) => {
  kv.set("t", [1, 2]);
});

app.get("/kv/bad-ttl", (req, res) => {
  kv.set("t", "v", -5);
});

app.get("/kv/not-integer", (req, res) => {
  kv.set("word", "hello");
  kv.incr("word");
});

// What `try` caught, as app.lua's `/kv/caught` reports it.
app.get("/kv/caught", (req, res) => {
  const caught = (f) => {
    try {
      f();
      return { ok: true };
    } catch (e) {
      return { ok: false, message: e.message };
    }
  };
  kv.set("word", "hello");
  res.json({
    ttl: caught(() => kv.set("t", "v", -5)),
    incr: caught(() => kv.incr("word")),
  });
});
