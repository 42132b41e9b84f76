// One MCP session, written the way a user of the official TypeScript SDK writes one: v1
// (`@modelcontextprotocol/sdk` 1.x) or v2 (`@modelcontextprotocol/client` 2.x), whichever
// MCP_TS_MODULES holds. For the mcp-fleet interop suite (interop/record.sh): the same run
// directly against a server and through `mcp-fleet record` must print the same bytes.
//
//   MCP_TS_MODULES=target/interop/npm-ts1/node_modules node ts_client.mjs stdio -- CMD ARGS…
//   MCP_TS_MODULES=…  node ts_client.mjs http URL     Streamable HTTP
//   MCP_TS_MODULES=…  node ts_client.mjs sse URL      legacy HTTP+SSE
//   MCP_TS_MODULES=…  node ts_client.mjs ws URL       WebSocket (v1 only: v2 removed it)
//
// The session: connect (the SDK's default negotiation: v2's default `versionNegotiation`
// is 'legacy', the 2025 `initialize`), list tools, resources and prompts page by page
// (where the server declares them), call `echo`, read the first resource, get the first
// prompt that has required arguments (else the first), ping, close as the SDK closes
// (Streamable HTTP: terminateSession (DELETE), then close). Capabilities: roots (one
// root), sampling (a fixed answer), form elicitation (declined). clientInfo: the SDK has
// no default, so `ts-sdk-v1-client` / `ts-sdk-v2-client` with the SDK's version.
//
// Prints one JSON document (keys sorted, volatile values normalized) of what the client
// saw; exits 1 with a message on stderr on any failure, 2 after 30 s (MCP_CLIENT_TIMEOUT_S).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { readFileSync, existsSync } from 'node:fs';

const LIMIT_S = Number(process.env.MCP_CLIENT_TIMEOUT_S || 30);
const watchdog = setTimeout(() => {
  process.stderr.write(`ts_client: no result after ${LIMIT_S} s, giving up\n`);
  process.exit(2);
}, LIMIT_S * 1000);

function usage(why) {
  process.stderr.write(`ts_client: ${why}\nusage: ts_client.mjs stdio -- CMD ARGS… | http URL | sse URL | ws URL\n`);
  process.exit(1);
}

const modules = process.env.MCP_TS_MODULES;
if (!modules) usage('set MCP_TS_MODULES to a node_modules holding @modelcontextprotocol/sdk (v1) or @modelcontextprotocol/client (v2)');
const req = createRequire(join(modules, 'noop.js'));
const load = name => import(pathToFileURL(req.resolve(name)).href);
const V2 = existsSync(join(modules, '@modelcontextprotocol/client/package.json'));
const PKG = V2 ? '@modelcontextprotocol/client' : '@modelcontextprotocol/sdk';
const SDK_VERSION = JSON.parse(readFileSync(join(modules, PKG, 'package.json'), 'utf8')).version;
const MAJOR = V2 ? 'v2' : 'v1';

