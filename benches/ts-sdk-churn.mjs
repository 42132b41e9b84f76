// Handshake churn with the official TypeScript SDK client (@modelcontextprotocol/sdk):
// CONCURRENCY workers each run sessions back to back until DURATION_S has passed. One
// session is what an SDK user's code does: new transport + Client, connect() (initialize,
// notifications/initialized — the SDK then opens its GET stream), terminateSession()
// (DELETE), close(). Prints one JSON line: sessions, failed, rate and session latency.
//
//   node benches/ts-sdk-churn.mjs URL [CONCURRENCY=32] [DURATION_S=10]
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

// The SDK is installed into benches/node (see benches/compare.sh), not beside this file.
const require = createRequire(pathToFileURL(path.join(import.meta.dirname, "node", "package.json")));
const { Client } = await import(pathToFileURL(require.resolve("@modelcontextprotocol/sdk/client/index.js")));
const { StreamableHTTPClientTransport } = await import(
  pathToFileURL(require.resolve("@modelcontextprotocol/sdk/client/streamableHttp.js"))
);

const [url, concurrency = "32", durationS = "10"] = process.argv.slice(2);
const deadline = performance.now() + Number(durationS) * 1000;
let sessions = 0;
let failed = 0;
let firstError;
const latencies = [];

async function session() {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "ts-sdk-churn", version: "1.0.0" });
  await client.connect(transport);
  await transport.terminateSession();
  await client.close();
}

async function worker() {
  while (performance.now() < deadline) {
    const t0 = performance.now();
    try {
      await session();
      sessions++;
      latencies.push(performance.now() - t0);
    } catch (e) {
      failed++;
      firstError ??= String(e?.message ?? e);
    }
  }
}

const start = performance.now();
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const elapsed = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const q = (p) => (latencies.length ? Math.round(latencies[Math.floor((latencies.length - 1) * p)] * 1000) : 0);
console.log(
  JSON.stringify({
    sessions,
    failed,
    duration_s: elapsed,
    rate_per_s: sessions / elapsed,
    session_p50_us: q(0.5),
    session_p99_us: q(0.99),
    first_error: firstError,
  }),
);
process.exit(0);
