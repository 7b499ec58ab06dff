// Package surface is what the model sees of mcpgw: the tools the gateway
// adds to a session (the mcp tool, ToolSearch, mcp_script), their
// descriptions and schemas, and the texts they answer with — status,
// server lists, search pages, descriptions, parameters as TypeScript,
// prompts, ToolSearch's activations, servers' instructions, script
// results — and how a tool's result is shaped for the route it came by
// (Shape). It also knows the names clients give mcpgw's tools (Naming).
//
// Everything here is a function of the catalogue's view (registry.View)
// and what the caller passes in: the session hub (package gateway) reads
// the arguments, acts (calls, connects, activates) and answers with these.
package surface
