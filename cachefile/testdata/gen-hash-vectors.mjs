// gen-hash-vectors.mjs regenerates hash-vectors.json and adapter-cache.json
// from the real pi-mcp-adapter npm package, so that cachefile.Hash and the
// file format are checked against the adapter's own code rather than a
// reading of it.
//
// The package is never part of this repository. Install it in a scratch
// directory and run this script from there:
//
//	mkdir /tmp/piadapter && cd /tmp/piadapter && npm init -y && npm install pi-mcp-adapter
//	node $REPO/cachefile/testdata/gen-hash-vectors.mjs $REPO/cachefile/testdata
//
// With "check FILE" instead of an output directory it loads FILE the way the
// adapter loads its cache and prints, per server, whether the entry is valid
// for the definition given in FILE's sibling FILE.defs.json and the tool
// metadata the adapter reconstructs from it (used by TestAdapterAcceptsOurEntries
// when PI_MCP_ADAPTER_DIR names such a scratch directory).
import crypto from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

// Record what computeServerHash feeds to sha256: the canonical identity
// string. The Go test compares it byte for byte, which makes a mismatch
// readable.
const originalUpdate = crypto.Hash.prototype.update;
let lastHashed;
crypto.Hash.prototype.update = function (data, encoding) {
  lastHashed = data;
  return originalUpdate.call(this, data, encoding);
};

const require = createRequire(join(process.cwd(), "noop.js"));
const cacheModulePath = require.resolve("pi-mcp-adapter/metadata-cache");
const adapterPkg = JSON.parse(readFileSync(join(dirname(dirname(cacheModulePath)), "package.json"), "utf8"));
const cacheModule = await import(pathToFileURL(cacheModulePath).href);
const { computeServerHash, isServerCacheValid, loadMetadataCache, reconstructToolMetadata, saveMetadataCache, serializePrompts, serializeResources, serializeTools } = cacheModule;

const HOME = "/home/tester";
const ENV = {
  HOME,
  TOKEN: "tok-secret-123",
  API_KEY: "key-secret-456",
  HOST: "mcp.example.com",
  EMPTY: "",
  NESTED: "$env:TOKEN",
  UNI: "日本語😀",
  DIR: "/srv/data",
};

