// toolhost dashboard: the shell. Three tabs (catalog, builder, admin), each a view module set up
// the first time its tab is shown; the URL hash names the selected tab. Vanilla ES modules, no
// framework and no build step (the one bundled file is the vendored code editor):
//
//   api.js      the API client and the session-scoped credentials
//   dom.js      DOM and formatting helpers (`h` builds every node; never innerHTML)
//   chart.js    the revenue bar chart (SVG)
//   catalog.js  Catalog tab
//   builder.js  Builder tab (payouts.js: its payouts section; editor.js: the endpoint editor,
//               with CodeMirror 6 from vendor/codemirror.js, built by scripts/vendor-codemirror.sh)
//   admin.js    Admin tab

import { $, debounce } from "./dom.js";
import { showCatalog } from "./catalog.js";
import { showBuilder, drawRevenue } from "./builder.js";
import { showAdmin } from "./admin.js";

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
