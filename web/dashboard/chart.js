// toolhost dashboard: a small hand-written SVG bar chart (no library).
//
// barChart(figure, points, options) draws one bar per point into `figure` (a <figure>), drawn at
// the figure's own width (so text keeps its real size; redraw on resize), with a
// y axis of round ticks, sparse x labels, a <title> per bar for pointer users, and a
// visually-hidden data table for screen readers. points: [{label, value}].

const SVG = "http://www.w3.org/2000/svg";

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Round tick step: 1, 2 or 5 times a power of ten, giving about `count` ticks up to `max`. */
export function niceStep(max, count = 4) {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  const factor = unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10;
  return factor * power;
}

export function barChart(figure, points, { format = String, caption = "", width = 720, height = 260 } = {}) {
  figure.replaceChildren();
  const margin = { top: 12, right: 24, bottom: 34, left: 64 };
  const innerW = width - margin.left - margin.right;
  const innerH = height - margin.top - margin.bottom;
  const max = Math.max(0, ...points.map((p) => p.value));
  const step = niceStep(max);
  const top = max > 0 ? Math.ceil(max / step) * step : step * 4;

  const total = points.reduce((sum, p) => sum + p.value, 0);
  const summary = `${caption}: ${points.length} bars, total ${format(total)}, highest ${format(max)}.`;
  const svg = el("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": summary,
    preserveAspectRatio: "xMinYMid meet",
    class: "chart-svg",
  });
  const plot = el("g", { transform: `translate(${margin.left},${margin.top})` });
  svg.append(plot);

  // Grid lines and y labels.
  for (let v = 0; v <= top + step / 2; v += step) {
    const y = innerH - (v / top) * innerH;
    plot.append(el("line", { x1: 0, x2: innerW, y1: y, y2: y, class: v === 0 ? "axis" : "grid" }));
    plot.append(el("text", { x: -8, y: y + 4, "text-anchor": "end", class: "tick" }, format(v)));
  }

  const slot = points.length ? innerW / points.length : innerW;
  const barW = Math.max(1, Math.min(40, slot * 0.7));
  // About one x label per 56 px, so they stay readable on a phone.
  const labelEvery = Math.max(1, Math.ceil(points.length / Math.max(2, Math.floor(innerW / 56))));
  points.forEach((p, i) => {
    const h = top > 0 ? (p.value / top) * innerH : 0;
    const x = i * slot + (slot - barW) / 2;
    const bar = el("rect", {
      x, y: innerH - h, width: barW, height: Math.max(h, p.value > 0 ? 1 : 0),
      class: "bar", "data-value": p.value, "data-label": p.label,
    });
    bar.append(el("title", {}, `${p.label}: ${format(p.value)}`));
    plot.append(bar);
    // Counted from the last bar, so today is always labelled and labels never collide.
    if ((points.length - 1 - i) % labelEvery === 0) {
      plot.append(el("text", { x: i * slot + slot / 2, y: innerH + 20, "text-anchor": "middle", class: "tick" }, p.short || p.label));
    }
  });
  figure.append(svg);

  const cap = document.createElement("figcaption");
  cap.className = "muted";
  cap.textContent = summary;
  figure.append(cap);

  // The same data as a table, for screen readers and for copying.
  const details = document.createElement("details");
  const sum = document.createElement("summary");
  sum.textContent = "Show the data as a table";
  details.append(sum);
  const table = document.createElement("table");
  table.className = "table compact";
  const thead = table.createTHead().insertRow();
  for (const h of ["Day", "Amount"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h;
    thead.append(th);
  }
  const body = table.createTBody();
  for (const p of points) {
    const row = body.insertRow();
    row.insertCell().textContent = p.label;
    row.insertCell().textContent = format(p.value);
  }
  details.append(table);
  figure.append(details);
  return svg;
}
