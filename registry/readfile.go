package registry

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limits of a file mcpgw reads as configuration (its own file, imports,
// project files). They are far above any real file (~/.claude.json with a
// long history is a few MB; no configuration nests 30 deep), and keep a
// hostile file — a project's .mcp.json is written by whoever wrote the
// repository — from exhausting memory or the parser's stack.
const (
	maxConfigBytes = 64 << 20
	maxConfigDepth = 256
)

// errNotRegular is returned for a path that is a FIFO, a device, a socket
// or a directory: reading it could block forever or never end.
var errNotRegular = errors.New("not a regular file")

// readConfigFile reads a configuration file: only a regular file (a FIFO
// or /dev/zero would block or never end), at most maxConfigBytes, and
// nested at most maxConfigDepth deep. Errors name the file and the limit.
// A missing file gives an error that wraps fs.ErrNotExist.
func readConfigFile(path string) ([]byte, error) {
	// Opened without blocking and checked on the open file: a path
	// swapped for a FIFO between a stat and an open would block the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
		}
		return nil, fmt.Errorf("%s: %w (%v); mcpgw reads only regular files", path, errNotRegular, fi.Mode().Type())
	}
	if fi.Size() > maxConfigBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the %d MiB limit for a configuration file", path, fi.Size(), maxConfigBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s: over the %d MiB limit for a configuration file", path, maxConfigBytes>>20)
	}
	if err := checkDepth(data, maxConfigDepth); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// checkDepth reports an error when JSON (with JSONC comments) nests objects
// and arrays more than max deep. It scans bytes without parsing, so it is
// safe on any input.
func checkDepth(data []byte, max int) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(data) && data[i+1] == '/' {
				for i < len(data) && data[i] != '\n' {
					i++
				}
			} else if i+1 < len(data) && data[i+1] == '*' {
				i += 2
				for i+1 < len(data) && !(data[i] == '*' && data[i+1] == '/') {
					i++
				}
				i++
			}
		case '[', '{':
			depth++
			if depth > max {
				return fmt.Errorf("nested more than %d levels deep (the limit for a configuration file)", max)
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
