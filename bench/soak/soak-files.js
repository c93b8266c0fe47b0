// bench/soak.sh: a handler with the `files` capability. Write, read back and list (three
// ctx.files ops per call) over 16 paths, so the files stay bounded.
/** @type {toolhost.Handler} */
export default async function (req, ctx) {
  const n = Number.isInteger(req.input.n) ? req.input.n : 0;
  const path = "soak/" + (n % 16) + ".json";
  await ctx.files.write(path, { n, lines: Array.from({ length: 20 }, (_, i) => `line ${i} of ${n}`) });
  const back = await ctx.files.readJson(path);
  const listed = await ctx.files.list("soak");
  return { path, ok: back.n === n, files: listed.length };
}
