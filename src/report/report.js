// mcp-fleet report charts: canvas line and bar charts, no library. Data comes from the
// JSON block #chart-data, already cut down to at most ~1000 points per series. Every
// chart answers hover and keyboard focus (arrow keys) with the exact values of the
// nearest interval, and sets data-points to the number of points it drew.
"use strict";
// One function that draws the page from #chart-data, run once on load; the live page
// (`run --dashboard`) swaps <main> and #chart-data and runs it again.
window.mcpFleetDraw = function () {
  const DATA = JSON.parse(document.getElementById("chart-data").textContent);
  // Okabe–Ito colours (told apart with the common colour-vision deficiencies; its yellow
  // left out, unreadable on white); past seven series the dash pattern changes too.
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000"];
  const DASHES = [[], [6, 3], [2, 2]];
  const pick = (i) => ({ color: PALETTE[i % PALETTE.length], dash: DASHES[Math.floor(i / PALETTE.length) % DASHES.length] });
  // The percentile lines: colours apart, and line styles where two come close.
  const LAT = {
    p50: { color: "#0072B2", dash: [] }, p90: { color: "#009E73", dash: [] },
    p95: { color: "#E69F00", dash: [5, 3] }, p99: { color: "#D55E00", dash: [], width: 2 },
    max: { color: "#000000", dash: [2, 2] },
  };
  const INTERVAL = DATA.interval_s || 1;

  function fmtUs(us) {
    if (us < 1000) return Math.round(us) + "µs";
    if (us < 1e6) return +(us / 1000).toPrecision(3) + "ms";
    return +(us / 1e6).toPrecision(3) + "s";
  }
  // Tooltips show the value as recorded (microseconds, 3 significant figures).
  function fmtUsExact(us) {
    if (us < 1000) return Math.round(us) + " µs";
    if (us < 1e6) return (us / 1000).toFixed(3) + " ms";
    return (us / 1e6).toFixed(4) + " s";
  }
  function fmtNum(n) {
    if (n >= 1e6) return +(n / 1e6).toPrecision(3) + "M";
    if (n >= 1e3) return +(n / 1e3).toPrecision(3) + "k";
    return +n.toPrecision(3) + "";
  }
  const fmtRate = (v) => (+v).toFixed(2) + " /s";
  const fmtCount = (v) => Math.round(v) + "";
  function fmtTime(s) {
    if (s < 120) return Math.round(s) + "s";
    if (s < 7200 && s % 60 === 0) return s / 60 + "m";
    if (s < 7200) return +(s / 60).toFixed(1) + "m";
    return +(s / 3600).toFixed(1) + "h";
  }
  const fmtT = (s) => (+s).toFixed(s < 100 ? 2 : 0) + "s";
  // 1-2-5 ticks for a log axis between lo and hi.
  function logTicks(lo, hi) {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of [1, 2, 5]) {
        const v = m * Math.pow(10, e);
        if (v >= lo && v <= hi) out.push(v);
      }
    }
    return out.length > 8 ? out.filter((v) => String(v)[0] === "1") : out;
  }
  // Time ticks on whole seconds, minutes or hours, about six of them.
  function timeTicks(lo, hi) {
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
    const step = steps.find((s) => (hi - lo) / s <= 6) || 86400;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(v);
    return out;
  }
  function linTicks(lo, hi, n) {
    const span = hi - lo || 1;
    const step0 = span / n;
    const mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0) || step0;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }

  function setup(canvas) {
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    canvas.width = w * dpr; canvas.height = h * dpr;
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    g.font = "11px system-ui, sans-serif";
    return { g, w, h };
  }
  function legendRows(g, w, series) {
    const rows = [];
    let x = 52, row = [];
    for (const s of series) {
      const wd = g.measureText(s.name).width + 30;
      if (x + wd > w - 8 && row.length) { rows.push(row); row = []; x = 52; }
      row.push([s, x]); x += wd;
    }
    if (row.length) rows.push(row);
    return rows;
  }
  function axes(g, c) {
    g.strokeStyle = "#e3e7ee"; g.fillStyle = "#5d6675"; g.lineWidth = 1;
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const v of c.yTicks) {
      const y = Math.round(c.Y(v)) + 0.5;
      g.beginPath(); g.moveTo(c.pad.l, y); g.lineTo(c.pad.l + c.pw, y); g.stroke();
      g.fillText(c.fmtY(v), c.pad.l - 6, y);
    }
    g.textAlign = "center"; g.textBaseline = "top";
    for (const [x0, label] of c.xTicks) {
      const x = Math.round(x0) + 0.5;
      if (x < c.pad.l - 1 || x > c.pad.l + c.pw + 1) continue;
      g.beginPath(); g.moveTo(x, c.pad.t); g.lineTo(x, c.pad.t + c.ph); g.stroke();
      g.fillText(label, x, c.pad.t + c.ph + 4);
    }
    g.strokeStyle = "#b8c0cc"; g.strokeRect(c.pad.l + 0.5, c.pad.t + 0.5, c.pw, c.ph);
  }

  // Line chart of series [{name, color, dash, width, x[], y[], partial}] with opts:
  // ylog, xmin/xmax, xTicks (values), fmtX, fmtY (axes), tipX, tipY (tooltip), hline.
  // Returns what the tooltip needs.
  function drawLines(canvas, series, opts, cursor) {
    const { g, w, h } = setup(canvas);
    const rows = legendRows(g, w, series);
    const pad = { l: 52, r: 28, t: 8 + rows.length * 14, b: 20 };
    const pw = w - pad.l - pad.r, ph = h - pad.t - pad.b;
    let xs = [], ys = [];
    for (const s of series) { xs = xs.concat(s.x); ys = ys.concat(s.y.filter((v) => !opts.ylog || v > 0)); }
    if (!xs.length || !ys.length) {
      g.fillStyle = "#8a94a6"; g.fillText(opts.empty || "no data", pad.l + 8, pad.t + 20); return null;
    }
    const xmin = opts.xmin !== undefined ? opts.xmin : Math.min(...xs);
    let xmax = opts.xmax !== undefined ? opts.xmax : Math.max(...xs);
    if (xmax <= xmin) xmax = xmin + 1;
    let ymin = opts.ylog ? Math.max(1, Math.min(...ys)) : 0;
    let ymax = Math.max(...ys, opts.hline ? opts.hline.value : 0);
    if (opts.ylog) { ymin = Math.pow(10, Math.floor(Math.log10(ymin))); ymax = Math.max(ymax * 1.2, ymin * 10); }
    else { ymax = ymax > 0 ? ymax * 1.1 : 1; }
    const X = (v) => pad.l + ((v - xmin) / (xmax - xmin)) * pw;
    const Y = opts.ylog
      ? (v) => pad.t + ph - ((Math.log10(Math.max(v, ymin)) - Math.log10(ymin)) / (Math.log10(ymax) - Math.log10(ymin))) * ph
      : (v) => pad.t + ph - (v / ymax) * ph;
    const xv = opts.xTicks || timeTicks(xmin, xmax);
    const c = {
      pad, pw, ph, X, Y, fmtY: opts.fmtY, yTicks: opts.ylog ? logTicks(ymin, ymax) : linTicks(0, ymax, 4),
      xTicks: xv.map((v) => [X(v), opts.fmtX(v)]),
    };
    axes(g, c);
    g.save(); g.beginPath(); g.rect(pad.l, pad.t, pw, ph); g.clip();
    if (opts.hline) {
      g.strokeStyle = "#8a94a6"; g.setLineDash([4, 4]); g.lineWidth = 1; g.beginPath();
      g.moveTo(pad.l, Y(opts.hline.value)); g.lineTo(pad.l + pw, Y(opts.hline.value)); g.stroke();
      g.setLineDash([]); g.fillStyle = "#5d6675"; g.textAlign = "right"; g.textBaseline = "bottom";
      g.fillText(opts.hline.label, pad.l + pw - 4, Y(opts.hline.value) - 2);
    }
    for (const s of series) {
      const n = s.x.length;
      // A partial last interval: its segment dashed and its point hollow.
      const full = s.partial && n > 1 ? n - 1 : n;
      g.strokeStyle = s.color; g.lineWidth = s.width || 1.5; g.setLineDash(s.dash || []);
      g.beginPath();
      for (let i = 0; i < full; i++) {
        const x = X(s.x[i]), y = Y(s.y[i]);
        if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
      }
      if (n === 1) g.arc(X(s.x[0]), Y(s.y[0]), 2, 0, 7);
      g.stroke();
      if (full < n) {
        g.setLineDash([3, 3]); g.beginPath();
        g.moveTo(X(s.x[n - 2]), Y(s.y[n - 2])); g.lineTo(X(s.x[n - 1]), Y(s.y[n - 1])); g.stroke();
        g.setLineDash([]); g.fillStyle = "#fff"; g.beginPath();
        g.arc(X(s.x[n - 1]), Y(s.y[n - 1]), 3, 0, 7); g.fill(); g.stroke();
      }
      g.setLineDash([]);
    }
    if (cursor !== undefined) {
      g.strokeStyle = "#1d2330"; g.lineWidth = 1; g.beginPath();
      g.moveTo(Math.round(X(cursor)) + 0.5, pad.t); g.lineTo(Math.round(X(cursor)) + 0.5, pad.t + ph); g.stroke();
    }
    g.restore();
    g.textAlign = "left"; g.textBaseline = "middle";
    rows.forEach((row, i) => {
      for (const [s, x] of row) {
        g.strokeStyle = s.color; g.lineWidth = 2; g.setLineDash(s.dash || []);
        g.beginPath(); g.moveTo(x, 6.5 + i * 14); g.lineTo(x + 18, 6.5 + i * 14); g.stroke();
        g.setLineDash([]); g.fillStyle = "#1d2330"; g.fillText(s.name, x + 22, 7 + i * 14);
      }
    });
    const stops = Array.from(new Set(xs)).sort((a, b) => a - b);
    return { stops, at: (px) => xmin + ((px - pad.l) / pw) * (xmax - xmin), X };
  }

  // The index of the point of sorted xs nearest to v.
  function nearest(xs, v) {
    let lo = 0, hi = xs.length - 1;
    while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (xs[mid] < v) lo = mid; else hi = mid; }
    return Math.abs(xs[lo] - v) <= Math.abs(xs[hi] - v) ? lo : hi;
  }

  // One tooltip for the page, however often it is drawn.
  const TIP = document.querySelector("body > .tip") || document.createElement("div");
  TIP.className = "tip"; TIP.setAttribute("role", "status");
  document.body.appendChild(TIP);
  function showTip(canvas, lines, px) {
    TIP.textContent = lines.join("\n");
    TIP.style.display = "block";
    const r = canvas.getBoundingClientRect();
    const left = Math.min(r.left + px + 14, window.innerWidth - TIP.offsetWidth - 8);
    TIP.style.left = Math.max(8, left) + "px";
    TIP.style.top = Math.max(8, r.top + 8) + "px";
  }
  function hideTip() { TIP.style.display = "none"; }

  // What each kind of chart draws: series and options from DATA.
  function timeTip(x, s, i) {
    const last = s && s.partial && i === s.x.length - 1;
    return "interval " + fmtT(x) + (last ? " (partial, the run's last)" : " – " + fmtT(x + INTERVAL));
  }
  function rateSeries(names, table) {
    return names.map((n, i) => Object.assign({ name: n, x: table[n].t, y: table[n].v, partial: table[n].partial }, pick(i)));
  }
  function phaseOrder(names) {
    return names.slice().sort((a, b) => DATA.order.indexOf(a) - DATA.order.indexOf(b));
  }
  const soakAxis = () => ({ xmin: 0, xmax: Math.max(1, (DATA.soak && DATA.soak.span_s) || 1) });
  function fmtBytes(b) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(b) >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return +b.toPrecision(3) + units[i];
  }
  const BY_UNIT = { bytes: fmtBytes, count: fmtNum, cores: (v) => +v.toPrecision(3) + "", seconds: (v) => fmtUs(v * 1e6) };
  const latencyLines = (phase, keys) => {
    const lines = DATA.latency[phase] || {};
    return keys.filter((k) => lines[k]).map((k) => Object.assign({ name: k, x: lines[k].t, y: lines[k].v, width: 1.4 }, LAT[k]));
  };
  const timeOpts = { fmtX: fmtTime, tipX: timeTip };
  const KINDS = {
    latency: (c) => [latencyLines(c.dataset.phase, ["p50", "p90", "p95", "p99", "max"]),
      Object.assign({ ylog: true, fmtY: fmtUs, tipY: fmtUsExact }, timeOpts)],
    // One phase (a small multiple), or every phase when none is named.
    throughput: (c) => [rateSeries(c.dataset.phase ? [c.dataset.phase].filter((n) => DATA.throughput[n])
      : phaseOrder(Object.keys(DATA.throughput)), DATA.throughput),
      Object.assign({ fmtY: fmtNum, tipY: fmtRate }, timeOpts)],
    sessions: () => {
      const s = DATA.sessions || {};
      const series = [];
      if (s.ended) series.push({ name: "sessions/s", color: "#0072B2", width: 2, x: s.ended.t, y: s.ended.v, partial: s.ended.partial });
      if (s.failed && s.failed.v.some((v) => v > 0)) series.push({ name: "failed/s", color: "#D55E00", width: 1.5, x: s.failed.t, y: s.failed.v, partial: s.failed.partial });
      return [series, Object.assign({ fmtY: fmtNum, tipY: fmtRate }, timeOpts)];
    },
    "in-flight": () => {
      const f = DATA.in_flight;
      const series = f ? [{ name: "in flight", color: "#009E73", width: 2, x: f.t, y: f.v }] : [];
      const top = f && f.v.length ? Math.max(...f.v) : 0;
      // The cap as a line only where it does not flatten what was in flight.
      const hline = DATA.cap && DATA.cap <= 1.5 * Math.max(1, top) ? { value: DATA.cap, label: "cap " + DATA.cap } : undefined;
      return [series, { fmtX: fmtTime, tipX: fmtT, fmtY: fmtNum, tipY: fmtCount, hline, empty: "not recorded in this run" }];
    },
    errors: () => [[{ name: "errors/s", color: "#D55E00", width: 2, x: DATA.errors.t, y: DATA.errors.v, partial: DATA.errors.partial }],
      Object.assign({ fmtY: fmtNum, tipY: fmtRate }, timeOpts)],
    resource: (c) => {
      const all = (DATA.soak && DATA.soak.series) || {};
      const names = c.dataset.series.split(",").filter((n) => all[n]);
      const series = names.map((n, i) => Object.assign({ name: n, x: all[n].t, y: all[n].v, width: i === 0 ? 2 : 1.2 }, pick(i)));
      const f = BY_UNIT[names.length ? all[names[0]].unit : "count"] || fmtNum;
      return [series, Object.assign({ fmtX: fmtTime, tipX: fmtT, fmtY: f, tipY: f }, soakAxis())];
    },
    "soak-latency": (c) => [latencyLines(c.dataset.phase, ["p50", "p99"]),
      Object.assign({ ylog: true, fmtX: fmtTime, tipX: fmtT, fmtY: fmtUs, tipY: fmtUsExact }, soakAxis())],
    distribution: () => {
      // x = log10(1 / (1 - p)): 0 at 0%, 1 at 90%, 2 at 99%, …
      const tx = (pct) => Math.log10(1 / Math.max(1e-7, 1 - pct / 100));
      const names = phaseOrder(Object.keys(DATA.distribution));
      const series = names.map((n, i) => {
        const pts = DATA.distribution[n].filter((p) => p[0] < 100);
        return Object.assign({ name: n, x: pts.map((p) => tx(p[0])), y: pts.map((p) => p[1]), width: 1.8 }, pick(i));
      });
      const labels = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"];
      return [series, {
        ylog: true, xmin: 0, xmax: 5, xTicks: [0, 1, 2, 3, 4, 5], fmtX: (v) => labels[v] || "", fmtY: fmtUs,
        tipX: (x) => "p" + +(100 * (1 - Math.pow(10, -x))).toPrecision(6), tipY: fmtUsExact,
      }];
    },
  };

  // Bars of one phase's histogram: equal widths on a log axis of latency.
  function drawBars(canvas, hist, cursor) {
    const { g, w, h } = setup(canvas);
    const pad = { l: 52, r: 28, t: 10, b: 20 };
    const pw = w - pad.l - pad.r, ph = h - pad.t - pad.b;
    const n = hist ? hist.n.length : 0;
    if (!n) { g.fillStyle = "#8a94a6"; g.fillText("no successful sample", pad.l + 8, pad.t + 20); return null; }
    const ymax = Math.max(...hist.n) * 1.1 || 1;
    const bw = pw / n;
    const X = (i) => pad.l + i * bw;
    const Y = (v) => pad.t + ph - (v / ymax) * ph;
    // About eight labels, each at a bucket's lower bound.
    const every = Math.max(1, Math.ceil(n / 8));
    const xTicks = hist.lo.map((lo, i) => [X(i), fmtUs(lo)]).filter((_, i) => i % every === 0);
    axes(g, { pad, pw, ph, Y, fmtY: fmtNum, yTicks: linTicks(0, ymax, 4), xTicks });
    for (let i = 0; i < n; i++) {
      g.fillStyle = i === cursor ? "#D55E00" : "#0072B2";
      g.fillRect(X(i) + 0.5, Y(hist.n[i]), Math.max(1, bw - 1), pad.t + ph - Y(hist.n[i]));
    }
    return { stops: hist.n.map((_, i) => i), at: (px) => Math.floor((px - pad.l) / bw), X: (i) => X(i) + bw / 2 };
  }

  // Draw one canvas (with the cursor at a stop, if given) and the tooltip text there.
  function paint(c, cursor) {
    const kind = c.dataset.chart;
    if (kind === "histogram") {
      const hist = (DATA.histogram || {})[c.dataset.phase];
      const chart = drawBars(c, hist, cursor);
      c.dataset.points = chart ? hist.n.length : 0;
      if (!chart || cursor === undefined) return chart;
      const total = hist.n.reduce((a, b) => a + b, 0) || 1;
      chart.tip = [fmtUsExact(hist.lo[cursor]) + " – " + fmtUsExact(hist.hi[cursor]),
        hist.n[cursor] + " samples (" + (100 * hist.n[cursor] / total).toFixed(2) + "%)"];
      return chart;
    }
    const make = KINDS[kind];
    if (!make) return null;
    const [series, opts] = make(c);
    const chart = drawLines(c, series, opts, cursor);
    c.dataset.points = series.reduce((n, s) => n + s.x.length, 0);
    if (!chart || cursor === undefined) return chart;
    const lines = [];
    let head = null;
    for (const s of series) {
      if (!s.x.length) continue;
      const i = nearest(s.x, cursor);
      if (head === null) head = (opts.tipX || opts.fmtX)(s.x[i], s, i);
      lines.push(s.name + ": " + (opts.tipY || opts.fmtY)(s.y[i]));
    }
    chart.tip = [head].concat(lines);
    return chart;
  }

  function attach(c) {
    let chart = paint(c);
    let at = -1;
    const show = (i, px) => {
      if (!chart || !chart.stops.length) return;
      at = Math.max(0, Math.min(chart.stops.length - 1, i));
      const drawn = paint(c, chart.stops[at]);
      if (drawn) showTip(c, drawn.tip, px !== undefined ? px : drawn.X(chart.stops[at]));
    };
    c.addEventListener("mousemove", (e) => {
      if (!chart) return;
      const px = e.clientX - c.getBoundingClientRect().left;
      show(nearest(chart.stops, chart.at(px)), px);
    });
    const leave = () => { hideTip(); chart = paint(c); };
    c.addEventListener("mouseleave", leave);
    c.addEventListener("blur", leave);
    c.addEventListener("focus", () => show(at < 0 ? 0 : at));
    c.addEventListener("keydown", (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1, End: Infinity, Home: -Infinity }[e.key];
      if (step === undefined) return;
      e.preventDefault();
      show(at + step);
    });
    c.redraw = () => { chart = paint(c); };
    c.showAt = show;
  }

  const canvases = Array.from(document.querySelectorAll("canvas[data-chart]"));
  canvases.forEach(attach);
  const select = document.getElementById("histogram-phase");
  if (select) {
    select.addEventListener("change", () => {
      const c = document.querySelector("canvas[data-chart=histogram]");
      c.dataset.phase = select.value; c.redraw();
    });
  }
  // `report.html#focus=KIND` opens with the first chart of that kind (`latency`,
  // `sessions`, …; `#focus`: the first chart) focused, its values shown. A page without
  // the window's focus gets no focus event, so the values are shown directly.
  const wanted = /^#focus(?:=(.+))?$/.exec(location.hash);
  const first = wanted && canvases.find((c) => !wanted[1] || c.dataset.chart === wanted[1]);
  if (first) { first.focus(); first.showAt(0); }
  let pending = null;
  window.removeEventListener("resize", window.mcpFleetResize || (() => {}));
  window.mcpFleetResize = () => {
    clearTimeout(pending);
    pending = setTimeout(() => canvases.forEach((c) => c.redraw()), 150);
  };
  window.addEventListener("resize", window.mcpFleetResize);
};
window.mcpFleetDraw();
