// The handler types (web/toolhost.d.ts), used and checked:
//
// - every JS handler the project ships (fixtures, the creator-skill template, the web-platform
//   fixture, the bench handlers) and every handler example in the README, docs/ and the guide
//   type-checks against it with `checkJs` and `strict`, the way a builder's editor would;
// - a deliberately wrong handler (hostile/wrong-handler.js) fails exactly where it is marked,
//   so the check cannot pass by accepting everything;
// - the d.ts itself compiles cleanly under `strict` (no skipLibCheck);
// - its generated part is what web-globals.mjs writes from the runtime surface;
// - it promises nothing the runtime lacks: every global and member it declares is in
//   surface.json, which sandbox/tests/surface.rs keeps equal to a real isolate's surface.
//
// Run: cd tests/types && npm ci && node --test

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import ts from "typescript";
import { fileURLToPath } from "node:url";
import { dtsPath, generate, root, surfacePath, withGenerated } from "./web-globals.mjs";

const surface = JSON.parse(fs.readFileSync(surfacePath, "utf8"));
const ANNOTATION = "/** @type {toolhost.Handler} */";

// The compiler options the d.ts's header tells builders to use: strict, except that a helper's
// unannotated parameter may stay `any` (plain JavaScript has no other way to write one; `req`,
// `ctx` and everything from them are typed through the handler's annotation).
const OPTIONS = {
  allowJs: true,
  checkJs: true,
  strict: true,
  noImplicitAny: false,
  noEmit: true,
  lib: [],
  types: [],
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ES2022,
  skipLibCheck: false,
};

// The project's own handler files: each must carry the annotation on its default export (an
// unannotated handler's `req` and `ctx` would be `any`, and check nothing).
const HANDLER_FILES = [
  ...["fixtures/handlers", "fixtures/templates", "fixtures/web-platform", "bench/soak"].flatMap((dir) =>
    fs.readdirSync(path.join(root, dir)).filter((n) => n.endsWith(".js")).map((n) => `${dir}/${n}`),
  ),
  "bench/peers/toolhost-bench-words.js",
];

function unescapeHtml(text) {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

// Handler examples in the docs: ```js blocks with a default export in the README and docs/*.md,
// and the guide's `data-file="*.js"` examples. A snippet is as a builder would paste it; the
// annotation is added above its default export when the snippet leaves it out.
function docExamples() {
  const sources = ["README.md", ...fs.readdirSync(path.join(root, "docs")).filter((n) => n.endsWith(".md")).map((n) => `docs/${n}`)];
  const out = [];
  for (const source of sources) {
    const text = fs.readFileSync(path.join(root, source), "utf8");
    let i = 0;
    for (const match of text.matchAll(/```js\n([\s\S]*?)```/g)) {
      if (/export default/.test(match[1])) out.push({ name: `${source}#${++i}`, code: match[1] });
    }
  }
  const guide = fs.readFileSync(path.join(root, "web/guide/index.html"), "utf8");
  for (const match of guide.matchAll(/<pre[^>]*data-file="([^"]+\.js)"[^>]*><code>([\s\S]*?)<\/code><\/pre>/g)) {
    out.push({ name: `web/guide/index.html#${match[1]}`, code: unescapeHtml(match[2]) });
  }
  return out.map(({ name, code }) => ({
    name,
    // A Workers-style example carries its own annotation (`toolhost.FetchHandler`).
    code: /@type \{toolhost\.(Fetch)?Handler\}/.test(code) ? code : code.replace(/^export default/m, `${ANNOTATION}\nexport default`),
  }));
}

// One program over the d.ts, the handlers, the extracted examples and the hostile file.
function check() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolhost-types-"));
  const examples = docExamples().map((example, i) => {
    const file = path.join(dir, `example-${i}.js`);
    fs.writeFileSync(file, example.code);
    return { ...example, file };
  });
  const handlers = HANDLER_FILES.map((name) => ({ name, file: path.join(root, name) }));
  const hostile = path.join(root, "tests/types/hostile/wrong-handler.js");
  const files = [dtsPath, ...handlers.map((h) => h.file), ...examples.map((e) => e.file), hostile];
  const program = ts.createProgram(files, OPTIONS);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const byFile = new Map();
  for (const d of diagnostics) {
    const key = d.file ? path.resolve(d.file.fileName) : "(global)";
    (byFile.get(key) ?? byFile.set(key, []).get(key)).push(d);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { program, byFile, handlers, examples, hostile };
}

function format(d) {
  const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  if (!d.file) return `TS${d.code}: ${message}`;
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
  return `${path.relative(root, d.file.fileName)}:${line + 1}:${character + 1} TS${d.code}: ${message}`;
}

