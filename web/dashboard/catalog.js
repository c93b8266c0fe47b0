// toolhost dashboard, Catalog tab: the public catalog with filters, each endpoint's schemas and
// example call, and a form to try it (a paid endpoint answers 402; its requirements are shown).

import { api, raw } from "./api.js";
import { $, h, usd, priceLabel, pretty, errorText, badge, say, codeBlock, debounce } from "./dom.js";

const catalog = { all: [], seq: 0 };

export async function showCatalog() {
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
      endpoint.metering
        ? `Metered endpoint: charged what the call reports (by ${endpoint.metering.unit}), at least ${usd(endpoint.metering.minimumUsd)} and at most ${usd(endpoint.priceUsd)}, paid with x402 upto (a Permit2 permit of the maximum). A call without payment answers 402 with the x402 payment requirements; `
        : `Paid endpoint (${usd(endpoint.priceUsd)}). A call without payment answers 402 with the x402 payment requirements; `,
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