// Each vector: a server definition as written in mcp.json, the environment it
// is hashed against, and the adapter's answer.
const cases = [
  ["stdio minimal", { command: "npx" }],
  ["stdio args", { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }],
  ["stdio args not interpolated", { command: "${HOME}/bin/server", args: ["--token", "${TOKEN}", "$env:API_KEY"] }],
  ["stdio env interpolated", { command: "node", args: ["server.js"], env: { TOKEN: "${TOKEN}", KEY: "$env:API_KEY", BRACE: "{env:HOST}", PLAIN: "value", MISSING: "${NOPE}", MIXED: "a-${HOST}-b-$env:DIR-c" } }],
  ["stdio env command secret kept raw", { command: "node", env: { SECRET: "!op read op://vault/item", ESCAPED: "!!${TOKEN}", BANG_ONLY: "!" } }],
  ["stdio env second pass", { command: "node", env: { A: "${NESTED}" } }],
  ["stdio env not a word", { command: "node", env: { A: "${NOT-A-VAR}", B: "$env:", C: "{env:}", D: "${}" } }],
  ["stdio env empty var", { command: "node", env: { A: "${EMPTY}", B: "" } }],
  ["stdio env key order", { command: "node", env: { zeta: "1", Alpha: "2", alpha: "3", "_x": "4", "10": "5", "9": "6", "": "7" } }],
  ["stdio empty args and env", { command: "npx", args: [], env: {} }],
  ["stdio cwd plain", { command: "node", cwd: "/srv/app" }],
  ["stdio cwd tilde", { command: "node", cwd: "~" }],
  ["stdio cwd tilde slash", { command: "node", cwd: "~/projects/app" }],
  ["stdio cwd tilde normalized", { command: "node", cwd: "~/a/./b/../c//d/" }],
  ["stdio cwd tilde dotdot", { command: "node", cwd: "~/../../x" }],
  ["stdio cwd tilde only slash", { command: "node", cwd: "~/" }],
  ["stdio cwd tilde backslash", { command: "node", cwd: "~\\win\\dir" }],
  ["stdio cwd interpolated", { command: "node", cwd: "${DIR}/sub" }],
  ["stdio cwd interpolated to tilde", { command: "node", cwd: "{env:NOPE}~/x" }],
  ["stdio cwd tilde not leading", { command: "node", cwd: "/x/~/y" }],
  ["socket", { socket: "~/.mux/sock" }],
  ["socket interpolated", { socket: "${DIR}/mux.sock" }],
  ["url minimal", { url: "https://mcp.example.com/mcp" }],
  ["url interpolated", { url: "https://${HOST}/mcp?key=$env:API_KEY" }],
  ["url with headers", { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}", "X-Api-Key": "{env:API_KEY}", "x-lower": "v", Accept: "application/json" } }],
  ["url headers command secret", { url: "https://mcp.example.com/mcp", headers: { Authorization: "!security find-generic-password -w", X: "!!bang" } }],
  ["url empty headers", { url: "https://mcp.example.com/mcp", headers: {} }],
  ["url missing var", { url: "https://${NOPE}/mcp" }],
  ["url invalid", { url: "not a url" }],
  ["url invalid after interpolation", { url: "${EMPTY}" }],
  ["url custom scheme", { url: "foo:bar" }],
  ["auth bearer literal token", { url: "https://mcp.example.com/mcp", auth: "bearer", bearerToken: "literal-token" }],
  ["auth bearer interpolated token", { url: "https://mcp.example.com/mcp", auth: "bearer", bearerToken: "${TOKEN}" }],
  ["auth bearer token command", { url: "https://mcp.example.com/mcp", auth: "bearer", bearerToken: "!pass show mcp" }],
  ["auth bearer token escaped bang", { url: "https://mcp.example.com/mcp", auth: "bearer", bearerToken: "!!${TOKEN}" }],
  ["auth bearer token env set", { url: "https://mcp.example.com/mcp", auth: "bearer", bearerTokenEnv: "TOKEN" }],
  ["auth bearer token env empty", { url: "https://mcp.example.com/mcp", auth: "bearer", bearerTokenEnv: "EMPTY" }],
  ["auth bearer token env unset", { url: "https://mcp.example.com/mcp", auth: "bearer", bearerTokenEnv: "NOPE" }],
  ["bearer token wins over env", { url: "https://mcp.example.com/mcp", bearerToken: "direct", bearerTokenEnv: "TOKEN" }],
  ["bearer empty token", { url: "https://mcp.example.com/mcp", bearerToken: "" }],
  ["auth oauth", { url: "https://mcp.example.com/mcp", auth: "oauth" }],
  ["auth false", { url: "https://mcp.example.com/mcp", auth: false }],
  ["expose resources true", { command: "npx", exposeResources: true }],
  ["expose resources false", { command: "npx", exposeResources: false }],
  ["include tools", { command: "npx", includeTools: ["read_file", "search_*", "server_write"] }],
  ["exclude tools", { command: "npx", excludeTools: ["delete_*"] }],
  ["include and exclude empty", { command: "npx", includeTools: [], excludeTools: [] }],
  ["include order kept", { command: "npx", includeTools: ["z", "a", "m"] }],
  ["protocol version", { url: "https://mcp.example.com/mcp", protocolVersion: "auto" }],
  ["request headers command", { url: "https://mcp.example.com/mcp", requestHeadersCommand: { command: "${HOME}/bin/headers", args: ["--host", "${HOST}"], env: { T: "${TOKEN}", R: "!raw" }, timeoutMs: 5000 } }],
  ["request headers command bare", { url: "https://mcp.example.com/mcp", requestHeadersCommand: { command: "headers" } }],
  ["request headers command fraction timeout", { url: "https://mcp.example.com/mcp", requestHeadersCommand: { command: "h", timeoutMs: 2500.5 } }],
  ["behaviour fields ignored", { command: "npx", args: ["-y", "pkg"], lifecycle: "eager", idleTimeout: 3, requestTimeoutMs: 1000, debug: true, directTools: ["a"], toolPrefix: "none", approveTools: true, searchKeywords: { a: ["b"] }, enabled: false, description: "x", type: "stdio" }],
  ["unicode", { command: "nöde", args: ["日本語", "😀", "é\u0301", "tab\there", "nl\nhere", "quote\"back\\slash", "ctl\u0001\u001f\u007f", "line\u2028sep\u2029", "</script>&amp;"], env: { "ключ": "значение ${UNI}", "～": "fullwidth", "😀": "emoji", "é": "e-acute", "z": "ascii" } }],
  ["unicode headers", { url: "https://mcp.example.com/ü", headers: { "X-Ünicode": "wert ${UNI}" } }],
  ["everything", { command: "uvx", args: ["mcp-server"], env: { Z: "1", A: "${TOKEN}" }, cwd: "~/w", url: "https://${HOST}/mcp", headers: { H: "${API_KEY}" }, auth: "bearer", bearerToken: "${TOKEN}", bearerTokenEnv: "API_KEY", exposeResources: false, includeTools: ["a"], excludeTools: ["b"], protocolVersion: "2026-07-28", socket: "/tmp/s" }],
];

function vectors() {
  const out = [];
  process.env.HOME = HOME;
  for (const [name, definition] of cases) {
    lastHashed = undefined;
    let hash = "";
    let error = "";
    try {
      hash = computeServerHash(definition, ENV);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    out.push({ name, definition, hash, ...(error ? { error } : { canonical: lastHashed }) });
  }
  return out;
}

// adapterCache writes a cache file with the adapter's own serialisers and
// saveMetadataCache, as updateMetadataCache does after a connection.
function adapterCache() {
  const dir = mkdtempSync(join(tmpdir(), "pi-agent-"));
  process.env.PI_CODING_AGENT_DIR = dir;
  process.env.HOME = HOME;
  try {
    const fsDef = { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] };
    const remoteDef = { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}" } };
    const tools = [
      {
        name: "read_file",
        title: "Read file",
        description: "Read a file <from disk> & return it",
        inputSchema: { type: "object", properties: { path: { type: "string", description: "Path" }, n: { type: "integer", minimum: 0 } }, required: ["path"], additionalProperties: false },
        outputSchema: { type: "object", properties: { text: { type: "string" } } },
        annotations: { readOnlyHint: true },
        _meta: { ui: { resourceUri: "ui://fs/viewer", visibility: ["model", "app", "model"], "pi-mcp-adapter.streamMode": "eager" } },
      },
      { name: "app_only", inputSchema: { type: "object" }, _meta: { ui: { visibility: ["app"] } } },
      { name: "legacy_ui", inputSchema: { type: "object" }, _meta: { "ui/resourceUri": "ui://legacy" } },
      { name: "bad_ui", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: "https://x", visibility: "model" } } },
      { name: "", description: "dropped: no name" },
    ];
    const resources = [
      { uri: "file:///tmp/a.txt", name: "a.txt", description: "A file", mimeType: "text/plain" },
      { uri: "file:///tmp/b.txt", name: "b.txt" },
      { uri: "", name: "dropped" },
    ];
    const prompts = [
      { name: "summarize", title: "Summarize", description: "Summarize a file", arguments: [{ name: "path", description: "Path", required: true }, { name: "style" }, { description: "dropped" }] },
      { name: "bare" },
    ];
    const cachedAt = 1767225600000; // 2026-01-01T00:00:00Z
    saveMetadataCache({
      version: 1,
      servers: {
        filesystem: {
          configHash: computeServerHash(fsDef, ENV),
          tools: serializeTools(tools),
          resources: serializeResources(resources),
          prompts: serializePrompts(prompts),
          instructions: "Use read_file for files.",
          cachedAt,
        },
      },
    });
    saveMetadataCache({
      version: 1,
      servers: {
        remote: {
          configHash: computeServerHash(remoteDef, ENV),
          tools: serializeTools([{ name: "search", description: "Search", inputSchema: { type: "object", properties: { q: { type: "string" } } } }]),
          resources: [],
          ttlMs: 60000,
          cacheScope: "private",
          cachedAt,
        },
      },
    });
    return {
      file: readFileSync(join(dir, "mcp-cache.json"), "utf8"),
      definitions: { filesystem: fsDef, remote: remoteDef },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    delete process.env.PI_CODING_AGENT_DIR;
  }
}

