// Package gateway is the daemon's hub: Hub holds the catalogue, the
// upstream pool and the sessions, and ties the sub-packages together.
// A session is one downstream MCP session (or, at protocol 2026-07-28 over
// HTTP, one conversation): its go-sdk Server carries the wire, and what it
// lists — which differs from another's: mode, activated tools, project
// overlay — is its own table of the catalogue's shared definitions; its
// handlers read a request, act, and answer with package surface's texts.
//
// Where things are, by job:
//
//   - A request enters, and its answer leaves, through package transport:
//     Streamable HTTP on /mcp and the shim's unix socket. A tools/call
//     that needs nothing of the go-sdk is read there from its envelope
//     and made by the session (fastcall.go); the rest reaches the
//     session through the go-sdk, where tools.go answers tools/list and
//     tools/call from the session's table (an upstream tool through the
//     dispatcher; mcpgw's own by its handler: proxy.go for the mcp tool,
//     toolsearch.go, codemode.go for mcp_script).
//   - A call is decided in package dispatch, the one dispatcher:
//     resolved against the caller's view, checked, passed through the
//     approval gate, recorded (package audit), and sent to its upstream
//     (package upstream). calls.go is the session's side of it.
//   - What the model sees — the mcp tool, ToolSearch, mcp_script, their
//     answers, results shaped for the route — is package surface (and
//     package content for results' blocks).
//   - Modes: mode.go, one type per mode (what it lists, its own tools,
//     its answer to a tool it does not list, its fast-path rule).
//   - Sessions: session.go (a session and its parts by job, each with its
//     guard; the lock order is written on the type), tools.go (its tool
//     table), conversation.go (2026-07-28 over HTTP), hub.go
//     (what the transports ask of the hub), delivery.go and logging.go
//     (what reaches one session), peer.go (sampling, elicitation and
//     roots for the session whose call caused them), sessionstate.go
//     (state kept across daemon restarts), subscribe.go (resource
//     subscriptions), prompts.go (prompts and resources).
//   - The hub's side of the daemon: server.go (reload, reconcile,
//     listings), discovery.go (first connections), status.go and page.go
//     (what `mcpgw status` and the status page, package statuspage,
//     show), metrics.go, activity.go (requests seen, for the run loop's
//     memory settling).
//   - The daemon's run loop is package runloop, which imports gateway:
//     the listeners, reloads (file changes, SIGHUP, POST /-/reload),
//     shutdown, the HTTP connection limit, sd_notify and the memory the
//     daemon hands back when idle. It sees the Hub as runloop.Hub.
//
// Other sub-packages: api (the control API's types), script (code mode's
// sandbox), spill (big results kept whole). What runs in the CLI's
// process is outside gateway: internal/control (the CLI's client of a
// daemon), internal/shim (`mcpgw stdio`) and internal/shim/wire (the
// shim ↔ daemon protocol, which transport speaks too).
// docs/architecture.md walks one call through all of it.
package gateway
