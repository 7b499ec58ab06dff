#!/usr/bin/env node
// client.mjs drives one MCP session with the official TypeScript SDK client,
// following a script of steps read from stdin as a JSON array.
//
// Usage:
//   node client.mjs --url http://127.0.0.1:PORT/mcp [--header 'Name: value']...
//   node client.mjs --sse --url http://127.0.0.1:PORT/sse [--header 'Name: value']...
//   node client.mjs --stdio -- COMMAND [ARG]...
//
// --elicit ACTION[:DECISION] declares the elicitation capability (form) and
// answers every elicitation/create with ACTION (accept, decline, cancel),
// with content {"decision": DECISION} when given. Each request is recorded
// as a notification of method "elicitation/create" (see waitNotification).
// Without --elicit the client declares no elicitation capability.
// --elicit-defaults declares elicitation with applyDefaults: the SDK fills
// in the form's defaults for whatever the answer leaves out.
//
// The stdio server gets this process's whole environment and working
// directory (the SDK alone would pass only HOME, PATH and a few others).
//
// Steps:
//   {"op":"listTools"}
//   {"op":"callTool","name":"mcp","arguments":{...},"timeoutMs":60000,"progress":false}
//   {"op":"waitNotification","method":"notifications/tools/list_changed","timeoutMs":5000}
//   {"op":"waitNotification","method":"notifications/resources/updated","uri":"test://x"}
//                                 only a notification whose params.uri is uri
//   {"op":"notifications"}        every notification received so far
//   {"op":"sleep","ms":100}
//   {"op":"ping"}
//   {"op":"serverInfo"}           server version, capabilities, instructions
//   {"op":"terminateSession"}     Streamable HTTP only: DELETE the session
//   {"op":"listPrompts"} {"op":"listResources"} {"op":"listResourceTemplates"}
//   {"op":"getPrompt","name":"p","arguments":{"k":"v"}}
//   {"op":"readResource","uri":"test://x"}
//   {"op":"subscribe","uri":"test://x"}
//   {"op":"complete","ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"k","value":"v"}}
//   {"op":"setLoggingLevel","level":"debug"}
//   {"op":"parallel","steps":[...]} the steps at once in this session; the
//                                 result is [{ok, result} | {ok, error}] in order
//   {"op":"signal","path":"/tmp/x"}   creates the file, for another client's
//   {"op":"waitSignal","path":"/tmp/x","timeoutMs":30000}  which waits until
//                                 it exists: the order of two clients' steps
//
// Output: one JSON line per step on stdout,
//   {"step":N,"op":OP,"ok":true,"result":...}
//   {"step":N,"op":OP,"ok":false,"error":MESSAGE,"code":JSON_RPC_CODE?}
// A failing step (a JSON-RPC error, a timeout) does not stop the script; a tool
// result with isError is ok:true. A transport failure (connect failure, the
// connection closing, an HTTP-level error) prints its line and exits 3.
// Bad usage or a bad script exits 2. Diagnostics go to stderr.
//
// Notifications are recorded from the moment the session starts. Each
// waitNotification consumes the earliest recorded, not yet consumed
// notification of its method, so a notification that arrived before the step
// still satisfies it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";

const EXIT_USAGE = 2;
const EXIT_TRANSPORT = 3;

function usage(msg) {
  process.stderr.write(`client.mjs: ${msg}\n`);
  process.exit(EXIT_USAGE);
}

