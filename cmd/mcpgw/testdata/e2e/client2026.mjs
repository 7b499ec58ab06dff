#!/usr/bin/env node
// client2026.mjs drives the official TypeScript SDK 2.x client
// (@modelcontextprotocol/client) pinned to protocol 2026-07-28: no
// fallback to the 2025 handshake, every request sessionless.
//
// Usage:
//   node client2026.mjs [--sample TEXT] --url http://127.0.0.1:PORT/mcp [--header 'Name: value']...
//   node client2026.mjs [--sample TEXT] --stdio -- COMMAND [ARG]...
//
// --sample TEXT declares the sampling capability and answers every
// sampling request with TEXT. A server asks through an input_required
// result, which the client answers and retries the call with itself.
//
// Steps, a JSON array on stdin:
//   {"op":"serverInfo"}     negotiated version, era, server info, capabilities, instructions
//   {"op":"listTools"}
//   {"op":"callTool","name":"mcp","arguments":{...}}
//
// Output: one JSON line per step on stdout,
//   {"step":N,"op":OP,"ok":true,"result":...}
//   {"step":N,"op":OP,"ok":false,"error":MESSAGE,"code":JSON_RPC_CODE?}
// A connect failure prints {"step":-1,"op":"connect","ok":false,...} and exits 3; bad
// usage exits 2.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const VERSION = "2026-07-28";

function usage(msg) {
  process.stderr.write(`client2026.mjs: ${msg}\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let url;
let stdio;
let sample;
const headers = {};
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--url") url = argv[++i];
  else if (a === "--sample") sample = argv[++i];
  else if (a === "--header") {
    const h = argv[++i] ?? "";
    const c = h.indexOf(":");
    if (c < 1) usage(`bad --header ${JSON.stringify(h)}`);
    headers[h.slice(0, c).trim()] = h.slice(c + 1).trim();
  } else if (a === "--stdio") {
    if (argv[i + 1] === "--") i++;
    stdio = argv.slice(i + 1);
    break;
  } else usage(`unknown argument ${JSON.stringify(a)}`);
}
if (!url && !stdio?.length) usage("need --url or --stdio -- COMMAND");

let steps;
try {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  steps = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  if (!Array.isArray(steps)) throw new Error("not an array");
} catch (e) {
  usage(`bad script: ${e.message}`);
}

const out = (line) => process.stdout.write(JSON.stringify(line) + "\n");

const transport = url
  ? new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  : new StdioClientTransport({ command: stdio[0], args: stdio.slice(1), env: process.env, cwd: process.cwd() });
const client = new Client(
  { name: "client2026", version: "1.0.0" },
  { capabilities: sample === undefined ? {} : { sampling: {} }, versionNegotiation: { mode: { pin: VERSION } } },
);
if (sample !== undefined) {
  client.setRequestHandler("sampling/createMessage", async () => ({
    role: "assistant",
    model: "client2026",
    content: { type: "text", text: sample },
  }));
}
try {
  await client.connect(transport);
} catch (e) {
  out({ step: -1, op: "connect", ok: false, error: String(e?.message ?? e), code: e?.code });
  process.exit(3);
}

for (let n = 0; n < steps.length; n++) {
  const s = steps[n];
  try {
    let result;
    switch (s.op) {
      case "serverInfo":
        result = {
          protocolVersion: client.getNegotiatedProtocolVersion(),
          era: client.getProtocolEra(),
          server: client.getServerVersion(),
          capabilities: client.getServerCapabilities(),
          instructions: client.getInstructions(),
        };
        break;
      case "listTools":
        result = await client.listTools();
        break;
      case "callTool":
        result = await client.callTool({ name: s.name, arguments: s.arguments ?? {} });
        break;
      default:
        usage(`unknown op ${JSON.stringify(s.op)}`);
    }
    out({ step: n, op: s.op, ok: true, result });
  } catch (e) {
    out({ step: n, op: s.op, ok: false, error: String(e?.message ?? e), code: e?.code });
  }
}
await client.close();
