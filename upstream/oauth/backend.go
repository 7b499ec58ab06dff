package oauth

import (
	"os"
	"sync"
)

// A Backend keeps a Store's records elsewhere than in files or the OS
// keyring: each user's own logins in team mode, in the daemon's memory
// (Memory) or sealed in the team store (gateway/teamstore). A record is
// the JSON the Store writes for one server URL; the Backend keeps it as
// given. Its methods are called concurrently, for any server URLs.
type Backend interface {
	// Read returns serverURL's record; an error wrapping os.ErrNotExist
	// when there is none.
	Read(serverURL string) ([]byte, error)
	// Write replaces serverURL's record.
	Write(serverURL string, data []byte) error
	// Remove deletes serverURL's record, if any.
	Remove(serverURL string) error
}

// A Locker is a Backend shared by several processes (replicas of one
// team daemon): a Source refreshes a token only under Lock, and reads the
// record again once it has it, so that two processes never both spend a
// refresh token that rotates.
type Locker interface {
	// Lock waits for serverURL's refresh lock and returns its release. A
	// lock is held for a bounded time at most, whatever becomes of its
	// holder.
	Lock(serverURL string) (unlock func(), err error)
}

// Memory is a Backend in this process's memory. The zero value is
// usable; its methods are safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	records map[string][]byte
}

func (m *Memory) Read(serverURL string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.records[serverURL]
	if !ok {
		return nil, os.ErrNotExist
	}
	return data, nil
}

func (m *Memory) Write(serverURL string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records == nil {
		m.records = map[string][]byte{}
	}
	m.records[serverURL] = append([]byte(nil), data...)
	return nil
}

func (m *Memory) Remove(serverURL string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.records, serverURL)
	return nil
}
