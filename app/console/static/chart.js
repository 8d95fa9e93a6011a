// The meter's value over a period as a hand-written SVG step chart (no library): the
// value holds until the next entry changes it; awards, resets and corrections marked.
// Drag across the plot (or use the buttons) to zoom into a stretch; every mark shows a
// tooltip on hover or keyboard focus. Times are the floor's (zone.js).

import { el as html, money } from "./dom.js";
import { dayOf, formatInstant, timeOfDay, zoneLabel } from "./zone.js";

const NS = "http://www.w3.org/2000/svg";
const W = 1000, H = 320, LEFT = 92, RIGHT = 16, TOP = 16, BOTTOM = 40;
const MIN_SPAN = 1000; // the closest zoom: one second across

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
  if (span > 2 * 86400_000) return `${dayOf(ms).slice(5)} ${timeOfDay(ms)}`;
  return timeOfDay(ms, span < 600_000);
}

function niceStep(range) {
  const raw = range / 4;
  const power = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) || power;
}

function series(history) {
  const start = history.from ? Date.parse(history.from) : null;
  const end = history.to ? Date.parse(history.to) : null;
  const pts = [];
  const first = history.points[0];
  const t0 = start ?? (first ? Date.parse(first.at) : Date.now());
  pts.push([t0, cents(history.opening)]);
  for (const p of history.points) pts.push([Date.parse(p.at), cents(p.value)]);
  const t1 = Math.max(end ?? Date.now(), pts[pts.length - 1][0] + 1);
  pts.push([Math.min(t1, end ?? t1), cents(history.closing)]);
  return { pts, t0, t1 };
}

export function drawChart(container, history, { title }) {
  const { pts, t0, t1 } = series(history);
  const state = { from: t0, to: t1 };
  const tip = html("div", { class: "chart-tip", role: "tooltip", id: "chart-tip", hidden: true });
  const zoomNote = html("span", { class: "muted", id: "chart-zoom-note" });
  const zoom = (from, to) => {
    const span = Math.max(MIN_SPAN, to - from);
    const mid = (from + to) / 2;
    state.from = Math.max(t0, Math.round(mid - span / 2));
    state.to = Math.min(t1, Math.round(state.from + span));
    render();
  };
  const tools = html("div", { class: "chart-tools" },
    html("button", { type: "button", class: "secondary small", id: "chart-zoom-in", onclick: () => zoom(state.from + (state.to - state.from) / 4, state.to - (state.to - state.from) / 4) }, "Zoom in"),
    html("button", { type: "button", class: "secondary small", id: "chart-zoom-out", onclick: () => zoom(state.from - (state.to - state.from) / 2, state.to + (state.to - state.from) / 2) }, "Zoom out"),
    html("button", { type: "button", class: "secondary small", id: "chart-zoom-reset", onclick: () => zoom(t0, t1) }, "Whole period"),
    zoomNote);
  const frame = html("div", { class: "chart-frame" });
  container.replaceChildren(tools, frame, tip);

  function render() {
    const visible = pts.filter(([t]) => t >= state.from && t <= state.to).map((p) => p[1]);
    visible.push(valueAt(pts, state.from), valueAt(pts, state.to));
    let lo = Math.min(...visible), hi = Math.max(...visible);
    if (hi === lo) { hi += 1; lo = Math.max(0, lo - 1); }
    const step = niceStep(hi - lo);
    lo = Math.floor(lo / step) * step;
    hi = Math.ceil(hi / step) * step;
    const x = (t) => LEFT + ((t - state.from) / Math.max(1, state.to - state.from)) * (W - LEFT - RIGHT);
    const y = (v) => TOP + (1 - (v - lo) / (hi - lo)) * (H - TOP - BOTTOM);
    const grid = [];
    for (let v = lo; v <= hi + step / 2; v += step) {
      grid.push(svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v), class: "gridline" }),
        svg("text", { x: LEFT - 8, y: y(v) + 4, class: "axis", "text-anchor": "end", text: money(v.toFixed(2)) }));
    }
    const span = state.to - state.from;
    for (let i = 0; i <= 4; i++) {
      const t = state.from + (span * i) / 4;
      grid.push(svg("text", { x: x(t), y: H - BOTTOM + 20, class: "axis tick", "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle", text: timeLabel(t, span) }));
    }
    grid.push(svg("text", { x: W - RIGHT, y: H - 4, class: "axis", "text-anchor": "end", text: `times in ${zoneLabel(state.from)}` }));
    let d = `M${x(pts[0][0]).toFixed(1)},${y(pts[0][1]).toFixed(1)}`;
    for (let i = 1; i < pts.length; i++) d += ` H${x(pts[i][0]).toFixed(1)} V${y(pts[i][1]).toFixed(1)}`;
    const line = svg("path", { d, class: "series", "data-points": history.points.length });
    const marks = history.marks.map((m) => mark(m, x, y, pts, tip));
    const brush = svg("rect", { class: "brush", x: 0, y: TOP, width: 0, height: H - TOP - BOTTOM, visibility: "hidden" });
    const root = svg("svg", {
      viewBox: `0 0 ${W} ${H}`, role: "img", class: "chart", "aria-labelledby": "chart-svg-title",
      "data-points": history.points.length, "data-marks": history.marks.length,
      "data-from": state.from, "data-to": state.to,
    }, svg("title", { id: "chart-svg-title", text: title }),
    svg("defs", {}, svg("clipPath", { id: "chart-clip" }, svg("rect", { x: LEFT, y: 0, width: W - LEFT - RIGHT, height: H }))),
    svg("rect", { x: LEFT, y: TOP, width: W - LEFT - RIGHT, height: H - TOP - BOTTOM, class: "plot" }),
    grid, svg("g", { "clip-path": "url(#chart-clip)" }, line, marks), brush);
    frame.replaceChildren(root);
    dragToZoom(root, brush, (a, b) => {
      const toTime = (px) => state.from + ((px - LEFT) / (W - LEFT - RIGHT)) * (state.to - state.from);
      zoom(toTime(Math.min(a, b)), toTime(Math.max(a, b)));
    });
    const whole = state.from === t0 && state.to === t1;
    zoomNote.textContent = whole ? "Drag across the chart to zoom in."
      : `Showing ${formatInstant(state.from)} to ${formatInstant(state.to)}.`;
  }
  render();
  const listed = history.marks.map((m) => html("li", {}, describeMark(m)));
  container.append(listed.length ? html("ul", { class: "marks" }, listed) : html("p", { class: "muted", text: "No award, reset or correction in the period." }));
}