function parseArgs(argv) {
  const opts = { url: "", sse: false, stdio: null, headers: {}, elicit: null, elicitDefaults: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--url") {
      opts.url = argv[++i] ?? usage("--url needs a value");
    } else if (a === "--elicit") {
      const v = argv[++i] ?? usage("--elicit needs a value");
      const [action, decision] = v.split(":");
      if (!["accept", "decline", "cancel"].includes(action)) usage(`bad --elicit action ${JSON.stringify(action)}`);
      opts.elicit = { action, decision };
    } else if (a === "--elicit-defaults") {
      opts.elicitDefaults = true;
    } else if (a === "--sse") {
      opts.sse = true;
    } else if (a === "--header") {
      const h = argv[++i] ?? usage("--header needs a value");
      const colon = h.indexOf(":");
      if (colon <= 0) usage(`bad --header ${JSON.stringify(h)}, want 'Name: value'`);
      opts.headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
    } else if (a === "--stdio") {
      if (argv[i + 1] === "--") i++;
      opts.stdio = argv.slice(i + 1);
      break;
    } else {
      usage(`unknown argument ${JSON.stringify(a)}`);
    }
  }
  if (opts.stdio !== null) {
    if (opts.stdio.length === 0) usage("--stdio needs a command");
    if (opts.url) usage("--stdio and --url exclude each other");
  } else if (!opts.url) {
    usage("need --url URL or --stdio -- COMMAND [ARG]...");
  }
  return opts;
}

function makeTransport(opts) {
  if (opts.stdio) {
    return new StdioClientTransport({
      command: opts.stdio[0],
      args: opts.stdio.slice(1),
      env: { ...process.env },
      cwd: process.cwd(),
      stderr: "inherit",
    });
  }
  const url = new URL(opts.url);
  const requestInit = { headers: opts.headers };
  if (opts.sse) {
    // requestInit's headers go on the GET stream and on every POST.
    return new SSEClientTransport(url, { requestInit });
  }
  return new StreamableHTTPClientTransport(url, { requestInit });
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

// Notification log shared by the fallback handler and waitNotification.
const notifications = [];
const consumed = new Set();
const waiters = [];

function record(n) {
  notifications.push(n);
  for (const w of [...waiters]) w();
}

function takeNotification(method, uri) {
  for (let i = 0; i < notifications.length; i++) {
    if (!consumed.has(i) && notifications[i].method === method && (uri === undefined || notifications[i].params?.uri === uri)) {
      consumed.add(i);
      return notifications[i];
    }
  }
  return undefined;
}

function waitNotification(method, timeoutMs, uri) {
  const now = takeNotification(method, uri);
  if (now) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const check = () => {
      if (closed) return finish(() => reject(new Error(`connection closed while waiting for ${method}`)));
      const n = takeNotification(method, uri);
      if (n) finish(() => resolve(n));
    };
    const timer = setTimeout(
      () => finish(() => reject(new StepError(`timed out after ${timeoutMs}ms waiting for ${method}`))),
      timeoutMs,
    );
    const finish = (f) => {
      clearTimeout(timer);
      const i = waiters.indexOf(check);
      if (i >= 0) waiters.splice(i, 1);
      f();
    };
    waiters.push(check);
  });
}

// waitSignal resolves once the file at p exists (see the signal op),
// watching its directory.
function waitSignal(p, timeoutMs) {
  return new Promise((resolve, reject) => {
    const watcher = fs.watch(path.dirname(p), () => check());
    const timer = setTimeout(() => {
      watcher.close();
      reject(new StepError(`timed out after ${timeoutMs}ms waiting for ${p}`));
    }, timeoutMs);
    const check = () => {
      if (!fs.existsSync(p)) return;
      clearTimeout(timer);
      watcher.close();
      resolve({});
    };
    check();
  });
}

let closed = false; // set when the transport closes before we close it
let closing = false;

