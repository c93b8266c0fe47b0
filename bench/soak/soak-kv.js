// bench/soak.sh: a handler with the `kv` capability. Four ctx.kv ops per call (get, set with a
// TTL, list, and a delete of another key), over 64 keys, so the store stays bounded.
/** @type {toolhost.Handler} */
export default async function (req, ctx) {
  const n = Number.isInteger(req.input.n) ? req.input.n : 0;
  const key = "k" + (n % 64);
  const previous = (await ctx.kv.get(key)) || { count: 0 };
  const next = { count: previous.count + 1, last: n, pad: "x".repeat(200) };
  await ctx.kv.set(key, next, { ttlSeconds: 3600 });
  const page = await ctx.kv.list({ prefix: "k", limit: 8 });
  await ctx.kv.delete("k" + ((n + 32) % 64));
  return { key, count: next.count, listed: page.entries.length };
}
