// The dashboard's endpoint editor in headless Chromium: a builder creates an endpoint in the code
// editor, sees a compile error at its line, fixes it, test-runs the draft, deploys, and the live
// endpoint answers; refused fields and content-safety findings show at their field; the builder
// edits and redeploys, and the new revision answers. All under the page's strict CSP.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { base, adminToken, call, ok, launch, watch, shot, accessibilityProblems } from "./lib.mjs";

let browser;
let builderKey;

before(async () => {
  const created = await ok("POST", "/ai/admin/builders", { headers: { "X-Admin-Token": adminToken }, body: { name: "Editor Tester" } });
  builderKey = created.builderKey;
  browser = await launch();
});

after(async () => { await browser?.close(); });

async function signedIn() {
  const page = await browser.context.newPage();
  const errors = watch(page);
  await page.goto(`${base}/dashboard#builder`, { waitUntil: "load" });
  await page.waitForSelector("html[data-ready='1']");
  await page.fill("#builder-key", builderKey);
  await page.click("#builder-login button[type=submit]");
  await page.waitForSelector("#builder-view:not([hidden])");
  return { page, errors };
}

/** The page's console errors, less the browser's own line for each refusal the test asked for. */
const unexpected = (errors) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 422/.test(e));

/** Replaces the text of the code editor inside `selector` (typing as a user pastes). */
async function setCode(page, selector, text) {
  const content = page.locator(`${selector} .cm-content`);
  await content.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
  assert.equal(await codeOf(page, selector), text, `${selector} holds what was typed`);
}

/** The code editor's text, line by line as CodeMirror renders it. */
const codeOf = (page, selector) => page.locator(`${selector} .cm-line`).allTextContents().then((lines) => lines.join("\n"));

const BROKEN = `export default async function (req, ctx) {
  const name = req.input.name || "world";
  return { greeting: "Hello, " + name ;
}`;
const FIXED = `export default async function (req, ctx) {
  const name = req.input.name || "world";
  console.log("greeting", name);
  return { greeting: "Hello, " + name + "!" };
}`;

