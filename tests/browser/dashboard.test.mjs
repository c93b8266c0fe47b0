// The dashboard in headless Chromium: loads cleanly, lists and filters the catalog, tries a free
// endpoint, a builder pauses and resumes an endpoint and sees revenue as a chart, the admin
// approves a flagged endpoint; keyboard, labels, contrast and a 360 px phone layout.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { base, adminToken, artifacts, call, ok, features, launch, watch, shot, accessibilityProblems } from "./lib.mjs";

const ADMIN = { "X-Admin-Token": adminToken };
let browser;
let have;
const seed = { builderKey: null, sales: 0 };


before(async () => {
  have = await features();
  // Everything the dashboard shows is on main now: a missing route is a failure, not a skip.
  for (const part of ["builders", "reviews", "payments", "revenue", "payouts"]) {
    assert.ok(have[part], `this server lacks the ${part} routes`);
  }
  if (have.builders) {
    const created = await ok("POST", "/ai/admin/builders", { headers: ADMIN, body: { name: "Dashboard Tester" } });
    seed.builderKey = created.builderKey;
    const B = { "X-Builder-Key": seed.builderKey };
    await ok("POST", "/ai/endpoints/create", { headers: B, body: {
      slug: "dash-demo", title: "Dashboard demo", description: "A static answer, sold for a fifth of a cent.",
      priceUsd: have.payments ? 0.002 : 0, handlerType: "static_json", response: { hello: "dashboard" },
      tags: ["demo"], safetyAttestation: { accepted: true },
    } });
    await ok("POST", "/ai/endpoints/create", { headers: B, body: {
      slug: "dash-js", title: "Dashboard JS", description: "Counts its calls.", priceUsd: 0,
      handlerType: "js_request_response", tags: ["demo"], capabilities: { kv: true, logs: true },
      source: "export default async function (req, ctx) { return { ok: true }; }",
      safetyAttestation: { accepted: true },
    } });
    const flagged = await ok("POST", "/ai/endpoints/create", { headers: B, body: {
      slug: "dash-flagged", title: "Flagged contact", description: "Write to jane.doe@gmail.com for access.",
      priceUsd: 0, handlerType: "static_json", response: { ok: true }, safetyAttestation: { accepted: true },
    } });
    assert.equal(flagged.endpoint.contentSafety.status, "review", "the seed endpoint must be held for review");
  }
  if (have.builders && have.payments) {
    const credit = await ok("POST", "/ai/admin/credits", { headers: ADMIN, body: { amountUsd: 1, note: "browser tests" } });
    for (let i = 0; i < 3; i++) {
      await ok("POST", "/tools/dash-demo", { headers: { "X-Developer-Credit": credit.credit.token }, body: { n: i } });
      seed.sales++;
    }
  }
  browser = await launch();
});

after(async () => { await browser?.close(); });

async function open(path = "/dashboard") {
  const page = await browser.context.newPage();
  const errors = watch(page);
  const response = await page.goto(base + path, { waitUntil: "load" });
  await page.waitForSelector("html[data-ready='1']");
  return { page, errors, response };
}

test("the dashboard loads with a strict CSP and no console errors", async () => {
  const { page, errors, response } = await open();
  assert.equal(response.status(), 200);
  const csp = response.headers()["content-security-policy"];
  assert.match(csp, /default-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  await page.waitForSelector("#catalog-list li.card");
  assert.deepEqual(errors, []);
  // No request left this origin (everything is embedded).
  const external = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => e.name).filter((n) => !n.startsWith(location.origin) && !n.startsWith("data:")));
  assert.deepEqual(external, []);
  await shot(page, "dashboard-catalog");
  await page.close();
});

