// toolhost dashboard, Builder tab: payout settings, payout packets, and refunds.

import { api, missingRoute } from "./api.js";
import { $, h, usd, when, pretty, errorText, badge, say } from "./dom.js";

export async function loadPayouts() {
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
  const owed = Number(data.owedNetUnits ?? 0) > 0
    ? [" Owed for refunds of calls paid out before, deducted from the next packet: ", h("strong", { id: "b-owed" }, usd(units(data.owedNetUnits))), "."]
    : [];
  const balance = data.unpaidNetUnits === undefined ? null
    : h("p", { id: "b-unpaid" }, "Not yet in a packet: ", h("strong", {}, usd(units(data.unpaidNetUnits))),
      ` net from ${data.unpaidReceipts ?? 0} paid call${data.unpaidReceipts === 1 ? "" : "s"}.`, ...owed);
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

/** Wires the refund form: refunds a receipt, then reloads the payouts and (`reloadEvents`)
 * the builder's event feed. */
export function setupRefunds(reloadEvents) {
  const form = $("#b-refund-form");
  const status = form.querySelector(".status");
  form.onsubmit = async (event) => {
    event.preventDefault();
    const receipt = form.querySelector("#refund-receipt").value.trim();
    const body = { reason: form.querySelector("#refund-reason").value.trim() };
    const amount = form.querySelector("#refund-amount").value;
    if (amount !== "") body.amountUsd = Number(amount);
    try {
      const data = await api(`/ai/receipts/${encodeURIComponent(receipt)}/refund`, { method: "POST", body, as: "builder" });
      const refund = data.refund;
      say(status, `Refunded ${usd(units(refund.amount))} of ${usd(units(refund.charged))} (${refund.refundId}), back to ${refund.returnedTo === "credit" ? "the developer credit" : "nobody: the payment was only recorded"}.`, "ok");
      $("#b-refund-result").replaceChildren(h("details", {}, h("summary", {}, "Signed refund record"),
        h("pre", { class: "code small" }, h("code", {}, pretty(refund)))));
    } catch (e) {
      say(status, `Could not refund: ${errorText(e)}`, "error");
    }
    await Promise.all([loadPayouts(), reloadEvents()]);
  };
}

/** Creates a packet, then reloads the packets and (`reloadEvents`) the builder's event feed. */
export async function createPayout(reloadEvents) {
  const button = $("#b-payout-create");
  button.disabled = true;
  try {
    await api("/ai/builders/payouts", { method: "POST", body: {}, as: "builder" });
    say("#builder-status", "Payout packet created.", "ok");
  } catch (e) {
    say("#builder-status", `Could not create a payout packet: ${errorText(e)}`, "error");
  }
  await Promise.all([loadPayouts(), reloadEvents()]);
}