const result = check();

test("the d.ts compiles under strict on its own libraries", () => {
  const errors = [...(result.byFile.get("(global)") ?? []), ...(result.byFile.get(dtsPath) ?? [])];
  assert.deepEqual(errors.map(format), []);
  // Only the libraries it references: no DOM, no webworker, no shared memory.
  const libs = result.program
    .getSourceFiles()
    .map((sf) => path.basename(sf.fileName))
    .filter((n) => n.startsWith("lib."));
  assert.ok(libs.includes("lib.es2024.promise.d.ts"), libs.join(" "));
  for (const lib of libs) {
    assert.ok(!/dom|webworker|sharedmemory|scripthost/.test(lib), `${lib} is part of the program`);
  }
});

test("every handler the project ships type-checks", () => {
  assert.ok(result.handlers.length >= 9, `${result.handlers.length} handler files`);
  for (const { name, file } of result.handlers) {
    const text = fs.readFileSync(file, "utf8");
    assert.match(text, /\/\*\* @type \{toolhost\.Handler\} \*\/\nexport default async function/, `${name}: the default export is not annotated`);
    assert.deepEqual((result.byFile.get(file) ?? []).map(format), [], name);
  }
});

test("every handler example in the README, docs/ and the guide type-checks", () => {
  const names = result.examples.map((e) => e.name);
  for (const expected of ["README.md#1", "docs/kv.md#1", "docs/webcrypto.md#1", "web/guide/index.html#hello.js"]) {
    assert.ok(names.includes(expected), `${expected} not found among ${names.join(", ")}`);
  }
  for (const { name, file } of result.examples) {
    assert.deepEqual((result.byFile.get(file) ?? []).map((d) => `${name}: ${format(d)}`), [], name);
  }
});

test("a wrong handler fails exactly where it is marked", () => {
  // Each line of the hostile file that must fail ends with `// TSnnnn`.
  const text = fs.readFileSync(result.hostile, "utf8");
  const expected = [];
  text.split("\n").forEach((line, i) => {
    const mark = line.match(/\/\/ (TS\d+)\s*$/);
    if (mark) expected.push(`${i + 1} ${mark[1]}`);
  });
  assert.ok(expected.length >= 15, `${expected.length} marked lines`);
  const sf = result.program.getSourceFile(result.hostile);
  const got = (result.byFile.get(result.hostile) ?? []).map((d) => {
    const { line } = sf.getLineAndCharacterOfPosition(d.start);
    return `${line + 1} TS${d.code}`;
  });
  assert.deepEqual(
    [...new Set(got)].sort(),
    [...expected].sort(),
    (result.byFile.get(result.hostile) ?? []).map(format).join("\n"),
  );
});

test("the generated part is what web-globals.mjs writes", () => {
  const dts = fs.readFileSync(dtsPath, "utf8");
  assert.ok(dts === withGenerated(dts, generate(surface)), "run `node web-globals.mjs` in tests/types");
});

// TypeScript's name for a symbol-keyed member, as surface.json writes it.
function memberName(symbol) {
  const name = symbol.escapedName;
  const wellKnown = /^__@(\w+)@\d+$/.exec(name);
  return wellKnown ? `[Symbol.${wellKnown[1]}]` : symbol.name;
}

// Globals whose members the ES libraries declare beyond the engine's, on purpose left as
// TypeScript has them (the d.ts header says so).
const MEMBERS_NOT_CHECKED = {
  // Every Intl service throws in toolhost (no ECMA-402 data); which ones the stand-in names
  // does not matter.
  Intl: true,
};

// Members lib.es5.d.ts declares that the engine lacks, which a d.ts cannot take back from
// TypeScript's own library: RegExp's legacy statics, marked @deprecated there ("a legacy
// feature for browser compatibility"), so editors strike them through.
const ABSENT_BUT_DEPRECATED = new Set(
  ["$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "input", "$_", "lastMatch", "$&",
    "lastParen", "$+", "leftContext", "$`", "rightContext", "$'"].map((m) => `RegExp.${m}`),
);

// Instance members that are own properties of each instance, not of any prototype, so the
// surface (which reads prototypes) cannot list them: ECMAScript puts them on the instance.
const OWN_INSTANCE_MEMBERS = new Set([
  "length", // arrays, strings, functions
  "cause", // errors made with { cause }
  "errors", // AggregateError
  "stack", // errors, in QuickJS
  "lastIndex", // regular expressions
]);

