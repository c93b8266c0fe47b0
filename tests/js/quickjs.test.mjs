// Runs a set of handler cases under QuickJS (the sandbox's engine) and under
// Node, and checks that both give the same results, that no handler leans on
// anything outside ECMAScript, and how long the heavier cases take.
//
// Skipped unless QJS names a QuickJS runner that executes an ES module file
// given as its only argument and provides `print` (e.g. quickjs-ng's `qjs`):
//   QJS=/path/to/qjs node --test
// The generated entry removes non-ECMAScript globals before importing the
// handlers, so a handler that used one would fail here.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runCases } from "./engine/core.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const QJS = process.env.QJS;

function catalogCaps() {
  const caps = {};
  for (const name of fs.readdirSync(path.join(root, "fixtures", "catalog"))) {
    const entry = JSON.parse(fs.readFileSync(path.join(root, "fixtures", "catalog", name), "utf8"));
    caps[entry.slug] = { caps: entry.capabilities || {}, example: entry.exampleInput };
  }
  return caps;
}

function buildCases() {
  const cat = catalogCaps();
  const c = (name, slug, input, extra = {}) => ({ name, slug, input, capabilities: cat[slug].caps, ...extra });
  const solar = "Solar panels convert sunlight into electricity for homes. My neighbour bought a red bicycle last week. " +
    "Modern solar panels turn more sunlight into electricity than older panels did. The weather was pleasant on Tuesday. " +
    "Cheap solar electricity from rooftop panels lowers household energy bills. Cats sleep for most of the day.";
  const bigText = (solar + "\n\n").repeat(Math.ceil(200000 / (solar.length + 2))).slice(0, 200000);
  const bigJson = { items: Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `item-${i}`, ok: i % 3 === 0, t: "é🎉" })) };
  const cases = [];
  for (const slug of ["creator-plan", "text-summary", "business-lookup", "developer-utility"]) {
    cases.push(c(`${slug}: example`, slug, cat[slug].example));
  }
  cases.push(
    c("creator: constraints", "creator-plan", { role: "startup founder", goal: "launch with video, ads and social media", timeBudget: "2h/day", constraints: ["no paid ads", "no video", "no social media"], tone: "direct" }),
    c("creator: month budget", "creator-plan", { role: "freelance designer", goal: "win client leads", timeBudget: "10 hrs per month", tone: "professional" }),
    c("creator: half hour", "creator-plan", { role: "teacher", goal: "sell a course", timeBudget: "half an hour a day", tone: "playful" }),
    c("summary: solar", "text-summary", { text: solar, sentences: 3 }),
    c("summary: abbreviations", "text-summary", { text: "Dr. Smith measured 3.14 units, e.g. in the lab. He wrote to the U.S. Senate. J. R. Tolkien wrote books! Was it good? They moved to the U.S. It was cold.", sentences: 20 }),
    c("summary: url", "text-summary", { url: "https://example.com/a.json" }, { http: { "https://example.com/a.json": { data: { body: solar } } } }),
    c("summary: url without text", "text-summary", { url: "https://example.com/b.json" }, { http: { "https://example.com/b.json": { n: 1 } } }),
    c("summary: 200k", "text-summary", { text: bigText }),
    c("lookup: coinbase inc.", "business-lookup", { company: "coinbase inc." }, { kvGroup: "pop" }),
    c("lookup: www.coinbase.com", "business-lookup", { domain: "www.coinbase.com" }, { kvGroup: "pop" }),
    c("lookup: fuzzy", "business-lookup", { company: "Petróleo Brasileiro" }),
    c("lookup: co.jp", "business-lookup", { domain: "https://global.toyota.co.jp/x" }),
    c("lookup: invalid", "business-lookup", { domain: "co.uk" }),
    c("inspect: unicode", "developer-utility", { z: 1, "é": "日本🎉", a: { y: [3, { b: true, a: null }], "a/b~c": -0.5 } }),
    c("inspect: 20000 items", "developer-utility", bigJson),
  );
  return cases;
}

function assetFiles() {
  const files = {};
  const base = path.join(root, "fixtures", "handler-files");
  for (const slug of fs.existsSync(base) ? fs.readdirSync(base) : []) {
    for (const name of fs.readdirSync(path.join(base, slug))) {
      files[`${root}/fixtures/handler-files/${slug}/${name}`] = fs.readFileSync(path.join(base, slug, name), "utf8");
    }
  }
  return files;
}

test("handlers give the same results under QuickJS and Node", { skip: !QJS && "set QJS to a QuickJS runner" }, async () => {
  const cases = buildCases();
  const files = assetFiles();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolhost-qjs-"));
  const entry = path.join(dir, "entry.mjs");
  fs.writeFileSync(entry, [
    `import { runCases } from ${JSON.stringify(path.join(here, "engine", "core.mjs"))};`,
    `const files = ${JSON.stringify(files)};`,
    `const cases = ${JSON.stringify(cases)};`,
    "const out = globalThis.print;",
    "const now = Date.now;",
    // Keep only what the sandbox keeps (ECMAScript globals and console).
    "for (const name of ['print', 'scriptArgs', 'bjson', 'performance', 'navigator', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'gc', 'os', 'std']) { try { delete globalThis[name]; } catch {} }",
    `const results = await runCases(cases, { root: ${JSON.stringify(root)}, loadText: (p) => (Object.prototype.hasOwnProperty.call(files, p) ? files[p] : null), importHandler: (slug) => import(${JSON.stringify(root)} + "/fixtures/handlers/" + slug + ".js"), now });`,
    "out(JSON.stringify(results));",
  ].join("\n"));
  let stdout;
  try {
    stdout = execFileSync(QJS, [entry], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const quick = JSON.parse(stdout.trim().split("\n").pop());
  const node = await runCases(cases, {
    root,
    loadText: (p) => (Object.prototype.hasOwnProperty.call(files, p) ? files[p] : null),
    importHandler: (slug) => import(pathToFileURL(path.join(root, "fixtures", "handlers", `${slug}.js`)).href),
    now: Date.now,
  });
  assert.equal(quick.length, node.length);
  for (let i = 0; i < node.length; i++) {
    assert.equal(quick[i].error, null, `${quick[i].name} threw under QuickJS: ${JSON.stringify(quick[i].error)}`);
    assert.deepEqual(quick[i].result, node[i].result, `${node[i].name}: QuickJS and Node differ`);
    assert.deepEqual(quick[i].logs, node[i].logs, `${node[i].name}: logs differ`);
    // The sandbox's default wall-clock limit is 2 s per call. Wall-clock time on
    // a shared machine is noisy, so only a gross overrun fails; see the log line.
    assert.ok(quick[i].ms < 5000, `${node[i].name} took ${quick[i].ms} ms under QuickJS`);
  }
  const timings = quick.map((q) => `${q.name}=${q.ms}ms`).join(", ");
  console.log(`QuickJS timings: ${timings}`);
});
