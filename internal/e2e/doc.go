//go:build unix

// Package e2e is the harness of mcpgw's end-to-end tests: real processes on
// loopback — the mcpgw binary (BuildMcpgw, StartDaemon), the official
// TypeScript SDK client driven by a script of steps (RunClient, with
// testdata/e2e/client.mjs of cmd/mcpgw), server-everything as an upstream
// (StartEverything), the test binary itself as a stdio test server
// (TestServerBin, Main), and a scripted model for the agents (FakeModel).
// Only tests import it; each package of end-to-end tests calls Main from
// its TestMain.
//
// The node packages are pinned in testdata/e2e/package-lock.json; install them with
//
//	(cd cmd/mcpgw/testdata/e2e && npm ci --no-audit --no-fund)
//
// server-everything's transports, from testdata/e2e (the first argument of
// dist/index.js picks the transport; PORT defaults to 3001):
//
//	stdio:           node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
//	Streamable HTTP: PORT=P node node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp
//	                 endpoint http://127.0.0.1:P/mcp (POST, GET stream, DELETE)
//	legacy SSE:      PORT=P node node_modules/@modelcontextprotocol/server-everything/dist/index.js sse
//	                 stream GET http://127.0.0.1:P/sse, messages POST /message?sessionId=ID
//
// Both HTTP modes listen on every interface (express app.listen(PORT)); tests
// only dial 127.0.0.1. Any other path answers 404, which waitHTTP takes as ready.
// Its echo tool answers {"message":"hi"} with the text "Echo: hi". Right after
// initialization it registers more tools and sends
// notifications/tools/list_changed: over stdio and SSE the client receives it;
// over Streamable HTTP it is lost, because it is sent before the client's GET
// stream is open.
package e2e
