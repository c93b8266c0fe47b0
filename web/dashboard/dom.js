// toolhost dashboard: DOM and formatting helpers shared by every view. Every node is built with
// `h` (never innerHTML), so no API value is ever parsed as HTML.

import { ApiError } from "./api.js";

export const $ = (selector, root = document) => root.querySelector(selector);

/** Creates an element: h("button", {type: "button", onclick}, "Text", childNode, ...). */
export function h(tag, attrs = {}, ...children) {
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

export const usd = (value) => {
  const n = Number(value) || 0;
  if (n === 0) return "$0";
  const digits = n < 0.01 ? 4 : n < 1 ? 3 : 2;
  return `$${n.toFixed(digits).replace(/(\.\d\d\d*?)0+$/, "$1")}`;
};
export const priceLabel = (e) => {
  if (!(Number(e.priceUsd) > 0)) return "Free";
  // A metered price: charged what the call reports, at most priceUsd.
  if (e.metering) return `up to ${usd(e.priceUsd)} per call, by ${e.metering.unit}`;
  return `${usd(e.priceUsd)} per call`;
};
export const when = (iso) => {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
};
export const pretty = (value) => JSON.stringify(value, null, 2);
export const errorText = (e) => (e instanceof ApiError ? `${e.message} (${e.status} ${e.code})` : String(e && e.message ? e.message : e));

export function badge(text, kind) {
  return h("span", { class: `badge badge-${kind || text}` }, text);
}

export function say(target, text, kind = "info") {
  const node = typeof target === "string" ? $(target) : target;
  node.textContent = text;
  node.dataset.kind = kind;
}

export async function copy(text, statusNode) {
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

export function copyButton(getText, label) {
  const status = h("span", { class: "copied", role: "status", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "small", onclick: () => copy(getText(), status) }, label || "Copy");
  return h("span", { class: "copy" }, button, status);
}

export function codeBlock(text, label) {
  const pre = h("pre", { class: "code", tabindex: "0", "aria-label": label }, h("code", {}, text));
  return h("div", { class: "code-wrap" }, pre, copyButton(() => text, `Copy ${label.toLowerCase()}`));
}

export const debounce = (fn, ms) => {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
};
