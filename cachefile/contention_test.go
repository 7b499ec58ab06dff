package cachefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as a writer process when these are set (as
// go-sdk's mcp/cmd_test.go re-runs itself as a server).
const (
	envWriterPath  = "CACHEFILE_TEST_WRITER_PATH"
	envWriterID    = "CACHEFILE_TEST_WRITER_ID"
	envWriterCount = "CACHEFILE_TEST_WRITER_COUNT"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envWriterPath); path != "" {
		if err := runWriter(path, os.Getenv(envWriterID), os.Getenv(envWriterCount)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runWriter does count Puts. Each one writes the writer's own server entry
// with the put's number in its hash, after checking that the previous
// number is still there: any other writer's read-merge-write that dropped
// it would show here. Every tenth put also adds a server name of its own, so
// the final file must hold every writer's trail.
func runWriter(path, id, countStr string) error {
	count, err := strconv.Atoi(countStr)
	if err != nil {
		return err
	}
	f := Open(path, nil)
	own := "w" + id
	for j := range count {
		if j > 0 {
			if _, ok := f.Lookup(own, writerHash(own, j-1)); !ok {
				return fmt.Errorf("writer %s, put %d: own entry %d lost", id, j, j-1)
			}
		}
		puts := map[string]*Entry{own: writerEntry(own, j)}
		if j%10 == 0 {
			name := writerTrailName(id, j)
			puts[name] = writerEntry(name, j)
		}
		if err := f.Put(puts); err != nil {
			return fmt.Errorf("writer %s, put %d: %w", id, j, err)
		}
	}
	if s := f.Stats(); s.Writes != uint64(count) || s.WriteErrors != 0 || s.Corrupt != 0 || s.Hits != uint64(count-1) {
		return fmt.Errorf("writer %s: stats %+v", id, s)
	}
	return nil
}

func writerHash(name string, j int) string { return fmt.Sprintf("%s-put-%03d", name, j) }

func writerTrailName(id string, j int) string { return fmt.Sprintf("w%s-%03d", id, j) }

func writerEntry(name string, j int) *Entry {
	return &Entry{
		ConfigHash: writerHash(name, j),
		Tools:      []*mcp.Tool{{Name: "tool_" + name, InputSchema: map[string]any{"type": "object"}}},
		Resources:  []*mcp.Resource{},
	}
}

// TestConcurrentWriters runs 8 writer processes, 200 Puts each, against one
// file while this process reads it in a loop. No writer ever misses its own
// last write (see runWriter), every entry written is there at the end, and
// every read along the way saw a whole version-1 file.
func TestConcurrentWriters(t *testing.T) {
	const writers, puts = 8, 200
	if testing.Short() {
		t.Skip("runs 8 processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent", "mcp-cache.json")

	var cmds []*exec.Cmd
	for i := range writers {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(),
			envWriterPath+"="+path,
			envWriterID+"="+strconv.Itoa(i),
			envWriterCount+"="+strconv.Itoa(puts),
		)
		cmd.Stderr = os.Stderr
		cmds = append(cmds, cmd)
	}

	var (
		done                        atomic.Bool
		wg                          sync.WaitGroup
		rawReads, fileReads, broken int
		readErr                     error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		f := Open(path, nil)
		for !done.Load() {
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				readErr = err
				return
			}
			rawReads++
			if s := parseFile(data); !s.ok {
				broken++
			}
			// Through File as well: its parse must never find the file
			// corrupt (checked through Stats below).
			f.Lookup("w0", writerHash("w0", 0))
			fileReads++
			time.Sleep(time.Millisecond) // leave the two cores to the writers
		}
		if s := f.Stats(); s.Corrupt != 0 {
			readErr = fmt.Errorf("reader saw a corrupt file %d times", s.Corrupt)
		}
	}()

	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var failed bool
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %v: %v", cmd.Env[len(cmd.Env)-2], err)
			failed = true
		}
	}
	done.Store(true)
	wg.Wait()
	if failed {
		t.FailNow()
	}
	if readErr != nil {
		t.Fatal(readErr)
	}
	if broken != 0 || rawReads == 0 {
		t.Fatalf("%d of %d reads did not parse as a cache file", broken, rawReads)
	}
	t.Logf("reader: %d raw reads, %d Lookups, all whole", rawReads, fileReads)

	entries, err := Open(path, nil).Read()
	if err != nil {
		t.Fatal(err)
	}
	if want := writers + writers*puts/10; len(entries) != want {
		t.Errorf("%d entries, want %d", len(entries), want)
	}
	check := func(name string, j int) {
		e := entries[name]
		switch {
		case e == nil:
			t.Errorf("entry %s lost", name)
		case e.ConfigHash != writerHash(name, j) || len(e.Tools) != 1 || e.Tools[0].Name != "tool_"+name:
			b, _ := json.Marshal(e)
			t.Errorf("entry %s = %s, want put %d", name, b, j)
		}
	}
	for i := range writers {
		check("w"+strconv.Itoa(i), puts-1)
		for j := 0; j < puts; j += 10 {
			check(writerTrailName(strconv.Itoa(i), j), j)
		}
	}
	// Only the file and its lock remain: no temporary files.
	if names, _ := os.ReadDir(filepath.Dir(path)); len(names) != 2 {
		t.Errorf("directory holds %d files, want 2", len(names))
	}
}
