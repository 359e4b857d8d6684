"use strict";
// The MockChat console: every view is read from the control API, every action is a
// control API request (docs/CONSOLE.md). The page holds the trace it has received;
// the timeline renders only the rows in view.
(() => {
  const $ = (id) => document.getElementById(id);
  const consoleToken = document.querySelector('meta[name="console-token"]').content;
  // With --control-token the page is opened as /console?token=T; the token then goes on
  // every request as the control API asks, and leaves the address bar.
  const params = new URLSearchParams(location.search);
  const controlToken = params.get("token");
  if (controlToken) history.replaceState(null, "", location.pathname);

  const KINDS = ["open", "in", "out", "close", "fault", "control"];
  const ROW = 20;
  const MAX_ENTRIES = 500000;
  const VIEW_ROWS = 100; // connections, users and subscriptions drawn at most (the rest counted)
  const LIVE_INTERVAL = 250; // ms between draws of the timeline as entries arrive
  // Under load (the server coalescing pings and pongs) the page draws every 2 s and reads
  // its views every 10 s, and while it is hidden it draws nothing: each frame costs a
  // software-rendered browser about 13 ms of CPU, on a machine whose core it may share
  // with the server (docs/BENCHMARKS.md, "The web console"). Scrolling, clicks and
  // filters still draw at once.
  const BUSY_INTERVAL = 2000, BUSY_REFRESH = 10000;
  let lastRoutineAt = -Infinity; // performance.now() of the newest routine record
  const busy = () => performance.now() - lastRoutineAt < BUSY_INTERVAL;

  function headers(json) {
    const h = { "X-Console-Token": consoleToken };
    if (controlToken) h.Authorization = "Bearer " + controlToken;
    if (json) h["Content-Type"] = "application/json";
    return h;
  }

  /** One control API request; resolves to {ok, status, body}. */
  async function api(method, path, body) {
    const init = { method, headers: headers(body !== undefined), cache: "no-store" };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      return { ok: false, status: 0, body: { error: "the server cannot be reached: " + error.message } };
    }
    const text = await response.text();
    let parsed = text;
    try { parsed = JSON.parse(text); } catch (_) { /* not JSON: kept as text */ }
    return { ok: response.ok, status: response.status, body: parsed };
  }

  /** An action: the request, its answer in the header, and its error where the form shows it. */
  async function act(method, path, body, errorBox) {
    if (errorBox) errorBox.textContent = "";
    const result = await api(method, path, body);
    const summary = `${method} ${path} → ${result.status}`;
    $("action-result").textContent = result.ok ? summary : `${summary}: ${result.body && result.body.error || result.body}`;
    if (!result.ok && errorBox) errorBox.textContent = (result.body && result.body.error) || String(result.body);
    scheduleRefresh();
    return result;
  }

  // ---- time ----
  function clockText(t) {
    if (typeof t !== "number") return "";
    const d = new Date(t * 1000);
    return d.toISOString().slice(11, 23);
  }
  function ago(t) {
    if (typeof t !== "number" || typeof state.now !== "number") return "";
    const s = Math.max(0, state.now - t);
    return s < 60 ? s.toFixed(1) + " s" : Math.floor(s / 60) + " min";
  }

  // ---- state views ----
  const state = { now: null, mode: null, connections: null, presence: null, faults: null }; // as the control API answered

  // A refresh of many connections costs the page (and the server) more: the next one
  // waits ten times as long as the last took, so refreshing takes at most a tenth of the
  // time whatever the size (150 ms and 2 s apart at the least).
  let refreshCost = 0;
  async function refresh() {
    const start = performance.now();
    // The server lists no more than the views draw, picked by the timeline's filters:
    // describing thousands of connections holds its loop, and every ping waits meanwhile.
    const query = `?limit=${VIEW_ROWS}` + (filters.uid ? `&uid=${encodeURIComponent(filters.uid)}` : "") +
      (filters.conn ? `&connection=${encodeURIComponent(filters.conn)}` : "");
    const [clock, connections, presence, faults] = await Promise.all([
      api("GET", "/control/clock"), api("GET", "/control/connections" + query),
      api("GET", "/control/presence" + query), api("GET", "/control/faults"),
    ]);
    if (clock.ok) { state.now = clock.body.now; state.mode = clock.body.mode; }
    if (connections.ok) state.connections = connections.body;
    if (presence.ok) state.presence = presence.body;
    if (faults.ok) state.faults = faults.body;
    renderState();
    refreshCost = performance.now() - start;
  }
  let refreshTimer = null;
  function scheduleRefresh() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, Math.max(150, 10 * refreshCost));
  }

  function selectorMatches(selector, c) {
    if (!selector || c.state !== "logged-in") return false;
    if (selector.uid !== undefined && selector.uid !== c.uid) return false;
    if (selector.deviceId !== undefined && selector.deviceId !== c.deviceId) return false;
    return true;
  }

  /** The faults that reach connection `c`, as short labels. */
  function faultLabels(c) {
    const f = state.faults;
    if (!f) return [];
    const labels = [];
    for (const b of f.blackholes || []) if (selectorMatches(b, c)) labels.push("blackhole");
    for (const l of f.links || []) {
      if (!selectorMatches(l.selector, c)) continue;
      const parts = [];
      if (l.delayMs !== undefined) parts.push(`delay ${l.delayMs}ms`);
      if (l.jitterMs) parts.push(`±${l.jitterMs}`);
      if (l.bytesPerSecond) parts.push(`${l.bytesPerSecond} B/s`);
      if (l.dropPercent) parts.push(`drop ${l.dropPercent}%`);
      if (l.sliceBytes) parts.push(`slice ${l.sliceBytes}`);
      if (l.closeFrame === false) parts.push("no close frame");
      labels.push(`${l.direction} ${parts.join(" ")}`);
    }
    for (const r of f.replies || []) if (selectorMatches(r.selector, c)) labels.push(`reply ${r.op}`);
    return labels;
  }

  // One formatter for every count: toLocaleString builds one on each call.
  const number = new Intl.NumberFormat("en-US").format;
  function esc(text) {
    return String(text ?? "").replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[ch]));
  }

  /** The row that says how many more the view holds than it draws. */
  function more(count, colspan) {
    if (count <= VIEW_ROWS) return "";
    const text = `${number(count - VIEW_ROWS)} more not drawn: the timeline's uid and connection filters pick the rows drawn here`;
    return colspan ? `<tr><td colspan="${colspan}"><em>${text}</em></td></tr>` : `<div><em>${text}</em></div>`;
  }

  function renderState() {
    $("clock-mode").textContent = state.mode || "?";
    $("clock-now").textContent = state.now ? `${clockText(state.now)} (${state.now.toFixed(3)})` : "";
    const listed = state.connections;
    const connections = listed ? listed.connections : [];
    const rows = connections.map((c) => {
      const faults = faultLabels(c).map((l) => `<span class="tag">${esc(l)}</span>`).join("");
      const last = typeof c.lastInboundAt === "number" ? `${ago(c.lastInboundAt)} ago` : "";
      const actions = c.node && c.openedAt === undefined ? "" :
        `<button class="small" data-kick="${esc(c.id)}" ${c.state === "logged-in" ? "" : "disabled"}>kick</button>` +
        `<button class="small" data-close="${esc(c.id)}">close…</button>`;
      return `<tr data-conn="${esc(c.id)}"><td>${esc(c.id)}</td><td>${esc(c.uid)}</td><td>${esc(c.deviceId)}</td>` +
        `<td>${esc(c.platform)}</td><td>${esc(c.state)}</td><td>${esc(typeof c.openedAt === "number" ? clockText(c.openedAt) : "")}</td>` +
        `<td>${esc(last)}</td><td>${faults}</td><td>${actions}</td></tr>`;
    });
    const matching = listed?.matching ?? connections.length, total = listed?.total ?? connections.length;
    $("connections").tBodies[0].innerHTML = (rows.join("") || `<tr><td colspan="9">no connections</td></tr>`) +
      more(matching, 9);
    $("connection-count").textContent = `${total} open` + (matching !== total ? `, ${matching} picked by the filters` : "");
    const p = state.presence;
    if (p) {
      const devices = p.devices || {};
      const users = p.online.map((uid) => {
        const all = devices[uid] || [];
        const count = p.deviceCounts?.[uid] ?? all.length;
        const list = all.slice(0, 10).map((d) => `${esc(d.deviceId)} (${esc(d.platform)}, ${esc(d.connection)})`).join(", ") +
          (count > 10 ? ` and ${number(count - 10)} more devices` : "");
        return `<div class="user"><span class="online">● ${esc(uid)}</span> ${list}</div>`;
      });
      const subs = p.subscriptions.map((s) => {
        const mode = s.subscription ? s.subscription.mode + (s.subscription.roles ? ":" + s.subscription.roles.join(",") : "") : "";
        return `<div class="watch">${esc(s.uid)} on ${esc(s.connection)} [${esc(mode)}] sees ${s.watching.length ? esc(s.watching.slice(0, 10).join(", ")) +
          (s.watching.length > 10 ? ` and ${number(s.watching.length - 10)} more` : "") : "nobody online"}</div>`;
      });
      $("presence").innerHTML = (users.join("") || "nobody online") + more(p.onlineMatching ?? p.online.length) +
        subs.join("") + more(p.subscriptionsMatching ?? p.subscriptions.length);
    }
    renderFaults();
  }

  function renderFaults() {
    const f = state.faults;
    const items = [];
    if (f) {
      const sel = (s) => JSON.stringify(s || {});
      if (f.refuseConnections) items.push(["refuseConnections", { fault: "refuseConnections", enabled: false }]);
      if (f.stallAfterHandshake) items.push(["stall", { fault: "stall", enabled: false }]);
      for (const b of f.blackholes || []) items.push([`blackhole ${sel(b)}`, Object.assign({ fault: "blackhole", enabled: false }, b)]);
      for (const l of f.links || []) {
        const { selector, ...shape } = l;
        items.push([`link ${sel(selector)} ${JSON.stringify(shape)}`,
          Object.assign({ fault: "link", enabled: false, direction: l.direction }, selector)]);
      }
      for (const r of f.replies || []) {
        items.push([`reply ${sel(r.selector)} ${r.op} ${JSON.stringify(r.error || r.result)}`,
          Object.assign({ fault: "reply", op: r.op, enabled: false }, r.selector)]);
      }
    }
    $("faults").innerHTML = items.map(([label, body], i) =>
      `<li>${esc(label)} <button class="small" data-unfault="${i}">remove</button></li>`).join("") || "<li>none</li>";
    $("faults").onclick = (event) => {
      const i = event.target.dataset.unfault;
      if (i !== undefined) act("POST", "/control/faults", items[Number(i)][1], $("fault-error"));
    };
  }

  $("connections").addEventListener("click", async (event) => {
    const kick = event.target.dataset.kick;
    const close = event.target.dataset.close;
    if (kick) act("POST", "/control/kick", { connection: kick, reason: "kicked from the console" });
    if (close) {
      const answer = prompt(`Close ${close} with code (and reason after a space):`, "4000 closed from the console");
      if (answer === null) return;
      const [code, ...reason] = answer.trim().split(" ");
      const number = Number(code);
      act("POST", "/control/push", { connection: close, close: { code: Number.isInteger(number) ? number : code, reason: reason.join(" ") } });
    }
  });

  // ---- action forms ----
  const FAULT_FIELDS = {
    delay: ["uid", "deviceId", "ms"],
    link: ["uid", "deviceId", "direction", "delayMs", "jitterMs", "bytesPerSecond", "dropPercent", "sliceBytes", "closeFrame", "seed"],
    blackhole: ["uid", "deviceId"],
    drop: ["connection", "uid", "deviceId"],
    reply: ["uid", "deviceId", "op", "match", "result", "error", "delayMs", "times"],
    refuseConnections: [],
    stall: [],
  };
  const TEXT_FIELDS = new Set(["uid", "deviceId", "connection", "op", "direction"]);
  function renderFaultFields() {
    const kind = $("fault-kind").value;
    $("fault-fields").innerHTML = FAULT_FIELDS[kind].map((name) =>
      `<label>${name} <input name="${name}" data-field="${name}"></label>`).join("") || "<em>no parameters</em>";
  }
  $("fault-kind").addEventListener("change", renderFaultFields);
  renderFaultFields();

  /** A form field's value: a string for names, else JSON when it parses (so the API checks its type). */
  function fieldValue(name, raw) {
    if (TEXT_FIELDS.has(name)) return raw;
    try { return JSON.parse(raw); } catch (_) { return raw; }
  }
  $("fault-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { fault: $("fault-kind").value };
    for (const input of $("fault-fields").querySelectorAll("input")) {
      if (input.value.trim() !== "") body[input.name] = fieldValue(input.name, input.value.trim());
    }
    act("POST", "/control/faults", body, $("fault-error"));
  });
  $("clear-faults").addEventListener("click", () => act("DELETE", "/control/faults", undefined, $("fault-error")));

  $("push-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    const body = { [form.target.value]: form.targetValue.value.trim() };
    const kind = form.kind.value;
    const raw = form.payload.value;
    body[kind] = kind === "frame" || kind === "bytes" ? raw : fieldValue(kind, raw.trim());
    act("POST", "/control/push", body, $("push-error"));
  });
  $("fixtures-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act("POST", "/control/fixtures", event.target.body.value || "{}", $("fixtures-error"));
  });
  $("advance-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act("POST", "/control/clock/advance", { ms: fieldValue("ms", $("advance-ms").value.trim()) });
  });
  $("reset").addEventListener("click", () => {
    if (confirm("Reset: close every connection with 4009, restore the fixtures, clear faults and the trace?")) {
      act("POST", "/control/reset", {});
    }
  });

  // ---- the timeline ----
  const entries = [];      // every entry received, oldest first; skip markers included
  let shown = [];          // indices into `entries` that pass the filters
  let dropped = 0;         // entries the page let go beyond MAX_ENTRIES
  let lastSeq = 0;
  let skippedTotal = 0;
  let coalescedTotal = 0;   // entries received inside routine records
  let stateChanged = false; // a line since the last refresh may have changed the state views
  const filters = { uid: "", conn: "", search: null, kinds: new Set(KINDS) };
  const range = { from: null, to: null };

  $("kinds").innerHTML = KINDS.map((k) => `<label><input type="checkbox" name="kind" value="${k}" checked>${k}</label>`).join("");
  $("filters").addEventListener("input", () => {
    const form = $("filters");
    const picked = filters.uid + " " + filters.conn;
    filters.uid = form.uid.value.trim();
    filters.conn = form.conn.value.trim();
    const words = form.search.value.trim();
    // Case-insensitive, without a lowercased copy of every line.
    filters.search = words ? new RegExp(words.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i") : null;
    filters.kinds = new Set([...form.querySelectorAll('input[name="kind"]:checked')].map((i) => i.value));
    refilter();
    // The state views list what the uid and connection filters pick: read again, with
    // the refresh's own back-off, when one of them changed.
    if (filters.uid + " " + filters.conn !== picked) scheduleRefresh();
  });
  $("filters").addEventListener("submit", (event) => event.preventDefault());

  const filtering = () => Boolean(filters.uid || filters.conn || filters.search);
  function passes(e) {
    if (e.kind === "skipped") return true;
    // A routine row holds pings (in) and pongs (out) the page has not loaded: it stays under
    // every uid, connection and search filter, and says so (see summary()).
    if (e.kind === "routine") return filters.kinds.has("in") || filters.kinds.has("out");
    if (!filters.kinds.has(e.kind)) return false;
    if (filters.uid && e.uid !== filters.uid) return false;
    if (filters.conn && e.conn !== filters.conn) return false;
    if (filters.search && !filters.search.test(e.line)) return false;
    return true;
  }
  function refilter() {
    shown = [];
    for (let i = 0; i < entries.length; i++) if (passes(entries[i])) shown.push(i);
    layout(true);
  }

  /** A trace entry kept as a compact row: the fields the filters and the row need, and
   *  the line itself (searched, and parsed again only when its row is drawn). */
  function entryRow(e, line) {
    return { seq: e.seq, t: e.t, kind: e.kind, conn: e.conn, uid: e.uid, device: e.device, line };
  }

  /** A received line: an entry, a skip marker or a routine record, kept as a row. */
  function addLine(line) {
    let e;
    try { e = JSON.parse(line); } catch (_) { return; }
    if (e.hello) return;
    let row;
    if (e.skipped) {
      skippedTotal += e.skipped;
      $("skipped").hidden = false;
      $("skipped").textContent = `${skippedTotal} entries skipped`;
      lastSeq = Math.max(lastSeq, e.to);
      row = { kind: "skipped", line };
    } else if (e.routine) {
      // Pings and pongs the server coalesced under load: one row, loaded on a click.
      const r = e.routine;
      if (r.to <= lastSeq) return;
      lastSeq = r.to;
      coalescedTotal += r.count;
      lastRoutineAt = performance.now();
      row = { kind: "routine", from: r.from, to: r.to, count: r.count, connections: r.connections, t: r.t, state: "" };
    } else {
      if (e.seq <= lastSeq) return;
      lastSeq = e.seq;
      row = entryRow(e, line);
      // Pings and what the server sends change no view but the timeline.
      if (e.kind !== "out" && !(e.kind === "in" && e.frame && e.frame.op === "ping")) stateChanged = true;
    }
    entries.push(row);
    if (passes(row)) shown.push(entries.length - 1);
  }

  /** Replaces routine row `row` by its entries, read from the trace's history pages
   *  (a run is a contiguous range of sequence numbers). What the trace has let go stays
   *  as a row that says so. */
  async function expand(row) {
    if (row.state) return;
    row.state = "loading";
    queueRender();
    const loaded = [];
    try {
      let since = row.from - 1;
      while (since < row.to) {
        const limit = Math.min(HISTORY_PAGE, row.to - since);
        const lines = await historyPage(since, limit);
        for (const line of lines) {
          const e = JSON.parse(line);
          if (e.seq >= row.from && e.seq <= row.to) loaded.push(entryRow(e, line));
          since = Math.max(since, e.seq);
        }
        if (lines.length < limit) break;
      }
    } catch (error) {
      row.state = "";
      $("detail").textContent = `could not expand seq ${row.from} to ${row.to}: ${error.message}`;
      return queueRender();
    }
    const index = entries.indexOf(row);
    if (index < 0) return; // let go meanwhile
    if (loaded.length < row.count) {
      // The oldest part of the range has left the trace (its capacity, or a reset).
      row.state = "gone";
      row.count -= loaded.length;
      if (loaded.length) row.to = loaded[0].seq - 1;
      loaded.unshift(row);
    }
    entries.splice(index, 1, ...loaded);
    refilter();
  }

  /** Lets the oldest rows go once the page holds a tenth more than MAX_ENTRIES, so the
   *  cut (and the shift of `shown`) happens once per MAX_ENTRIES / 10 rows. */
  function trimEntries() {
    if (entries.length <= MAX_ENTRIES * 1.1) return;
    const cut = entries.length - MAX_ENTRIES;
    entries.splice(0, cut);
    dropped += cut;
    let keep = 0;
    while (keep < shown.length && shown[keep] < cut) keep++;
    shown = shown.slice(keep);
    for (let i = 0; i < shown.length; i++) shown[i] -= cut;
  }

  function who(e) {
    return [e.conn, e.uid, e.device].filter((x) => x).join(" ");
  }
  /** The full entry of a row, parsed from its line (only for rows drawn or clicked). */
  function full(row) {
    if (row.kind === "routine") return Object.assign({}, row);
    return Object.assign(JSON.parse(row.line), { kind: row.kind });
  }
  function summary(e) {
    if (e.skipped) return `${e.skipped} entries skipped (seq ${e.from}–${e.to}): the console fell behind`;
    if (e.kind === "routine") {
      const what = `${number(e.count)} pings and pongs on ${number(e.connections)} connection${e.connections === 1 ? "" : "s"}, ` +
        `seq ${e.from}–${e.to}`;
      if (e.state === "gone") return `${what}: no longer in the server's trace, which keeps only the newest entries`;
      if (e.state === "loading") return `${what}: loading…`;
      return `${what}: ${filtering() ? "not loaded, so not filtered or searched; " : ""}click to load them`;
    }
    let text = "";
    if (e.kind === "close") text = `${e.code ?? ""} ${e.text ?? ""}${(e.text || "").startsWith("server closes") ? " [by server]" : ""}`;
    else if (e.kind === "control") text = `${e.route ?? ""} ${e.text ?? ""} ${e.frame ? JSON.stringify(e.frame) : ""}`;
    else if (e.frame !== undefined) text = JSON.stringify(e.frame) + (e.text ? " " + e.text : "");
    else text = e.text ?? "";
    return text;
  }

  const timeline = $("timeline");
  let renderQueued = false, layoutQueued = false, lastLayout = 0;
  /** Sizes the list to the rows shown, follows the newest row, and draws the rows in view. */
  function layout(force) {
    layoutQueued = false;
    lastLayout = performance.now();
    $("spacer").style.height = shown.length * ROW + "px";
    $("timeline-count").textContent = `${shown.length} shown of ${entries.length} kept` +
      (coalescedTotal ? `, ${number(coalescedTotal)} pings and pongs received coalesced` : "") +
      (dropped ? `, ${dropped} oldest let go` : "") + `, last seq ${lastSeq}` +
      (busy() ? `, drawn every ${BUSY_INTERVAL / 1000} s under load` : "");
    if (document.querySelector('#filters input[name="follow"]').checked) timeline.scrollTop = timeline.scrollHeight;
    if (force) render(); else queueRender();
  }
  /** One layout and one render for the lines that arrive within LIVE_INTERVAL ms, in an
   *  animation frame: drawing a fast stream's every frame costs the page most of a core
   *  and shows nothing a reader can follow. Each draw costs the renderer a frame (style,
   *  layout, paint, raster) whatever it changes, so four a second, not ten. Scrolling
   *  still draws in every frame. */
  function queueLayout() {
    if (layoutQueued) return;
    layoutQueued = true;
    if (!document.hidden) drawSoon(); // else when the page shows again
  }
  function drawSoon() {
    setTimeout(() => requestAnimationFrame(() => { if (layoutQueued && !document.hidden) layout(true); }),
      Math.max(0, lastLayout + (busy() ? BUSY_INTERVAL : LIVE_INTERVAL) - performance.now()));
  }
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) return;
    if (layoutQueued) drawSoon();
    refresh();
  });
  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => { renderQueued = false; render(); });
  }
  function inRange(e) {
    return range.from !== null && e.seq !== undefined && e.seq >= range.from && e.seq <= (range.to ?? range.from);
  }
  let renderedTop = -1; // the scroll position the rows in the page were drawn for
  /** The markup of the row at position `r` of the rows shown. */
  function rowHtml(r) {
    const e = full(entries[shown[r]]);
    const cls = "row" + (inRange(e) ? " inrange" : "") + (e.kind === "routine" ? " routine" : "");
    return `<div class="${cls}" data-index="${shown[r]}"><span class="seq">${e.seq ?? e.from ?? ""}</span>` +
      `<span class="t">${clockText(e.t)}</span><span class="k k-${esc(e.kind)}">${esc(e.kind)}</span>` +
      `<span class="who">${esc(who(e))}</span> ${esc(summary(e))}</div>`;
  }
  // The rows in the page by position, each with the markup it was drawn from. A draw keeps
  // every row whose markup is unchanged: a live stream adds a row or two per draw, and
  // rebuilding all the rows in view each time (their style, layout, text and paint) was
  // most of the page's CPU under load.
  let drawn = new Map();
  function render() {
    renderQueued = false;
    renderedTop = timeline.scrollTop;
    const first = Math.max(0, Math.floor(timeline.scrollTop / ROW) - 5);
    const count = Math.ceil(timeline.clientHeight / ROW) + 10;
    const last = Math.min(shown.length, first + count);
    const rows = $("rows");
    const next = new Map();
    for (let r = first; r < last; r++) {
      const html = rowHtml(r);
      const old = drawn.get(r);
      if (old && old.html === html) { next.set(r, old); drawn.delete(r); continue; }
      const holder = document.createElement("div");
      holder.innerHTML = html;
      next.set(r, { html, element: holder.firstChild });
    }
    for (const { element } of drawn.values()) element.remove();
    // In the order of the rows, as the page reads them.
    let cursor = rows.firstChild;
    for (const { element } of next.values()) {
      if (element === cursor) cursor = cursor.nextSibling;
      else rows.insertBefore(element, cursor);
    }
    drawn = next;
    rows.style.transform = `translateY(${first * ROW}px)`;
  }
  timeline.addEventListener("scroll", () => {
    const atBottom = timeline.scrollTop + timeline.clientHeight >= timeline.scrollHeight - ROW;
    document.querySelector('#filters input[name="follow"]').checked = atBottom;
    if (timeline.scrollTop !== renderedTop) queueRender(); // not the scroll of a layout that drew already
  });
  window.addEventListener("resize", queueRender);
  $("rows").addEventListener("click", (event) => {
    const row = event.target.closest(".row");
    if (!row) return;
    const picked = entries[Number(row.dataset.index)];
    const e = full(picked);
    $("detail").textContent = JSON.stringify(e, null, 2);
    if (picked.kind === "routine") return expand(picked);
    if (e.seq === undefined) return;
    if (event.shiftKey && range.from !== null) {
      range.to = Math.max(range.from, e.seq);
      range.from = Math.min(range.from, e.seq);
    } else {
      range.from = e.seq;
      range.to = null;
    }
    $("range").textContent = `range: seq ${range.from} to ${range.to ?? "the end"}`;
    queueRender();
  });
  $("clear-range").addEventListener("click", () => {
    range.from = null;
    range.to = null;
    $("range").textContent = "range: whole session";
    queueRender();
  });

  $("save-scenario").addEventListener("click", async () => {
    $("scenario-error").textContent = "";
    const name = "console-" + new Date().toISOString().slice(0, 19).replace(/[-:T]/g, "");
    const body = { name };
    if (range.from !== null) { body.from = range.from; body.to = range.to ?? null; }
    const result = await api("POST", "/control/console/scenario", body);
    if (!result.ok) {
      $("scenario-error").textContent = (result.body && result.body.error) || String(result.body);
      return;
    }
    const blob = new Blob([result.body.yaml], { type: "application/yaml" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name + ".yaml";
    document.body.appendChild(link);
    link.click();
    link.remove();
    $("action-result").textContent = `scenario ${name}.yaml: ${result.body.steps} steps`;
  });

  // ---- feeding the timeline: history by pages, then the live stream ----
  const HISTORY_PAGE = 20000;

  /** The lines of one page of the trace's history: up to `limit` entries after seq
   *  `since`. Throws when the server refuses, with its status and reason. */
  async function historyPage(since, limit) {
    const response = await fetch(`/control/trace?since=${since}&limit=${limit}`, { headers: headers(false), cache: "no-store" });
    const text = await response.text();
    if (!response.ok) throw new Error(`GET /control/trace: ${response.status} ${text}`);
    return text.split("\n").filter((l) => l);
  }

  async function loadHistory() {
    for (;;) {
      const lines = await historyPage(lastSeq, HISTORY_PAGE);
      for (const line of lines) addLine(line);
      trimEntries();
      queueLayout();
      if (lines.length < HISTORY_PAGE) return;
    }
  }

  async function stream() {
    const status = $("stream-status");
    for (;;) {
      try {
        const response = await fetch(`/control/console/events?since=${lastSeq}`, { headers: headers(false), cache: "no-store" });
        if (!response.ok) {
          const body = await response.text();
          status.textContent = `stream refused: ${response.status} ${body}`;
          status.className = "status";
          return;
        }
        status.textContent = "live";
        status.className = "status live";
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let pending = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          pending += decoder.decode(value, { stream: true });
          const cut = pending.lastIndexOf("\n");
          if (cut < 0) continue;
          for (const line of pending.slice(0, cut).split("\n")) if (line) addLine(line);
          pending = pending.slice(cut + 1);
          trimEntries();
          queueLayout();
          if (stateChanged) { stateChanged = false; scheduleRefresh(); }
        }
      } catch (error) {
        status.textContent = "stream lost: " + error.message;
      }
      status.className = "status";
      status.textContent = "reconnecting…";
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  // The system clock moves without entries, and pings (which refresh nothing) move
  // "last frame": the state views are read again every 2 s (10 s under load) whatever comes.
  (function everyTwoSeconds() {
    setTimeout(() => (document.hidden ? Promise.resolve() : refresh()).finally(everyTwoSeconds),
      Math.max(busy() ? BUSY_REFRESH : 2000, 10 * refreshCost));
  })();

  // For tests and measurements: what the page holds, one synchronous layout or render,
  // and a scroll that puts the row of entries[index] at the top of the timeline.
  window.mockchatConsole = { entries, shown: () => shown.length, lastSeq: () => lastSeq, skipped: () => skippedTotal,
    coalesced: () => coalescedTotal, renderNow: render, layoutNow: () => layout(true),
    scrollToIndex: (index) => { timeline.scrollTop = Math.max(0, shown.indexOf(index)) * ROW; } };
  refresh();
  loadHistory().then(stream, (error) => {
    $("stream-status").textContent = "history refused: " + error.message;
  });
})();