async function runStep(client, transport, step) {
  const timeout = step.timeoutMs ?? 60000;
  switch (step.op) {
    case "listTools":
      return client.listTools(undefined, { timeout });
    case "callTool": {
      if (typeof step.name !== "string") throw new UsageError("callTool needs a string name");
      const options = { timeout };
      if (step.progress) {
        options.onprogress = (p) => record({ method: "notifications/progress", params: p });
        options.resetTimeoutOnProgress = true;
      }
      return client.callTool({ name: step.name, arguments: step.arguments }, undefined, options);
    }
    case "waitNotification":
      if (typeof step.method !== "string") throw new UsageError("waitNotification needs a string method");
      return waitNotification(step.method, step.timeoutMs ?? 5000, step.uri);
    case "notifications":
      return notifications;
    case "signal":
      if (typeof step.path !== "string") throw new UsageError("signal needs a string path");
      fs.writeFileSync(step.path, "");
      return {};
    case "waitSignal":
      if (typeof step.path !== "string") throw new UsageError("waitSignal needs a string path");
      return waitSignal(step.path, step.timeoutMs ?? 30000);
    case "sleep":
      await new Promise((r) => setTimeout(r, step.ms ?? 0));
      return {};
    case "ping":
      return client.ping({ timeout });
    case "serverInfo":
      return {
        serverVersion: client.getServerVersion(),
        capabilities: client.getServerCapabilities(),
        instructions: client.getInstructions(),
      };
    case "parallel":
      if (!Array.isArray(step.steps)) throw new UsageError("parallel needs an array of steps");
      return Promise.all(
        step.steps.map((s) =>
          runStep(client, transport, s).then(
            (result) => ({ ok: true, result }),
            (e) => ({ ok: false, error: String(e?.message ?? e) }),
          ),
        ),
      );
    case "terminateSession":
      if (typeof transport.terminateSession !== "function") {
        throw new UsageError("terminateSession needs the Streamable HTTP transport");
      }
      {
        const sessionId = transport.sessionId ?? null;
        await transport.terminateSession();
        return { sessionId };
      }
    case "listPrompts":
      return client.listPrompts(undefined, { timeout });
    case "listResources":
      return client.listResources(undefined, { timeout });
    case "listResourceTemplates":
      return client.listResourceTemplates(undefined, { timeout });
    case "getPrompt":
      return client.getPrompt({ name: step.name, arguments: step.arguments }, { timeout });
    case "readResource":
      return client.readResource({ uri: step.uri }, { timeout });
    case "subscribe":
      return client.subscribeResource({ uri: step.uri }, { timeout });
    case "complete":
      return client.complete({ ref: step.ref, argument: step.argument }, { timeout });
    case "setLoggingLevel":
      return client.setLoggingLevel(step.level, { timeout });
    default:
      throw new UsageError(`unknown op ${JSON.stringify(step.op)}`);
  }
}

// UsageError is a bad script: exit 2.
class UsageError extends Error {}
// StepError is a failed step that says nothing about the transport.
class StepError extends Error {}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let steps;
  try {
    steps = JSON.parse(await readStdin());
  } catch (e) {
    usage(`reading steps from stdin: ${e.message}`);
  }
  if (!Array.isArray(steps)) usage("steps must be a JSON array");

  const capabilities = opts.elicit ? { elicitation: { form: opts.elicitDefaults ? { applyDefaults: true } : {} } } : {};
  const client = new Client({ name: "mcpgw-e2e-client", version: "1.0.0" }, { capabilities });
  if (opts.elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      record({ method: "elicitation/create", params: req.params });
      const res = { action: opts.elicit.action };
      if (opts.elicit.action === "accept") res.content = opts.elicit.decision ? { decision: opts.elicit.decision } : {};
      return res;
    });
  }
  client.fallbackNotificationHandler = async (n) => record({ method: n.method, params: n.params });
  client.onclose = () => {
    if (!closing) {
      closed = true;
      for (const w of [...waiters]) w();
    }
  };
  client.onerror = (e) => process.stderr.write(`client.mjs: transport error: ${e?.message ?? e}\n`);

  const transport = makeTransport(opts);
  try {
    await client.connect(transport);
  } catch (e) {
    emit({ step: -1, op: "connect", ok: false, error: String(e?.message ?? e) });
    process.exit(EXIT_TRANSPORT);
  }

  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] ?? {};
    try {
      const result = await runStep(client, transport, step);
      emit({ step: i, op: step.op, ok: true, result });
    } catch (e) {
      const line = { step: i, op: step.op, ok: false, error: String(e?.message ?? e) };
      if (e instanceof McpError) line.code = e.code;
      emit(line);
      if (e instanceof UsageError) process.exit(EXIT_USAGE);
      if (closed || !(e instanceof McpError || e instanceof StepError)) process.exit(EXIT_TRANSPORT);
    }
  }

  closing = true;
  await client.close();
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`client.mjs: ${e?.stack ?? e}\n`);
  process.exit(EXIT_TRANSPORT);
});
