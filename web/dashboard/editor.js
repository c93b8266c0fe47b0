// toolhost dashboard, Builder tab: the endpoint editor. Creates an endpoint or edits one of the
// builder's own: the handler in a code editor (CodeMirror 6, vendored in vendor/codemirror.js and
// loaded the first time the editor opens), JSON Schema editors checked as JSON while typing,
// capabilities, env and files; a test run of the draft (POST /ai/builders/drafts/run) and, for a
// deployed endpoint, a test call (X-Toolhost-Test: 1); deploy (POST create or PATCH, made on the
// revision it opened: a change made elsewhere since is a conflict, not overwritten), whole or
// rolled out to a share of payers; the kept revisions with rollback, a rollout and a test call
// of each; a running rollout's two revisions side by side, to change its share, promote or end. The server's refusals land where they
// belong: a compile error as a diagnostic at its line and column, `details.errors` pointers and
// content-safety findings at their field.

import { api, raw, session, ApiError } from "./api.js";
import { $, h, errorText, badge, say, pretty, copyButton } from "./dom.js";

const CAPABILITIES = ["kv", "files", "httpGetJson", "fetch", "logs"];

const STARTER = {
  source: `// req.input is the caller's JSON, already checked against the input schema.
// Return a value (the 200 body), or ctx.respond(status, body) for any other status.
export default async function (req, ctx) {
  const name = req.input.name || "world";
  console.log("greeting", name);
  return { greeting: \`Hello, \${name}!\` };
}
`,
  inputSchema: { type: "object", properties: { name: { type: "string", maxLength: 100 } } },
  outputSchema: { type: "object", properties: { greeting: { type: "string" } }, required: ["greeting"] },
  testInput: { name: "Ada" },
};

/** The control each create/PATCH field is shown at (pointer's first segment → element id). */
const FIELDS = {
  slug: "ed-slug", title: "ed-title", description: "ed-description", priceUsd: "ed-price",
  pricingMode: "ed-price", tags: "ed-tags", source: "ed-source", handlerType: "ed-source",
  inputSchema: "ed-input-schema", outputSchema: "ed-output-schema", capabilities: "ed-caps",
  allowedHosts: "ed-hosts", env: "ed-env", files: "ed-files", safetyAttestation: "ed-attest-row",
};

let cm = null; // the CodeMirror module
const editors = {}; // source, inputSchema, outputSchema, testInput: EditorView
let editing = null; // the record being edited ({endpoint, manage}), or null for a new endpoint
let onDeployed = () => {};

/** Wires the editor's buttons; `deployed` is called after each successful deploy (and
 * delete), and answers a promise of the builder's view reloaded. */
export function setupEditor(deployed) {
  onDeployed = deployed;
  $("#b-new").addEventListener("click", () => openEditor(null));
  $("#ed-close").addEventListener("click", closeEditor);
  $("#ed-file-add").addEventListener("click", () => addFileRow());
  $("#ed-run").addEventListener("click", runDraft);
  $("#ed-test-call").addEventListener("click", () => testCall());
  $("#ed-lang").addEventListener("change", setLanguage);
  $("#b-editor").addEventListener("submit", (event) => { event.preventDefault(); deploy(); });
  $("#ed-secret-set").addEventListener("click", setSecret);
  $("#ed-delete").addEventListener("click", () => { $("#ed-delete-confirm").hidden = false; $("#ed-delete-slug").focus(); });
  $("#ed-delete-no").addEventListener("click", () => { $("#ed-delete-confirm").hidden = true; $("#ed-delete").focus(); });
  $("#ed-delete-yes").addEventListener("click", deleteEndpoint);
}

// ---------------------------------------------------------------- secrets and delete

/** The secrets' names (never their values), each with a delete button. */
function showSecrets(secrets) {
  $("#ed-secret-list").replaceChildren(...secrets.map((s) => h("li", { class: "file existing", dataset: { name: s.name } },
    h("code", {}, s.name), h("span", { class: "muted" }, ` set ${(s.updatedAt || "").replace("T", " ").replace(/\.\d+Z$|Z$/, "")} UTC`), " ",
    h("button", { type: "button", class: "small", "aria-label": `Delete the secret ${s.name}`, onclick: () => changeSecrets({ delete: [s.name] }, `Deleted ${s.name}.`) }, "Delete"))));
}

async function loadSecrets() {
  if (!editing) return;
  try {
    showSecrets((await api(`${slugPath(editing)}/secrets`, { as: "builder" })).secrets || []);
  } catch (e) {
    say("#ed-secret-status", `Could not list the secrets: ${errorText(e)}`, "error");
  }
}

async function changeSecrets(body, done) {
  try {
    const data = await api(`${slugPath(editing)}/secrets`, { method: "POST", body, as: "builder" });
    showSecrets(data.secrets || []);
    say("#ed-secret-status", done, "ok");
    return true;
  } catch (e) {
    say("#ed-secret-status", `Not saved: ${errorText(e)}`, "error");
    return false;
  }
}

