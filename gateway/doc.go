// Package gateway is mcpgw's downstream side: the MCP endpoint agent
// sessions connect to, one go-sdk Server per session, and the glue that
// keeps the catalogue and the upstream pool in step.
//
// Where things are, by job:
//
//   - A tool call enters by http.go (Streamable HTTP; fastcall.go answers
//     calls without the SDK), socket.go and socket_pipes.go (the stdio
//     shim's unix socket; linefilter.go is its fast path), or the SDK's
//     handlers (session.forward, proxy.go's handleProxy).
//   - It is decided in dispatch.go, the one dispatcher: resolved, checked,
//     passed through the policy gate (approve.go), recorded (package
//     audit), and sent to its upstream (package upstream).
//   - Sessions: session.go (each session's Server and tool list),
//     delivery.go and logging.go (what reaches one session), peer.go
//     (sampling, elicitation and roots for the session whose call caused
//     them), sessionstate.go (state kept across daemon restarts),
//     subscribe.go (resource subscriptions).
//   - What the model sees: proxy.go and proxyinfo.go (the mcp tool),
//     toolsearch.go (ToolSearch), prompts.go and proxyprompts.go; results
//     are shaped for the client by package content.
//   - The daemon: server.go (Server: reload, reconcile, listings),
//     daemon.go and serve.go (the run loop and listeners), discovery.go
//     (first connections), status.go and page.go (what `mcpgw status` and
//     the status page, package statuspage, show), metrics.go.
//
// Sub-packages: api (the control API's types), control (the CLI's client
// of a daemon), statuspage, audit, content, shim and shim/wire (`mcpgw
// stdio`).
// docs/architecture.md walks one call through all of it.
package gateway