const [kind, ...rest] = process.argv.slice(2);
// v1's WebSocketClientTransport uses the global WebSocket, which Node has by default from
// 22 on; Node 20 has it behind --experimental-websocket, as a user there would run it.
if (kind === 'ws' && typeof globalThis.WebSocket === 'undefined' && !process.execArgv.includes('--experimental-websocket')) {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, ['--experimental-websocket', ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', timeout: (LIMIT_S + 5) * 1000 });
  process.exit(r.status ?? 2);
}
let target;
if (kind === 'stdio') {
  if (rest[0] !== '--' || rest.length < 2) usage('stdio wants -- CMD ARGS…');
  target = rest.slice(1);
} else if (['http', 'sse', 'ws'].includes(kind)) {
  if (rest.length !== 1) usage(`${kind} wants one URL`);
  target = rest[0];
} else {
  usage(`unknown transport ${kind ?? '(none)'}`);
}

// ---------------------------------------------------------------- the SDK, as its users import it

let Client, StdioClientTransport, StreamableHTTPClientTransport, SSEClientTransport, WebSocketClientTransport;
let schemas = null; // v1 registers handlers by zod schema, v2 by method name
if (V2) {
  ({ Client, StreamableHTTPClientTransport, SSEClientTransport } = await load('@modelcontextprotocol/client'));
  ({ StdioClientTransport } = await load('@modelcontextprotocol/client/stdio'));
} else {
  ({ Client } = await load('@modelcontextprotocol/sdk/client/index.js'));
  ({ StdioClientTransport } = await load('@modelcontextprotocol/sdk/client/stdio.js'));
  ({ StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js'));
  ({ SSEClientTransport } = await load('@modelcontextprotocol/sdk/client/sse.js'));
  ({ WebSocketClientTransport } = await load('@modelcontextprotocol/sdk/client/websocket.js'));
  schemas = await load('@modelcontextprotocol/sdk/types.js');
}

const NAME = `ts-sdk-${MAJOR}-client`;
const client = new Client({ name: NAME, version: SDK_VERSION }, {
  capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } },
});
const ROOT = { uri: 'file:///tmp/mcp-fleet-interop', name: 'interop' };
const handlers = {
  'roots/list': async () => ({ roots: [ROOT] }),
  'sampling/createMessage': async () => ({
    role: 'assistant', model: 'fixed-model', stopReason: 'endTurn',
    content: { type: 'text', text: `fixed answer from ${NAME}` },
  }),
  'elicitation/create': async () => ({ action: 'decline' }),
};
const schemaOf = {
  'roots/list': 'ListRootsRequestSchema',
  'sampling/createMessage': 'CreateMessageRequestSchema',
  'elicitation/create': 'ElicitRequestSchema',
};
for (const [method, handler] of Object.entries(handlers)) {
  if (V2) client.setRequestHandler(method, handler);
  else client.setRequestHandler(schemas[schemaOf[method]], handler);
}

let transport;
if (kind === 'stdio') {
  // The SDK's default environment (PATH, HOME, …), and the server's stderr passed through.
  transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' });
} else if (kind === 'http') {
  transport = new StreamableHTTPClientTransport(new URL(target));
} else if (kind === 'sse') {
  transport = new SSEClientTransport(new URL(target));
} else {
  if (!WebSocketClientTransport) usage(`the TypeScript SDK ${SDK_VERSION} has no WebSocket client transport`);
  transport = new WebSocketClientTransport(new URL(target));
}

// v1 has no public getter for the negotiated version; its connect() hands it to
// transport.setProtocolVersion when the transport has one (the HTTP ones do): keep a copy.
let negotiated;
if (!V2) {
  const original = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = v => { negotiated = v; original?.(v); };
}

// ---------------------------------------------------------------- the session

// v1 returns one page a call: follow nextCursor. v2 walks every page itself when called
// without a cursor (its "common case"; `listMaxPages`, default 64): one call, pages unseen.
async function all(list, key) {
  if (V2) return { items: (await list(undefined))[key] ?? [], pages: 'walked by the SDK' };
  const items = [];
  let cursor, pages = 0;
  do {
    const page = await list(cursor === undefined ? undefined : { cursor });
    pages += 1;
    items.push(...(page[key] ?? []));
    cursor = page.nextCursor;
    if (pages > 1000) throw new Error(`${key}: more than 1000 pages`);
  } while (cursor !== undefined && cursor !== null);
  return { items, pages };
}

async function session() {
  const saw = { client: { sdk: PKG, version: SDK_VERSION, name: NAME }, transport: kind };
  await client.connect(transport);
  saw.server = client.getServerVersion() ?? null;
  saw.protocol_version = V2 ? client.getNegotiatedProtocolVersion() : negotiated ?? null;
  const caps = client.getServerCapabilities() ?? {};
  saw.server_capabilities = Object.keys(caps).sort();

  saw.pages = {};
  let tools = [], resources = [], prompts = [];
  if (caps.tools) {
    const got = await all(p => client.listTools(p), 'tools');
    tools = got.items; saw.pages.tools = got.pages;
  }
  if (caps.resources) {
    const got = await all(p => client.listResources(p), 'resources');
    resources = got.items; saw.pages.resources = got.pages;
  }
  if (caps.prompts) {
    const got = await all(p => client.listPrompts(p), 'prompts');
    prompts = got.items; saw.pages.prompts = got.pages;
  }
  saw.tools = tools.map(t => t.name);
  saw.resources = resources.map(r => r.uri);
  saw.prompts = prompts.map(p => p.name);

  if (!tools.some(t => t.name === 'echo')) throw new Error(`no echo tool among ${saw.tools.join(', ')}`);
  const args = { message: 'hello from the mcp-fleet interop suite' };
  const called = await client.callTool({ name: 'echo', arguments: args });
  saw.tool_call = { name: 'echo', arguments: args, content: called.content ?? null,
    isError: called.isError ?? false, structuredContent: called.structuredContent ?? null };

  if (resources.length) {
    const uri = resources[0].uri;
    const read = await client.readResource({ uri });
    saw.resource_read = { uri, contents: read.contents };
  }
  if (prompts.length) {
    const prompt = prompts.find(p => (p.arguments ?? []).some(a => a.required)) ?? prompts[0];
    const pargs = Object.fromEntries((prompt.arguments ?? []).filter(a => a.required).map(a => [a.name, 'fleet']));
    const got = await client.getPrompt({ name: prompt.name, arguments: pargs });
    saw.prompt_get = { name: prompt.name, arguments: pargs, description: got.description ?? null, messages: got.messages };
  }
  await client.ping();
  saw.ping = 'ok';

  if (kind === 'http') await transport.terminateSession();
  await client.close();
  return saw;
}

// ---------------------------------------------------------------- the canonical output

const VOLATILE = [
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>'],
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>'],
];
function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      if (k === '_meta') continue; // per-response metadata: timings, ids, cache hints
      out[k] = canonical(v[k]);
    }
    return out;
  }
  if (typeof v === 'string') return VOLATILE.reduce((s, [re, to]) => s.replace(re, to), v);
  return v;
}
session().then(saw => {
  process.stdout.write(JSON.stringify(canonical(saw), null, 2) + '\n', () => process.exit(0));
  clearTimeout(watchdog);
}, err => {
  process.stderr.write(`ts_client (${PKG} ${SDK_VERSION}, ${kind}): ${err?.stack ?? err}\n`);
  process.exit(1);
});
