// Where a key's time went, from a trace the predictive echo bench records
// (PREDICT_TRACE=file.json node bench/predict.mjs ...): for each key typed,
// the key event (its timeStamp) to the page's listener, to the send that
// follows the drawing, to the frame after it (its own time, then its
// main-thread work: the animation frame callbacks, style, layout,
// pre-paint) and the ResizeObserver callback the bench stops its clock in.
// The same work is given for the frames that showed no key, to tell the
// key's share from the frame's own.
//
// Usage: node bench/predicttrace.mjs trace.json. It prints the medians,
// in ms. A frame is taken to show the key when it is the first to begin
// after the key was sent (the prediction is drawn just before the send).

import { readFileSync } from 'node:fs';

const raw = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const all = raw.traceEvents ?? raw;

const names = new Map();
for (const e of all) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
// The page's renderer: the one whose main thread dispatched the keys.
const keyDispatch = all.find((e) => e.name === 'EventDispatch' && e.args?.data?.type === 'keydown');
if (!keyDispatch) throw new Error('no key events in the trace');
const pid = keyDispatch.pid;
const on = (e, thread) => e.pid === pid && names.get(`${e.pid}:${e.tid}`) === thread;
const main = all.filter((e) => on(e, 'CrRendererMain')).sort((a, b) => a.ts - b.ts);
const frameTimes = all
  .filter((e) => on(e, 'Compositor') && e.name === 'BeginFrame' && e.ph === 'I')
  .map((e) => e.ts)
  .sort((a, b) => a - b);

const inside = (outer, e) => e.ts >= outer.ts && e.ts < outer.ts + (outer.dur ?? 0);
const ms = (us) => us / 1000;
const median = (xs) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The main thread's frames: each BeginMainFrame and its parts.
const frames = main
  .filter((e) => e.name === 'ProxyMain::BeginMainFrame' && e.ph === 'X')
  .map((f) => {
    const parts = main.filter((e) => e.ph === 'X' && inside(f, e));
    const sum = (n) => parts.filter((e) => e.name === n).reduce((a, e) => a + e.dur, 0);
    const raf = parts.filter((e) => e.name === 'FireAnimationFrame');
    // The page's own callbacks, the bench's probe left out.
    const pageRaf = parts
      .filter((e) => e.name === 'FunctionCall' && e.args?.data?.functionName !== 'frame' && raf.some((r) => inside(r, e)))
      .reduce((a, e) => a + e.dur, 0);
    const ro = parts.find((e) => e.name === 'LocalFrameView::NotifyResizeObservers');
    let time = NaN;
    for (const t of frameTimes) if (t <= f.ts) time = t;
    return {
      ts: f.ts,
      time,
      raf0: raf.length ? raf[0].ts : NaN,
      raf: raf.reduce((a, e) => a + e.dur, 0),
      pageRaf,
      style: sum('UpdateLayoutTree'),
      layout: sum('Layout'),
      prepaint: sum('PrePaint'),
      ro: ro ? ro.ts : NaN,
      key: false,
    };
  });

// The keys: each keydown's EventTiming gives its timeStamp in the page's clock.
const timing = all.filter((e) => e.pid === pid && e.name === 'EventTiming' && e.ph === 'b' && e.args?.data?.type === 'keydown');
const keys = [];
for (const t of timing) {
  const d = t.args.data;
  const disp = main.find((e) => e.name === 'EventDispatch' && e.args?.data?.type === 'keydown' && e.ts >= t.ts - 50000 && e.ts > (keys.at(-1)?.listener ?? 0));
  if (!disp) continue;
  const toTrace = (pageMs) => disp.ts + (pageMs - d.processingStart) * 1000;
  const task = main.find((e) => e.name === 'RunTask' && inside(e, disp));
  const send = main.find((e) => e.name === 'WebSocketSend' && e.ts >= disp.ts && (!task || inside(task, e)));
  if (!send) continue; // not sent (a key the page kept)
  const f = frames.find((x) => x.ts > send.ts);
  if (!f) continue;
  f.key = true;
  keys.push({ ev: toTrace(d.timeStamp), listener: disp.ts, send: send.ts, taskEnd: task ? task.ts + task.dur : NaN, f });
}

const row = (label, xs) => console.log(`${label.padEnd(44)} ${median(xs).toFixed(2)}`);
console.log(`keys: ${keys.length}, frames: ${frames.length}`);
row('key event -> listener', keys.map((k) => ms(k.listener - k.ev)));
row('listener -> sent (drawn)', keys.map((k) => ms(k.send - k.listener)));
row('sent -> end of the input task', keys.map((k) => ms(k.taskEnd - k.send)));
row('key event -> frame time', keys.map((k) => ms(k.f.time - k.ev)));
row('key event -> ResizeObserver (the bench)', keys.map((k) => ms(k.f.ro - k.ev)));
for (const [label, pick] of [
  ['frame time -> BeginMainFrame', (f) => ms(f.ts - f.time)],
  ['BeginMainFrame -> first rAF callback', (f) => ms(f.raf0 - f.ts)],
  ['rAF callbacks', (f) => ms(f.raf)],
  ['  of which the page (not the probe)', (f) => ms(f.pageRaf)],
  ['style', (f) => ms(f.style)],
  ['layout', (f) => ms(f.layout)],
  ['pre-paint', (f) => ms(f.prepaint)],
  ['BeginMainFrame -> ResizeObserver', (f) => ms(f.ro - f.ts)],
]) {
  const k = keys.map((x) => pick(x.f));
  const idle = frames.filter((f) => !f.key).map(pick);
  console.log(`${label.padEnd(44)} ${median(k).toFixed(2)}  (frames without a key ${median(idle).toFixed(2)})`);
}
// Two ways the page makes a key's frame longer: xterm.js drawing output
// (the echo of an earlier key) in it, and the frame waiting for the key's
// own task to end (it began during it).
const drew = keys.filter((k) => k.f.pageRaf > 300);
console.log(`key frames in which xterm.js drew output: ${drew.length} of ${keys.length}; their work ${median(drew.map((k) => ms(k.f.ro - k.f.ts))).toFixed(2)} ms`);
const waited = keys.filter((k) => k.f.time < k.taskEnd && k.f.ts - k.taskEnd < 100);
console.log(`key frames that waited for the key's task: ${waited.length} of ${keys.length}; frame time -> BeginMainFrame ${median(waited.map((k) => ms(k.f.ts - k.f.time))).toFixed(2)} ms`);