test("the catalog lists every endpoint and filters by text, tag and price", async () => {
  const { page, errors } = await open();
  const catalog = await ok("GET", "/ai/endpoints");
  const cards = page.locator("#catalog-list li.card");
  await cards.first().waitFor();
  assert.equal(await cards.count(), catalog.endpoints.length);

  const matching = (await ok("GET", "/ai/endpoints?q=summar")).endpoints.map((e) => e.slug).sort();
  assert.ok(matching.includes("text-summary") && matching.length < catalog.endpoints.length);
  await page.fill("#f-q", "summar");
  await page.waitForFunction((n) => document.querySelectorAll("#catalog-list li.card").length === n, matching.length);
  assert.deepEqual((await cards.evaluateAll((els) => els.map((e) => e.dataset.slug))).sort(), matching);
  await page.fill("#f-q", "");

  await page.selectOption("#f-tag", "free");
  const freeSlugs = catalog.endpoints.filter((e) => e.tags.includes("free")).map((e) => e.slug).sort();
  await page.waitForFunction((n) => {
    const cards = [...document.querySelectorAll("#catalog-list li.card")];
    return cards.length === n && cards.every((c) => [...c.querySelectorAll(".tags li")].some((t) => t.textContent === "free"));
  }, freeSlugs.length);
  assert.deepEqual((await cards.evaluateAll((els) => els.map((e) => e.dataset.slug))).sort(), freeSlugs);
  await page.selectOption("#f-tag", "");

  await page.selectOption("#f-price", "fixed_price_success_receipt");
  const paid = catalog.endpoints.filter((e) => e.priceUsd > 0).length;
  await page.waitForFunction((n) => {
    const prices = [...document.querySelectorAll("#catalog-list .price")].map((p) => p.textContent);
    return prices.length === n && prices.every((p) => p.includes("per call"));
  }, paid);

  await page.fill("#f-max", "0.001");
  const cheap = catalog.endpoints.filter((e) => e.priceUsd > 0 && e.priceUsd <= 0.001).length;
  await page.waitForFunction((n) => document.querySelectorAll("#catalog-list li.card").length === n, cheap);
  assert.match(await page.textContent("#catalog-count"), new RegExp(`${cheap} of ${catalog.endpoints.length}`));
  await shot(page, "dashboard-catalog-filtered");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a free endpoint is tried from the page, with its schemas and a copyable example", async () => {
  const { page, errors } = await open();
  const card = page.locator('#catalog-list li.card[data-slug="receipt-echo"]');
  await card.locator("summary").click();
  await card.locator("pre.code").first().waitFor();
  assert.match(await card.textContent(), /Input schema/);
  assert.match(await card.textContent(), /curl -sS -X POST/);
  await card.locator("textarea").fill('{"hello":"from the browser"}');
  await card.getByRole("button", { name: "Send request" }).click();
  const status = card.locator(".try-out [data-status]");
  await status.waitFor();
  assert.equal(await status.getAttribute("data-status"), "200");
  const answer = JSON.parse(await card.locator(".try-out pre").textContent());
  assert.equal(answer.ok, true);
  assert.deepEqual(answer.echo.input.keys, ["hello"]);
  await card.scrollIntoViewIfNeeded();
  await shot(page, "dashboard-try-free");
  assert.deepEqual(errors, []);
  await page.close();
});