test("the d.ts declares only what a handler isolate has", () => {
  const checker = result.program.getTypeChecker();
  const hostile = result.program.getSourceFile(result.hostile);
  const runtime = surface.globals;
  const problems = [];
  const names = (type) => checker.getPropertiesOfType(type).map(memberName);
  const missing = (declared, actual, what, inherited) => {
    const have = new Set([...(actual ?? []), ...inherited]);
    for (const name of declared) if (!have.has(name)) problems.push(`${what}.${name}`);
  };
  // Every prototype has `constructor` (the surface leaves it out).
  const ofObjects = [...surface.objectPrototype, "constructor"];
  const ofInstances = [...ofObjects, ...OWN_INSTANCE_MEMBERS];
  const ofFunctions = [...surface.functionPrototype, ...ofObjects];
  const globals = checker
    .getSymbolsInScope(hostile, ts.SymbolFlags.Value)
    .filter((s) => s.declarations?.some((d) => d.getSourceFile().isDeclarationFile));
  assert.ok(globals.length > 80, `${globals.length} globals`);
  for (const symbol of globals) {
    const name = symbol.name;
    if (name === "globalThis" || name === "undefined") continue;
    const info = runtime[name];
    if (!info) {
      problems.push(`${name} (no such global)`);
      continue;
    }
    if (MEMBERS_NOT_CHECKED[name]) continue;
    const type = checker.getTypeOfSymbol(symbol);
    const constructs = type.getConstructSignatures();
    if (info.type === "function") {
      missing(names(type).filter((n) => n !== "prototype"), info.static, name, ofFunctions);
      if (constructs.length > 0) {
        // A function made by `new Function` inherits Function.prototype itself.
        const inherited = name === "Function" ? [...ofFunctions, "prototype"] : ofInstances;
        missing(names(constructs[0].getReturnType()), info.instance, `${name}.prototype`, inherited);
      }
    } else if (info.type === "object") {
      missing(names(type), info.members, name, ofObjects);
    }
  }
  assert.deepEqual(problems.filter((p) => !ABSENT_BUT_DEPRECATED.has(p)), []);
});

test("req and ctx are typed with what the runtime gives", () => {
  const checker = result.program.getTypeChecker();
  const dts = result.program.getSourceFile(dtsPath);
  const ns = dts.statements.find((s) => ts.isModuleDeclaration(s) && s.name.text === "toolhost");
  const type = (name) => {
    const decl = ns.body.statements.find((s) => s.name?.text === name);
    return checker.getTypeAtLocation(decl.name);
  };
  const props = (name) => checker.getPropertiesOfType(type(name)).map((s) => s.name).sort();
  assert.deepEqual(props("HandlerRequest"), surface.req);
  assert.deepEqual(props("Context"), surface.ctx.ctx);
  assert.deepEqual(props("Kv"), surface.ctx.kv);
  assert.deepEqual(props("AtomicOperation"), surface.ctx.atomic);
  assert.deepEqual(props("Files"), surface.ctx.files);
  assert.deepEqual(props("Log"), surface.ctx.log);
});

// The builder's flow, literally: the config from the d.ts header, tsc from npm, a handler file
// (named `name` in the config's "files") beside the d.ts.
const headerConfig = (() => {
  const dts = fs.readFileSync(dtsPath, "utf8");
  const start = dts.indexOf('//   { "compilerOptions"');
  const end = dts.indexOf("\n", dts.indexOf('"files"', start));
  return JSON.parse(dts.slice(start, end).replace(/^\/\/ {3}/gm, ""));
})();
const tsc = path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules/typescript/bin/tsc");
function runTsc(handler, name = "handler.js") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolhost-tsc-"));
  fs.copyFileSync(dtsPath, path.join(dir, "toolhost.d.ts"));
  fs.copyFileSync(handler, path.join(dir, name));
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ ...headerConfig, files: ["toolhost.d.ts", name] }));
  const out = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

test("the tsconfig the d.ts header shows works with the tsc command", () => {
  const run = (handler) => runTsc(handler);
  const good = run(path.join(root, "fixtures/handlers/text-summary.js"));
  assert.equal(good.status, 0, good.stdout + good.stderr);
  const bad = run(result.hostile);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stdout, /handler\.js\(\d+,\d+\): error TS2551: Property 'getg' does not exist on type 'Kv'/);
});

test("the TypeScript handler `toolhost init --ts` writes compiles against the d.ts", () => {
  // (Its JavaScript twin, fixtures/templates/cli-handler.js, is checked with the handlers above.)
  const out = runTsc(path.join(root, "fixtures/templates/cli-handler.ts"), "handler.ts");
  assert.equal(out.status, 0, out.stdout + out.stderr);
});
