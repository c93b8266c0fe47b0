// toolhost dashboard: catalog browser, builder view and admin view. Vanilla ES modules, no
// framework and no build step; every DOM node is built with `h` (never innerHTML), so no API
// value is ever parsed as HTML.

import { api, raw, session, ApiError, missingRoute } from "./api.js";
import { barChart } from "./chart.js";

// ---------------------------------------------------------------- helpers

const $ = (selector, root = document) => root.querySelector(selector);

/** Creates an element: h("button", {type: "button", onclick}, "Text", childNode, ...). */
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const usd = (value) => {
  const n = Number(value) || 0;
  if (n === 0) return "$0";
  const digits = n < 0.01 ? 4 : n < 1 ? 3 : 2;
  return `$${n.toFixed(digits).replace(/(\.\d\d\d*?)0+$/, "$1")}`;
};
const priceLabel = (e) => (Number(e.priceUsd) > 0 ? `${usd(e.priceUsd)} per call` : "Free");
const when = (iso) => {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
};
const pretty = (value) => JSON.stringify(value, null, 2);
const errorText = (e) => (e instanceof ApiError ? `${e.message} (${e.status} ${e.code})` : String(e && e.message ? e.message : e));

function badge(text, kind) {
  return h("span", { class: `badge badge-${kind || text}` }, text);
}

function say(target, text, kind = "info") {
  const node = typeof target === "string" ? $(target) : target;
  node.textContent = text;
  node.dataset.kind = kind;
}

async function copy(text, statusNode) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = h("textarea", { class: "sr-only", "aria-hidden": "true" }, text);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  if (statusNode) {
    statusNode.textContent = "Copied";
    setTimeout(() => { statusNode.textContent = ""; }, 2000);
  }
}

function copyButton(getText, label) {
  const status = h("span", { class: "copied", role: "status", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "small", onclick: () => copy(getText(), status) }, label || "Copy");
  return h("span", { class: "copy" }, button, status);
}

function codeBlock(text, label) {
  const pre = h("pre", { class: "code", tabindex: "0", "aria-label": label }, h("code", {}, text));
  return h("div", { class: "code-wrap" }, pre, copyButton(() => text, `Copy ${label.toLowerCase()}`));
}

const debounce = (fn, ms) => {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
};

// ---------------------------------------------------------------- tabs

const tabs = [...document.querySelectorAll('[role="tab"]')];
const shown = new Set();

function selectTab(tab, { focus = false, push = true } = {}) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
  }
  if (focus) tab.focus();
  const name = tab.id.replace("tab-", "");
  if (push && location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
  if (!shown.has(name)) {
    shown.add(name);
    views[name]();
  }
}

for (const tab of tabs) {
  tab.addEventListener("click", () => selectTab(tab));
  tab.addEventListener("keydown", (event) => {
    const i = tabs.indexOf(tab);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    selectTab(tabs[(next + tabs.length) % tabs.length], { focus: true });
  });
}

// ---------------------------------------------------------------- catalog

const catalog = { all: [], seq: 0 };

async function showCatalog() {
  const form = $("#catalog-filters");
  form.addEventListener("submit", (e) => { e.preventDefault(); loadCatalog(); });
  form.addEventListener("input", debounce(loadCatalog, 200));
  form.addEventListener("change", loadCatalog);
  try {
    const everything = await api("/ai/endpoints");
    catalog.all = everything.endpoints || [];
    const tags = [...new Set(catalog.all.flatMap((e) => e.tags || []))].sort();
    const select = $("#f-tag");
    for (const tag of tags) select.append(h("option", { value: tag }, tag));
  } catch (e) {
    say("#catalog-count", `Could not load the catalog: ${errorText(e)}`, "error");
    return;
  }
  await loadCatalog();
}

async function loadCatalog() {
  const seq = ++catalog.seq;
  const form = $("#catalog-filters");
  const params = new URLSearchParams();
  const q = form.q.value.trim();
  if (q) params.set("q", q);
  if (form.tag.value) params.set("tag", form.tag.value);
  if (form.price.value) params.set("pricingMode", form.price.value);
  let endpoints;
  try {
    const data = await api(`/ai/endpoints${params.size ? `?${params}` : ""}`);
    endpoints = data.endpoints || [];
  } catch (e) {
    if (seq === catalog.seq) say("#catalog-count", `Could not load the catalog: ${errorText(e)}`, "error");
    return;
  }
  if (seq !== catalog.seq) return; // a newer filter is in flight
  const max = form.max.value === "" ? Infinity : Number(form.max.value);
  endpoints = endpoints.filter((e) => Number(e.priceUsd) <= max);
  const list = $("#catalog-list");
  list.replaceChildren(...endpoints.map(endpointCard));
  const total = catalog.all.length;
  say("#catalog-count", endpoints.length === total
    ? `${total} endpoints`
    : `${endpoints.length} of ${total} endpoints match`);
  list.setAttribute("aria-busy", "false");
}

