// Package torture holds mcpgw's fault-injection suite: a real daemon (the
// mcpgw binary, built once) against upstreams that crash, hang, lie, flood
// and outlive their welcome, hostile configuration files, and hostile
// clients. Every scenario asserts a figure — the daemon alive, the other
// sessions served, memory bounded, processes gone by PID — and every
// process the suite starts is ended by PID.
//
// The suite is in torture_test.go; this package has no other code. It runs
// with `go test ./...`; `go test -run Torture -v ./internal/torture` runs it
// alone and prints the figures it measured.
//
// Scenarios elsewhere, kept beside the code they exercise: another local
// user over TCP (cmd/mcpgw TestOtherUserRefused), malformed lines over the
// shim (cmd/mcpgw TestMalformedLinesKeepTheSession), invalid UTF-8 over
// HTTP (TestHTTPRefusesInvalidUTF8), hostile files at the parser
// (registry TestHostileConfigFiles, cachefile TestHostileCacheIsAMiss), a
// SIGSTOPped upstream (upstream TestWedgedUpstreamIsRecycled), a killed
// daemon's setsid grandchildren (upstream TestKilledDaemonLeavesNoProcess).
package torture
