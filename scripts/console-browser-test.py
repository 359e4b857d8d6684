#!/usr/bin/env python3
"""Drives the web console of `mockchat serve` in headless Chromium over the DevTools
protocol (docs/CONSOLE.md) through one session, with real clients on real sockets:

 1. three clients log in and appear in the page's connections and presence, and the
    uid filter narrows both to one user (the page asks the server for that user alone);
    a hidden page draws nothing and catches up when shown;
 2. a kick from the page closes one with 4001, and the timeline shows the close;
 3. a delay fault added from the page shows on the connection and holds its pong
    until the clock (advanced from the page) passes the delay; removed from the page;
 4. the virtual clock advanced from the page fires the heartbeat close (4002);
 5. "save as scenario" downloads a file that `mockchat test` passes;
 6. a screenshot of the page (taken with the data of steps 1-3) is checked;
 7. a ping load reaches the live page as routine rows (its pings and pongs coalesced
    by the server), drawn every 2 s while it lasts; one whose history page fails can be clicked again and the page says
    why, and one of them expands on a click to exactly its entries; the trace
    of the load (over 100,000 entries) then loads into the reloaded page, which
    scrolls and searches it rendering only the rows in view;
 8. a page of another origin cannot read or drive the console or the control API,
    neither by the loopback address nor by the declared --control-host name, and the
    console is refused under a foreign Host (a rebinding name);
 9. the console reached through the declared --control-host name streams and drives
    the server.

Usage: console-browser-test.py MOCKCHAT OUT_DIR. Prints one line per step and a last
line `console-browser-test: N passed, F failed`.
"""
import asyncio
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import websockets

import importlib.util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_wire import ControlClient, close_code, free_port, login  # noqa: E402
from mockchat_server import Server  # noqa: E402
from devtools import DevTools, start_chromium  # noqa: E402
import console_timing  # noqa: E402