function endpointCard(e) {
  const details = h("details", { class: "more" },
    h("summary", {}, "Schemas, example call and try it"));
  details.addEventListener("toggle", () => {
    if (details.open && !details.dataset.loaded) {
      details.dataset.loaded = "1";
      loadEndpointDetails(e, details);
    }
  }, { once: false });
  return h("li", { class: "card", dataset: { slug: e.slug } },
    h("div", { class: "card-head" },
      h("h3", { class: "card-title" }, e.title || e.slug),
      h("span", { class: `price ${Number(e.priceUsd) > 0 ? "paid" : "free"}` }, priceLabel(e)),
    ),
    h("p", { class: "meta" },
      h("code", {}, e.slug), " ", badge(e.status || "active"),
      e.handlerType ? h("span", { class: "muted" }, ` · ${e.handlerType}`) : null),
    h("p", { class: "desc" }, e.description || ""),
    (e.tags || []).length
      ? h("ul", { class: "tags", "aria-label": "Tags" }, (e.tags || []).map((t) => h("li", {}, t)))
      : null,
    details,
  );
}

async function loadEndpointDetails(e, details) {
  const body = h("div", { class: "more-body" }, h("p", { class: "muted" }, "Loading…"));
  details.append(body);
  let data;
  try {
    data = await api(`/ai/endpoints/${encodeURIComponent(e.slug)}`);
  } catch (err) {
    body.replaceChildren(h("p", { class: "error" }, `Could not load ${e.slug}: ${errorText(err)}`));
    return;
  }
  const endpoint = data.endpoint || e;
  const example = data.example || {};
  const parts = [
    h("div", { class: "cols" },
      h("div", {}, h("h4", {}, "Input schema"), codeBlock(pretty(endpoint.inputSchema || {}), "Input schema")),
      h("div", {}, h("h4", {}, "Output schema"), codeBlock(pretty(endpoint.outputSchema || {}), "Output schema")),
    ),
  ];
  const caps = Object.entries(endpoint.capabilities || {}).filter(([, on]) => on).map(([k]) => k);
  if (caps.length) parts.push(h("p", {}, "Capabilities: ", caps.join(", ")));
  if (example.curl) {
    parts.push(h("h4", {}, "Example call"), codeBlock(example.curl, "Example call"));
  }
  const paid = Number(endpoint.priceUsd) > 0;
  if (paid) {
    parts.push(h("p", { class: "note" },
      `Paid endpoint (${usd(endpoint.priceUsd)}). A call without payment answers 402 with the x402 payment requirements; `,
      h("a", { href: "/guides/x402-agent-payment-infrastructure#pay" }, "how to pay"), "."));
  }
  parts.push(tryForm(endpoint, example, paid));
  body.replaceChildren(...parts);
}

function tryForm(endpoint, example, paid) {
  const id = `try-${endpoint.slug}`;
  const initial = example.request && example.request.body !== undefined ? example.request.body : {};
  const area = h("textarea", { id, name: "body", rows: "6", spellcheck: "false", class: "mono" }, pretty(initial));
  const out = h("div", { class: "try-out", role: "status", "aria-live": "polite" });
  const send = h("button", { type: "submit", class: paid ? "" : "primary" }, paid ? "Send without payment" : "Send request");
  const form = h("form", { class: "try", "aria-label": `Try ${endpoint.slug}` },
    h("h4", {}, paid ? "Try it (no payment: expect 402)" : "Try it"),
    h("label", { for: id }, "Request body (JSON)"),
    area,
    h("div", { class: "bar" }, send, h("span", { class: "muted" }, `POST /tools/${endpoint.slug}`)),
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let body;
    try {
      body = JSON.stringify(JSON.parse(area.value || "{}"));
    } catch (err) {
      out.replaceChildren(h("p", { class: "error" }, `The body is not valid JSON: ${err.message}`));
      area.focus();
      return;
    }
    send.disabled = true;
    out.replaceChildren(h("p", { class: "muted" }, "Sending…"));
    try {
      const r = await raw(`/tools/${encodeURIComponent(endpoint.slug)}`, { method: "POST", body });
      const ok = r.status >= 200 && r.status < 300;
      const extra = [];
      const receiptId = r.data && (r.data.receiptId || (r.data.receipt && r.data.receipt.receiptId));
      const charged = r.data && r.data.receipt && r.data.receipt.charged;
      if (receiptId) {
        extra.push(h("p", {}, "Receipt: ", charged
          ? h("a", { href: `/ai/receipts/${encodeURIComponent(receiptId)}` }, receiptId)
          : h("code", {}, receiptId)));
      }
      const required = r.status === 402 ? decodeRequirements(r.headers.get("payment-required")) : null;
      if (required) {
        extra.push(h("p", {}, "The ", h("code", {}, "PAYMENT-REQUIRED"), " header, decoded (x402 v2):"),
          h("pre", { class: "code small", tabindex: "0", "aria-label": "Payment requirements" }, h("code", {}, pretty(required))));
      }
      out.replaceChildren(
        h("p", { class: ok ? "ok" : "error", "data-status": r.status }, `${r.status} ${r.statusText || ""} · ${r.ms} ms`),
        ...extra,
        h("pre", { class: "code result", tabindex: "0", "aria-label": "Response body" },
          h("code", {}, typeof r.data === "string" ? r.data : pretty(r.data))),
      );
    } catch (err) {
      out.replaceChildren(h("p", { class: "error" }, `Request failed: ${err.message}`));
    } finally {
      send.disabled = false;
    }
  });
  return form;
}

