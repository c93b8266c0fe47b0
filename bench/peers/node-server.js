// Node http server; usage: node node-server.js PORT plain|vm
//   plain  the handler runs in the main context.
//   vm     the handler is compiled once inside a fresh node:vm context (created once at start);
//          each request hands the body text into the context, which parses it, runs the handler
//          and returns JSON text, so no object crosses the realm boundary.
"use strict";
const http = require("node:http");
const vm = require("node:vm");

const HANDLER_SOURCE = `
function words(input) {
  const text = input && typeof input.text === "string" ? input.text : "";
  const trimmed = text.trim();
  return { words: trimmed === "" ? 0 : trimmed.split(/\\s+/).length, upper: text.toUpperCase(), input };
}
`;

const port = Number(process.argv[2]);
const mode = process.argv[3] || "plain";

let handle; // (bodyText) => responseText; throws on malformed JSON
if (mode === "vm") {
  const context = vm.createContext(Object.create(null));
  handle = vm.runInContext(`${HANDLER_SOURCE}; (body) => JSON.stringify(words(JSON.parse(body)))`, context, {
    filename: "bench-words.js",
  });
} else if (mode === "plain") {
  const words = new Function(`${HANDLER_SOURCE}; return words;`)();
  handle = (body) => JSON.stringify(words(JSON.parse(body)));
} else {
  throw new Error(`unknown mode ${mode}`);
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(404).end("not found");
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    let out;
    try {
      out = handle(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":"malformed_json"}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(out);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, "127.0.0.1");