test("a builder creates an endpoint in the editor: compile error at its line, fix, test run, deploy, edit, redeploy", async () => {
  const { page, errors } = await signedIn();
  await page.click("#b-new");
  await page.waitForSelector("#ed-source .cm-editor");
  // Highlighted: the starter source is tokenized by the JavaScript grammar; TypeScript's types
  // are highlighted as types once the language says TypeScript.
  assert.ok(await page.locator("#ed-source .cm-line span").count() > 5, "the source is highlighted");
  const colours = (word) => page.locator("#ed-source .cm-line span").evaluateAll((spans, w) => spans.filter((e) => e.textContent === w).map((e) => getComputedStyle(e).color), word);
  await setCode(page, "#ed-source", "type Name = string;");
  assert.deepEqual(await colours("type"), [], "`type` is a plain name in JavaScript");
  await page.selectOption("#ed-lang", "ts");
  await page.waitForFunction(() => [...document.querySelectorAll("#ed-source .cm-line span")].some((s) => s.textContent === "type"));
  assert.deepEqual(await colours("type"), ["rgb(207, 34, 46)"], "a keyword in TypeScript");
  assert.deepEqual(await colours("string"), ["rgb(149, 56, 0)"], "a type name in TypeScript");
  await page.selectOption("#ed-lang", "js");
  await page.fill("#ed-slug", "ed-greet");
  await page.fill("#ed-title", "Greeter");
  await page.fill("#ed-description", "Greets whoever it is given.");
  await page.fill("#ed-price", "0");
  await page.fill("#ed-tags", "demo, editor");
  assert.equal(await page.isChecked("#ed-cap-logs"), false, "a new endpoint requests nothing by default");
  await page.check("#ed-attest");

  // A schema that is not JSON is flagged as it is typed, and deploy refuses it locally.
  await setCode(page, "#ed-output-schema", '{"type": "object",}');
  await page.waitForSelector("#ed-output-schema .cm-lint-marker-error");
  await page.click("#ed-deploy");
  await page.waitForSelector("#ed-output-schema-error");
  assert.match(await page.textContent("#ed-output-schema-error"), /Not valid JSON/);
  await setCode(page, "#ed-output-schema", '{"type": "object", "properties": {"greeting": {"type": "string"}}}');

  // The broken source: deploy is refused with the compile error at line 3, in the editor.
  await setCode(page, "#ed-source", BROKEN);
  await page.click("#ed-deploy");
  await page.waitForSelector("#ed-source-error");
  assert.match(await page.textContent("#ed-source-error"), /line 3/);
  assert.match(await page.textContent("#ed-status"), /Not deployed: The source does not compile \(line 3/);
  const marked = await page.locator("#ed-source .cm-line").evaluateAll((lines) => lines.findIndex((l) => l.querySelector(".cm-lintRange-error")));
  assert.equal(marked, 2, "the diagnostic sits on the third line");
  assert.equal(await page.locator("#ed-source .cm-lint-marker-error").count(), 1, "a gutter marker too");
  assert.equal((await call("GET", "/ai/endpoints/ed-greet")).status, 404, "nothing was stored");
  await shot(page, "editor-compile-error");

  // Fixed: the error goes away as the text changes.
  await setCode(page, "#ed-source", FIXED);
  await page.waitForFunction(() => !document.querySelector("#ed-source-error") && !document.querySelector("#ed-source .cm-lintRange-error"));

  // Test run of the draft: result and log lines, nothing published yet.
  await setCode(page, "#ed-test-input", '{"name": "Ada"}');
  await page.click("#ed-run");
  await page.waitForSelector("#ed-run-result .run-body");
  assert.match(await page.textContent("#ed-run-result"), /Draft run\s*200/);
  assert.deepEqual(JSON.parse(await page.textContent("#ed-run-result .run-body")), { greeting: "Hello, Ada!" });
  assert.match(await page.textContent("#ed-run-result .run-logs"), /\[info\] greeting Ada/);
  assert.equal((await call("GET", "/ai/endpoints/ed-greet")).status, 404, "a draft run publishes nothing");

  // A draft that throws: the error with its position, marked in the source.
  await setCode(page, "#ed-source", FIXED.replace('console.log("greeting", name);', "throw new Error(`no ${name}`);"));
  await page.click("#ed-run");
  await page.waitForSelector("#ed-run-result .run-error");
  assert.match(await page.textContent("#ed-run-result .run-error"), /handler_error: .*no Ada.*\(line 3, column \d+\)/);
  await page.waitForSelector("#ed-source .cm-lintRange-error");
  await setCode(page, "#ed-source", FIXED);

  // A file for ctx.files, stored with the endpoint.
  await page.click("#ed-file-add");
  await page.fill("#ed-file-list li.file.new .file-path", "data/greeting.txt");
  await page.fill("#ed-file-list li.file.new .file-content", "Hello");

  // Deploy: created, live, answering.
  await page.click("#ed-deploy");
  await page.waitForFunction(() => /Created ed-greet/.test(document.querySelector("#ed-status").textContent));
  const url = await page.getAttribute("#ed-result .live-url", "href");
  assert.equal(url, `${base}/tools/ed-greet`);
  assert.match(await page.textContent("#ed-result"), /active/);
  assert.match(await page.textContent("#ed-result"), /passed/);
  const live = await call("POST", "/tools/ed-greet", { body: { name: "Bo" } });
  assert.equal(live.status, 200);
  assert.equal(live.body.greeting, "Hello, Bo!");
  await page.waitForSelector('#b-endpoints tr[data-slug="ed-greet"]');
  const stored = await ok("GET", "/ai/endpoints/ed-greet", { headers: { "X-Builder-Key": builderKey } });
  assert.deepEqual(stored.manage.files, [{ path: "data/greeting.txt", bytes: 5 }]);
  assert.equal(await page.locator('#ed-file-list li.file.existing[data-path="data/greeting.txt"]').count(), 1, "shown as stored");
  assert.equal(await page.locator("#ed-file-list li.file.new").count(), 0);
  await shot(page, "editor-deployed");

  // Edit and redeploy: the new revision answers; the test call reaches the deployed code.
  await setCode(page, "#ed-source", FIXED.replace('"Hello, "', '"Hi, "'));
  await page.click("#ed-deploy");
  await page.waitForFunction(() => /Deployed ed-greet \(revision 2\)/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await call("POST", "/tools/ed-greet", { body: { name: "Bo" } })).body.greeting, "Hi, Bo!");
  await page.click("#ed-test-call");
  await page.waitForSelector("#ed-run-result .run-body");
  assert.match(await page.textContent("#ed-run-result"), /Test call \(deployed\)\s*200/);
  assert.match(await page.textContent("#ed-run-result .run-body"), /Hi, Ada!/);
  const logs = await ok("GET", "/ai/endpoints/ed-greet/logs", { headers: { "X-Builder-Key": builderKey } });
  assert.equal(logs.entries[0].test, true, "the editor's test call is marked as a test");

  // Reopened from the table, the editor shows the deployed source.
  await page.click("#ed-close");
  await page.locator('#b-endpoints tr[data-slug="ed-greet"]').getByRole("button", { name: "Edit ed-greet" }).click();
  await page.waitForFunction(() => /Edit ed-greet/.test(document.querySelector("#ed-heading").textContent));
  assert.equal(await codeOf(page, "#ed-source"), FIXED.replace('"Hello, "', '"Hi, "'));
  assert.equal(await page.inputValue("#ed-title"), "Greeter");
  assert.equal(await page.getAttribute("#ed-slug", "readonly"), "");
  assert.deepEqual(await accessibilityProblems(page), []);
  assert.deepEqual(unexpected(errors), []);
  await page.close();
});