/** The base64 JSON of an x402 v2 PAYMENT-REQUIRED header, or null. */
function decodeRequirements(header) {
  if (!header) return null;
  try {
    const bytes = Uint8Array.from(atob(header.trim()), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- builder

const builder = { endpoints: [] };

function showBuilder() {
  $("#builder-login").addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = $("#builder-key").value.trim();
    if (!key) return;
    session.builderKey = key;
    $("#builder-key").value = "";
    await enterBuilder(true);
  });
  $("#builder-logout").addEventListener("click", () => {
    session.builderKey = "";
    $("#builder-view").hidden = true;
    $("#builder-login").hidden = false;
    $("#builder-key").focus();
  });
  $("#b-since").addEventListener("change", loadRevenue);
  $("#b-log-slug").addEventListener("change", loadLogs);
  $("#b-payout-create").addEventListener("click", createPayout);
  if (session.builderKey) enterBuilder(false);
}

async function enterBuilder(fromLogin) {
  // Check the key with the cheapest builder-only call.
  try {
    await api("/ai/builders/events?since=1d&limit=1", { as: "builder" });
  } catch (e) {
    if (!missingRoute(e)) {
      session.builderKey = "";
      $("#builder-login").hidden = false;
      $("#builder-view").hidden = true;
      const msg = e.status === 401 ? "That builder key is not recognised." : e.status === 403 ? "That builder key has been revoked." : errorText(e);
      let note = $("#builder-login .error");
      if (!note) { note = h("p", { class: "error", role: "alert" }); $("#builder-login").append(note); }
      note.textContent = msg;
      if (fromLogin) $("#builder-key").focus();
      return;
    }
  }
  $("#builder-login .error")?.remove();
  $("#builder-login").hidden = true;
  $("#builder-view").hidden = false;
  const key = session.builderKey;
  $("#builder-key-hint").textContent = `${key.slice(0, 8)}…${key.slice(-4)}`;
  say("#builder-status", "Loading your endpoints…");
  await loadOwnEndpoints();
  await Promise.all([loadRevenue(), loadEvents(), loadLogs(), loadPayouts()]);
  if (fromLogin) $("#h-b-endpoints").scrollIntoView({ block: "nearest" });
}

/** The builder's endpoints from GET /ai/builders/endpoints; on a server without that route,
 * the slugs its event feed mentions (created and not deleted since). */
async function ownSlugs() {
  try {
    const data = await api("/ai/builders/endpoints", { as: "builder" });
    return { records: data.endpoints || [] };
  } catch (e) {
    if (!missingRoute(e)) throw e;
  }
  const latest = new Map();
  let cursor = null;
  for (let page = 0; page < 10; page++) {
    const params = new URLSearchParams({ since: "520w", limit: "200" });
    if (cursor) params.set("cursor", cursor);
    const data = await api(`/ai/builders/events?${params}`, { as: "builder" });
    for (const ev of data.events || []) {
      if (ev.endpointSlug && !latest.has(ev.endpointSlug)) latest.set(ev.endpointSlug, ev.kind);
    }
    cursor = data.nextCursor;
    if (!cursor) break;
  }
  return { slugs: [...latest].filter(([, kind]) => kind !== "endpoint_deleted").map(([slug]) => slug) };
}

async function loadOwnEndpoints() {
  const tbody = $("#b-endpoints tbody");
  let found;
  try {
    found = await ownSlugs();
  } catch (e) {
    say("#builder-status", `Could not list your endpoints: ${errorText(e)}`, "error");
    return;
  }
  // With the listing route the records come whole; from the event feed, one fetch per slug.
  const records = found.records || (await Promise.all(found.slugs.map(async (slug) => {
    try {
      return await api(`/ai/endpoints/${encodeURIComponent(slug)}`, { as: "builder" });
    } catch {
      return null; // deleted meanwhile, or no longer ours
    }
  }))).filter((r) => r && r.endpoint && r.manage);
  records.sort((a, b) => a.endpoint.slug.localeCompare(b.endpoint.slug));
  builder.endpoints = records;
  tbody.replaceChildren(...(records.length
    ? records.map(endpointRow)
    : [h("tr", {}, h("td", { colspan: "5", class: "muted" }, "No endpoints yet. Create one with POST /ai/endpoints/create (see the guide)."))]));
  const select = $("#b-log-slug");
  const current = select.value;
  select.replaceChildren(...records.map((r) => h("option", { value: r.endpoint.slug }, r.endpoint.slug)));
  if (current) select.value = current;
  say("#builder-status", `${records.length} endpoint${records.length === 1 ? "" : "s"}.`);
}

function endpointRow(record) {
  const e = record.endpoint;
  const safety = e.contentSafety ? e.contentSafety.status : "not scanned";
  const paused = e.status === "paused";
  const blocked = safety === "review" || safety === "rejected";
  const toggle = h("button", {
    type: "button",
    class: paused ? "primary small" : "small",
    "aria-label": `${paused ? "Resume" : "Pause"} ${e.slug}`,
    disabled: blocked,
    title: blocked ? "Held for content-safety review" : undefined,
    onclick: () => setStatus(e.slug, paused ? "active" : "paused", toggle),
  }, paused ? "Resume" : "Pause");
  const logs = h("button", {
    type: "button", class: "small", "aria-label": `Logs of ${e.slug}`,
    onclick: () => { $("#b-log-slug").value = e.slug; loadLogs(); $("#h-b-logs").scrollIntoView({ block: "start" }); $("#b-log-slug").focus(); },
  }, "Logs");
  return h("tr", { dataset: { slug: e.slug } },
    h("th", { scope: "row" }, h("span", { class: "cell-title" }, e.title), h("code", {}, e.slug), capabilityNote(record)),
    h("td", { "data-label": "Status" }, badge(e.status, e.status)),
    h("td", { "data-label": "Price" }, priceLabel(e)),
    h("td", { "data-label": "Content safety" }, badge(safety, safety.replace(/\s+/g, "-"))),
    h("td", { class: "actions" }, toggle, logs),
  );
}

/** "capabilities: kv, logs (granted: kv)" for JS endpoints that request any. */
function capabilityNote(record) {
  const requested = Object.entries(record.manage.requestedCapabilities || {}).filter(([, on]) => on).map(([k]) => k);
  if (!requested.length) return null;
  const granted = Object.entries(record.manage.grantedCapabilities || {}).filter(([, on]) => on).map(([k]) => k);
  const pending = requested.filter((k) => !granted.includes(k));
  return h("span", { class: "cell-note muted" },
    `capabilities: ${requested.join(", ")}`, pending.length ? ` (awaiting grant: ${pending.join(", ")})` : " (granted)");
}

async function setStatus(slug, status, button) {
  button.disabled = true;
  say("#builder-status", `${status === "paused" ? "Pausing" : "Resuming"} ${slug}…`);
  try {
    const data = await api(`/ai/endpoints/${encodeURIComponent(slug)}`, { method: "PATCH", body: { status }, as: "builder" });
    const i = builder.endpoints.findIndex((r) => r.endpoint.slug === slug);
    if (i >= 0) builder.endpoints[i] = data;
    const row = $(`#b-endpoints tr[data-slug="${CSS.escape(slug)}"]`);
    const fresh = endpointRow(data);
    row.replaceWith(fresh);
    fresh.querySelector("button").focus();
    say("#builder-status", `${slug} is now ${data.endpoint.status}.`, "ok");
    loadEvents();
  } catch (e) {
    button.disabled = false;
    say("#builder-status", `Could not change ${slug}: ${errorText(e)}`, "error");
  }
}

/**
 * The revenue report as days: `byDay` is a map of UTC day to totals ({grossUsd, netUsd, count});
 * a list of {date|day, amountUsd|grossUsd…} is accepted too.
 */
export function revenueDays(data) {
  const r = (data && (data.revenue || data.report)) || data || {};
  const days = r.byDay || r.days || r.daily || [];
  const list = Array.isArray(days) ? days : Object.entries(days).map(([day, totals]) => ({ day, ...totals }));
  return list.map((d) => ({
    day: String(d.day || d.date || "").slice(0, 10),
    value: Number(d.grossUsd ?? d.amountUsd ?? d.revenueUsd ?? d.totalUsd ?? 0),
    net: Number(d.netUsd ?? d.grossUsd ?? d.amountUsd ?? 0),
    calls: d.count ?? d.calls,
  })).filter((d) => d.day);
}

async function loadRevenue() {
  const since = $("#b-since").value;
  const figure = $("#b-revenue-chart");
  let data;
  try {
    data = await api(`/ai/builders/revenue?since=${encodeURIComponent(since)}`, { as: "builder" });
  } catch (e) {
    figure.replaceChildren(h("p", { class: missingRoute(e) ? "muted" : "error" },
      missingRoute(e) ? "Revenue reports are not available on this server yet." : `Could not load revenue: ${errorText(e)}`));
    $("#b-revenue-total").textContent = "";
    return;
  }
  const days = revenueDays(data);
  // One bar per day of the period, zero where nothing sold.
  const count = Number(since.replace(/\D/g, "")) || 30;
  const byDay = new Map(days.map((d) => [d.day, d.value]));
  const points = [];
  const today = new Date();
  for (let i = count - 1; i >= 0; i--) {
    const d = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i));
    const day = d.toISOString().slice(0, 10);
    points.push({ label: day, short: day.slice(5), value: byDay.get(day) || 0 });
  }
  const r = data.revenue || data;
  const gross = Number(r.grossUsd ?? points.reduce((s, p) => s + p.value, 0));
  const net = r.netUsd === undefined ? null : Number(r.netUsd);
  const calls = r.count === undefined ? "" : ` from ${r.count} paid call${r.count === 1 ? "" : "s"}`;
  $("#b-revenue-total").textContent = `${usd(gross)} in the last ${count} days${calls}`
    + (net === null ? "" : ` · ${usd(net)} to you after the ${(Number(r.feeBps || 0) / 100).toFixed(1)}% platform fee`);
  builder.chart = { points, caption: `Gross revenue per day, last ${count} days` };
  drawRevenue();
}

