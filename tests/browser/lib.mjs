// Shared helpers of the browser tests: the API client, the server's features, the browser.
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const base = process.env.TOOLHOST_URL;
export const adminToken = process.env.TOOLHOST_ADMIN_TOKEN;
export const artifacts = process.env.TOOLHOST_ARTIFACTS || join(process.cwd(), "..", "artifacts");
export const root = process.env.TOOLHOST_ROOT || join(process.cwd(), "..", "..");
if (!base || !adminToken) throw new Error("run these tests through tests/browser/run.sh (TOOLHOST_URL and TOOLHOST_ADMIN_TOKEN unset)");

/** One API call: {status, body, headers}. */
export async function call(method, path, { body, headers = {} } = {}) {
  const response = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed = text;
  try { parsed = JSON.parse(text); } catch { /* keep the text */ }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** Calls and insists on 2xx. */
export async function ok(method, path, options) {
  const r = await call(method, path, options);
  if (r.status < 200 || r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Which optional parts this server has, from its OpenAPI document. */
export async function features() {
  const doc = await ok("GET", "/openapi.json");
  const paths = new Set(Object.keys(doc.paths || {}));
  return {
    builders: paths.has("/ai/admin/builders") && paths.has("/ai/endpoints/create"),
    reviews: paths.has("/ai/admin/reviews"),
    payments: paths.has("/ai/admin/credits"),
    revenue: paths.has("/ai/builders/revenue"),
    payouts: paths.has("/ai/builders/payouts") && paths.has("/ai/builders/payout-settings"),
    mcp: paths.has("/ai/mcp"),
    "x402-client": existsSync(join(root, "tests/js/x402/node_modules/@x402/fetch")),
    // The builder's command line: the server's own binary on PATH (run.sh puts it there).
    cli: spawnSync("toolhost", ["--help"], { stdio: "ignore" }).status === 0,
  };
}

const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

/** Debian's Chromium with a new empty profile; `close()` removes the profile. */
export async function launch() {
  const profile = mkdtempSync(join(process.env.TOOLHOST_WORK || tmpdir(), "chromium-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    timeout: 30_000,
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
    // Only loopback: anything else would be a bug (and there is no network anyway).
    proxy: undefined,
  });
  context.setDefaultTimeout(10_000);
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/]|http:\/\/localhost[:/]|data:|about:)/, (route) => route.abort());
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Collects console errors and uncaught exceptions of a page. */
export function watch(page) {
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`exception: ${e.message}`));
  return errors;
}

export async function shot(page, name, options = {}) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true, ...options });
}

/** In-page checks: every form control labelled, text contrast >= 4.5:1 (3:1 large text). */
export async function accessibilityProblems(page) {
  return page.evaluate(() => {
    const problems = [];
    const visible = (el) => {
      const r = el.getBoundingClientRect();
      const s = getComputedStyle(el);
      return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
    };
    for (const el of document.querySelectorAll("input, select, textarea, button")) {
      if (!visible(el) || el.closest(".sr-only")) continue;
      const named = (el.labels && el.labels.length) || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby")
        || (el.tagName === "BUTTON" && el.textContent.trim());
      if (!named) problems.push(`unlabelled ${el.tagName.toLowerCase()}#${el.id || "?"}`);
    }
    const parse = (c) => {
      const m = c.match(/rgba?\(([^)]+)\)/);
      if (!m) return null;
      const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return { r, g, b, a };
    };
    const lum = ({ r, g, b }) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el) => {
      for (let n = el; n; n = n.parentElement) {
        const c = parse(getComputedStyle(n).backgroundColor);
        if (c && c.a > 0.5) return c;
      }
      return { r: 255, g: 255, b: 255, a: 1 };
    };
    const seen = new Set();
    for (const el of document.querySelectorAll("body *")) {
      if (!visible(el) || el.closest(".sr-only, svg")) continue;
      if (el.disabled || el.closest("button:disabled")) continue; // inactive controls are exempt
      const hasText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!hasText) continue;
      const s = getComputedStyle(el);
      const fg = parse(s.color);
      const bg = background(el);
      const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      const ratio = (l1 + 0.05) / (l2 + 0.05);
      const size = parseFloat(s.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
      const min = large ? 3 : 4.5;
      if (ratio < min) {
        const key = `${el.tagName}.${el.className}:${s.color}/${ratio.toFixed(2)}`;
        if (!seen.has(key)) { seen.add(key); problems.push(`contrast ${ratio.toFixed(2)} < ${min}: <${el.tagName.toLowerCase()} class="${el.className}"> "${el.textContent.trim().slice(0, 40)}"`); }
      }
    }
    return problems;
  });
}