test("refused fields, content-safety findings and pending grants show at their field", async () => {
  const { page, errors } = await signedIn();
  await page.click("#b-new");
  await page.waitForSelector("#ed-source .cm-editor");
  // Every field error of the body at once, each at its field.
  await page.fill("#ed-slug", "Bad Slug");
  await page.fill("#ed-title", "");
  await page.fill("#ed-price", "0.0001");
  await page.check("#ed-attest");
  await page.click("#ed-deploy");
  await page.waitForSelector("#ed-slug-error");
  await page.waitForSelector("#ed-title-error");
  await page.waitForSelector("#ed-price-error");
  assert.equal(await page.getAttribute("#ed-slug", "aria-invalid"), "true");
  assert.equal(await page.getAttribute("#ed-slug", "aria-describedby"), "ed-slug-error");
  assert.match(await page.textContent("#ed-status"), /3 fields to fix/);

  // A secret pasted into env: blocked, shown at the env field.
  await page.fill("#ed-slug", "ed-secretive");
  await page.fill("#ed-title", "Secretive");
  await page.fill("#ed-price", "0");
  await page.fill("#ed-env", "PK=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
  await page.click("#ed-deploy");
  await page.waitForSelector("#ed-env-error");
  assert.match(await page.textContent("#ed-env-error"), /secret\.hex_private_key/);
  assert.match(await page.textContent("#ed-status"), /secrets/);
  assert.equal(await page.locator("#ed-slug-error").count(), 0, "fixed fields are no longer marked");

  // Requested capabilities: deployed, but awaiting the admin's grant, and the page says so.
  await page.fill("#ed-env", "MODE=fast");
  await page.check("#ed-cap-kv");
  await page.click("#ed-deploy");
  await page.waitForFunction(() => /Created ed-secretive/.test(document.querySelector("#ed-status").textContent));
  const result = await page.textContent("#ed-result");
  assert.match(result, /awaiting_grant/);
  assert.match(result, /requested: kv · granted: none · awaiting the admin's grant of kv/);
  assert.equal((await call("POST", "/tools/ed-secretive", { body: {} })).status, 503);
  await shot(page, "editor-awaiting-grant");
  assert.deepEqual(await accessibilityProblems(page), []);
  // The open editor fits a 360 px phone: no sideways scrolling.
  await page.setViewportSize({ width: 360, height: 800 });
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), true);
  await shot(page, "editor-phone");
  assert.deepEqual(unexpected(errors), []);
  await page.close();
});