// check loads a cache file written by someone else (mcpgw) through the
// adapter and reports what the adapter makes of each entry.
function check(file) {
  const { definitions, env, home, now } = JSON.parse(readFileSync(`${file}.defs.json`, "utf8"));
  const dir = mkdtempSync(join(tmpdir(), "pi-agent-"));
  process.env.PI_CODING_AGENT_DIR = dir;
  process.env.HOME = home;
  Date.now = () => now;
  try {
    writeFileSync(join(dir, "mcp-cache.json"), readFileSync(file));
    const cache = loadMetadataCache();
    const report = { loaded: cache !== null, servers: {} };
    for (const [name, definition] of Object.entries(definitions)) {
      const entry = cache?.servers?.[name];
      report.servers[name] = {
        hash: computeServerHash(definition, env),
        valid: entry !== undefined && isServerCacheValid(entry, definition, undefined, env),
        tools: entry ? reconstructToolMetadata(name, entry, "server", definition) : [],
      };
    }
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "check") {
  process.stdout.write(JSON.stringify(check(process.argv[3])) + "\n");
} else {
  const outDir = process.argv[2];
  if (!outDir) {
    console.error("usage: node gen-hash-vectors.mjs OUTDIR | check FILE");
    process.exit(2);
  }
  const doc = {
    comment: "Generated by gen-hash-vectors.mjs from the pi-mcp-adapter npm package; do not edit.",
    adapter: `${adapterPkg.name}@${adapterPkg.version}`,
    home: HOME,
    env: ENV,
    vectors: vectors(),
  };
  writeFileSync(join(outDir, "hash-vectors.json"), JSON.stringify(doc, null, 2) + "\n");
  const cache = adapterCache();
  writeFileSync(join(outDir, "adapter-cache.json"), cache.file);
  writeFileSync(join(outDir, "adapter-cache.defs.json"), JSON.stringify({ adapter: doc.adapter, home: HOME, env: ENV, definitions: cache.definitions }, null, 2) + "\n");
}