/** Draws the revenue chart at the figure's current width (again when the window resizes). */
function drawRevenue() {
  const figure = $("#b-revenue-chart");
  if (!builder.chart || !figure.isConnected) return;
  const width = Math.max(300, Math.min(1100, Math.round(figure.getBoundingClientRect().width) || 720));
  barChart(figure, builder.chart.points, { format: usd, caption: builder.chart.caption, width, height: width < 500 ? 220 : 280 });
}

async function loadEvents() {
  const list = $("#b-events");
  try {
    const data = await api("/ai/builders/events?since=30d&limit=20", { as: "builder" });
    const events = data.events || [];
    list.replaceChildren(...(events.length ? events.map((ev) => h("li", {},
      h("span", { class: `event-kind kind-${ev.kind}` }, ev.kind.replace(/_/g, " ")),
      ev.endpointSlug ? h("code", {}, ev.endpointSlug) : null,
      h("time", { datetime: ev.at }, when(ev.at)),
    )) : [h("li", { class: "muted" }, "No events in the last 30 days.")]));
  } catch (e) {
    list.replaceChildren(h("li", { class: "error" }, `Could not load events: ${errorText(e)}`));
  }
}

async function loadLogs() {
  const slug = $("#b-log-slug").value;
  const box = $("#b-logs");
  if (!slug) { box.replaceChildren(h("p", { class: "muted" }, "No endpoint selected.")); return; }
  try {
    const data = await api(`/ai/endpoints/${encodeURIComponent(slug)}/logs?limit=20`, { as: "builder" });
    const entries = data.entries || [];
    if (!entries.length) { box.replaceChildren(h("p", { class: "muted" }, `No invocations of ${slug} yet.`)); return; }
    box.replaceChildren(h("ol", { class: "logs" }, entries.map((entry) => h("li", {},
      h("div", { class: "log-head" },
        badge(String(entry.status), Number(entry.status) < 400 ? "ok" : "fail"),
        h("time", { datetime: entry.at }, when(entry.at)),
        h("span", { class: "muted" }, `${entry.durationMs ?? "?"} ms`),
        h("code", { class: "muted" }, entry.requestId || "")),
      (entry.lines || []).length
        ? h("pre", { class: "code small" }, h("code", {}, entry.lines.map((l) => `[${l.level}] ${l.message}`).join("\n")))
        : null,
    ))));
  } catch (e) {
    box.replaceChildren(h("p", { class: "error" }, `Could not load logs: ${errorText(e)}`));
  }
}

