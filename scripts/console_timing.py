"""How the web console's timeline copes with a long trace (docs/CONSOLE.md, "Testing"):
filling a server's trace with a ping load, then timing the page on it in headless
Chromium. Shared by scripts/console-browser-test.py (a trace of 100,000 entries, in
`make test`) and scripts/probes/console-large-trace.py (as many as the page keeps)."""
import json
import subprocess
import time
import urllib.request


def settled_trace_seq(port, host="127.0.0.1"):
    """The trace's last sequence number once the server has handled all it was sent."""
    request = urllib.request.Request(f"http://{host}:{port}/control/settle", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["traceSeq"]


def fill_trace(mockchat, port, entries, deadline=60):
    """Runs ping loads against the server until its trace reaches `entries`; returns the last sequence number."""
    kept, end = settled_trace_seq(port), time.monotonic() + deadline
    while kept < entries and time.monotonic() < end:
        subprocess.run([mockchat, "bench", "ping", "--server", f"127.0.0.1:{port}", "--connections", "20",
                        "--rate", "0", "--pipeline", "16", "--duration", "3", "--warmup", "0", "--no-progress"],
                       check=True, stdout=subprocess.DEVNULL, timeout=deadline)
        kept = settled_trace_seq(port)
    return kept


# Runs in the page: each timing the page's own work for one user action, measured to the
# next animation frame (so the layout and the rows' drawing are in it), and the frame
# intervals while the timeline is scrolled by wheel events (sent over CDP meanwhile).
TIMINGS = """(async () => {
  const c = window.mockchatConsole, timeline = document.getElementById('timeline');
  const form = document.getElementById('filters');
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  const round = (x) => Math.round(x * 10) / 10;
  await frame();
  // Each scroll position: the rows in view rebuilt and laid out, as a scroll event does.
  const scrolls = [];
  for (let i = 1; i <= 20; i++) {
    const s = performance.now();
    timeline.scrollTop = timeline.scrollHeight * i / 20;
    c.renderNow();
    document.getElementById('rows').getBoundingClientRect();
    scrolls.push(performance.now() - s);
    await frame();
  }
  scrolls.sort((a, b) => a - b);
  async function timed(change, undo) {
    const s = performance.now();
    change(); form.dispatchEvent(new Event('input'));
    await frame();
    const ms = performance.now() - s, hits = c.shown();
    undo(); form.dispatchEvent(new Event('input'));
    await frame();
    return [round(ms), hits];
  }
  const search = form.querySelector('input[name=search]'), conn = form.querySelector('input[name=conn]');
  const kindOut = form.querySelector('input[name=kind][value=out]');
  const [searchMs, searchHits] = await timed(() => { search.value = 'pong'; }, () => { search.value = ''; });
  const [connMs, connHits] = await timed(() => { conn.value = 'c7'; }, () => { conn.value = ''; });
  const [kindMs, kindHits] = await timed(() => { kindOut.checked = false; }, () => { kindOut.checked = true; });
  const memory = performance.memory ? Math.round(performance.memory.usedJSHeapSize / 1048576) : null;
  return {entries: c.entries.length, rows: document.querySelectorAll('#rows .row').length,
          medianScrollRenderMs: round(scrolls[10]), worstScrollRenderMs: round(scrolls[19]), searchMs, searchHits, connFilterMs: connMs, connHits,
          kindFilterMs: kindMs, kindHits, heapMiB: memory};
})()"""

FRAMES_START = """(() => {
  const timeline = document.getElementById('timeline');
  timeline.scrollTop = 0;
  window.frameTimes = [];
  window.framesRunning = true;
  let last = performance.now();
  const tick = (now) => { window.frameTimes.push(now - last); last = now;
                          if (window.framesRunning) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  const r = timeline.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
})()"""

FRAMES_STOP = """(() => {
  window.framesRunning = false;
  const t = window.frameTimes.slice(1).sort((a, b) => a - b);
  const at = (q) => Math.round(t[Math.min(t.length - 1, Math.floor(q * t.length))] * 10) / 10;
  return {frames: t.length, medianFrameMs: at(0.5), p95FrameMs: at(0.95), worstFrameMs: at(1),
          scrolledTo: document.getElementById('timeline').scrollTop};
})()"""


async def measure(page, wheels=60):
    """The page's timings on the trace it holds: TIMINGS, then the frame intervals while
    `wheels` mouse-wheel events of 1,200 px each scroll the timeline."""
    timing = await page.eval(TIMINGS)
    point = await page.eval(FRAMES_START)
    for _ in range(wheels):
        await page.send("Input.dispatchMouseEvent", type="mouseWheel", x=point["x"], y=point["y"], deltaX=0, deltaY=1200)
    return timing | await page.eval(FRAMES_STOP)