// A drag across the plot selects the stretch to zoom into (in the SVG's own units).
function dragToZoom(root, brush, done) {
  let start = null;
  const at = (event) => {
    const box = root.getBoundingClientRect();
    return Math.min(W - RIGHT, Math.max(LEFT, ((event.clientX - box.left) / box.width) * W));
  };
  root.addEventListener("pointerdown", (event) => {
    if (event.target.closest?.("g.mark")) return;
    start = at(event);
    root.setPointerCapture?.(event.pointerId);
  });
  root.addEventListener("pointermove", (event) => {
    if (start === null) return;
    const now = at(event);
    brush.setAttribute("x", Math.min(start, now));
    brush.setAttribute("width", Math.abs(now - start));
    brush.setAttribute("visibility", "visible");
  });
  root.addEventListener("pointerup", (event) => {
    if (start === null) return;
    const end = at(event);
    const from = start;
    start = null;
    brush.setAttribute("visibility", "hidden");
    if (Math.abs(end - from) > 6) done(from, end);
  });
}

function valueAt(pts, t) {
  let v = pts[0][1];
  for (const [pt, pv] of pts) { if (pt <= t) v = pv; else break; }
  return v;
}

function mark(m, x, y, pts, tip) {
  const t = Date.parse(m.at);
  const cx = x(t), top = y(valueAt(pts, t - 1));
  const label = describeMark(m);
  const attrs = { class: `mark mark-${m.kind === "seed" ? "correction" : m.kind}`, "data-kind": m.kind, tabindex: 0, "aria-label": label };
  let g;
  if (m.kind === "award") {
    g = svg("g", attrs,
      svg("line", { x1: cx, x2: cx, y1: top, y2: y(valueAt(pts, t)), class: "drop" }),
      svg("circle", { cx, cy: top, r: 6 }));
  } else if (m.kind === "reset") {
    g = svg("g", attrs,
      svg("line", { x1: cx, x2: cx, y1: TOP, y2: H - BOTTOM }),
      svg("rect", { x: cx - 5, y: TOP, width: 10, height: H - TOP - BOTTOM, class: "hit" }),
      svg("text", { x: cx + 4, y: TOP + 12, class: "axis", text: "reset" }));
  } else {
    g = svg("g", attrs,
      svg("rect", { x: cx - 5, y: top - 5, width: 10, height: 10, transform: `rotate(45 ${cx} ${top})` }));
  }
  const show = () => {
    tip.textContent = label;
    tip.hidden = false;
    const box = g.getBoundingClientRect(), frame = tip.parentElement.getBoundingClientRect();
    tip.style.left = `${Math.max(0, Math.min(box.left - frame.left, frame.width - 320))}px`;
    tip.style.top = `${box.top - frame.top - tip.offsetHeight - 8}px`;
  };
  const hide = () => { tip.hidden = true; };
  g.addEventListener("pointerenter", show);
  g.addEventListener("focus", show);
  g.addEventListener("pointerleave", hide);
  g.addEventListener("blur", hide);
  return g;
}

export function describeMark(m) {
  const at = formatInstant(Date.parse(m.at));
  if (m.kind === "award") return `${at}: award ${money(m.amount)} · table ${m.table} round ${m.round} box ${m.box} · ${m.hand.replace(/_/g, " ")}`;
  if (m.kind === "reset") return `${at}: reset from ${money(m.value_before)} by ${m.by} · ${m.reason}`;
  if (m.kind === "seed") return `${at}: seed ${money(m.seed_before)} → ${money(m.seed)} by ${m.by} · ${m.reason}`;
  return `${at}: correction (${m.correction.replace("_", " ")}) ${money(m.value_before)} → ${money(m.value_after)} by ${m.by} · ${m.reason}`;
}