test("revisions: a change made elsewhere is a conflict, not overwritten; roll back; try a revision waiting for a grant", async () => {
  const owner = { "X-Builder-Key": builderKey };
  const counter = (version) => `export default async (req, ctx) => ({ version: "${version}" });`;
  await ok("POST", "/ai/endpoints/create", { headers: owner, body: {
    slug: "ed-revs", title: "Revs", description: "Says its version.", priceUsd: 0, source: counter("v1"),
    safetyAttestation: { accepted: true },
  } });
  const { page, errors } = await signedIn();
  await page.waitForSelector('#b-endpoints tr[data-slug="ed-revs"]');
  await page.locator('#b-endpoints tr[data-slug="ed-revs"]').getByRole("button", { name: "Edit ed-revs" }).click();
  await page.waitForSelector('#ed-revisions tr[data-revision="1"]');

  // The price is raised elsewhere (the CLI, another tab) after the form opened on revision 1.
  await ok("PATCH", "/ai/endpoints/ed-revs", { headers: owner, body: { priceUsd: 0.5 } });
  await setCode(page, "#ed-source", counter("v2"));
  await page.click("#ed-deploy");
  await page.waitForFunction(() => /changed since you opened it/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await ok("GET", "/ai/endpoints/ed-revs")).endpoint.priceUsd, 0.5, "the other change stands");
  await shot(page, "editor-revision-conflict");
  // Deployed over it on purpose: revision 3, the new source on revision 2's content.
  await page.getByRole("button", { name: "Deploy over it" }).click();
  await page.waitForFunction(() => /Deployed ed-revs \(revision 3\)/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await call("POST", "/tools/ed-revs", { body: {} })).body?.version, undefined, "paid now: a 402");
  await page.waitForSelector('#ed-revisions tr[data-revision="3"]');
  assert.match(await page.textContent('#ed-revisions tr[data-revision="3"]'), /serving/);

  // Roll back to revision 1: free and v1 again, at once.
  await page.locator('#ed-revisions tr[data-revision="1"]').getByRole("button", { name: "Roll back to revision 1" }).click();
  await page.waitForFunction(() => /Rolled back: revision 1 serves/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await call("POST", "/tools/ed-revs", { body: {} })).body.version, "v1");
  await page.waitForFunction(() => /serving/.test(document.querySelector('#ed-revisions tr[data-revision="1"]').textContent));

  // A revision that asks for more waits; the page says so, and its owner can try it.
  await setCode(page, "#ed-source", counter("v4"));
  await page.check("#ed-cap-kv");
  await page.click("#ed-deploy");
  await page.waitForFunction(() => /revision 4 waits for the admin's grant; revision 1 serves meanwhile/.test(document.querySelector("#ed-status").textContent));
  assert.match(await page.textContent("#ed-result"), /Revision 4 waits for the admin to grant kv/);
  assert.equal((await call("POST", "/tools/ed-revs", { body: {} })).body.version, "v1", "revision 1 still serves");
  await page.locator('#ed-revisions tr[data-revision="4"]').getByRole("button", { name: "Test call of revision 4" }).click();
  await page.waitForFunction(() => /Test call \(revision 4\)\s*200/.test(document.querySelector("#ed-run-result").textContent));
  assert.match(await page.textContent("#ed-run-result .run-body"), /v4/);
  await shot(page, "editor-pending-revision");
  // The logs mark the owner's test calls.
  await page.locator('#b-endpoints tr[data-slug="ed-revs"]').getByRole("button", { name: "Logs of ed-revs" }).click();
  await page.waitForSelector("#b-logs ol.logs li");
  assert.match(await page.locator("#b-logs ol.logs li").first().textContent(), /test call/);
  assert.deepEqual(await accessibilityProblems(page), []);
  assert.deepEqual(errors.filter((e) => !/status of (409|422)/.test(e)), []);
  await page.close();

  // The admin's card shows what revision 4 asks for, its diff and hosts; a grant makes it serve.
  const admin = await browser.context.newPage();
  const adminErrors = watch(admin);
  await admin.goto(`${base}/dashboard#admin`, { waitUntil: "load" });
  await admin.waitForSelector("html[data-ready='1']");
  await admin.fill("#admin-token", adminToken);
  await admin.click("#admin-login button[type=submit]");
  const card = admin.locator('#a-grants form[data-slug="ed-revs"]');
  await card.waitFor();
  assert.match(await card.textContent(), /Revision 4 asks for kv; revision 1 serves meanwhile/);
  await card.locator("summary").click();
  const diff = await card.locator("pre.diff").textContent();
  assert.match(diff, /-export default .*v1/);
  assert.match(diff, /\+export default .*v4/);
  await shot(admin, "admin-grant-pending-revision");
  await card.getByRole("button", { name: "Grant all to ed-revs" }).click();
  await admin.locator('#a-grants form[data-slug="ed-revs"]').getByText("Granted.").waitFor();
  assert.equal((await call("POST", "/tools/ed-revs", { body: {} })).body.version, "v4");
  assert.deepEqual(await accessibilityProblems(admin), []);
  assert.deepEqual(adminErrors, []);
  await admin.close();
});