async function setSecret() {
  const name = $("#ed-secret-name").value.trim();
  const value = $("#ed-secret-value").value;
  if (!name || !value) { say("#ed-secret-status", "Give a name and a value.", "error"); return; }
  if (await changeSecrets({ set: { [name]: value } }, `Set ${name}.`)) {
    $("#ed-secret-name").value = "";
    $("#ed-secret-value").value = "";
  }
}

async function deleteEndpoint() {
  const slug = editing && editing.endpoint.slug;
  if (!slug) return;
  if ($("#ed-delete-slug").value.trim() !== slug) {
    say("#ed-status", `Type ${slug} to confirm; nothing deleted.`, "error");
    return;
  }
  try {
    await api(slugPath(editing), { method: "DELETE", as: "builder" });
    $("#ed-delete-confirm").hidden = true;
    closeEditor();
    // After the list is reloaded: its own status line ("N endpoints.") would replace this one.
    await onDeployed();
    say("#builder-status", `Deleted ${slug} with its secrets, files, kv data, logs and revisions.`, "ok");
  } catch (e) {
    say("#ed-status", `Not deleted: ${errorText(e)}`, "error");
  }
}

// ---------------------------------------------------------------- revisions

/** The revision a change of `record` is made on: the newest put forward, which is the one
 * waiting for a grant, else the one rolling out, else the serving one. */
const baseOf = (record) => record.manage.pendingRevision ?? record.manage.rollout?.revision ?? record.manage.revision;

const slugPath = (record) => `/ai/endpoints/${encodeURIComponent(record.endpoint.slug)}`;

/** `record` as its newest revision has it: a change builds on the revision waiting for a
 * grant or rolling out when there is one, so the form shows that revision's content. */
async function newest(record) {
  const newer = baseOf(record);
  if (newer === record.manage.revision) return record;
  const c = (await api(`${slugPath(record)}/revisions/${newer}`, { as: "builder" })).content;
  const endpoint = { ...record.endpoint, title: c.title, description: c.description, tags: c.tags,
    priceUsd: c.priceUsd, inputSchema: c.inputSchema, outputSchema: c.outputSchema };
  const manage = { ...record.manage, source: c.source, sourceLanguage: c.sourceLanguage, env: c.env,
    requestedCapabilities: c.requestedCapabilities, allowedHosts: c.allowedHosts, exampleInput: c.exampleInput };
  return { ...record, endpoint, manage };
}

/** What waits for the admin, said plainly; null when nothing does. */
function pendingNote(manage) {
  const waiting = (manage.capabilityGrant || {}).pendingRevision;
  if (!waiting) return null;
  const what = (waiting.missing || []).join(", ");
  const refused = waiting.state === "refused"
    ? ` The admin refused it${waiting.decision && waiting.decision.note ? `: ${waiting.decision.note}` : "."}` : "";
  return h("p", { class: "note pending-revision" },
    `Revision ${waiting.revision} waits for the admin to grant ${what}; revision ${manage.revision} serves meanwhile.${refused}`);
}

/** The share of payers a rollout from the form goes to: the deploy row's, else 10 %. */
const shareAsked = () => Number($("#ed-share").value) || 10;

