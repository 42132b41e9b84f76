// A small MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server), for the
// mcp-fleet interop suite: the same surface as interop/python_server.py.
//
//   node server.mjs stdio                  serveStdio: both eras, picked by the opening
//   node server.mjs http PORT              createMcpHandler on /mcp: 2026-07-28, and 2025
//                                          traffic served statelessly (its default)
//   node server.mjs http PORT --change-tool  as `http PORT`, with the tool `notify_list_changed`, which
//                                          announces a tool-list change on the handler's
//                                          subscriptions/listen bus (handler.notify.toolsChanged)
//   node server.mjs http PORT --sessions   2026-07-28 by createMcpHandler (legacy: 'reject'),
//                                          2025 traffic routed by isLegacyRequest to a
//                                          sessionful WebStandardStreamableHTTPServerTransport
//
// The SDK is resolved from MCP_TS2_MODULES (target/interop/npm-ts2/node_modules, installed by
// interop/run.sh). HTTP listens on 127.0.0.1 only. Tools `echo(message)`, `add(a, b)` and
// `roots` (asks for the client's roots when it declared them: an input_required result,
// which the SDK's legacy shim turns into roots/list for a 2025-era session); prompt
// `greeting(name)`; resource `fleet://info` and template `fleet://items/{item_id}`.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const modules = process.env.MCP_TS2_MODULES;
if (!modules) throw new Error('set MCP_TS2_MODULES to the node_modules holding @modelcontextprotocol/server');
const req = createRequire(join(modules, 'noop.js'));
const load = name => import(pathToFileURL(req.resolve(name)).href);
const sdk = await load('@modelcontextprotocol/server');
const { z } = await load('zod');
const { McpServer, ResourceTemplate, inputRequired, createMcpHandler, isLegacyRequest,
  WebStandardStreamableHTTPServerTransport, CLIENT_CAPABILITIES_META_KEY } = sdk;
const SDK_VERSION = JSON.parse((await import('node:fs')).readFileSync(
  join(modules, '@modelcontextprotocol/server/package.json'), 'utf8')).version;

const text = t => ({ content: [{ type: 'text', text: t }] });
// These tools change nothing; said so, as a careful server does.
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

// Where `notify_list_changed` announces a change (the HTTP handler's listen bus), when served.
let notifier = null;

function build() {
  const server = new McpServer({ name: 'fleet-interop-ts-v2', version: SDK_VERSION },
    { capabilities: { tools: {}, resources: {}, prompts: {} } });
  if (notifier) {
    server.registerTool('notify_list_changed', { description: 'Announce a change of a list (tools, prompts, resources) to every listen.',
      inputSchema: { list: z.string().optional() } }, ({ list }) => {
      if (list === 'prompts') notifier.promptsChanged();
      else if (list === 'resources') notifier.resourcesChanged();
      else notifier.toolsChanged();
      return text('changed');
    });
  }
  server.registerTool('echo', { description: 'Echo the message back.', annotations: readOnly,
    inputSchema: { message: z.string() } }, ({ message }) => text(`Echo: ${message}`));
  server.registerTool('add', { description: 'Add two numbers.', annotations: readOnly,
    inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => text(String(a + b)));
  server.registerTool('roots', { description: "List the client's roots when it declared them.",
    annotations: readOnly }, (ctx) => {
    const got = ctx.mcpReq?.inputResponses?.roots;
    if (got) return text(`roots: ${(got.roots ?? []).map(r => r.uri).join(',')}`);
    const caps = ctx.mcpReq?.envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.server.getClientCapabilities();
    if (!caps?.roots) return text('no roots capability');
    return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
  });
  server.registerPrompt('greeting', { description: 'Greet someone by name.',
    argsSchema: { name: z.string() } },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name} warmly.` } }] }));
  server.registerResource('info', 'fleet://info', { description: 'What this server is.', mimeType: 'text/plain' },
    uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `fleet-interop-ts-v2 on @modelcontextprotocol/server ${SDK_VERSION}` }] }));
  server.registerResource('item', new ResourceTemplate('fleet://items/{item_id}', { list: undefined }),
    { description: 'One item, by id.', mimeType: 'text/plain' },
    (uri, { item_id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${item_id}` }] }));
  return server;
}

// node:http ↔ fetch: the SDK's HTTP entries are web-standard (Request → Response).
function serve(port, handle) {
  createServer(async (nreq, nres) => {
    const abort = new AbortController();
    nres.on('close', () => abort.abort());
    const chunks = [];
    for await (const c of nreq) chunks.push(c);
    const body = chunks.length && nreq.method !== 'GET' && nreq.method !== 'HEAD' ? Buffer.concat(chunks) : undefined;
    const headers = new Headers();
    for (const [k, v] of Object.entries(nreq.headers)) {
      if (Array.isArray(v)) v.forEach(x => headers.append(k, x)); else if (v !== undefined) headers.set(k, v);
    }
    let res;
    try {
      res = await handle(new Request(`http://${nreq.headers.host}${nreq.url}`,
        { method: nreq.method, headers, body, signal: abort.signal }));
    } catch (e) {
      nres.writeHead(500).end(String(e));
      return;
    }
    nres.writeHead(res.status, Object.fromEntries(res.headers));
    nres.flushHeaders(); // an SSE stream may stay silent a while: its headers go now
    if (!res.body) return nres.end();
    try {
      for await (const chunk of res.body) nres.write(chunk);
    } catch { /* the client went away */ }
    nres.end();
  }).listen(port, '127.0.0.1');
}

const [mode, portArg, ...flags] = process.argv.slice(2);
if (mode === 'stdio') {
  const { serveStdio } = await load('@modelcontextprotocol/server/stdio');
  serveStdio(() => build());
} else if (mode === 'http' && !flags.includes('--sessions')) {
  const handler = createMcpHandler(() => build());
  if (flags.includes('--change-tool')) notifier = handler.notify;
  serve(Number(portArg), r => handler.fetch(r));
} else if (mode === 'http') {
  const modern = createMcpHandler(() => build(), { legacy: 'reject' });
  const sessions = new Map();
  serve(Number(portArg), async request => {
    if (!(await isLegacyRequest(request.clone()))) return modern.fetch(request);
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const t = sessions.get(id);
      if (!t) return new Response(JSON.stringify({ jsonrpc: '2.0', id: null,
        error: { code: -32001, message: 'Session not found' } }), { status: 404, headers: { 'content-type': 'application/json' } });
      return t.handleRequest(request);
    }
    const t = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: sid => sessions.set(sid, t) });
    t.onclose = () => { if (t.sessionId) sessions.delete(t.sessionId); };
    await build().connect(t);
    return t.handleRequest(request);
  });
} else {
  console.error('usage: server.mjs stdio | http PORT [--sessions]');
  process.exit(2);
}