test("tabs work from the keyboard and every control is labelled with enough contrast", async () => {
  const { page, errors } = await open();
  await page.waitForSelector("#catalog-list li.card");
  await page.focus("#tab-catalog");
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.getAttribute("#tab-builder", "aria-selected"), "true");
  assert.equal(await page.evaluate(() => document.activeElement.id), "tab-builder");
  assert.equal(await page.isVisible("#panel-builder"), true);
  assert.equal(await page.isVisible("#panel-catalog"), false);
  await page.keyboard.press("End");
  assert.equal(await page.getAttribute("#tab-admin", "aria-selected"), "true");
  await page.keyboard.press("Home");
  assert.equal(await page.getAttribute("#tab-catalog", "aria-selected"), "true");
  // Focus is visible on a keyboard-focused control.
  await page.keyboard.press("Tab");
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, "none");
  const problems = await accessibilityProblems(page);
  assert.deepEqual(problems, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a builder signs in, pauses then resumes an endpoint", async () => {
  const { page, errors } = await open("/dashboard#builder");
  await page.fill("#builder-key", seed.builderKey);
  await page.click("#builder-login button[type=submit]");
  const row = page.locator('#b-endpoints tr[data-slug="dash-demo"]');
  await row.waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem("toolhost.builderKey") !== null), true);
  assert.equal(await page.evaluate(() => localStorage.length + document.cookie.length), 0);
  assert.match(await row.textContent(), /active/);
  assert.equal(await page.locator('#b-endpoints tr[data-slug="dash-flagged"]').count(), 1);
  // The JS endpoint waits for the admin's grant of what it asked for, and says so.
  const js = page.locator('#b-endpoints tr[data-slug="dash-js"]');
  assert.equal(await js.locator(".badge").first().textContent(), "awaiting_grant");
  assert.match(await js.textContent(), /awaiting grant: kv, logs/);

  await row.getByRole("button", { name: "Pause dash-demo" }).click();
  await page.waitForFunction(() => document.querySelector('#b-endpoints tr[data-slug="dash-demo"] .badge')?.textContent === "paused");
  assert.equal((await ok("GET", "/ai/endpoints/dash-demo")).endpoint.status, "paused");
  assert.equal((await call("POST", "/tools/dash-demo", { body: {} })).status, 503);
  await shot(page, "dashboard-builder-paused");

  await page.locator('#b-endpoints tr[data-slug="dash-demo"]').getByRole("button", { name: "Resume dash-demo" }).click();
  await page.waitForFunction(() => document.querySelector('#b-endpoints tr[data-slug="dash-demo"] .badge')?.textContent === "active");
  assert.equal((await ok("GET", "/ai/endpoints/dash-demo")).endpoint.status, "active");
  // Events show the pause and the resume.
  await page.waitForFunction(() => /endpoint resumed/.test(document.querySelector("#b-events").textContent));
  await shot(page, "dashboard-builder");
  assert.deepEqual(await accessibilityProblems(page), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the revenue chart renders with data", async () => {
  const { page, errors } = await open("/dashboard#builder");
  if (await page.isVisible("#builder-login")) {
    await page.fill("#builder-key", seed.builderKey);
    await page.click("#builder-login button[type=submit]");
  }
  await page.waitForSelector("#b-revenue-chart svg rect.bar", { state: "attached" });
  const values = await page.locator("#b-revenue-chart rect.bar").evaluateAll((bars) => bars.map((b) => Number(b.dataset.value)));
  assert.equal(values.length, 30);
  const total = values.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - seed.sales * 0.002) < 1e-9, `chart total ${total}, expected ${seed.sales * 0.002}`);
  assert.ok(values.some((v) => v > 0));
  const height = await page.locator("#b-revenue-chart rect.bar").evaluateAll((bars) => Math.max(...bars.map((b) => b.getBBox().height)));
  assert.ok(height > 50, `tallest bar ${height}px`);
  assert.match(await page.textContent("#b-revenue-total"), /\$0\.006/);
  // Revenue beside payouts: what is collected, and why the rest is not paid out.
  assert.match(await page.textContent("#b-revenue-total"), /is collected and can be paid out; the rest was recorded without settling/);
  await page.locator("#b-revenue-chart").screenshot({ path: `${artifacts}/dashboard-revenue-chart.png` });
  await page.locator("#h-b-revenue").scrollIntoViewIfNeeded();
  await shot(page, "dashboard-revenue", { fullPage: false });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a builder saves payout settings and creates a payout packet", async () => {
  const manifest = await ok("GET", "/ai/manifest");
  const { page, errors } = await open("/dashboard#builder");
  if (await page.isVisible("#builder-login")) {
    await page.fill("#builder-key", seed.builderKey);
    await page.click("#builder-login button[type=submit]");
  }
  await page.waitForSelector("#payout-payTo");
  await page.fill("#payout-payTo", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
  await page.fill("#payout-network", manifest.payment.networks[0]);
  await page.fill("#payout-minimumUsd", "0.001");
  await page.click("#b-payout-form button[type=submit]");
  await page.getByText("Payout settings saved.").waitFor();
  await page.click("#b-payout-create");
  await page.waitForSelector("#b-payouts tbody tr[data-packet]");
  const listed = await ok("GET", "/ai/builders/payouts", { headers: { "X-Builder-Key": seed.builderKey } });
  assert.equal(listed.packets.length, 1);
  assert.equal(listed.packets[0].receiptIds.length, seed.sales);
  assert.equal(await page.getAttribute("#b-payouts tbody tr", "data-packet"), listed.packets[0].packetId);
  await page.locator("#h-b-payouts").scrollIntoViewIfNeeded();
  await shot(page, "dashboard-payouts", { fullPage: false });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a builder refunds a paid call, and one paid out beyond the balance is refused", async () => {
  const credit = await ok("POST", "/ai/admin/credits", { headers: ADMIN, body: { amountUsd: 1, note: "refund test" } });
  const sale = await ok("POST", "/tools/dash-demo", { headers: { "X-Developer-Credit": credit.credit.token }, body: { n: "refund" } });
  const receipt = sale.receipt.receiptId;
  const { page, errors } = await open("/dashboard#builder");
  if (await page.isVisible("#builder-login")) {
    await page.fill("#builder-key", seed.builderKey);
    await page.click("#builder-login button[type=submit]");
  }
  await page.waitForSelector("#refund-receipt");
  await page.fill("#refund-receipt", receipt);
  await page.fill("#refund-amount", "0.0005");
  await page.fill("#refund-reason", "the answer came late");
  await page.click("#b-refund-form button[type=submit]");
  await page.waitForFunction(() => /Refunded \$0\.0005/.test(document.querySelector("#b-refund-form .status").textContent));
  assert.match(await page.textContent("#b-refund-form .status"), /back to the developer credit/);
  const made = await ok("GET", `/ai/receipts/${receipt}/refund`);
  assert.equal(made.refund.amount, "500");
  assert.equal(made.refund.reason, "the answer came late");
  await page.waitForFunction(() => /receipt refunded/.test(document.querySelector("#b-events").textContent));
  // A receipt of the packet paid out before: the builder's share (1800 units) is more than its
  // unpaid balance (1350), so only the admin may; the page says why, nothing changes.
  const listed = await ok("GET", "/ai/builders/payouts", { headers: { "X-Builder-Key": seed.builderKey } });
  const paidOut = listed.packets[0].receiptIds[0];
  await page.fill("#refund-receipt", paidOut);
  await page.fill("#refund-amount", "");
  await page.fill("#refund-reason", "too late");
  await page.click("#b-refund-form button[type=submit]");
  await page.waitForFunction(() => /Could not refund/.test(document.querySelector("#b-refund-form .status").textContent));
  assert.match(await page.textContent("#b-refund-form .status"), /paid out/);
  assert.equal((await call("GET", `/ai/receipts/${paidOut}/refund`)).status, 404);
  await page.locator("#h-b-refund").scrollIntoViewIfNeeded();
  await shot(page, "dashboard-refund", { fullPage: false });
  // The refused refund's 409 is the only failed request the browser reports.
  assert.deepEqual(errors, ["console: Failed to load resource: the server responded with a status of 409 (Conflict)"]);
  await page.close();
});