/** The kept revisions: state, when, what changed; roll back to one, roll it out, or test-call it. */
async function showRevisions() {
  const box = $("#ed-revisions");
  showRollout();
  if (!editing) { box.replaceChildren(); return; }
  const rolling = editing.manage.rollout?.revision;
  let list;
  try {
    list = await api(`${slugPath(editing)}/revisions`, { as: "builder" });
  } catch (e) {
    box.replaceChildren(h("p", { class: "error" }, `Could not list the revisions: ${errorText(e)}`));
    return;
  }
  const rows = list.revisions.map((r) => h("tr", { dataset: { revision: String(r.revision) } },
    h("td", {}, String(r.revision)),
    h("td", {}, badge(r.state, r.state === "serving" ? "ok" : r.state === "kept" ? "info" : "review"),
      r.revision === rolling ? badge(`rolling out ${editing.manage.rollout.share}%`, "review") : null),
    h("td", {}, r.createdAt.replace("T", " ").replace(/\.\d+Z$|Z$/, "")),
    h("td", {}, r.author),
    h("td", {}, r.fields.length ? r.fields.join(", ") : "-"),
    h("td", { class: "actions" },
      r.state === "serving" ? null
        : h("button", { type: "button", class: "small", "aria-label": `Roll back to revision ${r.revision}`, onclick: () => rollback(r.revision) }, "Roll back"),
      " ",
      r.state === "kept" && r.revision !== rolling
        ? h("button", { type: "button", class: "small", "aria-label": `Roll out revision ${r.revision}`, title: "To the share of payers set beside Deploy (10 % when empty)", onclick: () => rollout({ revision: r.revision, share: shareAsked() }) }, "Roll out")
        : null,
      " ",
      h("button", { type: "button", class: "small", "aria-label": `Test call of revision ${r.revision}`, onclick: () => testCall(r.revision) }, "Test call"))));
  box.replaceChildren(h("div", { class: "table-wrap" },
    h("table", { class: "table compact revisions" },
      h("caption", {}, `Revisions (the newest ${list.kept} are kept)`),
      h("thead", {}, h("tr", {}, ...["Revision", "State", "Created (UTC)", "By", "Changed", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows))));
}

async function rollback(revision) {
  try {
    const data = await api(`${slugPath(editing)}/rollback`, { method: "POST", body: { revision }, as: "builder" });
    await opened(data);
    say("#ed-status", data.manage.revision === revision
      ? `Rolled back: revision ${revision} serves.`
      : `Revision ${revision} waits for the admin's grant; revision ${data.manage.revision} serves meanwhile.`, "ok");
    onDeployed();
  } catch (e) {
    say("#ed-status", `Not rolled back: ${errorText(e)}`, "error");
  }
}

// ---------------------------------------------------------------- rollouts

/** Milliseconds as the rollout table shows them. */
const ms = (v) => (v == null ? "-" : v.toFixed(1));

/** A running rollout: both revisions' calls side by side, its share, promote and end. */
async function showRollout() {
  const box = $("#ed-rollout");
  const running = editing?.manage.rollout;
  if (!running) { box.replaceChildren(); box.hidden = true; return; }
  box.hidden = false;
  let status;
  try {
    status = await api(`${slugPath(editing)}/rollout`, { as: "builder" });
  } catch (e) {
    box.replaceChildren(h("p", { class: "error" }, `Could not read the rollout: ${errorText(e)}`));
    return;
  }
  const r = status.rollout;
  if (!r) { box.replaceChildren(); box.hidden = true; return; }
  const row = (role, c) => h("tr", { dataset: { role } },
    h("td", {}, String(c.revision)), h("td", {}, role), h("td", {}, String(c.calls)),
    h("td", {}, String(c.serverErrors)), h("td", {}, c.errorRate == null ? "-" : `${(c.errorRate * 100).toFixed(2)}%`),
    h("td", {}, String(c.clientErrors)), h("td", {}, ms(c.p50Ms)), h("td", {}, ms(c.p95Ms)), h("td", {}, ms(c.p99Ms)));
  const share = h("input", { id: "ed-rollout-share", type: "number", min: "1", max: "100", step: "1", value: String(r.share), inputmode: "numeric" });
  box.replaceChildren(
    h("h5", {}, "Rollout"),
    h("p", { class: "rollout-summary" }, `Revision ${r.revision} serves ${r.share}% of payers, revision ${r.serving.revision} the rest, since ${r.startedAt.replace("T", " ").replace(/\.\d+Z$|Z$/, "")} UTC. Each payer always reaches the same revision.`),
    h("div", { class: "table-wrap" },
      h("table", { class: "table compact rollout" },
        h("caption", {}, "Calls since the rollout started (5xx: the handler failed; latency of the handler)"),
        h("thead", {}, h("tr", {}, ...["Revision", "Role", "Calls", "5xx", "Error rate", "4xx", "p50 ms", "p95 ms", "p99 ms"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, row("serving", r.serving), row("rolling out", r.candidate)))),
    h("div", { class: "row" },
      h("div", { class: "field inline" }, h("label", { for: "ed-rollout-share" }, "Share of payers (%)"), share),
      h("button", { type: "button", class: "small", onclick: () => rollout({ share: Number(share.value) }) }, "Set share"),
      h("button", { type: "button", class: "small primary", onclick: () => endRollout("promote") }, `Promote revision ${r.revision}`),
      h("button", { type: "button", class: "small danger", onclick: () => endRollout("end") }, "End rollout"),
      h("button", { type: "button", class: "small", onclick: showRollout }, "Refresh")));
}

/** Starts a rollout of kept `revision`, or sets the running one's share. */
async function rollout(body) {
  try {
    const data = await api(`${slugPath(editing)}/rollout`, { method: "POST", body, as: "builder" });
    await opened(data);
    say("#ed-status", `Revision ${data.manage.rollout.revision} rolls out to ${data.manage.rollout.share}% of payers; revision ${data.manage.revision} serves the rest.`, "ok");
    onDeployed();
  } catch (e) {
    say("#ed-status", `Not rolled out: ${errorText(e)}`, "error");
  }
}

/** Promotes the rolling-out revision, or ends the rollout. */
async function endRollout(how) {
  const path = `${slugPath(editing)}/rollout${how === "promote" ? "/promote" : ""}`;
  try {
    const data = await api(path, { method: how === "promote" ? "POST" : "DELETE", as: "builder" });
    await opened(data);
    say("#ed-status", how === "promote"
      ? `Promoted: revision ${data.manage.revision} serves every call.`
      : `Rollout ended: revision ${data.manage.revision} serves every call.`, "ok");
    onDeployed();
  } catch (e) {
    say("#ed-status", `${how === "promote" ? "Not promoted" : "Not ended"}: ${errorText(e)}`, "error");
  }
}

// ---------------------------------------------------------------- editors

let loading = null;
/** Loads CodeMirror and builds the four editors, once (two quick clicks share the one load). */
function ensureEditors() {
  loading ||= buildEditors();
  return loading;
}

async function buildEditors() {
  cm = await import("./vendor/codemirror.js");
  const { EditorView, basicSetup, keymap, indentWithTab, javascript, json, jsonParseLinter, linter, lintGutter, Compartment } = cm;
  const highlight = cm.syntaxHighlighting(highlightStyle(cm));
  const base = (labelId) => [
    basicSetup,
    highlight,
    keymap.of([indentWithTab]),
    lintGutter(),
    EditorView.contentAttributes.of({ "aria-labelledby": labelId, "aria-describedby": "ed-source-hint" }),
  ];
  editors.language = new Compartment();
  editors.source = new EditorView({
    parent: $("#ed-source"),
    extensions: [
      ...base("ed-source-label"),
      editors.language.of(javascript()),
      // A diagnostic from the server is about the text it saw: gone once the text changes.
      EditorView.updateListener.of((update) => { if (update.docChanged) clearSourceError(); }),
    ],
  });
  for (const [name, id] of [["inputSchema", "ed-input-schema"], ["outputSchema", "ed-output-schema"], ["testInput", "ed-test-input"]]) {
    editors[name] = new EditorView({
      parent: $(`#${id}`),
      extensions: [...base(`${id}-label`), json(), linter(jsonParseLinter(), { delay: 250 })],
    });
  }
}

/** Token colours with at least 4.5:1 contrast on the editor's white (CodeMirror's default
 * highlighting has lighter ones), after GitHub's light palette. */
function highlightStyle({ HighlightStyle, tags: t }) {
  return HighlightStyle.define([
    { tag: [t.keyword, t.controlKeyword, t.moduleKeyword, t.operatorKeyword, t.definitionKeyword, t.modifier], color: "#cf222e" },
    { tag: [t.string, t.special(t.string)], color: "#0a3069" },
    { tag: [t.regexp, t.escape], color: "#116329" },
    { tag: [t.comment, t.lineComment, t.blockComment], color: "#57606a", fontStyle: "italic" },
    { tag: [t.number, t.bool, t.null, t.atom, t.self], color: "#0550ae" },
    { tag: [t.function(t.variableName), t.function(t.definition(t.variableName)), t.definition(t.variableName)], color: "#6639ba" },
    { tag: [t.propertyName, t.typeName, t.className, t.namespace], color: "#953800" },
    { tag: t.invalid, color: "#b3261e" },
  ]);
}

function setLanguage() {
  const typescript = $("#ed-lang").value === "ts";
  editors.source.dispatch({ effects: editors.language.reconfigure(cm.javascript({ typescript })) });
}

const text = (name) => editors[name].state.doc.toString();

function setText(name, value) {
  const view = editors[name];
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
}

/** Shows `message` as an error diagnostic in the source at 1-based `line` and `column`. */
function markSource(line, column, message) {
  const view = editors.source;
  const doc = view.state.doc;
  if (!line || line < 1 || line > doc.lines) return;
  const at = doc.line(line);
  const from = Math.min(at.to, at.from + Math.max(0, (column || 1) - 1));
  const to = from < at.to ? at.to : Math.min(doc.length, from + 1);
  view.dispatch(cm.setDiagnostics(view.state, [{ from, to, severity: "error", message }]));
}

function clearSourceError() {
  if (!$("#ed-source").classList.contains("invalid")) return;
  fieldError("source", null);
  // Not from inside the update that reported the change.
  queueMicrotask(() => editors.source.dispatch(cm.setDiagnostics(editors.source.state, [])));
}

// ---------------------------------------------------------------- open and close

/** Opens the editor on a new endpoint (`record` null) or on one of the builder's own. */
export async function openEditor(record) {
  const form = $("#b-editor");
  form.hidden = false;
  $("#b-editor-intro").hidden = true;
  say("#ed-status", "Loading the editor…");
  try {
    await ensureEditors();
  } catch (e) {
    loading = null; // try again on the next open
    say("#ed-status", `The code editor could not be loaded: ${errorText(e)}`, "error");
    return;
  }
  try {
    record = record && await newest(record);
  } catch (err) {
    say("#ed-status", `Could not load ${record.endpoint.slug}: ${errorText(err)}`, "error");
    return;
  }
  editing = record;
  clearErrors();
  $("#ed-result").replaceChildren(...(record ? [pendingNote(record.manage)].filter(Boolean) : []));
  $("#ed-run-result").replaceChildren();
  showRevisions();
  const e = record ? record.endpoint : null;
  const m = record ? record.manage : null;
  $("#ed-heading").textContent = e ? `Edit ${e.slug}` : "New endpoint";
  $("#ed-slug").value = e ? e.slug : "";
  $("#ed-slug").readOnly = Boolean(e);
  $("#ed-title").value = e ? e.title : "";
  $("#ed-description").value = e ? e.description : "";
  $("#ed-price").value = e ? String(Number(e.priceUsd)) : "0";
  $("#ed-tags").value = e ? (e.tags || []).join(", ") : "";
  $("#ed-lang").value = m && m.sourceLanguage === "typescript" ? "ts" : "js";
  setLanguage();
  setText("source", m ? m.source || "" : STARTER.source);
  setText("inputSchema", pretty(e ? e.inputSchema : STARTER.inputSchema));
  setText("outputSchema", pretty(e ? e.outputSchema : STARTER.outputSchema));
  setText("testInput", pretty(e ? exampleInput(e.inputSchema) : STARTER.testInput));
  // None by default: a new endpoint that requests nothing is live at once, without a grant
  // (console and ctx.log do nothing without `logs`).
  const requested = m ? m.requestedCapabilities || {} : {};
  for (const cap of CAPABILITIES) $(`#ed-cap-${cap}`).checked = Boolean(requested[cap]);
  $("#ed-hosts").value = m && m.allowedHosts ? m.allowedHosts.join(", ") : "";
  $("#ed-env").value = m ? Object.entries(m.env || {}).map(([k, v]) => `${k}=${v}`).join("\n") : "";
  $("#ed-file-list").replaceChildren(...(m ? (m.files || []).map((f) => existingFileRow(f)) : []));
  $("#ed-attest-row").hidden = Boolean(e);
  $("#ed-attest").checked = false;
  $("#ed-secrets").hidden = !e;
  $("#ed-delete").hidden = !e;
  $("#ed-delete-confirm").hidden = true;
  $("#ed-delete-slug").value = "";
  say("#ed-secret-status", "");
  $("#ed-secret-list").replaceChildren();
  if (e) loadSecrets();
  $("#ed-test-call").hidden = !e;
  $("#ed-deploy").textContent = e ? "Deploy changes" : "Deploy";
  $("#ed-share-row").hidden = !e;
  $("#ed-share").value = "";
  say("#ed-status", "");
  $("#h-b-editor").scrollIntoView({ block: "start" });
  (e ? $("#ed-title") : $("#ed-slug")).focus();
}

/** After a deploy or rollback: the form goes on from the newest revision, and the list shows it. */
async function opened(data) {
  editing = await newest(data);
  showRevisions();
}

const slugOf = (record) => record.endpoint.slug;

function closeEditor() {
  $("#b-editor").hidden = true;
  $("#b-editor-intro").hidden = false;
  editing = null;
  $("#b-new").focus();
}

/** A test input from a schema: its `examples`, else an object of its properties' examples. */
function exampleInput(schema) {
  if (!schema || typeof schema !== "object") return {};
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  const out = {};
  for (const [name, prop] of Object.entries(schema.properties || {})) {
    if (prop && Array.isArray(prop.examples) && prop.examples.length) out[name] = prop.examples[0];
    else if (prop && prop.default !== undefined) out[name] = prop.default;
  }
  return out;
}

// ---------------------------------------------------------------- files

function addFileRow(path = "", content = "") {
  const n = $("#ed-file-list").children.length + 1;
  const row = h("li", { class: "file new" },
    h("div", { class: "field" }, h("label", { for: `ed-file-path-${n}` }, "Path"),
      h("input", { id: `ed-file-path-${n}`, class: "file-path", type: "text", value: path, spellcheck: "false", autocomplete: "off" })),
    h("div", { class: "field grow" }, h("label", { for: `ed-file-content-${n}` }, "Content (UTF-8)"),
      h("textarea", { id: `ed-file-content-${n}`, class: "file-content", rows: "3", spellcheck: "false" }, content)),
    h("button", { type: "button", class: "small", onclick: () => row.remove() }, "Remove"));
  $("#ed-file-list").append(row);
  row.querySelector("input").focus();
}

/** A file already stored: its content is not shown back; it can be replaced or deleted. */
function existingFileRow(file) {
  const row = h("li", { class: "file existing", dataset: { path: file.path } },
    h("code", {}, file.path), h("span", { class: "muted" }, ` ${file.bytes} bytes`));
  const remove = h("button", {
    type: "button", class: "small", "aria-pressed": "false", "aria-label": `Delete ${file.path} on deploy`,
    onclick: () => {
      const on = row.classList.toggle("deleted");
      remove.setAttribute("aria-pressed", String(on));
      remove.textContent = on ? "Keep" : "Delete";
    },
  }, "Delete");
  row.append(" ", remove);
  return row;
}

// ---------------------------------------------------------------- the form as a body

/** The form's values; `problems` lists local errors ({field, message}) found on the way. */
function readForm() {
  const problems = [];
  const parse = (name, field) => {
    try { return JSON.parse(text(name)); } catch (e) { problems.push({ field, message: `Not valid JSON: ${e.message}` }); return undefined; }
  };
  const env = {};
  for (const [i, line] of $("#ed-env").value.split("\n").entries()) {
    if (!line.trim()) continue;
    const eq = line.indexOf("=");
    if (eq < 1) { problems.push({ field: "env", message: `Line ${i + 1}: write NAME=value` }); continue; }
    env[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  const files = {};
  for (const row of $("#ed-file-list").querySelectorAll("li.file.new")) {
    const path = row.querySelector(".file-path").value.trim();
    if (path) files[path] = row.querySelector(".file-content").value;
  }
  const list = (value) => value.split(",").map((s) => s.trim()).filter(Boolean);
  const capabilities = {};
  for (const cap of CAPABILITIES) if ($(`#ed-cap-${cap}`).checked) capabilities[cap] = true;
  return {
    problems,
    values: {
      slug: $("#ed-slug").value.trim(),
      title: $("#ed-title").value.trim(),
      description: $("#ed-description").value.trim(),
      priceUsd: Number($("#ed-price").value || 0),
      tags: list($("#ed-tags").value),
      source: text("source"),
      sourceLanguage: $("#ed-lang").value === "ts" ? "typescript" : "javascript",
      inputSchema: parse("inputSchema", "inputSchema"),
      outputSchema: parse("outputSchema", "outputSchema"),
      capabilities,
      allowedHosts: list($("#ed-hosts").value),
      env,
      files,
      deletedFiles: [...$("#ed-file-list").querySelectorAll("li.file.existing.deleted")].map((row) => row.dataset.path),
    },
  };
}

/** POST /ai/endpoints/create's body. */
function createBody(v) {
  const body = {
    slug: v.slug, title: v.title, description: v.description, priceUsd: v.priceUsd, source: v.source,
    sourceLanguage: v.sourceLanguage, inputSchema: v.inputSchema, outputSchema: v.outputSchema, tags: v.tags, capabilities: v.capabilities,
    env: v.env, files: v.files, safetyAttestation: { accepted: $("#ed-attest").checked },
  };
  if (v.allowedHosts.length) body.allowedHosts = v.allowedHosts;
  return body;
}

/** PATCH's body: only what changed (a new source withdraws granted capabilities), env and
 * files merged (null removes a name or a file). */
function patchBody(v, record) {
  const e = record.endpoint;
  const m = record.manage;
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const body = {};
  if (v.title !== e.title) body.title = v.title;
  if (v.description !== e.description) body.description = v.description;
  if (v.priceUsd !== Number(e.priceUsd)) body.priceUsd = v.priceUsd;
  if (!same(v.tags, e.tags || [])) body.tags = v.tags;
  const language = m.sourceLanguage || "javascript";
  if (v.source !== (m.source || "") || v.sourceLanguage !== language) {
    body.source = v.source;
    if (v.sourceLanguage !== language) body.sourceLanguage = v.sourceLanguage;
  }
  if (!same(v.inputSchema, e.inputSchema)) body.inputSchema = v.inputSchema;
  if (!same(v.outputSchema, e.outputSchema)) body.outputSchema = v.outputSchema;
  const requested = Object.fromEntries(CAPABILITIES.map((c) => [c, Boolean((m.requestedCapabilities || {})[c])]));
  const wanted = Object.fromEntries(CAPABILITIES.map((c) => [c, Boolean(v.capabilities[c])]));
  if (!same(wanted, requested)) body.capabilities = v.capabilities;
  if (!same(v.allowedHosts, m.allowedHosts || [])) body.allowedHosts = v.allowedHosts;
  const env = {};
  for (const [k, value] of Object.entries(v.env)) if ((m.env || {})[k] !== value) env[k] = value;
  for (const k of Object.keys(m.env || {})) if (!(k in v.env)) env[k] = null;
  if (Object.keys(env).length) body.env = env;
  const files = { ...v.files };
  for (const path of v.deletedFiles) files[path] = null;
  if (Object.keys(files).length) body.files = files;
  return body;
}

// ---------------------------------------------------------------- errors at their field

function controlOf(field) {
  const id = FIELDS[field];
  return id ? document.getElementById(id) : null;
}

/** Shows (or with `message` null, clears) an error under the field's control. */
function fieldError(field, message) {
  const control = controlOf(field);
  if (!control) return false;
  const holder = control.closest(".field, fieldset, .check") || control.parentElement;
  const id = `${control.id}-error`;
  let note = document.getElementById(id);
  if (!message) {
    note?.remove();
    control.classList.remove("invalid");
    control.removeAttribute("aria-invalid");
    return true;
  }
  if (!note) {
    note = h("p", { id, class: "field-error" });
    holder.append(note);
  }
  note.textContent = note.textContent && note.dataset.kind === "error" ? `${note.textContent} ${message}` : message;
  note.dataset.kind = "error";
  control.classList.add("invalid");
  control.setAttribute("aria-invalid", "true");
  if (/^(INPUT|TEXTAREA|SELECT)$/.test(control.tagName)) control.setAttribute("aria-describedby", id);
  return true;
}

function clearErrors() {
  for (const note of document.querySelectorAll("#b-editor .field-error")) note.remove();
  for (const control of document.querySelectorAll("#b-editor .invalid")) {
    control.classList.remove("invalid");
    control.removeAttribute("aria-invalid");
  }
  if (editors.source) editors.source.dispatch(cm.setDiagnostics(editors.source.state, []));
}

/** A pointer's or finding's field name: "/env/KEY" → env, "files/a.txt" → files, "tags[2]" → tags. */
const fieldName = (where) => String(where || "").replace(/^\//, "").match(/^[A-Za-z]+/)?.[0] || "";

/** Puts a refusal of the server at its fields; answers the summary for the status line. */
function showRefusal(e) {
  const details = e.details || {};
  if (e.code === "compile_error") {
    const at = details.line ? `line ${details.line}${details.column ? `, column ${details.column}` : ""}: ` : "";
    const hint = details.hint ? ` ${details.hint}.` : "";
    fieldError("source", `Compile error at ${at}${e.message}${hint}`);
    markSource(details.line, details.column, `${e.message}${hint}`);
    return `The source does not compile (${at.replace(/: $/, "") || "no position"}).`;
  }
  if (Array.isArray(details.errors)) {
    const unplaced = [];
    for (const err of details.errors) {
      if (!fieldError(fieldName(err.pointer || err.field), err.message)) unplaced.push(err.message);
    }
    return `${details.errors.length} field${details.errors.length === 1 ? "" : "s"} to fix${unplaced.length ? `: ${unplaced.join("; ")}` : "."}`;
  }
  if (Array.isArray(details.findings)) {
    for (const f of details.findings) fieldError(fieldName(f.field), `Content safety (${f.ruleId}): ${f.excerpt ? `“${f.excerpt}” ` : ""}${f.category || ""} is not allowed.`);
    return `${e.message} (${e.code})`;
  }
  if (details.field && fieldError(fieldName(details.field), e.message)) return `${e.message} (${e.code})`;
  if (e.code === "attestation_required") { fieldError("safetyAttestation", e.message); return e.message; }
  if (e.code === "slug_taken") { fieldError("slug", e.message); return e.message; }
  return errorText(e);
}

// ---------------------------------------------------------------- test runs

async function runDraft() {
  const out = $("#ed-run-result");
  const { values, problems } = readForm();
  let input;
  try { input = JSON.parse(text("testInput")); } catch (e) {
    out.replaceChildren(h("p", { class: "error" }, `The test input is not valid JSON: ${e.message}`));
    return;
  }
  clearErrors();
  for (const p of problems.filter((p) => p.field === "env")) fieldError(p.field, p.message);
  const button = $("#ed-run");
  button.disabled = true;
  out.replaceChildren(h("p", { class: "muted" }, "Running the draft…"));
  try {
    const body = { source: values.source, sourceLanguage: values.sourceLanguage, input, env: values.env };
    if (values.slug) body.slug = values.slug;
    const data = await api("/ai/builders/drafts/run", { method: "POST", body, as: "builder" });
    const run = data.run;
    if (run.error && run.error.line) markSource(run.error.line, run.error.column, run.error.message);
    out.replaceChildren(resultView("Draft run", run.status, run.body, run.error, run.logs, `${run.durationMs} ms`));
  } catch (e) {
    const summary = e instanceof ApiError ? showRefusal(e) : errorText(e);
    out.replaceChildren(h("p", { class: "error" }, `Draft run refused: ${summary}`));
  } finally {
    button.disabled = false;
  }
}

/** The owner's test call of the deployed endpoint (or of one kept `revision`): free, marked
 * as a test in its logs. */
async function testCall(revision) {
  if (!editing) return;
  const out = $("#ed-run-result");
  let input;
  try { input = text("testInput"); JSON.parse(input); } catch (e) {
    out.replaceChildren(h("p", { class: "error" }, `The test input is not valid JSON: ${e.message}`));
    return;
  }
  const which = typeof revision === "number" ? `revision ${revision}` : "deployed";
  out.replaceChildren(h("p", { class: "muted" }, `Calling the ${which} endpoint…`));
  const path = `/tools/${encodeURIComponent(editing.endpoint.slug)}`;
  const headers = { "X-Builder-Key": session.builderKey, "X-Toolhost-Test": "1" };
  if (typeof revision === "number") headers["X-Toolhost-Revision"] = String(revision);
  const r = await raw(path, { method: "POST", body: input, headers });
  const failed = r.status >= 400 && r.data && r.data.error;
  out.replaceChildren(resultView(`Test call (${which})`, r.status, failed ? null : r.data, failed ? r.data.error : null, null, `${r.ms} ms`));
}

function resultView(title, status, body, error, logs, took) {
  const ok = status < 400;
  return h("div", { class: "run-result" },
    h("p", { class: "log-head" }, h("strong", {}, title), badge(String(status), ok ? "ok" : "fail"), h("span", { class: "muted" }, took)),
    error ? h("p", { class: "error run-error" }, `${error.code}: ${error.message}`,
      error.line ? ` (line ${error.line}${error.column ? `, column ${error.column}` : ""})` : "") : null,
    error && error.stack && error.stack.length ? h("pre", { class: "code small" }, h("code", {}, error.stack.join("\n"))) : null,
    body !== null && body !== undefined ? h("pre", { class: "code small run-body", "aria-label": "Result" }, h("code", {}, pretty(body))) : null,
    logs && logs.length ? h("pre", { class: "code small run-logs", "aria-label": "Logs" }, h("code", {}, logs.map((l) => `[${l.level}] ${l.message}`).join("\n"))) : null);
}

// ---------------------------------------------------------------- deploy

async function deploy(force = false) {
  clearErrors();
  const { values, problems } = readForm();
  if (problems.length) {
    for (const p of problems) fieldError(p.field, p.message);
    say("#ed-status", "Fix the marked fields first.", "error");
    return;
  }
  const button = $("#ed-deploy");
  button.disabled = true;
  say("#ed-status", editing ? `Deploying ${editing.endpoint.slug}…` : `Creating ${values.slug}…`);
  try {
    let data;
    if (editing) {
      const body = patchBody(values, editing);
      if (!Object.keys(body).length) {
        say("#ed-status", "Nothing changed.", "info");
        return;
      }
      // Made on the revision this form opened: a change made since (the CLI, another tab, a
      // rollback) is refused, not overwritten.
      body.baseRevision = baseOf(editing);
      if (force) body.force = true;
      const share = $("#ed-share").value;
      if (share !== "") body.rolloutShare = Number(share);
      data = await api(slugPath(editing), { method: "PATCH", body, as: "builder" });
    } else {
      data = await api("/ai/endpoints/create", { method: "POST", body: createBody(values), as: "builder" });
    }
    const created = !editing;
    await opened(data);
    $("#ed-heading").textContent = `Edit ${data.endpoint.slug}`;
    $("#ed-slug").readOnly = true;
    $("#ed-attest-row").hidden = true;
    $("#ed-test-call").hidden = false;
    $("#ed-delete").hidden = false;
    if ($("#ed-secrets").hidden) { $("#ed-secrets").hidden = false; loadSecrets(); }
    $("#ed-deploy").textContent = "Deploy changes";
    $("#ed-share-row").hidden = false;
    // The files as stored now: new ones are not sent again by the next deploy.
    $("#ed-file-list").replaceChildren(...(data.manage.files || []).map(existingFileRow));
    const waiting = data.manage.pendingRevision;
    const rolling = data.manage.rollout;
    say("#ed-status", waiting != null
      ? `Deployed ${data.endpoint.slug}: revision ${waiting} waits for the admin's grant; revision ${data.manage.revision} serves meanwhile.`
      : rolling && $("#ed-share").value !== ""
        ? `Deployed ${data.endpoint.slug}: revision ${rolling.revision} rolls out to ${rolling.share}% of payers; revision ${data.manage.revision} serves the rest.`
        : `${created ? "Created" : "Deployed"} ${data.endpoint.slug} (revision ${data.manage.revision}).`, "ok");
    $("#ed-share").value = "";
    $("#ed-result").replaceChildren(deployedView(data));
    onDeployed();
  } catch (e) {
    if (e instanceof ApiError && e.code === "revision_conflict") {
      const d = e.details || {};
      const status = $("#ed-status");
      say(status, `Not deployed: ${slugOf(editing)} changed since you opened it (revision ${d.servingRevision} serves${d.pendingRevision != null ? `, revision ${d.pendingRevision} waits` : ""}). Reopen it to see the change, or deploy over it.`, "error");
      status.append(" ", h("button", { type: "button", class: "small danger", onclick: () => deploy(true) }, "Deploy over it"));
      return;
    }
    const summary = e instanceof ApiError ? showRefusal(e) : errorText(e);
    say("#ed-status", `Not deployed: ${summary}`, "error");
  } finally {
    button.disabled = false;
  }
}

/** What the deploy produced: status, content safety, requested versus granted capabilities, the URL. */
function deployedView(data) {
  const e = data.endpoint;
  const m = data.manage;
  const grant = m.capabilityGrant || {};
  const names = (caps) => Object.entries(caps || {}).filter(([, on]) => on).map(([k]) => k);
  const requested = names(m.requestedCapabilities);
  const granted = names(m.grantedCapabilities);
  const safety = e.contentSafety || { status: "not scanned", findings: [] };
  for (const f of safety.findings || []) fieldError(fieldName(f.field), `Held for review (${f.ruleId}): ${f.category || "finding"}.`);
  const curl = `curl -s -X POST ${e.url} -H 'content-type: application/json' -d '${text("testInput").replace(/\s+/g, " ").replace(/'/g, "'\\''")}'`;
  return h("div", { class: "deployed card" },
    h("p", { class: "log-head" }, h("strong", {}, e.title), badge(e.status, e.status), h("span", { class: "muted" }, `revision ${m.revision}`)),
    h("dl", { class: "facts" },
      h("dt", {}, "Live URL"), h("dd", {}, h("a", { href: e.url, class: "live-url" }, e.url), " ", copyButton(() => e.url, "Copy URL")),
      h("dt", {}, "Content safety"), h("dd", {}, badge(safety.status, safety.status.replace(/\s+/g, "-")),
        (safety.findings || []).length ? ` ${safety.findings.length} finding(s), shown at their fields` : ""),
      h("dt", {}, "Capabilities"), h("dd", { class: "caps" },
        requested.length ? `requested: ${requested.join(", ")} · granted: ${granted.join(", ") || "none"}` : "none requested",
        grant.state === "pending" ? ` · awaiting the admin's grant of ${(grant.missing || []).join(", ")}` : "",
        grant.state === "refused" ? ` · refused${grant.decision && grant.decision.note ? `: ${grant.decision.note}` : ""}` : "")),
    e.status === "awaiting_grant" ? h("p", { class: "note" }, "Not listed and not callable until the admin grants the capabilities it requests.") : null,
    pendingNote(m),
    h("p", { class: "muted" }, "Call it:"),
    h("pre", { class: "code small" }, h("code", {}, curl)));
}
