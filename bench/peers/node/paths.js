'use strict';
// Path matching shared by the Node peers that have no router of their own
// (node-http.js, node-net.js).

// `/greet/<name>` -> name (one non-empty path segment, percent-decoded), else null.
function greetName(path) {
  if (!path.startsWith('/greet/')) return null;
  const name = path.slice(7);
  if (name === '' || name.includes('/')) return null;
  if (!name.includes('%')) return name;
  try { return decodeURIComponent(name); } catch { return null; }
}

module.exports = { greetName };
