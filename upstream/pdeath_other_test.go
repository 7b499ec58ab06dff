//go:build !linux

package upstream

// runPoolHelper is only used by the Linux parent-death test.
func runPoolHelper() {}
