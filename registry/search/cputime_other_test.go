//go:build !linux

package search

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