test("the admin approves a flagged endpoint from the review queue", async () => {
  const { page, errors } = await open("/dashboard#admin");
  await page.fill("#admin-token", adminToken);
  await page.click("#admin-login button[type=submit]");
  const card = page.locator('#a-reviews li.card[data-slug="dash-flagged"]');
  await card.waitFor();
  assert.match(await card.textContent(), /private\.email/);
  // Capability grants list the JS endpoint's request, though it is not in the public catalog.
  await page.waitForSelector('#a-grants form[data-slug="dash-js"]');
  assert.equal((await call("GET", "/ai/endpoints/dash-js")).status, 404);
  if (have.payments) await page.waitForSelector("#a-credits table");
  await shot(page, "dashboard-admin");
  assert.deepEqual(await accessibilityProblems(page), []);
  assert.equal((await call("GET", "/ai/endpoints/dash-flagged")).status, 404);
  await card.getByRole("button", { name: "Approve dash-flagged" }).click();
  await page.waitForFunction(() => !document.querySelector('#a-reviews li.card[data-slug="dash-flagged"]'));
  assert.match(await page.textContent("#admin-status"), /dash-flagged approved/);
  const record = await ok("GET", "/ai/endpoints/dash-flagged");
  assert.equal(record.endpoint.status, "active");
  assert.equal(record.endpoint.contentSafety.status, "approved");

  // Grant the JS endpoint what it asked for.
  const grants = page.locator('#a-grants form[data-slug="dash-js"]');
  await grants.locator('input[name="kv"]').check();
  await grants.locator('input[name="logs"]').check();
  await grants.getByRole("button", { name: "Save grants" }).click();
  await page.locator('#a-grants form[data-slug="dash-js"]').getByText("Grants saved.").waitFor();
  assert.match(await page.locator('#a-grants form[data-slug="dash-js"]').textContent(), /up to date/);
  const js = await ok("GET", "/ai/endpoints/dash-js");
  assert.equal(js.endpoint.capabilities.kv, true);
  assert.equal(js.endpoint.capabilities.logs, true);
  // Issue a developer credit: its token is shown once, the list shows its balance.
  await page.fill("#a-credit-amount", "2");
  await page.fill("#a-credit-note", "from the dashboard");
  await page.click("#a-credit-form button[type=submit]");
  const token = await page.locator("#a-credit-issued pre code").textContent();
  assert.ok(token.length > 20, token);
  await page.waitForFunction(() => /from the dashboard/.test(document.querySelector("#a-credits")?.textContent || ""));
  const paid = await call("POST", "/tools/receipt-echo-paid", { headers: { "X-Developer-Credit": token.trim() }, body: { from: "dashboard credit" } });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  await shot(page, "dashboard-admin-approved");
  assert.deepEqual(errors, []);
  await page.close();
});

test("readable on a 360 px phone: no horizontal scrolling", async () => {
  const page = await browser.context.newPage();
  const errors = watch(page);
  await page.setViewportSize({ width: 360, height: 780 });
  for (const view of ["catalog", "builder", "admin"]) {
    await page.goto(`${base}/dashboard#${view}`);
    await page.waitForSelector("html[data-ready='1']");
    if (view === "catalog") await page.waitForSelector("#catalog-list li.card");
    if (view === "builder" && seed.builderKey && await page.isVisible("#builder-login")) {
      await page.fill("#builder-key", seed.builderKey);
      await page.click("#builder-login button[type=submit]");
      await page.waitForSelector("#b-endpoints tbody tr");
    }
    if (view === "admin" && have.reviews && await page.isVisible("#admin-login")) {
      await page.fill("#admin-token", adminToken);
      await page.click("#admin-login button[type=submit]");
      await page.waitForSelector("#admin-view:not([hidden])");
      await page.waitForSelector("#a-grants ul.cards");
    }
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 360, `${view}: page is ${width}px wide`);
    await shot(page, `dashboard-phone-${view}`);
  }
  assert.deepEqual(errors, []);
  await page.close();
});
