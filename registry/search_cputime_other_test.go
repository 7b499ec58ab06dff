//go:build !linux

package registry

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