// Payout settings ({payTo, network, asset?, minimumUsd}) and packets.
async function loadPayouts() {
  const form = $("#b-payout-form");
  const box = $("#b-payouts");
  try {
    const data = await api("/ai/builders/payout-settings", { as: "builder" });
    renderPayoutSettings(data.settings ?? data.payoutSettings ?? null);
  } catch (e) {
    if (e.status === 404 && !missingRoute(e)) renderPayoutSettings(null);
    else form.replaceChildren(h("p", { class: missingRoute(e) ? "muted" : "error" },
      missingRoute(e) ? "Payout settings are not available on this server yet." : `Could not load payout settings: ${errorText(e)}`));
  }
  try {
    const data = await api("/ai/builders/payouts", { as: "builder" });
    renderPackets(data.packets || data.payouts || [], data);
  } catch (e) {
    $("#b-payout-create").disabled = true;
    box.replaceChildren(h("p", { class: missingRoute(e) ? "muted" : "error" },
      missingRoute(e) ? "Payout packets are not available on this server yet." : `Could not load payout packets: ${errorText(e)}`));
  }
}

const PAYOUT_FIELDS = [
  ["payTo", "Payout address (EVM, checksummed 0x…)", "text", true],
  ["network", "Network (CAIP-2, e.g. eip155:84532)", "text", true],
  ["asset", "Asset contract (optional: the network's USDC)", "text", false],
  ["minimumUsd", "Smallest packet (USD)", "number", true],
];

