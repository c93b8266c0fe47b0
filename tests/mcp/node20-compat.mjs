// The conformance CLI imports `globSync` from `fs`, which Node 22 added; it uses it only for
// its `tier-check` command, which these tests never run. On Node 20 (the Debian/NodeSource
// package here) that import fails at link time, so this hook drops it from the CLI's bundle and
// leaves a stub that says why. Loaded with `node --import ./node20-compat.mjs`.
import { register } from "node:module";
import * as fs from "node:fs";

if (typeof fs.globSync !== "function") {
  register("./node20-compat-hooks.mjs", import.meta.url);
}
