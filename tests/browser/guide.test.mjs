// The guide in headless Chromium, and every example in it run against the local server, in order,
// in one shell (later examples use the variables earlier ones set), as a reader would paste them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, symlinkSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { base, root, features, launch, watch, shot, accessibilityProblems } from "./lib.mjs";

const PATH = "/guides/x402-agent-payment-infrastructure";
let browser;
let have;
let examples;

before(async () => {
  have = await features();
  browser = await launch();
});
after(async () => { await browser?.close(); });

test("the guide loads with the base URL filled in and no console errors", async () => {
  const page = await browser.context.newPage();
  const errors = watch(page);
  const response = await page.goto(base + PATH);
  assert.equal(response.status(), 200);
  assert.match(response.headers()["content-security-policy"], /default-src 'self'/);
  const text = await page.textContent("main");
  assert.ok(!text.includes("{base_url}"), "an unreplaced {base_url}");
  assert.ok(text.includes(`${base}/ai/manifest`));
  for (const heading of ["What x402 is", "Discover", "Quote", "Pay: v2 and v1 headers", "Receipts and their signature", "Publish your first tool in two minutes", "Your first tool from the command line",
    "Publish a JavaScript handler", "The handler contract and ctx API", "Capabilities and limits", "Secrets", "Content safety", "Revenue and payouts"]) {
    assert.equal(await page.getByRole("heading", { name: heading, exact: true }).count(), 1, heading);
  }
  // Copy buttons come from guide.js (no inline script).
  assert.ok(await page.locator("button.copy").count() >= 10);
  assert.deepEqual(await accessibilityProblems(page), []);
  examples = await page.$$eval("pre[data-example]", (els) => els.map((e) => ({
    kind: e.dataset.example, file: e.dataset.file, title: e.dataset.title || e.dataset.file,
    needs: (e.dataset.needs || "").split(/\s+/).filter(Boolean), expect: e.dataset.expect, text: e.textContent,
  })));
  await shot(page, "guide");
  await page.setViewportSize({ width: 360, height: 780 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 360, "guide scrolls sideways at 360 px");
  await shot(page, "guide-phone", { fullPage: false });
  assert.deepEqual(errors, []);
  await page.close();
});

test("every example in the guide works against this server", async (t) => {
  assert.ok(examples && examples.length >= 20, "examples were not extracted");
  const dir = mkdtempSync(join(process.env.TOOLHOST_WORK || tmpdir(), "guide-"));
  const runnable = (ex) => ex.needs.every((n) => have[n]);
  const skipped = examples.filter((ex) => ex.kind === "curl" && !runnable(ex));
  // Every part the guide shows is on main: nothing may be skipped.
  const unexpected = skipped;
  assert.deepEqual(unexpected.map((ex) => `${ex.title} (needs ${ex.needs.join(", ")})`), [], "examples this server cannot run");
  // Files the reader saves; the npm install step is replaced by the repo's pinned x402 client.
  for (const ex of examples.filter((e) => e.kind === "file")) writeFileSync(join(dir, ex.file), ex.text);
  if (have["x402-client"]) symlinkSync(join(root, "tests/js/x402/node_modules"), join(dir, "node_modules"), "dir");
  const steps = examples.map((ex, i) => ({ ...ex, i })).filter((ex) => ex.kind === "curl" && runnable(ex));
  let script = "set -o pipefail\nunset TOOLHOST_URL\n";
  for (const ex of steps) {
    const assigned = [...ex.text.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    script += `{\n${ex.text}\n} >"out_${ex.i}" 2>&1\nrc=$?\n`;
    for (const v of assigned) script += `if [ -z "\${${v}:-}" ] || [ "\${${v}}" = null ]; then echo "${v} is empty" >>"out_${ex.i}"; rc=99; fi\n`;
    script += `echo $rc >"rc_${ex.i}"\n`;
  }
  writeFileSync(join(dir, "examples.sh"), script);
  const started = Date.now();
  const run = spawnSync("bash", ["examples.sh"], { cwd: dir, encoding: "utf8", timeout: 120_000, env: { ...process.env } });
  assert.equal(run.error, undefined, String(run.error));
  const failures = [];
  for (const ex of steps) {
    const out = existsSync(join(dir, `out_${ex.i}`)) ? readFileSync(join(dir, `out_${ex.i}`), "utf8") : "";
    const rc = existsSync(join(dir, `rc_${ex.i}`)) ? readFileSync(join(dir, `rc_${ex.i}`), "utf8").trim() : "not run";
    const problems = [];
    if (rc !== "0") problems.push(`exit ${rc}`);
    if (!out.trim()) problems.push("no output");
    if (/"ok":\s*false/.test(out)) problems.push("an error answer");
    if (/^null$/m.test(out)) problems.push("a null where a value was expected");
    if (ex.expect && !out.includes(ex.expect)) problems.push(`output lacks "${ex.expect}"`);
    if (problems.length) failures.push(`example "${ex.title}" (${problems.join(", ")}):\n${ex.text}\n--- output ---\n${out.slice(0, 2000)}`);
    else t.diagnostic(`ok: ${ex.title}`);
  }
  t.diagnostic(`${steps.length} examples ran in ${Date.now() - started} ms; ${skipped.length} skipped${skipped.length ? `: ${skipped.map((s) => `${s.title} (needs ${s.needs.join(", ")})`).join("; ")}` : ""}`);
  assert.deepEqual(failures, [], failures.join("\n\n"));
});
