// toolhost dashboard, Admin tab: sign-in with the admin token, the content-safety review queue,
// capability grants for JavaScript endpoints (pending requests first, each with the source it
// would run, a diff against the serving source for a revision waiting while another serves,
// and the hosts it would reach; granted or refused with a note) and developer credits.

import { api, session, missingRoute } from "./api.js";
import { $, h, usd, when, errorText, badge, say, codeBlock } from "./dom.js";

export function showAdmin() {
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
  ["fetch", "fetch (any request to the allowed hosts)"],
  ["logs", "ctx.log (logs)"],
];

async function loadGrants() {
  const box = $("#a-grants");
  let slugs;
  try {
    // Endpoints awaiting a grant are not in the public catalog: the pending list adds them.
    const [cat, queue, pending] = await Promise.all([
      api("/ai/endpoints"),
      api("/ai/admin/reviews", { as: "admin" }).catch(() => ({ endpoints: [] })),
      api("/ai/admin/grants", { as: "admin" }).catch(() => ({ endpoints: [] })),
    ]);
    slugs = [...new Set([
      ...(pending.endpoints || []).map((x) => x.endpoint.slug),
      ...(cat.endpoints || []).filter((e) => e.handlerType === "js_request_response").map((e) => e.slug),
      ...(queue.endpoints || []).filter((x) => x.endpoint.handlerType === "js_request_response").map((x) => x.endpoint.slug),
    ])];
  } catch (e) {
    box.replaceChildren(h("p", { class: "error" }, `Could not list endpoints: ${errorText(e)}`));
    return;
  }
  const records = (await Promise.all(slugs.map(async (slug) => {
    const path = `/ai/endpoints/${encodeURIComponent(slug)}`;
    const record = await api(path, { as: "admin" }).catch(() => null);
    const waiting = record && record.manage && record.manage.pendingRevision;
    // A revision waiting for the grant while another serves: what it asks is decided on it.
    if (waiting != null) record.waiting = await api(`${path}/revisions/${waiting}`, { as: "admin" }).catch(() => null);
    return record;
  }))).filter((r) => r && r.manage && r.manage.requestedCapabilities);
  if (!records.length) { box.replaceChildren(h("p", { class: "muted" }, "No JavaScript endpoint requests a capability.")); return; }
  records.sort((a, b) => Number(asks(b).length > 0) - Number(asks(a).length > 0) || a.endpoint.slug.localeCompare(b.endpoint.slug));
  box.replaceChildren(h("ul", { class: "cards" }, records.map(grantCard)));
}

/** The capabilities the request on the table asks for that the endpoint does not hold: the
 * waiting revision's when one waits, else the serving one's. */
function asks(record) {
  const grant = record.manage.capabilityGrant || {};
  const waiting = grant.pendingRevision;
  if (waiting) return waiting.state === "pending" ? waiting.missing || [] : [];
  return grant.state === "pending" ? grant.missing || [] : [];
}

/** What the admin decides on: the revision's source (a diff against the serving one for a
 * waiting revision) and the hosts it would reach. */
function requestView(record) {
  const m = record.manage;
  const detail = record.waiting;
  const hosts = detail ? detail.allowedHosts : m.allowedHosts;
  const what = detail
    ? h("p", {}, `Revision ${detail.revision} asks for ${(detail.asks || []).join(", ") || "nothing new"}; revision ${m.revision} serves meanwhile.`)
    : h("p", {}, asks(record).length ? `Revision ${m.revision} (nothing serves until it is granted).` : `Revision ${m.revision} serves.`);
  const source = detail
    ? h("details", { class: "source" }, h("summary", {}, "Source changes against the serving revision"),
      h("pre", { class: "code small diff" }, h("code", {}, detail.sourceDiff || "(the source is unchanged)")))
    : m.source ? h("details", { class: "source" }, h("summary", {}, "Source"), h("pre", { class: "code small" }, h("code", {}, m.source))) : null;
  return h("div", { class: "request" }, what,
    h("p", {}, "Allowed hosts: ", hosts && hosts.length ? h("code", {}, hosts.join(", ")) : h("span", { class: "muted" }, "none listed (httpGetJson: any public host; fetch: none)")),
    source);
}

function grantCard(record) {
  const e = record.endpoint;
  const requested = (record.waiting ? record.waiting.requestedCapabilities : record.manage.requestedCapabilities) || {};
  const granted = record.manage.grantedCapabilities || {};
  const pending = asks(record).length;
  const grant = record.manage.capabilityGrant || {};
  const request = grant.pendingRevision || grant;
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const noteId = `grant-note-${e.slug}`;
  const note = h("input", { id: noteId, type: "text", maxlength: "1000", autocomplete: "off" });
  const decide = (decision) => async () => {
    try {
      const saved = await api(`/ai/admin/endpoints/${encodeURIComponent(e.slug)}/grant`, {
        method: "POST", as: "admin", body: note.value ? { decision, note: note.value } : { decision },
      });
      if (decision === "refuse" && record.waiting) saved.waiting = record.waiting;
      const fresh = grantCard(saved);
      form.closest("li").replaceWith(fresh);
      say(fresh.querySelector(".status"), decision === "grant" ? "Granted." : "Refused.", "ok");
    } catch (err) {
      say(status, `Could not ${decision}: ${errorText(err)}`, "error");
    }
  };
  const answer = pending ? [
    h("div", { class: "field" }, h("label", { for: noteId }, "Note to the owner (optional)"), note),
    h("div", { class: "row" },
      h("button", { type: "button", class: "primary small", "aria-label": `Grant all to ${e.slug}`, onclick: decide("grant") }, "Grant all"),
      h("button", { type: "button", class: "danger small", "aria-label": `Refuse ${e.slug}`, onclick: decide("refuse") }, "Refuse")),
  ] : [];
  const form = h("form", { class: "grants", dataset: { slug: e.slug } },
    h("fieldset", {},
      h("legend", {}, h("code", {}, e.slug), ` · ${e.title}`),
      request.state === "refused" ? badge("refused", "rejected")
        : pending ? badge(`${pending} pending`, "review") : badge("up to date", "ok"),
      request.decision && request.decision.note ? h("p", { class: "muted" }, `Last note: ${request.decision.note}`) : null,
      requestView(record),
      h("div", { class: "checks" }, CAPABILITIES.map(([k, label]) => {
        const id = `grant-${e.slug}-${k}`;
        return h("div", { class: "check" },
          h("input", { type: "checkbox", id, name: k, checked: !!granted[k], disabled: !requested[k] }),
          h("label", { for: id }, label, requested[k] ? "" : " (not requested)"));
      })),
      h("button", { type: "submit", class: "small" }, "Save grants"),
      ...answer,
      status));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { grantedCapabilities: {} };
    for (const [k] of CAPABILITIES) body.grantedCapabilities[k] = !!form.elements[k].checked;
    try {
      const saved = await api(`/ai/endpoints/${encodeURIComponent(e.slug)}`, { method: "PATCH", body, as: "admin" });
      if (saved.manage.pendingRevision != null) saved.waiting = record.waiting;
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
