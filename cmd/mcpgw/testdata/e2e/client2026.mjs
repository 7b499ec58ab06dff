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
// sampling request with TEXT. --elicit ACTION[:DECISION] declares the
// elicitation capability (form) and answers every elicitation request with
// ACTION (accept, decline, cancel), with content {"decision": DECISION}
// when given; each is recorded as a notification of method
// "elicitation/create". A server asks through an input_required result,
// which the client answers and retries the request with itself.
//
// Steps, a JSON array on stdin:
//   {"op":"serverInfo"}     negotiated version, era, server info, capabilities, instructions
//   {"op":"listTools"}
//   {"op":"callTool","name":"mcp","arguments":{...}}
//   {"op":"getPrompt","name":"p","arguments":{"k":"v"}}
//   {"op":"readResource","uri":"test://x"}
//   {"op":"listen","uri":"test://x"}   opens a subscriptions/listen stream for
//                           the resource; the result is the filter the server honoured
//   {"op":"unlisten","uri":"test://x"} closes it
//   {"op":"waitNotification","method":"notifications/resources/updated","timeoutMs":5000}
//                           the earliest notification of the method not yet taken
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
let elicit;
const headers = {};
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--url") url = argv[++i];
  else if (a === "--sample") sample = argv[++i];
  else if (a === "--elicit") {
    const [action, decision] = (argv[++i] ?? "").split(/:(.*)/s);
    if (!["accept", "decline", "cancel"].includes(action)) usage(`bad --elicit action ${JSON.stringify(action)}`);
    elicit = { action, decision };
  }
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
// Notifications received, each taken once by waitNotification.
const notifications = [];
const waiters = [];
function record(n) {
  notifications.push(n);
  for (const w of [...waiters]) w();
}
function waitNotification(method, timeoutMs) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const i = notifications.findIndex((n) => n.method === method);
      if (i < 0) return false;
      const [n] = notifications.splice(i, 1);
      finish();
      resolve(n);
      return true;
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`timed out after ${timeoutMs}ms waiting for ${method}`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      const i = waiters.indexOf(check);
      if (i >= 0) waiters.splice(i, 1);
    };
    if (!check()) waiters.push(check);
  });
}

const capabilities = {};
if (sample !== undefined) capabilities.sampling = {};
if (elicit !== undefined) capabilities.elicitation = { form: {} };
const client = new Client(
  { name: "client2026", version: "1.0.0" },
  { capabilities, versionNegotiation: { mode: { pin: VERSION } } },
);
client.setNotificationHandler("notifications/resources/updated", (n) => record(n));
if (elicit !== undefined) {
  client.setRequestHandler("elicitation/create", async (req) => {
    record({ method: "elicitation/create", params: req.params });
    const res = { action: elicit.action };
    if (elicit.action === "accept") res.content = elicit.decision === undefined ? {} : { decision: elicit.decision };
    return res;
  });
}
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

const subscriptions = new Map(); // open listen streams, by URI
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
      case "getPrompt":
        result = await client.getPrompt({ name: s.name, arguments: s.arguments ?? {} });
        break;
      case "readResource":
        result = await client.readResource({ uri: s.uri }, { cacheMode: "bypass" });
        break;
      case "listen": {
        const sub = await client.listen({ resourceSubscriptions: [s.uri] });
        subscriptions.set(s.uri, sub);
        result = { honoredFilter: sub.honoredFilter };
        break;
      }
      case "unlisten":
        await subscriptions.get(s.uri)?.close();
        subscriptions.delete(s.uri);
        result = {};
        break;
      case "waitNotification":
        result = await waitNotification(s.method, s.timeoutMs ?? 5000);
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
