// The meter's value over a period as a hand-written SVG step chart (no library): the
// value holds until the next entry changes it; awards, resets and corrections marked.

import { el as html, money } from "./dom.js";

const NS = "http://www.w3.org/2000/svg";
const W = 1000, H = 320, LEFT = 92, RIGHT = 16, TOP = 16, BOTTOM = 40;

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = String(v);
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c) node.append(c);
  return node;
}

const cents = (text) => Number(text); // for drawing only: a pixel needs no exact money

function timeLabel(ms, span) {
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (span > 2 * 86400_000) return `${d.getMonth() + 1}/${d.getDate()} ${hm}`;
  return span < 600_000 ? `${hm}:${pad(d.getSeconds())}` : hm;
}

function niceStep(range) {
  const raw = range / 4;
  const power = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) || power;
}

export function drawChart(container, history, { title }) {
  const start = history.from ? Date.parse(history.from) : null;
  const end = history.to ? Date.parse(history.to) : null;
  const pts = [];
  const first = history.points[0];
  const t0 = start ?? (first ? Date.parse(first.at) : Date.now());
  pts.push([t0, cents(history.opening)]);
  for (const p of history.points) pts.push([Date.parse(p.at), cents(p.value)]);
  const t1 = Math.max(end ?? Date.now(), pts[pts.length - 1][0] + 1);
  pts.push([Math.min(t1, end ?? t1), cents(history.closing)]);
  const values = pts.map((p) => p[1]);
  let lo = Math.min(...values), hi = Math.max(...values);
  if (hi === lo) { hi += 1; lo = Math.max(0, lo - 1); }
  const step = niceStep(hi - lo);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const x = (t) => LEFT + ((t - t0) / Math.max(1, t1 - t0)) * (W - LEFT - RIGHT);
  const y = (v) => TOP + (1 - (v - lo) / (hi - lo)) * (H - TOP - BOTTOM);

  const grid = [];
  for (let v = lo; v <= hi + step / 2; v += step) {
    grid.push(svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v), class: "gridline" }),
      svg("text", { x: LEFT - 8, y: y(v) + 4, class: "axis", "text-anchor": "end", text: money(v.toFixed(2)) }));
  }
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    grid.push(svg("text", { x: x(t), y: H - BOTTOM + 20, class: "axis", "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle", text: timeLabel(t, t1 - t0) }));
  }
  let d = `M${x(pts[0][0]).toFixed(1)},${y(pts[0][1]).toFixed(1)}`;
  for (let i = 1; i < pts.length; i++) {
    d += ` H${x(pts[i][0]).toFixed(1)} V${y(pts[i][1]).toFixed(1)}`;
  }
  const line = svg("path", { d, class: "series", "data-points": history.points.length });
  const marks = history.marks.map((m) => mark(m, x, y, pts));
  const root = svg("svg", {
    viewBox: `0 0 ${W} ${H}`, role: "img", class: "chart", "aria-labelledby": "chart-svg-title",
    "data-points": history.points.length, "data-marks": history.marks.length,
  }, svg("title", { id: "chart-svg-title", text: title }),
  svg("rect", { x: LEFT, y: TOP, width: W - LEFT - RIGHT, height: H - TOP - BOTTOM, class: "plot" }),
  grid, line, marks);
  container.replaceChildren(root);
  const listed = history.marks.map((m) => html("li", {}, describeMark(m)));
  container.append(listed.length ? html("ul", { class: "marks" }, listed) : html("p", { class: "muted", text: "No award, reset or correction in the period." }));
}

function valueAt(pts, t) {
  let v = pts[0][1];
  for (const [pt, pv] of pts) { if (pt <= t) v = pv; else break; }
  return v;
}

function mark(m, x, y, pts) {
  const t = Date.parse(m.at);
  const cx = x(t), top = y(valueAt(pts, t - 1));
  const label = describeMark(m);
  if (m.kind === "award") {
    return svg("g", { class: "mark mark-award", "data-kind": "award" },
      svg("title", { text: label }),
      svg("line", { x1: cx, x2: cx, y1: top, y2: y(valueAt(pts, t)), class: "drop" }),
      svg("circle", { cx, cy: top, r: 6 }));
  }
  if (m.kind === "reset") {
    return svg("g", { class: "mark mark-reset", "data-kind": "reset" },
      svg("title", { text: label }),
      svg("line", { x1: cx, x2: cx, y1: TOP, y2: H - BOTTOM }),
      svg("text", { x: cx + 4, y: TOP + 12, class: "axis", text: "reset" }));
  }
  return svg("g", { class: "mark mark-correction", "data-kind": m.kind },
    svg("title", { text: label }),
    svg("rect", { x: cx - 5, y: top - 5, width: 10, height: 10, transform: `rotate(45 ${cx} ${top})` }));
}

export function describeMark(m) {
  const at = new Date(m.at).toLocaleString();
  if (m.kind === "award") return `${at}: award ${money(m.amount)} · table ${m.table} round ${m.round} box ${m.box} · ${m.hand.replace(/_/g, " ")}`;
  if (m.kind === "reset") return `${at}: reset from ${money(m.value_before)} by ${m.by} · ${m.reason}`;
  if (m.kind === "seed") return `${at}: seed ${money(m.seed_before)} → ${money(m.seed)} by ${m.by} · ${m.reason}`;
  return `${at}: correction (${m.correction.replace("_", " ")}) ${money(m.value_before)} → ${money(m.value_after)} by ${m.by} · ${m.reason}`;
}