function renderPayoutSettings(settings) {
  const form = $("#b-payout-form");
  const current = settings || {};
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  form.replaceChildren(
    h("p", { class: "muted" }, settings ? "Where your earnings go." : "No payout settings yet: say where your earnings go."),
    h("div", { class: "grid2" }, PAYOUT_FIELDS.map(([k, label, type, required]) => h("div", { class: "field" },
      h("label", { for: `payout-${k}` }, label),
      h("input", {
        id: `payout-${k}`, name: k, type, required, autocomplete: "off", spellcheck: "false",
        step: type === "number" ? "any" : undefined, min: type === "number" ? "0" : undefined,
        value: current[k] ?? (k === "minimumUsd" ? "1" : ""),
      })))),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Save payout settings")),
    status,
  );
  form.onsubmit = async (event) => {
    event.preventDefault();
    const body = {};
    for (const input of form.querySelectorAll("input")) {
      if (input.value === "") continue;
      body[input.name] = input.type === "number" ? Number(input.value) : input.value.trim();
    }
    try {
      const data = await api("/ai/builders/payout-settings", { method: "POST", body, as: "builder" });
      renderPayoutSettings(data.settings ?? data.payoutSettings ?? body);
      say($("#b-payout-form .status"), "Payout settings saved.", "ok");
    } catch (e) {
      say(status, `Could not save: ${errorText(e)}`, "error");
    }
  };
}

const units = (value) => (value === undefined || value === null ? null : Number(value) / 1e6);

function renderPackets(packets, data = {}) {
  const box = $("#b-payouts");
  $("#b-payout-create").disabled = false;
  const balance = data.unpaidNetUnits === undefined ? null
    : h("p", { id: "b-unpaid" }, "Not yet in a packet: ", h("strong", {}, usd(units(data.unpaidNetUnits))),
      ` net from ${data.unpaidReceipts ?? 0} paid call${data.unpaidReceipts === 1 ? "" : "s"}.`);
  if (!packets.length) { box.replaceChildren(...[balance, h("p", { class: "muted" }, "No payout packets yet.")].filter(Boolean)); return; }
  box.replaceChildren(...[balance].filter(Boolean), h("div", { class: "table-wrap" }, h("table", { class: "table compact" },
    h("caption", { class: "sr-only" }, "Payout packets"),
    h("thead", {}, h("tr", {}, ["Packet", "Status", "Net", "Gross", "Receipts", "Created", "Details"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, packets.map((p) => h("tr", { dataset: { packet: p.packetId || p.id || "" } },
      h("td", {}, h("code", {}, p.packetId || p.id || "")),
      h("td", {}, badge(p.status || "pending", p.status === "paid" ? "ok" : "paused")),
      h("td", {}, usd(units(p.amount) ?? p.amountUsd ?? 0)),
      h("td", {}, usd(units(p.gross) ?? p.grossUsd ?? 0)),
      h("td", {}, String((p.receiptIds || []).length)),
      h("td", {}, when(p.createdAt)),
      h("td", {}, h("details", {}, h("summary", {}, "JSON"), h("pre", { class: "code small" }, h("code", {}, pretty(p))))),
    ))),
  )));
}

async function createPayout() {
  const button = $("#b-payout-create");
  button.disabled = true;
  try {
    await api("/ai/builders/payouts", { method: "POST", body: {}, as: "builder" });
    say("#builder-status", "Payout packet created.", "ok");
  } catch (e) {
    say("#builder-status", `Could not create a payout packet: ${errorText(e)}`, "error");
  }
  await Promise.all([loadPayouts(), loadEvents()]);
}

// ---------------------------------------------------------------- admin

function showAdmin() {
  $("#admin-login").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("#admin-token").value.trim();
    if (!token) return;
    session.adminToken = token;
    $("#admin-token").value = "";
    await enterAdmin(true);
  });
  $("#admin-logout").addEventListener("click", () => {
    session.adminToken = "";
    $("#admin-view").hidden = true;
    $("#admin-login").hidden = false;
    $("#admin-token").focus();
  });
  $("#a-credit-form").addEventListener("submit", issueCredit);
  if (session.adminToken) enterAdmin(false);
}

async function enterAdmin(fromLogin) {
  let reviews = null;
  try {
    reviews = await api("/ai/admin/reviews", { as: "admin" });
  } catch (e) {
    if (!missingRoute(e)) {
      session.adminToken = "";
      let note = $("#admin-login .error");
      if (!note) { note = h("p", { class: "error", role: "alert" }); $("#admin-login").append(note); }
      note.textContent = e.status === 401 || e.status === 403 ? "That admin token is not valid." : errorText(e);
      $("#admin-login").hidden = false;
      $("#admin-view").hidden = true;
      if (fromLogin) $("#admin-token").focus();
      return;
    }
  }
  $("#admin-login .error")?.remove();
  $("#admin-login").hidden = true;
  $("#admin-view").hidden = false;
  renderReviews(reviews);
  await Promise.all([loadGrants(), loadCredits()]);
}

