// mcp-fleet report charts: a few canvas line charts, no library. Data comes from the
// JSON block #chart-data, already cut down to at most ~1000 points per series.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("chart-data").textContent);
  const PALETTE = ["#2563eb", "#16a34a", "#f59e0b", "#dc2626", "#7c3aed", "#0891b2",
    "#db2777", "#65a30d", "#ea580c", "#475569", "#0d9488", "#9333ea"];
  const LAT = { p50: "#2563eb", p90: "#16a34a", p99: "#f59e0b", max: "#dc2626" };

  function fmtUs(us) {
    if (us < 1000) return Math.round(us) + "µs";
    if (us < 1e6) return +(us / 1000).toPrecision(3) + "ms";
    return +(us / 1e6).toPrecision(3) + "s";
  }
  function fmtNum(n) {
    if (n >= 1e6) return +(n / 1e6).toPrecision(3) + "M";
    if (n >= 1e3) return +(n / 1e3).toPrecision(3) + "k";
    return +n.toPrecision(3) + "";
  }
  function fmtTime(s) {
    if (s < 120) return Math.round(s) + "s";
    if (s < 7200 && s % 60 === 0) return s / 60 + "m";
    if (s < 7200) return +(s / 60).toFixed(1) + "m";
    return +(s / 3600).toFixed(1) + "h";
  }
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

  // Draw series [{name, color, x[], y[]}] on a canvas. opts: xlog-like transform via
  // xScale(v)->[0,1] given, ylog, fmtX, fmtY, xTicks.
  function draw(canvas, series, opts) {
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    canvas.width = w * dpr; canvas.height = h * dpr;
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    g.font = "11px system-ui, sans-serif";
    // Legend rows first: they decide the top padding.
    const rows = [];
    if (opts.legend) {
      let x = 52, row = [];
      for (const s of series) {
        const wd = g.measureText(s.name).width + 24;
        if (x + wd > w - 8 && row.length) { rows.push(row); row = []; x = 52; }
        row.push([s, x]); x += wd;
      }
      if (row.length) rows.push(row);
    }
    const pad = { l: 52, r: 28, t: 8 + rows.length * 14, b: 20 };
    const pw = w - pad.l - pad.r, ph = h - pad.t - pad.b;
    let xs = [], ys = [];
    for (const s of series) { xs = xs.concat(s.x); ys = ys.concat(s.y.filter((v) => !opts.ylog || v > 0)); }
    if (!xs.length || !ys.length) {
      g.fillStyle = "#8a94a6"; g.fillText("no data", pad.l + 8, pad.t + 20); return;
    }
    const xmin = opts.xmin !== undefined ? opts.xmin : Math.min(...xs);
    let xmax = opts.xmax !== undefined ? opts.xmax : Math.max(...xs);
    if (xmax <= xmin) xmax = xmin + 1;
    let ymin = opts.ylog ? Math.max(1, Math.min(...ys)) : 0;
    let ymax = Math.max(...ys);
    if (opts.ylog) { ymin = Math.pow(10, Math.floor(Math.log10(ymin))); ymax = Math.max(ymax * 1.2, ymin * 10); }
    else { ymax = ymax > 0 ? ymax * 1.1 : 1; }
    const X = (v) => pad.l + ((v - xmin) / (xmax - xmin)) * pw;
    const Y = opts.ylog
      ? (v) => pad.t + ph - ((Math.log10(Math.max(v, ymin)) - Math.log10(ymin)) / (Math.log10(ymax) - Math.log10(ymin))) * ph
      : (v) => pad.t + ph - (v / ymax) * ph;
    // Grid and axes.
    g.strokeStyle = "#e3e7ee"; g.fillStyle = "#5d6675"; g.lineWidth = 1;
    const yt = opts.ylog ? logTicks(ymin, ymax) : linTicks(0, ymax, 4);
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const v of yt) {
      const y = Math.round(Y(v)) + 0.5;
      g.beginPath(); g.moveTo(pad.l, y); g.lineTo(pad.l + pw, y); g.stroke();
      g.fillText(opts.fmtY(v), pad.l - 6, y);
    }
    const xt = opts.xTicks ? opts.xTicks : timeTicks(xmin, xmax);
    g.textAlign = "center"; g.textBaseline = "top";
    for (const v of xt) {
      const x = Math.round(X(v)) + 0.5;
      if (x < pad.l - 1 || x > pad.l + pw + 1) continue;
      g.beginPath(); g.moveTo(x, pad.t); g.lineTo(x, pad.t + ph); g.stroke();
      g.fillText(opts.fmtX(v), x, pad.t + ph + 4);
    }
    g.strokeStyle = "#b8c0cc"; g.strokeRect(pad.l + 0.5, pad.t + 0.5, pw, ph);
    // Lines.
    g.save(); g.beginPath(); g.rect(pad.l, pad.t, pw, ph); g.clip();
    for (const s of series) {
      g.strokeStyle = s.color; g.lineWidth = s.width || 1.5; g.beginPath();
      for (let i = 0; i < s.x.length; i++) {
        const x = X(s.x[i]), y = Y(s.y[i]);
        if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
      }
      if (s.x.length === 1) { g.arc(X(s.x[0]), Y(s.y[0]), 2, 0, 7); }
      g.stroke();
    }
    g.restore();
    // Legend.
    g.textAlign = "left"; g.textBaseline = "middle";
    rows.forEach((row, i) => {
      for (const [s, x] of row) {
        g.fillStyle = s.color; g.fillRect(x, 5 + i * 14, 12, 3);
        g.fillStyle = "#1d2330"; g.fillText(s.name, x + 15, 7 + i * 14);
      }
    });
  }

  function fmtBytes(b) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(b) >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return +b.toPrecision(3) + units[i];
  }
  // How a resource series' values read, by its unit.
  const BY_UNIT = {
    bytes: fmtBytes,
    count: fmtNum,
    cores: (v) => +v.toPrecision(3) + "",
    seconds: (v) => fmtUs(v * 1e6),
  };

  // The soak section's charts share the run's time axis.
  function soakAxis() {
    return { xmin: 0, xmax: Math.max(1, (DATA.soak && DATA.soak.span_s) || 1) };
  }

  function phaseOrder(names) {
    return names.slice().sort((a, b) => DATA.order.indexOf(a) - DATA.order.indexOf(b));
  }

  function render() {
    for (const c of document.querySelectorAll("canvas[data-chart]")) {
      const kind = c.dataset.chart;
      if (kind === "latency") {
        const lines = DATA.latency[c.dataset.phase] || {};
        const series = ["p50", "p90", "p99", "max"].filter((k) => lines[k])
          .map((k) => ({ name: k, color: LAT[k], x: lines[k].t, y: lines[k].v, width: k === "p99" ? 2 : 1.3 }));
        draw(c, series, { ylog: true, legend: true, fmtX: fmtTime, fmtY: fmtUs });
      } else if (kind === "throughput") {
        const names = phaseOrder(Object.keys(DATA.throughput));
        const series = names.map((n, i) => ({ name: n, color: PALETTE[i % PALETTE.length], x: DATA.throughput[n].t, y: DATA.throughput[n].v }));
        draw(c, series, { legend: true, fmtX: fmtTime, fmtY: fmtNum });
      } else if (kind === "errors") {
        draw(c, [{ name: "errors/s", color: "#dc2626", x: DATA.errors.t, y: DATA.errors.v, width: 2 }],
          { legend: true, fmtX: fmtTime, fmtY: fmtNum });
      } else if (kind === "resource") {
        const all = (DATA.soak && DATA.soak.series) || {};
        const names = c.dataset.series.split(",").filter((n) => all[n]);
        const series = names.map((n, i) => ({ name: n, color: PALETTE[i % PALETTE.length], x: all[n].t, y: all[n].v, width: i === 0 ? 2 : 1.2 }));
        const unit = names.length ? all[names[0]].unit : "count";
        draw(c, series, Object.assign({ legend: true, fmtX: fmtTime, fmtY: BY_UNIT[unit] || fmtNum }, soakAxis()));
        c.dataset.points = series.reduce((n, s) => n + s.x.length, 0);
      } else if (kind === "soak-latency") {
        const lines = DATA.latency[c.dataset.phase] || {};
        const series = ["p50", "p99"].filter((k) => lines[k])
          .map((k) => ({ name: k, color: LAT[k], x: lines[k].t, y: lines[k].v, width: k === "p99" ? 2 : 1.3 }));
        draw(c, series, Object.assign({ ylog: true, legend: true, fmtX: fmtTime, fmtY: fmtUs }, soakAxis()));
        c.dataset.points = series.reduce((n, s) => n + s.x.length, 0);
      } else if (kind === "distribution") {
        // x = log10(1 / (1 - p)): 0 at 0%, 1 at 90%, 2 at 99%, …
        const tx = (pct) => Math.log10(1 / Math.max(1e-7, 1 - pct / 100));
        const names = phaseOrder(Object.keys(DATA.distribution));
        const series = names.map((n, i) => {
          const pts = DATA.distribution[n].filter((p) => p[0] < 100);
          return { name: n, color: PALETTE[i % PALETTE.length], x: pts.map((p) => tx(p[0])), y: pts.map((p) => p[1]), width: 1.8 };
        });
        const labels = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"];
        draw(c, series, {
          ylog: true, legend: true, xmin: 0, xmax: 5, xTicks: [0, 1, 2, 3, 4, 5],
          fmtX: (v) => labels[v] || "", fmtY: fmtUs,
        });
      }
    }
  }
  render();
  let pending = null;
  window.addEventListener("resize", () => { clearTimeout(pending); pending = setTimeout(render, 150); });
})();
