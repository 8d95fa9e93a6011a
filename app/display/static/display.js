// Progressive jackpot display: follows one link's websocket (see app/display/broadcaster.py).
(() => {
  "use strict";

  const SILENCE_MS = 12000; // no message (pings come every 5 s) for this long: LINK DOWN
  const TICK_MS = 1000; // meter values count up to a new value over this long
  const CELEBRATE_MS = 10000;
  const RECENT = 10; // latest wins in the strip (it scrolls when they do not fit)
  let scrollStart = null; // when the strip began to scroll (performance.now())
  const MAX_RETRY_MS = 15000;

  const $ = (id) => document.getElementById(id);
  const link = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop());
  // The display token: from the fragment (#token=, never sent to a server, so no log
  // has it), or from an older screen's ?token=, moved into the fragment at once so a
  // reload does not send it again. The websocket carries it as a subprotocol (a header).
  const token = takeToken();
  // This screen: an id made once and kept in this browser, a name from #screen=bar-left.
  const screen = screenId();
  const screenName = new URLSearchParams(location.hash.slice(1)).get("screen") || "";

  function takeToken() {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    const query = new URLSearchParams(location.search);
    const fromQuery = query.get("token");
    if (fromQuery !== null) {
      query.delete("token");
      const rest = query.toString();
      const hash = new URLSearchParams(location.hash.slice(1));
      hash.set("token", fromHash !== null ? fromHash : fromQuery);
      history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + "#" + hash);
    }
    return fromHash !== null ? fromHash : fromQuery;
  }

  function screenId() {
    const key = "jackpot.display.screen";
    let id = null;
    try { id = localStorage.getItem(key); } catch { /* storage off: a new id per load */ }
    if (!id || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) {
      const bytes = crypto.getRandomValues(new Uint8Array(12));
      id = "scr-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      try { localStorage.setItem(key, id); } catch { /* kept for this page only */ }
    }
    return id;
  }

  function tokenProtocol(text) {
    // base64url of the UTF-8 bytes, unpadded: only characters a subprotocol may hold.
    const bytes = new TextEncoder().encode(text);
    let binary = "";
    bytes.forEach((b) => (binary += String.fromCharCode(b)));
    return "jackpot.token." + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  const view = {
    seq: null, // the last seq taken; null until a snapshot arrives
    currency: "",
    meters: new Map(), // meter id -> {el, name, shown, from, to, start}
    pending: new Map(), // award_id -> win
    recent: [],
    status: "ok",
    detail: "",
    open: false,
    closeReason: "connecting…",
    heardAt: 0,
    silent: false,
  };
  const celebrations = [];
  let celebrating = null;
  let socket = null;
  let retries = 0;
  let animating = false;

  // ---- money: decimal strings <-> integer cents, never float arithmetic on amounts ----

  function toCents(text) {
    if (text === null || text === undefined) return null;
    const [whole, frac = ""] = String(text).split(".");
    return Number(whole) * 100 + Number((frac + "00").slice(0, 2));
  }

  function formatCents(cents) {
    if (cents === null) return "—";
    const whole = Math.floor(cents / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return whole + "." + String(cents % 100).padStart(2, "0");
  }

  const words = (text) => String(text || "").replace(/_/g, " ");

  // ---- connection ----

  function url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = new URLSearchParams({ screen, name: screenName });
    return `${scheme}//${location.host}/v1/links/${encodeURIComponent(link)}/ws?${query}`;
  }

  function connect() {
    const ws = new WebSocket(url(), token ? ["jackpot", tokenProtocol(token)] : []);
    socket = ws;
    ws.onopen = () => {
      if (socket !== ws) return;
      view.open = true;
      view.heardAt = Date.now();
    };
    ws.onmessage = (event) => {
      if (socket === ws) receive(JSON.parse(event.data));
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      view.open = false;
      view.seq = null;
      view.closeReason = closeReason(event.code);
      refreshDown();
      // 4401/4404 will not fix themselves quickly: retry slowly.
      const slow = event.code === 4401 || event.code === 4404;
      const base = slow ? 30000 : Math.min(MAX_RETRY_MS, 500 * 2 ** retries);
      retries += 1;
      setTimeout(connect, base / 2 + Math.random() * (base / 2));
    };
  }

  function closeReason(code) {
    if (code === 4401) return "display token missing or wrong";
    if (code === 4404) return `unknown link "${link}"`;
    if (code === 1013) return "display fell behind, reconnecting…";
    if (code === 4000) return view.closeReason;
    return "reconnecting…";
  }

  function restart(reason) {
    // Drop this socket and reconnect for a fresh snapshot.
    const ws = socket;
    if (!ws) return;
    view.closeReason = reason;
    ws.close(4000, reason);
    ws.onclose({ code: 4000 });
  }

  // ---- messages ----

  function receive(message) {
    view.heardAt = Date.now();
    if (view.silent) {
      view.silent = false;
      refreshDown();
    }
    if (message.type === "snapshot") {
      view.seq = message.seq;
      retries = 0;
      snapshot(message);
      return;
    }
    if (view.seq === null) return;
    if (message.seq === view.seq && message.type === "status") {
      status(message); // from the display server itself: it consumes no seq
      return;
    }
    if (message.seq <= view.seq) return; // already seen
    if (message.seq !== view.seq + 1) {
      restart("missed messages, resynchronising…");
      return;
    }
    view.seq = message.seq;
    if (message.type === "ping") {
      ack(true);
      return;
    }
    if (message.type === "meters") {
      buildMeters(message.meters); // rebuilt only if the link's meters changed
      meters(message.meters);
      ack();
    }
    else if (message.type === "win") win(message);
    else if (message.type === "status") status(message);
  }

  // ---- acknowledgements: what this screen draws, back to the server ----

  const ACK_GAP_MS = 250; // at most four a second
  const MAX_ACK_WINS = 16;
  const shownWins = []; // final wins drawn, newest last
  let lastAck = 0;
  let ackTimer = null;

  // Values as decimal strings from integer cents: the value each meter is drawn toward
  // (the count-up reaches it within a second).
  function centsText(cents) {
    return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
  }

  function ack(now = false) {
    if (!socket || socket.readyState !== WebSocket.OPEN || view.seq === null) return;
    const wait = lastAck + ACK_GAP_MS - Date.now();
    if (!now && wait > 0) {
      if (!ackTimer) ackTimer = setTimeout(() => { ackTimer = null; ack(); }, wait);
      return;
    }
    if (now && wait > 0) return; // one was just sent: the ping's is that one
    lastAck = Date.now();
    const values = [];
    for (const [meter, m] of view.meters) if (m.to !== null) values.push({ meter, value: centsText(m.to) });
    socket.send(JSON.stringify({ type: "shown", seq: view.seq, values, wins: shownWins.slice(-MAX_ACK_WINS) }));
  }

  function shownWin(id) {
    if (!shownWins.includes(id)) shownWins.push(id);
    if (shownWins.length > MAX_ACK_WINS) shownWins.shift();
  }

  function snapshot(message) {
    view.currency = message.currency;
    $("link-name").textContent = message.name || message.link;
    document.title = `${message.name || message.link} — Progressive Jackpot`;
    buildMeters(message.meters);
    meters(message.meters, true);
    view.pending = new Map((message.pending || []).map((w) => [String(w.award_id), w]));
    view.recent = (message.recent_wins || []).slice(0, RECENT);
    status(message);
    renderPending();
    renderRecent();
    ack();
  }

  function status(message) {
    view.status = message.status;
    view.detail = message.detail || "";
    if (window.jackpotInPlay) window.jackpotInPlay(message); // in_play.js
    refreshDown();
  }

  function win(message) {
    const id = String(message.award_id);
    if (message.state === "final") {
      view.pending.delete(id);
      view.recent = [message, ...view.recent].slice(0, RECENT);
      renderRecent();
      celebrations.push(message);
      if (!celebrating) nextCelebration();
    } else if (message.state === "void") {
      // A void of its box cancelled it (paid to nobody): no longer "jackpot pending".
      view.pending.delete(id);
    } else {
      view.pending.set(id, message);
    }
    renderPending();
  }

  // ---- meters, counting up smoothly ----

  function buildMeters(list) {
    const ids = list.map((m) => m.meter).join("\u0000");
    if (ids === [...view.meters.keys()].join("\u0000")) {
      for (const m of list) view.meters.get(m.meter).nameEl.textContent = m.name || m.meter;
      return;
    }
    const box = $("meters");
    box.replaceChildren();
    view.meters.clear();
    for (const m of list) {
      const section = document.createElement("section");
      section.className = "meter";
      section.dataset.meterCard = m.meter;
      section.innerHTML =
        '<div class="meter-name"></div>' +
        '<div class="meter-value"><span class="currency"></span><span class="amount"></span></div>' +
        '<div class="meter-level" hidden><span class="must-hit"></span> · <span class="commitment"></span></div>';
      const nameEl = section.querySelector(".meter-name");
      const el = section.querySelector(".amount");
      nameEl.textContent = m.name || m.meter;
      el.dataset.meter = m.meter;
      box.appendChild(section);
      view.meters.set(m.meter, { el, nameEl, section, shown: null, from: null, to: null, start: 0 });
    }
    fit();
  }

  function meters(list, jump = false) {
    const now = performance.now();
    for (const m of list || []) {
      const meter = view.meters.get(m.meter);
      if (!meter) continue;
      const to = toCents(m.value);
      meter.el.dataset.value = m.value === null ? "" : m.value;
      meter.section.querySelector(".currency").textContent = view.currency;
      showLevel(meter.section, m);
      // Count up; a drop (the meter was won and reset) or a hidden tab jumps at once.
      if (jump || meter.shown === null || to === null || to < meter.shown || document.hidden) {
        meter.shown = meter.from = meter.to = to;
        meter.el.textContent = formatCents(to);
      } else if (to !== meter.to) {
        meter.from = meter.shown;
        meter.to = to;
        meter.start = now;
      }
    }
    fit();
    if (!animating) {
      animating = true;
      requestAnimationFrame(frame);
    }
  }

  // A must-hit-by level (docs/api.md, Displays): its "must hit by" and its commitment,
  // shortened on screen, whole in `title` and `data-commitment` for anyone checking it.
  function showLevel(section, m) {
    const line = section.querySelector(".meter-level");
    if (!m.must_hit_by) {
      line.hidden = true;
      return;
    }
    line.hidden = false;
    line.querySelector(".must-hit").textContent =
      `must hit by ${view.currency} ${formatCents(toCents(m.must_hit_by))}`;
    const commitment = line.querySelector(".commitment");
    const full = m.commitment || "";
    commitment.textContent = full ? `commitment ${shortHash(full)}` : "next draw pending";
    commitment.title = full;
    commitment.dataset.commitment = full;
  }

  const shortHash = (hex) => (hex.length > 12 ? `${hex.slice(0, 8)}…${hex.slice(-4)}` : hex);

  function frame(now) {
    let busy = false;
    for (const meter of view.meters.values()) {
      if (meter.shown === meter.to) continue;
      // A frame's time is when the frame began: it can precede the message that started
      // this count (t < 0 would paint a value below where the count starts).
      const t = Math.max(0, Math.min(1, (now - meter.start) / TICK_MS));
      const eased = 1 - (1 - t) ** 3;
      meter.shown = t >= 1 ? meter.to : Math.round(meter.from + (meter.to - meter.from) * eased);
      meter.el.textContent = formatCents(meter.shown);
      busy = busy || meter.shown !== meter.to;
    }
    animating = busy;
    if (busy) requestAnimationFrame(frame);
  }

  // Size the values to the screen: the first (top) meter as large as its row allows,
  // the others alike and a little smaller; every value fits the width.
  const ruler = document.createElement("canvas").getContext("2d");

  function widthPerPixel(meter) {
    // Width of "SGD 12,345.67" at a font size of 1px, as the CSS lays it out.
    const family = getComputedStyle(meter.el).fontFamily;
    ruler.font = `800 100px ${family}`;
    const amount = ruler.measureText(formatCents(meter.to === null ? 0 : meter.to)).width;
    const currency = ruler.measureText(view.currency).width;
    const spacing = 100 * (0.25 + 0.05 * view.currency.length); // margin and letter spacing
    return (amount + 0.42 * (currency + spacing)) / 100;
  }

  function fit() {
    const box = $("meters");
    const list = [...view.meters.values()];
    if (list.length === 0) return;
    const flexes = list.map((_, i) => (i === 0 ? 1.5 : 1));
    const total = flexes.reduce((a, b) => a + b, 0);
    const rows = flexes.map((flex) => (box.clientHeight * flex) / total);
    const sizes = list.map((meter, i) => {
      const byHeight = rows[i] * (list.length === 1 ? 0.5 : 0.6);
      const byWidth = (box.clientWidth * 0.95) / widthPerPixel(meter);
      return Math.min(byHeight, byWidth);
    });
    const others = Math.min(sizes[0] * 0.8, ...sizes.slice(1));
    list.forEach((meter, i) => {
      const size = i === 0 ? sizes[0] : others;
      meter.section.style.setProperty("--value-size", `${Math.floor(size)}px`);
      const name = Math.floor(Math.min(rows[i] * 0.15, size * 0.4));
      meter.section.style.setProperty("--name-size", `${name}px`);
      meter.section.style.setProperty("--level-size", `${Math.max(14, Math.floor(name * 0.8))}px`);
    });
  }

  // ---- overlays ----

  function where(w) {
    return `TABLE ${w.table} · BOX ${w.box}`;
  }

  function renderPending() {
    const list = [...view.pending.values()];
    const box = $("pending");
    box.hidden = list.length === 0;
    box.dataset.count = String(list.length);
    if (list.length === 1) {
      $("pending-detail").textContent = `${words(list[0].hand)} · ${where(list[0])} — verifying`;
    } else if (list.length > 1) {
      $("pending-detail").textContent = `${list.length} wins being verified`;
    }
  }

  function nextCelebration() {
    celebrating = celebrations.shift() || null;
    const box = $("celebration");
    if (!celebrating) {
      box.hidden = true;
      delete box.dataset.awardId;
      return;
    }
    const w = celebrating;
    const meter = view.meters.get(w.meter);
    $("celebration-meter").textContent = meter ? meter.nameEl.textContent : words(w.meter);
    $("celebration-amount").textContent = `${view.currency} ${formatCents(toCents(w.amount))}`;
    $("celebration-hand").textContent = w.reveal && w.reveal.must_hit_by
      ? `must hit by ${view.currency} ${formatCents(toCents(w.reveal.must_hit_by))}`
      : words(w.hand);
    $("celebration-where").textContent = where(w);
    // A must-hit-by hit: the trigger and nonce, revealed, and what they hash to.
    const reveal = $("celebration-reveal");
    const r = w.reveal;
    reveal.hidden = !r;
    reveal.textContent = r
      ? `hit at ${view.currency} ${formatCents(toCents(r.trigger))} · ` +
        `sha256(${r.trigger}|${r.nonce}) = ${r.commitment}`
      : "";
    box.dataset.awardId = String(w.award_id);
    box.hidden = false;
    shownWin(String(w.award_id)); // on screen now: say so
    ack();
    setTimeout(nextCelebration, CELEBRATE_MS);
  }

  // The latest wins in one line; when they do not fit, the line scrolls by itself (a
  // second copy follows the first so the loop has no gap), at a pace one can read.
  function renderRecent() {
    const list = $("recent-list");
    const items = view.recent.map((w) => {
      const item = document.createElement("li");
      const meter = view.meters.get(w.meter);
      const name = meter ? meter.nameEl.textContent : words(w.meter);
      const amount = document.createElement("b");
      amount.textContent = `${view.currency} ${formatCents(toCents(w.amount))}`;
      item.append(`${name} `, amount, ` table ${w.table} box ${w.box}`);
      return item;
    });
    list.replaceChildren(...items);
    list.classList.remove("scrolling");
    $("recent").hidden = view.recent.length === 0;
    const room = $("recent-window").clientWidth;
    if (list.scrollWidth > room) {
      for (const item of items) {
        const copy = item.cloneNode(true);
        copy.setAttribute("aria-hidden", "true");
        list.append(copy);
      }
      const seconds = Math.max(10, Math.round(list.scrollWidth / 2 / 80));
      // A new win does not send the strip back to its start: it goes on where it was.
      scrollStart ??= performance.now();
      const elapsed = ((performance.now() - scrollStart) / 1000) % seconds;
      list.style.setProperty("--scroll-s", `${seconds}s`);
      list.style.animationDelay = `-${elapsed.toFixed(2)}s`;
      list.classList.add("scrolling");
    } else {
      scrollStart = null;
    }
  }

  function refreshDown() {
    const down = !view.open || view.seq === null || view.status !== "ok" || view.silent;
    let detail = view.closeReason;
    if (view.open && view.silent) detail = "no word from the server, reconnecting…";
    else if (view.open && view.status !== "ok") detail = view.detail || "jackpot link degraded";
    $("banner-detail").textContent = detail;
    $("banner-down").hidden = !down;
    document.body.classList.toggle("down", down);
    document.body.classList.remove("connecting");
  }

  setInterval(() => {
    if (view.open && !view.silent && Date.now() - view.heardAt > SILENCE_MS) {
      view.silent = true;
      refreshDown();
      restart("no word from the server, reconnecting…");
    }
  }, 1000);
  addEventListener("resize", fit);
  refreshDown();
  connect();
})();
