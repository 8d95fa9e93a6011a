// The floor's websocket: the token as a subprotocol (never in the address), reconnecting
// with backoff; "writer unreachable" whenever it is down or silent past the pings.

const SILENT_MS = 12_000; // the server pings every 5 s
const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000];

function tokenProtocol(token) {
  const bytes = new TextEncoder().encode(token);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return "jackpot.token." + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export class Live {
  constructor(token, { onFloor, onState, onDenied }) {
    this.token = token;
    this.onFloor = onFloor;
    this.onState = onState;
    this.onDenied = onDenied;
    this.attempt = 0;
    this.stopped = false;
    this.connect();
  }

  connect() {
    if (this.stopped) return;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    // Signed in by name and password, the session's cookie goes with the handshake.
    const protocols = this.token ? ["jackpot", tokenProtocol(this.token)] : ["jackpot"];
    const socket = new WebSocket(`${scheme}//${location.host}/v1/floor/ws`, protocols);
    this.socket = socket;
    this.onState(this.attempt ? "reconnecting" : "connecting");
    socket.onmessage = (event) => {
      this.attempt = 0;
      this.watch();
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      if (message.type === "floor") {
        this.onState("live");
        this.onFloor(message);
      }
    };
    socket.onclose = (event) => {
      clearTimeout(this.watchdog);
      if (this.socket !== socket || this.stopped) return;
      if (event.code === 4401) { this.stopped = true; this.onDenied(event.reason); return; }
      this.onState("unreachable");
      const wait = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
      this.attempt += 1;
      this.retry = setTimeout(() => this.connect(), wait * (0.8 + Math.random() * 0.4));
    };
    this.watch();
  }

  watch() {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      // Open but silent: as good as gone. Closing reconnects (onclose).
      this.onState("unreachable");
      try { this.socket.close(); } catch { /* already closed */ }
    }, SILENT_MS);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.watchdog);
    clearTimeout(this.retry);
    try { this.socket.close(1000, "signed out"); } catch { /* already closed */ }
  }
}
