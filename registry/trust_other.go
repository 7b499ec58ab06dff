//go:build !unix

package registry

func checkPrivate(path string) error { return nil }
