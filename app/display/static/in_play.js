// Progressive not in play (rules 5.17, 5.18.2): the link's `status` messages and snapshot
// carry `in_play`, `reason`, `since` and `tables` (docs/api.md, Displays). While the link
// is suspended the screen says "PROGRESSIVE NOT IN PLAY"; while some of its tables (or
// boxes) are, it names them. display.js hands every snapshot and status message here.
(() => {
  "use strict";

  let banner = null;

  function element() {
    if (banner) return banner;
    banner = document.createElement("div");
    banner.id = "not-in-play";
    banner.setAttribute("role", "status");
    banner.hidden = true;
    const title = document.createElement("span");
    title.className = "not-in-play-title";
    const detail = document.createElement("span");
    detail.className = "not-in-play-detail";
    banner.append(title, detail);
    document.body.appendChild(banner);
    return banner;
  }

  function where(tables) {
    return tables
      .map((t) => (t.boxes && t.boxes.length ? `table ${t.table} box ${t.boxes.join(", ")}` : `table ${t.table}`))
      .join("; ");
  }

  window.jackpotInPlay = function (message) {
    if (!("in_play" in message)) return; // a status without in-play fields changes nothing
    const tables = Array.isArray(message.tables) ? message.tables : [];
    const el = element();
    const title = el.querySelector(".not-in-play-title");
    const detail = el.querySelector(".not-in-play-detail");
    if (message.in_play === false) {
      title.textContent = "PROGRESSIVE NOT IN PLAY";
      detail.textContent = message.reason || "";
    } else if (tables.length) {
      title.textContent = `PROGRESSIVE NOT IN PLAY: ${where(tables)}`;
      detail.textContent = message.reason || "";
    }
    const out = message.in_play === false || tables.length > 0;
    el.hidden = !out;
    el.classList.toggle("whole-link", message.in_play === false);
    document.body.classList.toggle("not-in-play", message.in_play === false);
  };
})();
