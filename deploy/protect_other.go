//go:build !linux

package deploy

// ProtectProcess does nothing outside Linux.
func ProtectProcess() error { return nil }
