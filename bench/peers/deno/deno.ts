// Deno: Deno.serve, the `http` group (bench/peers/README.md). Deno.serve
// has no router: routes are matched in order on the path, /greet/:name by
// prefix. Single process (no WORKERS).

const PORT = Number(Deno.env.get("PORT")) || 8009;

const TEXT = { "Content-Type": "text/plain" };
const text = (body: string) => new Response(body, { headers: TEXT });
const notFound = () => new Response("Not Found", { status: 404, headers: TEXT });

// `/greet/<name>` -> name (one non-empty path segment), else null.
function greetName(path: string): string | null {
  if (!path.startsWith("/greet/")) return null;
  const name = path.slice(7);
  if (name === "" || name.includes("/")) return null;
  if (!name.includes("%")) return name;
  try {
    return decodeURIComponent(name);
  } catch {
    return null;
  }
}

function handle(req: Request): Response | Promise<Response> {
  // req.url is absolute ("http://host:port/path?query").
  const url = req.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", start);
  const path = q === -1 ? url.slice(start) : url.slice(start, q);
  const method = req.method;
  if (method === "GET") {
    if (path === "/hey") return text("hey");
    if (path === "/hell") return text("hell");
    if (path === "/hello") return text("Hello World!");
    if (path === "/about") return text("about");
    if (path === "/json") return Response.json({ message: "Hello, World!" });
    if (path === "/health") {
      return Response.json({ status: "ok", runtime: "deno", uptime: performance.now() / 1000 });
    }
    const name = greetName(path);
    if (name !== null) return Response.json({ greeting: `Hello, ${name}!` });
  } else if (method === "POST") {
    if (path === "/echo") return req.text().then((body) => Response.json({ body }));
    const name = greetName(path);
    if (name !== null) {
      return req.text().then((body) => Response.json({ greeting: `Hello, ${name}!`, body }));
    }
  }
  return notFound();
}

Deno.serve({
  port: PORT,
  hostname: "127.0.0.1",
  onListen: () => console.log(`deno listening on 127.0.0.1:${PORT} (pid ${Deno.pid})`),
}, handle);
