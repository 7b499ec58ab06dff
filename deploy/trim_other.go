//go:build !linux

package deploy

// TrimText is a no-op outside Linux.
func TrimText() {}

// EvictText is a no-op outside Linux.
func EvictText() {}
