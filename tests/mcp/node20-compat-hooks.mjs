// Load hook for node20-compat.mjs: rewrites the conformance bundle's `globSync as X` import.
export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.includes("/@modelcontextprotocol/conformance/dist/")) return result;
  const source = result.source.toString();
  const match = source.match(/globSync as (\w+),/);
  if (!match) return result;
  const stub = `const ${match[1]} = () => { throw new Error("tier-check needs Node 22 (fs.globSync)"); };`;
  // Module bindings are hoisted, so the stub may follow the imports; the shebang stays first.
  return { ...result, source: source.replace(match[0], "") + `\n${stub}\n` };
}
