// toolhost dashboard, Builder tab: sign-in with a builder key, the builder's endpoints (pause,
// resume, edit, capability requests), revenue chart, events and logs. Payouts are in payouts.js,
// the endpoint editor in editor.js.

import { api, session, missingRoute } from "./api.js";
import { barChart } from "./chart.js";
import { loadPayouts, createPayout, setupRefunds } from "./payouts.js";
import { setupEditor, openEditor } from "./editor.js";
import { $, h, usd, priceLabel, when, errorText, badge, say } from "./dom.js";

const builder = { endpoints: [] };

export function showBuilder() {
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
  $("#b-payout-create").addEventListener("click", () => createPayout(loadEvents));
  setupRefunds(loadEvents);
  setupEditor(() => Promise.all([loadOwnEndpoints(), loadEvents()]));
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
    : [h("tr", {}, h("td", { colspan: "5", class: "muted" }, "No endpoints yet. Create one with New endpoint in the editor below (or POST /ai/endpoints/create, see the guide)."))]));
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
  const edit = e.handlerType === "js_request_response" ? h("button", {
    type: "button", class: "small", "aria-label": `Edit ${e.slug}`,
    disabled: safety === "rejected",
    onclick: () => openEditor(record),
  }, "Edit") : null;
  return h("tr", { dataset: { slug: e.slug } },
    h("th", { scope: "row" }, h("span", { class: "cell-title" }, e.title), h("code", {}, e.slug), capabilityNote(record)),
    h("td", { "data-label": "Status" }, badge(e.status, e.status)),
    h("td", { "data-label": "Price" }, priceLabel(e)),
    h("td", { "data-label": "Content safety" }, badge(safety, safety.replace(/\s+/g, "-"))),
    h("td", { class: "actions" }, toggle, edit, logs),
  );
}

/** "capabilities: kv, logs (granted: kv)" for JS endpoints that request any. */
function capabilityNote(record) {
  const requested = Object.entries(record.manage.requestedCapabilities || {}).filter(([, on]) => on).map(([k]) => k);
  if (!requested.length) return null;
  const granted = Object.entries(record.manage.grantedCapabilities || {}).filter(([, on]) => on).map(([k]) => k);
  const pending = requested.filter((k) => !granted.includes(k));
  const request = record.manage.capabilityGrant || {};
  const note = request.decision && request.decision.note ? `: ${request.decision.note}` : "";
  const state = !pending.length ? " (granted)"
    : request.state === "refused" ? ` (refused by the admin${note})`
    : ` (awaiting grant: ${pending.join(", ")})`;
  return h("span", { class: "cell-note muted" }, `capabilities: ${requested.join(", ")}`, state);
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
  // Revenue counts every sale; payouts draw only on collected money (settled on-chain or paid
  // by credit), so the two differ while sales are recorded only or pending on-chain.
  const collectedNet = r.collected && r.collected.netUnits !== undefined ? Number(r.collected.netUnits) / 1e6 : null;
  $("#b-revenue-total").textContent = `${usd(gross)} in the last ${count} days${calls}`
    + (net === null ? "" : ` · ${usd(net)} to you after the ${(Number(r.feeBps || 0) / 100).toFixed(1)}% platform fee`)
    + (collectedNet === null || net === null ? "" : ` · of that, ${usd(collectedNet)} is collected and can be paid out; the rest was recorded without settling or is pending on-chain, and is not paid out`);
  builder.chart = { points, caption: `Gross revenue per day, last ${count} days` };
  drawRevenue();
}

/** Draws the revenue chart at the figure's current width (again when the window resizes). */
export function drawRevenue() {
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
        // A test call (the owner's or the admin's): nobody paid, and it is not a sale.
        entry.test ? badge("test call", "info") : null,
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