async function loadReviews() {
  try {
    renderReviews(await api("/ai/admin/reviews", { as: "admin" }));
  } catch (e) {
    $("#a-reviews").replaceChildren(h("li", { class: "error" }, `Could not load the review queue: ${errorText(e)}`));
  }
}

function renderReviews(data) {
  const list = $("#a-reviews");
  if (!data) { list.replaceChildren(h("li", { class: "muted" }, "Content-safety review is not available on this server yet.")); return; }
  const items = data.endpoints || [];
  if (!items.length) { list.replaceChildren(h("li", { class: "muted empty" }, "Nothing awaits review.")); return; }
  list.replaceChildren(...items.map(({ endpoint: e, owner }) => {
    const findings = (e.contentSafety && e.contentSafety.findings) || [];
    const noteId = `review-note-${e.slug}`;
    const note = h("input", { id: noteId, type: "text", maxlength: "500", autocomplete: "off" });
    const decide = (decision) => async (event) => {
      const buttons = event.target.closest(".card").querySelectorAll("button");
      buttons.forEach((b) => { b.disabled = true; });
      try {
        await api(`/ai/admin/endpoints/${encodeURIComponent(e.slug)}/review`, {
          method: "POST", as: "admin", body: note.value ? { decision, note: note.value } : { decision },
        });
        say("#admin-status", `${e.slug} ${decision === "approve" ? "approved: it is listed and active" : "rejected"}.`, "ok");
        await loadReviews();
        $("#h-a-reviews").focus?.();
      } catch (err) {
        buttons.forEach((b) => { b.disabled = false; });
        say("#admin-status", `Could not ${decision} ${e.slug}: ${errorText(err)}`, "error");
      }
    };
    return h("li", { class: "card", dataset: { slug: e.slug } },
      h("div", { class: "card-head" }, h("h4", { class: "card-title" }, e.title), badge("review", "review")),
      h("p", { class: "meta" }, h("code", {}, e.slug), owner ? h("span", { class: "muted" }, ` · owner ${ownerLabel(owner)}`) : null),
      h("p", { class: "desc" }, e.description),
      h("table", { class: "table compact" },
        h("caption", { class: "sr-only" }, `Findings for ${e.slug}`),
        h("thead", {}, h("tr", {}, ["Rule", "Category", "Field", "Excerpt"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, findings.map((f) => h("tr", {},
          h("td", {}, h("code", {}, f.ruleId)), h("td", {}, f.category || ""), h("td", {}, f.field || ""), h("td", {}, h("code", {}, f.excerpt || "")))))),
      h("div", { class: "field" }, h("label", { for: noteId }, "Decision note (optional)"), note),
      h("div", { class: "row" },
        h("button", { type: "button", class: "primary", "aria-label": `Approve ${e.slug}`, onclick: decide("approve") }, "Approve"),
        h("button", { type: "button", class: "danger", "aria-label": `Reject ${e.slug}`, onclick: decide("reject") }, "Reject")),
    );
  }));
}

/** `{kind: "builder", id}` (or a plain string) as text. */
function ownerLabel(owner) {
  if (typeof owner !== "object") return String(owner);
  return owner.id ? `${owner.kind || "builder"} ${owner.id}` : String(owner.kind || "");
}

const CAPABILITIES = [
  ["kv", "ctx.kv (key-value store)"],
  ["files", "ctx.files (file area)"],
  ["httpGetJson", "ctx.httpGetJson (outbound GET)"],
  ["logs", "ctx.log (logs)"],
];

async function loadGrants() {
  const box = $("#a-grants");
  let slugs;
  try {
    const [cat, queue] = await Promise.all([
      api("/ai/endpoints"),
      api("/ai/admin/reviews", { as: "admin" }).catch(() => ({ endpoints: [] })),
    ]);
    slugs = [...new Set([
      ...(cat.endpoints || []).filter((e) => e.handlerType === "js_request_response").map((e) => e.slug),
      ...(queue.endpoints || []).filter((x) => x.endpoint.handlerType === "js_request_response").map((x) => x.endpoint.slug),
    ])];
  } catch (e) {
    box.replaceChildren(h("p", { class: "error" }, `Could not list endpoints: ${errorText(e)}`));
    return;
  }
  const records = (await Promise.all(slugs.map((slug) =>
    api(`/ai/endpoints/${encodeURIComponent(slug)}`, { as: "admin" }).catch(() => null))))
    .filter((r) => r && r.manage && r.manage.requestedCapabilities);
  if (!records.length) { box.replaceChildren(h("p", { class: "muted" }, "No JavaScript endpoint requests a capability.")); return; }
  records.sort((a, b) => {
    const pending = (r) => CAPABILITIES.some(([k]) => r.manage.requestedCapabilities[k] && !(r.manage.grantedCapabilities || {})[k]);
    return Number(pending(b)) - Number(pending(a)) || a.endpoint.slug.localeCompare(b.endpoint.slug);
  });
  box.replaceChildren(h("ul", { class: "cards" }, records.map(grantCard)));
}

function grantCard(record) {
  const e = record.endpoint;
  const requested = record.manage.requestedCapabilities || {};
  const granted = record.manage.grantedCapabilities || {};
  const pending = CAPABILITIES.filter(([k]) => requested[k] && !granted[k]).length;
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const form = h("form", { class: "grants", dataset: { slug: e.slug } },
    h("fieldset", {},
      h("legend", {}, h("code", {}, e.slug), ` · ${e.title}`),
      pending ? badge(`${pending} pending`, "review") : badge("up to date", "ok"),
      h("div", { class: "checks" }, CAPABILITIES.map(([k, label]) => {
        const id = `grant-${e.slug}-${k}`;
        return h("div", { class: "check" },
          h("input", { type: "checkbox", id, name: k, checked: !!granted[k], disabled: !requested[k] }),
          h("label", { for: id }, label, requested[k] ? "" : " (not requested)"));
      })),
      h("button", { type: "submit", class: "small" }, "Save grants"),
      status));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { grantedCapabilities: {} };
    for (const [k] of CAPABILITIES) body.grantedCapabilities[k] = !!form.elements[k].checked;
    try {
      const saved = await api(`/ai/endpoints/${encodeURIComponent(e.slug)}`, { method: "PATCH", body, as: "admin" });
      const fresh = grantCard(saved);
      form.closest("li").replaceWith(fresh);
      say(fresh.querySelector(".status"), "Grants saved.", "ok");
      fresh.querySelector("button[type=submit]").focus();
    } catch (err) {
      say(status, `Could not save: ${errorText(err)}`, "error");
    }
  });
  return h("li", { class: "card" }, form);
}

