// The live page (`mcp-fleet run --dashboard`): follows /events (server-sent events) and
// redraws the report in place: each update swaps <main> and #chart-data and draws the
// charts again (report.js); the final one is the run's report.html. The body counts the
// updates (data-updates) and says when the last came (data-final).
"use strict";
(function () {
  const main = document.querySelector("main");
  const banner = document.createElement("div");
  banner.id = "live-status";
  banner.className = "notice";
  banner.setAttribute("role", "status");
  banner.style.cssText = "max-width:1320px;margin:12px auto 0;";
  banner.textContent = (window.mcpFleetLive || {}).status || "live";
  document.body.insertBefore(banner, main);
  let updates = 0;
  const events = new EventSource("/events");
  events.addEventListener("update", (e) => {
    const u = JSON.parse(e.data);
    if (u.main) {
      main.innerHTML = u.main;
      document.getElementById("chart-data").textContent = u.data;
      window.mcpFleetDraw();
    }
    updates += 1;
    document.body.dataset.updates = String(updates);
    banner.textContent = u.status;
    if (u.final) {
      document.body.dataset.final = "true";
      events.close();
    }
  });
  events.onerror = () => {
    if (document.body.dataset.final !== "true") {
      banner.textContent = "disconnected: the run ended or its process is gone; these are the last figures seen";
    }
  };
})();