test("secrets are set and deleted from the editor, never shown back; the endpoint is deleted after typing its slug", async () => {
  const owner = { "X-Builder-Key": builderKey };
  await ok("POST", "/ai/endpoints/create", { headers: owner, body: {
    slug: "ed-vault", title: "Vault", description: "Says whether it has a key.", priceUsd: 0,
    source: "export default async (req, ctx) => ({ has: Boolean(ctx.env.API_KEY) });",
    safetyAttestation: { accepted: true },
  } });
  const { page, errors } = await signedIn();
  await page.waitForSelector('#b-endpoints tr[data-slug="ed-vault"]');
  await page.locator('#b-endpoints tr[data-slug="ed-vault"]').getByRole("button", { name: "Edit ed-vault" }).click();
  await page.waitForSelector("#ed-secrets:not([hidden])");
  await page.fill("#ed-secret-name", "API_KEY");
  await page.fill("#ed-secret-value", "s3cr3t-value");
  await page.click("#ed-secret-set");
  await page.waitForSelector('#ed-secret-list li[data-name="API_KEY"]');
  assert.equal(await page.inputValue("#ed-secret-value"), "", "the value leaves the page once set");
  assert.doesNotMatch(await page.textContent("#ed-secrets"), /s3cr3t/);
  assert.equal((await call("POST", "/tools/ed-vault", { body: {} })).body.has, true);
  await page.getByRole("button", { name: "Delete the secret API_KEY" }).click();
  await page.waitForFunction(() => !document.querySelector('#ed-secret-list li[data-name="API_KEY"]'));
  assert.equal((await call("POST", "/tools/ed-vault", { body: {} })).body.has, false);

  // Delete: asks for the slug; a wrong one deletes nothing.
  await page.click("#ed-delete");
  await page.fill("#ed-delete-slug", "ed-vaul");
  await page.click("#ed-delete-yes");
  await page.waitForFunction(() => /nothing deleted/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await call("GET", "/ai/endpoints/ed-vault")).status, 200);
  await page.fill("#ed-delete-slug", "ed-vault");
  await page.click("#ed-delete-yes");
  await page.waitForFunction(() => /Deleted ed-vault/.test(document.querySelector("#builder-status").textContent));
  assert.equal((await call("GET", "/ai/endpoints/ed-vault")).status, 404);
  await page.waitForFunction(() => !document.querySelector('#b-endpoints tr[data-slug="ed-vault"]'));
  assert.deepEqual(await accessibilityProblems(page), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test("rollout: deploy to a share of payers, compare both revisions, change the share, promote", async () => {
  const owner = { "X-Builder-Key": builderKey };
  const versioned = (version) => `export default async () => ({ version: "${version}" });`;
  await ok("POST", "/ai/endpoints/create", { headers: owner, body: {
    slug: "ed-rollout", title: "Rollout", description: "Says its version.", priceUsd: 0, source: versioned("v1"),
    safetyAttestation: { accepted: true },
  } });
  const { page, errors } = await signedIn();
  await page.waitForSelector('#b-endpoints tr[data-slug="ed-rollout"]');
  await page.locator('#b-endpoints tr[data-slug="ed-rollout"]').getByRole("button", { name: "Edit ed-rollout" }).click();
  await page.waitForSelector('#ed-revisions tr[data-revision="1"]');
  assert.equal(await page.isHidden("#ed-rollout"), true, "no rollout yet");

  // Deployed to every payer as a rollout: this machine's calls all reach revision 2.
  await setCode(page, "#ed-source", versioned("v2"));
  await page.fill("#ed-share", "100");
  await page.click("#ed-deploy");
  await page.waitForFunction(() => /revision 2 rolls out to 100% of payers; revision 1 serves the rest/.test(document.querySelector("#ed-status").textContent));
  for (let i = 0; i < 3; i++) assert.equal((await call("POST", "/tools/ed-rollout", { body: {} })).body.version, "v2");
  await page.waitForSelector("#ed-rollout:not([hidden]) table.rollout");
  assert.match(await page.textContent('#ed-revisions tr[data-revision="2"]'), /rolling out 100%/);
  await page.getByRole("button", { name: "Refresh" }).click();
  await page.waitForFunction(() => document.querySelector('#ed-rollout tr[data-role="rolling out"] td:nth-child(3)')?.textContent === "3");
  assert.equal(await page.textContent('#ed-rollout tr[data-role="serving"] td:nth-child(3)'), "0");
  assert.deepEqual(await accessibilityProblems(page), []);
  await shot(page, "editor-rollout");

  // A share out of range is the server's clear refusal; a good one is set.
  await page.fill("#ed-rollout-share", "0");
  await page.getByRole("button", { name: "Set share" }).click();
  await page.waitForFunction(() => /Not rolled out: .*1 to 100/.test(document.querySelector("#ed-status").textContent));
  await page.fill("#ed-rollout-share", "40");
  await page.getByRole("button", { name: "Set share" }).click();
  await page.waitForFunction(() => /rolls out to 40% of payers/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await ok("GET", "/ai/endpoints/ed-rollout/rollout", { headers: owner })).rollout.share, 40);

  // Promoted: revision 2 serves everyone, the panel goes.
  await page.getByRole("button", { name: "Promote revision 2" }).click();
  await page.waitForFunction(() => /Promoted: revision 2 serves every call/.test(document.querySelector("#ed-status").textContent));
  await page.waitForSelector("#ed-rollout", { state: "hidden" });
  await page.waitForFunction(() => /serving/.test(document.querySelector('#ed-revisions tr[data-revision="2"]').textContent));
  assert.equal((await call("POST", "/tools/ed-rollout", { body: {} })).body.version, "v2");

  // A kept revision can be rolled out again from its row.
  await page.fill("#ed-share", "100");
  await page.locator('#ed-revisions tr[data-revision="1"]').getByRole("button", { name: "Roll out revision 1" }).click();
  await page.waitForFunction(() => /Revision 1 rolls out to 100% of payers; revision 2 serves the rest/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await call("POST", "/tools/ed-rollout", { body: {} })).body.version, "v1");
  await page.getByRole("button", { name: "End rollout" }).click();
  await page.waitForFunction(() => /Rollout ended: revision 2 serves every call/.test(document.querySelector("#ed-status").textContent));
  assert.equal((await call("POST", "/tools/ed-rollout", { body: {} })).body.version, "v2");
  assert.deepEqual(errors.filter((e) => !/status of (409|422)/.test(e)), []);
  await page.close();
});