async function loadCredits() {
  const box = $("#a-credits");
  try {
    const data = await api("/ai/admin/credits", { as: "admin" });
    const credits = data.credits || [];
    if (!credits.length) { box.replaceChildren(h("p", { class: "muted" }, "No credits issued yet.")); return; }
    box.replaceChildren(h("div", { class: "table-wrap" }, h("table", { class: "table compact" },
      h("caption", { class: "sr-only" }, "Developer credits"),
      h("thead", {}, h("tr", {}, ["Credit", "Granted", "Balance", "Expires", "Created", "Note"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, credits.map((c) => h("tr", {},
        h("td", {}, h("code", {}, c.creditId)), h("td", {}, usd(c.grantedUsd)), h("td", {}, usd(c.balanceUsd)),
        h("td", {}, c.expiresAt ? when(c.expiresAt) : "never"), h("td", {}, when(c.createdAt)), h("td", {}, c.note || "")))))));
  } catch (e) {
    box.replaceChildren(h("p", { class: missingRoute(e) ? "muted" : "error" },
      missingRoute(e) ? "Developer credits are not available on this server yet." : `Could not load credits: ${errorText(e)}`));
  }
}

async function issueCredit(event) {
  event.preventDefault();
  const form = event.target;
  const out = $("#a-credit-issued");
  const body = { amountUsd: Number(form.amountUsd.value) };
  if (form.expiresAt.value) body.expiresAt = new Date(`${form.expiresAt.value}T23:59:59Z`).toISOString().replace(/\.\d+Z$/, "Z");
  if (form.note.value.trim()) body.note = form.note.value.trim();
  try {
    const data = await api("/ai/admin/credits", { method: "POST", body, as: "admin" });
    const token = data.credit.token;
    out.replaceChildren(h("div", { class: "notice" },
      h("p", {}, `Credit ${data.credit.creditId} for ${usd(data.credit.grantedUsd)} issued. The token is shown once: send it as `, h("code", {}, "X-Developer-Credit"), "."),
      codeBlock(token, "Credit token")));
    form.reset();
    await loadCredits();
  } catch (e) {
    out.replaceChildren(h("p", { class: "error" }, `Could not issue the credit: ${errorText(e)}`));
  }
}

// ---------------------------------------------------------------- start

window.addEventListener("resize", debounce(() => { if (!$("#builder-view").hidden) drawRevenue(); }, 150));

const views = { catalog: showCatalog, builder: showBuilder, admin: showAdmin };
const initial = tabs.find((t) => `#${t.id.replace("tab-", "")}` === location.hash) || tabs[0];
selectTab(initial, { push: false });
window.addEventListener("hashchange", () => {
  const tab = tabs.find((t) => `#${t.id.replace("tab-", "")}` === location.hash);
  if (tab && tab.getAttribute("aria-selected") !== "true") selectTab(tab, { push: false });
});
document.documentElement.dataset.ready = "1";
