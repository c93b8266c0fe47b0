// A handler full of mistakes web/toolhost.d.ts must catch (tests/types/types.test.mjs): each
// line ending in `// TSnnnn` must fail with that error, and no other line may fail. If the
// types accepted anything (a handler typed `any`, a d.ts that declares `window`), this check
// would fail.

/** @type {toolhost.Handler<{ text: string }>} */
export default async function (req, ctx) {
  const words = req.input.text.split(" ");
  await ctx.kv.getg("count"); // TS2551
  await ctx.kv.set("count"); // TS2554
  await ctx.kv.atomic().sum("count", "1").commit(); // TS2345
  const entry = await ctx.kv.getEntry("doc");
  entry.versionstamp.length; // TS18047
  await ctx.files.read(7); // TS2345
  ctx.env.SECRET = "x"; // TS2542
  ctx.log.debug("no such level"); // TS2339
  req.headers.authorization; // TS2339
  req.payment.payer; // TS18047
  req.method === "PUT"; // TS2367
  new URL(5); // TS2345
  window.location; // TS2304
  document.title; // TS2584
  self.postMessage(1); // TS2304
  new SharedArrayBuffer(8); // TS2583
  new MessagePort(); // TS2304
  new WebSocket("wss://example.com"); // TS2304
  importScripts("x.js"); // TS2304
  console.table(words); // TS2339
  await fetch("https://example.com", { method: 1 }); // TS2322
  ctx.respond("200", {}); // TS2345
  ctx.httpGetJson(new URL("https://example.com")); // TS2345
  crypto.subtle.encrypt({ name: "AES-GCM", iv: new Uint8Array(12) }, await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt"]), words); // TS2339
  return words.length;
}