# The PNG reader of scripts/check-screenshot.py (standard library only).
_spec = importlib.util.spec_from_file_location(
    "check_screenshot", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-screenshot.py"))
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
read_png = _module.read_png

MOCKCHAT, OUT = sys.argv[1], sys.argv[2]
CONTROL_HOST = "mockchat.test"  # declared with --control-host; Chromium resolves it to 127.0.0.1
DEADLINE = 15.0
passed, failed = 0, 0


def step(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def control(port, method, path, body=None):
    """A control API request; the answer's text."""
    return ControlClient.for_port(port, timeout=5).request(method, path, body, raw=True)


class Client:
    """A chat client on a real WebSocket (no automatic pings: the clock is virtual)."""

    def __init__(self, port, uid, device, platform):
        self.port, self.uid, self.device, self.platform, self.next_id = port, uid, device, platform, 1

    async def login(self):
        self.ws = await websockets.connect(f"ws://127.0.0.1:{self.port}/v1/ws", ping_interval=None)
        await self.ws.send(login(self.next_id, self.uid, self.device, self.platform))
        self.next_id += 1

    async def request(self, fields):
        ident = self.next_id
        self.next_id += 1
        await self.ws.send(json.dumps({"id": ident, **fields}))
        return ident

    async def reply(self, ident, timeout):
        """The reply to request `ident` within `timeout` seconds, or None."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                frame = json.loads(await asyncio.wait_for(self.ws.recv(), max(0.01, end - time.monotonic())))
            except asyncio.TimeoutError:
                return None
            if frame.get("id") == ident:
                return frame
        return None

    async def close_code(self):
        """The close code the server sent, reading past the frames before it."""
        try:
            while True:
                await asyncio.wait_for(self.ws.recv(), DEADLINE)
        except websockets.ConnectionClosed as closed:
            return close_code(closed)


def serve_attacker_page(port, target_port):
    """A page of another origin (http://attacker.test:PORT) that tries to read and drive the server,
    by its loopback address and by its declared --control-host name."""
    page = f"""<!doctype html><script>
    window.results = {{}};
    async function attempt(name, run) {{
      try {{ window.results[name] = await run(); }} catch (e) {{ window.results[name] = "blocked: " + e.message; }}
    }}
    async function attack(host) {{
      const target = "http://" + host + ":{target_port}";
      await attempt("simplePost@" + host, async () => (await fetch(target + "/control/reset", {{method: "POST", mode: "no-cors",
        headers: {{"Content-Type": "text/plain"}}, body: "{{}}"}})).type);
      await attempt("jsonPost@" + host, async () => (await fetch(target + "/control/kick", {{method: "POST",
        headers: {{"Content-Type": "application/json"}}, body: JSON.stringify({{uid: "alice"}})}})).status);
      await attempt("readPage@" + host, async () => (await (await fetch(target + "/console")).text()).slice(0, 40));
      await attempt("readTrace@" + host, async () => (await (await fetch(target + "/control/trace")).text()).slice(0, 40));
      await attempt("stream@" + host, async () => (await fetch(target + "/control/console/events",
        {{headers: {{"X-Console-Token": "guess"}}}})).status);
      await attempt("frame@" + host, () => new Promise((resolve) => {{
        const frame = document.createElement("iframe");
        frame.src = target + "/console";
        frame.onload = () => {{ try {{ resolve("readable: " + frame.contentDocument.title); }}
                                catch (e) {{ resolve("blocked: " + e.message); }} }};
        document.body.appendChild(frame);
        setTimeout(() => resolve("blocked: no load"), 3000);
      }}));
    }}
    window.done = (async () => {{ await attack("127.0.0.1"); await attack("{CONTROL_HOST}"); return true; }})();
    </script>"""
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "attack.html"), "w") as f:
        f.write(page)
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=folder, **kwargs)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def page_png(dev_result):
    import base64
    return base64.b64decode(dev_result["data"])


def screenshot_shows_data(path):
    """The screenshot is the page with data: its size, and the colours the views use for
    an online user, inbound and outbound frames and a close."""
    width, height, channels, rows = read_png(path)
    wanted = {"online user": (0x1B, 0x7F, 0x35), "in frame": (0x1F, 0x6F, 0xEB), "close": (0xB3, 0x26, 0x1E),
              "control": (0x7B, 0x3F, 0xC4)}
    found = {name: 0 for name in wanted}
    colours = set()
    for row in rows:
        for x in range(0, len(row), channels):
            pixel = tuple(row[x:x + 3])
            colours.add(pixel)
            for name, colour in wanted.items():
                if pixel == colour:
                    found[name] += 1
    missing = [name for name, count in found.items() if count < 10]
    return width == 1400 and height == 900 and len(colours) > 50 and not missing, \
        f"{width}x{height}, {len(colours)} colours, missing {missing or 'nothing'}"


# Scrolls the timeline to the newest routine row (pings and pongs the server coalesced
# under load) and clicks it; returns what the row said and the record's numbers. The
# newest, because on a fast machine the load outruns the trace's capacity and the
# oldest rows' ranges have left it (the page then says so, which is not this check).
CLICK_ROUTINE = """(() => {
  const c = window.mockchatConsole;
  const index = c.entries.findLastIndex((r) => r.kind === 'routine' && !r.state);
  if (index < 0) return null;
  const row = c.entries[index];
  document.querySelector('#filters input[name="follow"]').checked = false;
  c.layoutNow();  // the list sized to every row received, which a live page does on its own tick
  c.scrollToIndex(index);
  c.renderNow();
  const element = document.querySelector(`#rows .row[data-index="${index}"]`);
  const text = element.textContent;
  element.click();
  return {index, text, from: row.from, to: row.to, count: row.count, connections: row.connections,
          records: c.entries.filter((r) => r.kind === 'routine').length, coalesced: c.coalesced(), entries: c.entries.length};
})()"""


# Makes the page hidden (true) or shown (false), as another tab or a minimised window does.
VISIBILITY = """(() => {{ Object.defineProperty(document, 'hidden', {{value: {hidden}, configurable: true}});
  document.dispatchEvent(new Event('visibilitychange')); }})()"""

# Records when each draw of the timeline said it was under load (its heading's text is set
# once per draw).
WATCH_DRAWS = """(() => {
  window.drawsUnderLoad = [];
  const heading = document.getElementById('timeline-count');
  new MutationObserver(() => {
    if (heading.textContent.includes('under load')) window.drawsUnderLoad.push(performance.now());
  }).observe(heading, {childList: true, characterData: true, subtree: true});
})()"""

# The page's next read of the trace's history fails as a lost network fails a fetch.
FAIL_NEXT_HISTORY_PAGE = """(() => {
  const real = window.fetch;
  window.fetch = (url, options) => {
    if (!String(url).startsWith('/control/trace')) return real(url, options);
    window.fetch = real;
    return Promise.reject(new TypeError('the network is down'));
  };
})()"""


async def row_and_detail(page, record):
    """The clicked routine row as the page holds it now, and what the detail pane says."""
    return await page.eval(f"""JSON.stringify(window.mockchatConsole.entries.find((r) => r.from === {record['from']}))
        + ' ' + document.getElementById('detail').textContent.slice(0, 300)""")


async def expand_after_a_failed_page(page):
    """7a. A routine row whose history page fails goes back to a row that a click expands,
    and the detail pane says why; returns False when the row was left loading."""
    await page.eval(FAIL_NEXT_HISTORY_PAGE)
    record = await page.eval(CLICK_ROUTINE)
    if not record:
        return step("the load's pings and pongs arrive as routine rows", False, "no routine row in the page")
    check = f"""(() => {{
      const row = window.mockchatConsole.entries.find((r) => r.kind === 'routine' && r.from === {record['from']});
      const detail = document.getElementById('detail').textContent;
      return row && row.state === '' && detail.includes('the network is down') ? detail : null;
    }})()"""
    try:
        detail = await page.until(check, "the row ready again and the failure in the detail pane")
    except TimeoutError:
        state = await row_and_detail(page, record)
        return step("a routine row whose history page fails can be clicked again", False, f"after the failure: {state}")
    return step("a routine row whose history page fails can be clicked again", True, f"the detail pane: {detail[:120]}")


async def expand_a_routine_row(page, kept):
    """7b. The ping load reached the page live, its pings and pongs as routine rows: one
    clicked expands to exactly its entries, read back from the trace's history."""
    await page.until(f"window.mockchatConsole.lastSeq() >= {kept}", "the live stream reaching the load's end", deadline=60)
    if not await expand_after_a_failed_page(page):
        return
    record = await page.eval(CLICK_ROUTINE)
    if not step("the load's pings and pongs arrive as routine rows", bool(record), "" if record else "no routine row in the page"):
        return
    check = f"""(() => {{
      const c = window.mockchatConsole, from = {record['from']}, to = {record['to']};
      const row = c.entries.find((r) => r.kind === 'routine' && r.from <= to && r.to >= from);
      if (row) return row.state === 'gone' ? {{gone: row}} : null;
      const rows = c.entries.filter((r) => r.seq >= from && r.seq <= to);
      c.renderNow();
      const drawn = [...document.querySelectorAll('#rows .row')].map((e) => e.textContent).find((t) => /ping|pong/.test(t));
      return {{seqs: rows.map((r) => r.seq), kinds: [...new Set(rows.map((r) => r.kind))].sort(),
               connections: new Set(rows.map((r) => r.conn)).size, drawn}};
    }})()"""
    try:
        expanded = await page.until(check, "the clicked routine row replaced by its entries")
    except TimeoutError:
        state = await row_and_detail(page, record)
        step("a routine row expands on a click to exactly its entries", False, f"the row stayed: {state}")
        return
    if "gone" in expanded:
        step("a routine row expands on a click to exactly its entries", False, f"its range left the trace: {expanded}")
        return
    exact = expanded["seqs"] == list(range(record["from"], record["to"] + 1)) and expanded["kinds"] == ["in", "out"] \
        and expanded["connections"] == record["connections"]
    step("a routine row expands on a click to exactly its entries",
         exact and "pings and pongs on" in record["text"] and re.search("ping|pong", expanded["drawn"] or ""),
         f"row '{record['text'].strip()[:90]}': seq {record['from']}-{record['to']}, {record['count']} entries on "
         f"{expanded['connections']} connections loaded; {record['records']} routine rows held "
         f"{record['coalesced']} of the load's entries, the page {record['entries']} rows; exact: {exact}, "
         f"drawn: {str(expanded['drawn'])[:80]}")


async def session():
    server = Server(MOCKCHAT, "--clock", "virtual", "--control-host", CONTROL_HOST)
    port, debug_port, attacker_port = server.port, free_port(), free_port()
    profile = tempfile.mkdtemp()
    downloads = os.path.join(OUT, "downloads")
    os.makedirs(downloads, exist_ok=True)
    for name in os.listdir(downloads):
        os.remove(os.path.join(downloads, name))
    browser, page_url = start_chromium(debug_port, profile, os.path.join(OUT, "chromium.log"),
                                       [f"--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP {CONTROL_HOST} 127.0.0.1"])
    attacker = serve_attacker_page(attacker_port, port)
    started = time.monotonic()
    try:
        async with DevTools(page_url) as page:
            await page.send("Page.enable")
            await page.send("Runtime.enable")
            await page.send("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)
            await page.send("Page.setDownloadBehavior", behavior="allow", downloadPath=os.path.abspath(downloads))
            await page.send("Page.navigate", url=f"http://127.0.0.1:{port}/console")
            await page.until("document.getElementById('stream-status')?.textContent === 'live'", "a live stream")
            step("console loads and streams", True)

            # 1. Three clients log in and appear.
            clients = [Client(port, "alice", "alice-laptop", "desktop"), Client(port, "bob", "bob-phone", "mobile"),
                       Client(port, "carol", "carol-web", "web")]
            for client in clients:
                await client.login()
                await client.reply(1, DEADLINE)
            rows = await page.until("""(() => { const rows = [...document.querySelectorAll('#connections tbody tr')]
                .filter(r => r.textContent.includes('logged-in')); return rows.length === 3 && rows.map(r => r.cells[1].textContent); })()""",
                                    "three logged-in connections")
            online = await page.until("""['alice','bob','carol'].every(u => document.getElementById('presence').textContent.includes('● ' + u))
                && document.getElementById('presence').textContent""", "three users online")
            step("three clients log in and appear", sorted(rows) == ["alice", "bob", "carol"] and "sees" in online,
                 f"connections {rows}")

            # 1a. The uid filter picks the views' rows: the page asks the server for carol's alone.
            async def filter_uid(uid):
                await page.eval(f"""(() => {{ const form = document.getElementById('filters'); form.uid.value = '{uid}';
                    form.dispatchEvent(new Event('input')); }})()""")
            await filter_uid("carol")
            picked = await page.until("""(() => { const rows = [...document.querySelectorAll('#connections tbody tr')];
                const count = document.getElementById('connection-count').textContent;
                const presence = document.getElementById('presence').textContent;
                return rows.length === 1 && !presence.includes('● alice') && count.includes('1 picked')
                    && {rows: rows.map(r => r.cells[1].textContent), count, online: presence.includes('● carol')}; })()""",
                                  "the views narrowed to carol")
            await filter_uid("")
            await page.until("document.querySelectorAll('#connections tbody tr').length === 3", "the views back to three")
            step("the uid filter narrows the connections and presence to one user",
                 picked["rows"] == ["carol"] and picked["online"], f"{picked}")

            # 1b. A hidden page draws nothing; shown again, it draws what came meanwhile.
            drawn_seq = "Number((document.getElementById('timeline-count').textContent.match(/last seq (\\d+)/) || [0, 0])[1])"
            await page.until(f"{drawn_seq} === window.mockchatConsole.lastSeq()", "the timeline drawn up to date")
            await page.eval(VISIBILITY.format(hidden="true"))
            before = await page.eval(drawn_seq)
            await clients[0].request({"op": "ping"})
            seq = console_timing.settled_trace_seq(port)
            await page.until(f"window.mockchatConsole.lastSeq() >= {seq}", "the ping received while hidden")
            # What is shown absent needs a window: a shown page draws within 250 ms.
            hidden_drawn = await page.eval(f"new Promise((done) => setTimeout(() => done({drawn_seq}), 750))")
            await page.eval(VISIBILITY.format(hidden="false"))
            shown_drawn = await page.until(f"{drawn_seq} >= {seq} && {drawn_seq}", "the ping drawn once shown")
            step("a hidden page draws nothing and catches up when shown", hidden_drawn == before and shown_drawn >= seq,
                 f"drawn up to seq {before} when hidden, {hidden_drawn} 750 ms after seq {seq} came; {shown_drawn} once shown")

            # 2. A kick from the page closes bob with 4001; the timeline shows it.
            await page.eval("""document.querySelector('#connections tr[data-conn] button[data-kick]') &&
                [...document.querySelectorAll('#connections tbody tr')].find(r => r.cells[1].textContent === 'bob')
                .querySelector('button[data-kick]').click()""")
            code = await clients[1].close_code()
            shown = await page.until("""[...document.querySelectorAll('#rows .row')].map(r => r.textContent)
                .find(t => t.includes('close') && t.includes('4001') && t.includes('bob'))""", "bob's 4001 close in the timeline")
            control_shown = await page.until("""[...document.querySelectorAll('#rows .row')].map(r => r.textContent)
                .find(t => t.includes('POST /control/kick'))""", "the kick request in the timeline")
            step("a kick from the page closes bob with 4001, shown in the timeline", code == 4001 and bool(control_shown),
                 f"bob's close code {code}; row: {shown.strip()[:90]}")

            # 3. A delay fault from the page shows on alice's connection and holds her pong.
            await page.eval("""(() => { const kind = document.getElementById('fault-kind'); kind.value = 'delay';
                kind.dispatchEvent(new Event('change'));
                document.querySelector('#fault-fields input[name=uid]').value = 'alice';
                document.querySelector('#fault-fields input[name=ms]').value = 'soon';
                document.querySelector('#fault-form button[type=submit]').click(); })()""")
            error = await page.until("document.getElementById('fault-error').textContent", "the API's error for a bad 'ms'")
            step("the fault form shows the API's error", "delay needs 'ms'" in error, error)
            await page.eval("""(() => { document.querySelector('#fault-fields input[name=ms]').value = '500';
                document.querySelector('#fault-form button[type=submit]').click(); })()""")
            tag = await page.until("""(() => { const row = [...document.querySelectorAll('#connections tbody tr')]
                .find(r => r.cells[1].textContent === 'alice'); return row && row.cells[7].textContent; })()""",
                                   "the delay on alice's connection")
            ping = await clients[0].request({"op": "ping"})
            early = await clients[0].reply(ping, 0.5)
            await page.eval("""(() => { document.getElementById('advance-ms').value = '500';
                document.querySelector('#advance-form button').click(); })()""")
            late = await clients[0].reply(ping, DEADLINE)
            shot = await page.send("Page.captureScreenshot", format="png")
            shot_path = os.path.join(OUT, "console.png")
            with open(shot_path, "wb") as f:
                f.write(page_png(shot))
            # A smaller copy for the documentation (docs/console.png).
            small = await page.send("Page.captureScreenshot", format="png",
                                    clip={"x": 0, "y": 0, "width": 1400, "height": 900, "scale": 0.6})
            with open(os.path.join(OUT, "console-small.png"), "wb") as f:
                f.write(page_png(small))
            step("a delay fault from the page shows on alice and holds her pong until the clock passes 500 ms",
                 "delay 500ms" in tag and early is None and late is not None and "result" in late,
                 f"tag '{tag}', pong before the advance: {early}, after: {bool(late)}")
            await page.eval("""[...document.querySelectorAll('#faults button[data-unfault]')][0].click()""")
            await page.until("document.getElementById('faults').textContent.trim() === 'none'", "no faults after removing")
            step("the fault is removed from the page", True)

            # 4. The virtual clock advanced from the page fires the heartbeat close.
            await page.eval("""(() => { document.getElementById('advance-ms').value = '30000';
                document.querySelector('#advance-form button').click(); })()""")
            codes = [await clients[0].close_code(), await clients[2].close_code()]
            shown = await page.until("""[...document.querySelectorAll('#rows .row')].map(r => r.textContent)
                .find(t => t.includes('4002'))""", "a 4002 close in the timeline")
            step("the clock advanced from the page fires the heartbeat close", codes == [4002, 4002], f"alice and carol closed {codes}")

            # 5. Save as scenario: the download passes `mockchat test`.
            await page.eval("document.getElementById('save-scenario').click()")
            end = time.monotonic() + DEADLINE
            files = []
            while time.monotonic() < end and not files:
                files = [n for n in os.listdir(downloads) if n.endswith(".yaml")]
                await asyncio.sleep(0.05)
            error = await page.eval("document.getElementById('scenario-error').textContent")
            if not step("save as scenario downloads a file", bool(files), error or (files[0] if files else "")):
                return
            scenario = os.path.join(downloads, files[0])
            run = subprocess.run([MOCKCHAT, "test", scenario], capture_output=True, text=True, timeout=120)
            last = (run.stdout.strip().splitlines() or [""])[-1]
            step("the saved scenario passes `mockchat test`", run.returncode == 0 and "1 passed" in last,
                 last + ("" if run.returncode == 0 else "\n" + run.stdout[-2000:] + run.stderr[-1000:]))

            # 6. The screenshot shows the views with data.
            ok, detail = screenshot_shows_data(shot_path)
            step("the screenshot shows connections, presence and the timeline", ok, detail)

            # 7. A long trace: a ping load until the server holds 100,000 entries, then the
            # page reloaded reads them back in pages, scrolls, filters and searches them.
            await page.eval(WATCH_DRAWS)
            kept = console_timing.fill_trace(MOCKCHAT, port, 100000)
            await page.until(f"window.mockchatConsole.lastSeq() >= {kept}", "the live stream reaching the load's end",
                             deadline=60)
            draws = await page.eval("window.drawsUnderLoad")
            gaps = [b - a for a, b in zip(draws, draws[1:])]
            step("under load the timeline is drawn every 2 s", len(draws) >= 1 and all(g >= 1900 for g in gaps),
                 f"{len(draws)} draws said 'under load', {round(min(gaps)) if gaps else '-'} ms apart at the least")
            await expand_a_routine_row(page, kept)
            loaded = time.monotonic()
            await page.send("Page.reload", ignoreCache=True)
            await page.until(f"window.mockchatConsole && window.mockchatConsole.lastSeq() >= {kept}", "the whole trace",
                             deadline=60)
            load_seconds = time.monotonic() - loaded
            timing = await console_timing.measure(page)
            step("the timeline stays smooth with the whole trace loaded",
                 timing["entries"] >= 100000 and timing["rows"] < 100 and timing["medianScrollRenderMs"] < 50
                 and max(timing["searchMs"], timing["connFilterMs"], timing["kindFilterMs"]) < 1000
                 and timing["scrolledTo"] > 0 and timing["medianFrameMs"] < 100,
                 f"{json.dumps(timing)}, loaded in {load_seconds:.1f} s")

            # 8. Another origin, and a foreign Host.
            before = control(port, "GET", "/control/trace?since=0&limit=20000")
            await page.send("Page.navigate", url=f"http://attacker.test:{attacker_port}/attack.html")
            await page.until("window.done && window.done.then(() => true)", "the attacker page's attempts")
            results = await page.eval("window.results")
            after = control(port, "GET", "/control/trace?since=0&limit=20000")
            unchanged = before == after
            blocked = all(str(v).startswith("blocked") or v == "opaque" for v in results.values())
            step("a page of another origin can neither read nor drive the server", blocked and unchanged,
                 f"{json.dumps(results)}; trace unchanged: {unchanged}")
            await page.send("Page.navigate", url=f"http://attacker.test:{port}/console")
            body = await page.until("document.readyState === 'complete' && document.body.innerText", "the foreign Host's answer")
            step("the console refuses a foreign Host", "is not allowed" in body and "console-token" not in body, body[:100])

            # 9. The console reached through the declared --control-host name: it streams,
            # reads the views and drives the server (its Host and Origin name the declared host).
            await page.send("Page.navigate", url=f"http://{CONTROL_HOST}:{port}/console")
            status = await page.until("""document.readyState === 'complete' && (document.getElementById('stream-status')
                ?.textContent === 'live' ? 'live' : !document.getElementById('stream-status') && document.body.innerText)""",
                                      f"the console under {CONTROL_HOST}")
            if step(f"the console under the declared name {CONTROL_HOST} loads and streams", status == "live", str(status)[:100]):
                await page.eval("""(() => { const kind = document.getElementById('fault-kind'); kind.value = 'delay';
                    kind.dispatchEvent(new Event('change'));
                    document.querySelector('#fault-fields input[name=uid]').value = 'dave';
                    document.querySelector('#fault-fields input[name=ms]').value = '250';
                    document.querySelector('#fault-form button[type=submit]').click(); })()""")
                shown = await page.until("document.getElementById('faults').textContent.includes('dave') && "
                                         "document.getElementById('action-result').textContent", "dave's fault in the page")
                faults = control(port, "GET", "/control/faults")
                step(f"an action from the console under {CONTROL_HOST} reaches the server",
                     "→ 200" in shown and '"dave"' in faults, f"{shown}; server's faults: {faults[:120]}")
    finally:
        elapsed = time.monotonic() - started
        print(f"console-browser-test: session took {elapsed:.1f} s")
        attacker.shutdown()
        browser.terminate()
        browser.wait(timeout=10)
        server.stop()


def main():
    os.makedirs(OUT, exist_ok=True)
    try:
        asyncio.run(session())
    except Exception as error:  # a step that never came: the failure names it
        step("session", False, f"{type(error).__name__}: {error}")
    print(f"console-browser-test: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
