package audit

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendRecordIsEncodingJSON(t *testing.T) {
	var st timeStamp
	for _, r := range []Record{
		{Time: time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC), Event: EventCall, Server: "gh", Tool: "delete_repo"},
		{Time: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Event: EventCall, Server: "gh", Tool: "test://item/{id}", Method: "resources/read", Outcome: "ok"},
		{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Event: EventApproval, Session: "s1", Client: "pi <agent> & co", Script: "s-0a1b",
			Server: "we\"ird\\", Tool: "t\n\x01\u2028é\xff", Args: "hmac-sha256:00", Outcome: "denied", Approval: "denied",
			DecidedBy: "cli", Rule: `settings.approveTools = ["a"]`, DurationMs: 12.345},
		{Time: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Event: EventCall, Session: "s1", User: "alice@example.com", Server: "gh", Tool: "t", Outcome: "ok"},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendRecord(nil, &r, new(timeStamp)); string(got) != string(want)+"\n" {
			t.Errorf("appendRecord:\n got %s\nwant %s", got, want)
		}
		if got := appendRecord(nil, &r, &st); string(got) != string(want)+"\n" {
			t.Errorf("appendRecord after the record before:\n got %s\nwant %s", got, want)
		}
	}
}

// TestTimeStampIsRFC3339Nano: a record's time, written after another's,
// is what encoding/json writes: in the same second or the next, with a
// fraction or none, in another zone, across a change of summer time.
func TestTimeStampIsRFC3339Nano(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	shift := time.Date(2026, 3, 29, 0, 59, 59, 0, time.UTC) // 02:00 in Paris becomes 03:00
	var times []time.Time
	for _, ns := range []int{0, 1, 10, 120000000, 123456789, 999999999, 500000000, 0} {
		times = append(times, base.Add(time.Duration(ns)), base.Add(time.Second+time.Duration(ns)))
	}
	times = append(times, base.In(paris), base.Add(7).In(paris), base.In(time.FixedZone("x", -(3*3600+1800))), base.Local(),
		shift.In(paris), shift.Add(time.Second).In(paris), shift.Add(time.Second+5).In(paris),
		time.Date(999, 1, 1, 0, 0, 0, 50, time.UTC), time.Now(), time.Now())
	var st timeStamp
	for _, tm := range times {
		want, _ := json.Marshal(tm)
		if got := st.append(nil, tm); `"`+string(got)+`"` != string(want) {
			t.Errorf("%v: %s, want %s", tm, got, want)
		}
	}
}

// TestRecordUser: a record names its user in team mode, after the
// client, and outside it a record's bytes are what they always were.
func TestRecordUser(t *testing.T) {
	r := Record{Time: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Event: EventCall, Session: "s1", Client: "pi", Server: "gh", Tool: "t", Outcome: "ok"}
	const without = `{"time":"2026-11-25T10:00:00Z","event":"call","session":"s1","client":"pi","server":"gh","tool":"t","outcome":"ok"}` + "\n"
	if got := string(appendRecord(nil, &r, new(timeStamp))); got != without {
		t.Errorf("without a user:\n got %s\nwant %s", got, without)
	}
	r.User = "alice"
	const with = `{"time":"2026-11-25T10:00:00Z","event":"call","session":"s1","client":"pi","user":"alice","server":"gh","tool":"t","outcome":"ok"}` + "\n"
	if got := string(appendRecord(nil, &r, new(timeStamp))); got != with {
		t.Errorf("with a user:\n got %s\nwant %s", got, with)
	}
}

// TestLongFieldsAreCut: a record whose caller wrote a megabyte into a
// field (a tool that does not exist, the client's name) is one line of a
// few kilobytes, each long field cut on a character's start and saying
// how much was left out; the short fields are whole.
func TestLongFieldsAreCut(t *testing.T) {
	l, dir := open(t, nil)
	tool := "bench_" + strings.Repeat("e", 1<<20)
	client := strings.Repeat("é", MaxField)      // 2 bytes each: cut at 1,024
	odd := "x" + strings.Repeat("é", MaxField/2) // the cut falls inside a character
	if err := l.Write(Record{Event: EventCall, Session: "s1", Client: client, Server: "gh", Tool: tool, Method: odd, Outcome: "unknown_tool"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 4*MaxField {
		t.Errorf("the record is %d bytes", len(data))
	}
	recs := readRecords(t, filepath.Join(dir, "audit.jsonl"))
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	for _, f := range []struct{ name, got, want string }{
		{"tool", r.Tool, tool[:MaxField] + "…(+" + strconv.Itoa(len(tool)-MaxField) + " bytes)"},
		{"client", r.Client, client[:MaxField] + "…(+" + strconv.Itoa(MaxField) + " bytes)"},
		{"method", r.Method, odd[:MaxField-1] + "…(+" + strconv.Itoa(len(odd)-MaxField+1) + " bytes)"},
		{"session", r.Session, "s1"},
		{"outcome", r.Outcome, "unknown_tool"},
	} {
		if f.got != f.want {
			t.Errorf("%s: %d bytes ending %q; want %d bytes ending %q", f.name, len(f.got), f.got[max(0, len(f.got)-24):], len(f.want), f.want[max(0, len(f.want)-24):])
		}
	}
}

func open(t testing.TB, o *Options) (*Log, string) {
	t.Helper()
	dir := t.TempDir()
	l, err := Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, dir
}

func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// TestWriteUnderLoad: records written by many goroutines at once are all
// in the file after Close, each line whole, none lost.
func TestWriteUnderLoad(t *testing.T) {
	l, dir := open(t, nil)
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Write(Record{Event: EventCall, Server: "s", Tool: strings.Repeat("t", w+1), DurationMs: float64(i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, filepath.Join(dir, "audit.jsonl"))
	if len(recs) != writers*each {
		t.Fatalf("%d records in the file, want %d", len(recs), writers*each)
	}
	fi, _ := os.Stat(filepath.Join(dir, "audit.jsonl"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := l.Write(Record{}); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// TestFlushedWithoutClose: a record reaches the file within the flush
// interval while the log stays open (mcpgw audit -f reads it), the first
// one and one that comes after the log has been idle.
func TestFlushedWithoutClose(t *testing.T) {
	l, dir := open(t, nil)
	for want := 1; want <= 2; want++ {
		if err := l.Write(Record{Event: EventCall, Server: "s", Tool: "t"}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			data, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
			if n := bytes.Count(data, []byte("\n")); n == want {
				break
			} else if n > want {
				t.Fatalf("%d records in the file, want %d", n, want)
			}
			if time.Now().After(deadline) {
				t.Fatalf("record %d never reached the file", want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestBuffersStayBounded: while calls come faster than FlushInterval
// writes them, what waits is written once it passes flushSoon, rather
// than growing for the whole interval.
func TestBuffersStayBounded(t *testing.T) {
	defer func(d time.Duration) { FlushInterval = d }(FlushInterval)
	FlushInterval = time.Hour // only the size can start a flush
	l, dir := open(t, nil)
	r := Record{Event: EventCall, Session: "O7ZSSBR4LIMYTALPVKVMU4RM73", Client: "pi", Server: "go", Tool: "echo",
		Args: l.Digest([]byte(`{"message":"hello"}`)), Outcome: "ok", DurationMs: 1}
	const total = 4 * flushSoon
	written, records := 0, 0
	for written < total {
		r.Time = time.Now()
		n := len(appendRecord(nil, &r, new(timeStamp)))
		if err := l.Write(r); err != nil {
			t.Fatal(err)
		}
		written, records = written+n, records+1
	}
	path := filepath.Join(dir, "audit.jsonl")
	deadline := time.Now().Add(10 * time.Second)
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		// All but what is under flushSoon reaches the file without
		// waiting out the interval.
		if fi.Size() >= int64(written-flushSoon) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d bytes in the file after 10 s; the rest waits for FlushInterval", fi.Size(), written)
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, path)
	if want := records; len(recs) != want {
		t.Errorf("%d records in the file, want %d", len(recs), want)
	}
}

func TestRotation(t *testing.T) {
	l, dir := open(t, &Options{MaxBytes: 4096, Files: 2})
	for i := range 200 {
		if err := l.Write(Record{Event: EventCall, Server: "s", Tool: "t", DurationMs: float64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cur := readRecords(t, filepath.Join(dir, "audit.jsonl"))
	old := readRecords(t, filepath.Join(dir, "audit.jsonl.1"))
	fi, _ := os.Stat(filepath.Join(dir, "audit.jsonl"))
	if fi.Size() > 4096 || len(cur) == 0 || len(old) == 0 {
		t.Fatalf("after rotation: current %d bytes, %d records; old %d records", fi.Size(), len(cur), len(old))
	}
	if last := cur[len(cur)-1].DurationMs; last != 200 {
		t.Errorf("the last record is %v, want 200", last)
	}
	if first := cur[0].DurationMs; old[len(old)-1].DurationMs != first-1 {
		t.Errorf("records lost between the files: old ends at %v, current starts at %v", old[len(old)-1].DurationMs, first)
	}
}

// TestRotationKeepsFiles: the log keeps its last Files files, current
// one included, each at most MaxBytes, oldest removed first; read from
// the highest number down they hold the last records in order, none lost
// between them.
func TestRotationKeepsFiles(t *testing.T) {
	const maxBytes, files, n = 1024, 4, 400
	l, dir := open(t, &Options{MaxBytes: maxBytes, Files: files})
	for i := range n {
		if err := l.Write(Record{Event: EventCall, Server: "s", Tool: "t", DurationMs: float64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			l.Flush() // rotations between flushes too, not only at Close
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.jsonl")
	if _, err := os.Stat(RotatedName(path, files)); !os.IsNotExist(err) {
		t.Errorf("%s exists (%v): the log keeps %d files", RotatedName(path, files), err, files)
	}
	var all []Record
	for i := files - 1; i >= 0; i-- {
		name := RotatedName(path, i)
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatalf("file %d of %d: %v", i, files, err)
		}
		if fi.Size() > maxBytes || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v", name, fi.Size(), fi.Mode().Perm())
		}
		all = append(all, readRecords(t, name)...)
	}
	for i, r := range all {
		if want := float64(n - len(all) + i + 1); r.DurationMs != want {
			t.Fatalf("record %d of the kept %d is %v, want %v", i, len(all), r.DurationMs, want)
		}
	}
	if least := (files - 1) * maxBytes / 120; len(all) < least {
		t.Errorf("the log keeps %d records, want at least %d", len(all), least)
	}
	t.Logf("%d files of at most %d bytes keep the last %d records", files, maxBytes, len(all))
}

func TestDigest(t *testing.T) {
	l, dir := open(t, nil)
	a, b := l.Digest([]byte(`{"path":"/secret"}`)), l.Digest([]byte(`{"path":"/other"}`))
	if a == b || a != l.Digest([]byte(`{"path":"/secret"}`)) || !strings.HasPrefix(a, "hmac-sha256:") || strings.Contains(a, "secret") {
		t.Errorf("digests %q, %q", a, b)
	}
	if l.Digest(nil) != l.Digest([]byte("{}")) {
		t.Error("no arguments and {} differ")
	}
	// The key is kept: a second Open digests alike.
	l2, err := Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.Digest([]byte(`{"path":"/secret"}`)) != a {
		t.Error("the key changed between opens")
	}
	fi, _ := os.Stat(filepath.Join(dir, "audit.key"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode().Perm())
	}
}

// Digests of one log, made one after another and at once, are the keyed
// hash of their arguments: the reused hash starts afresh each time.
func TestDigestReused(t *testing.T) {
	l, dir := open(t, nil)
	key, err := os.ReadFile(filepath.Join(dir, "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	want := func(args string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(args))
		return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil)[:16])
	}
	args := []string{`{"a":1}`, `{"path":"/secret"}`, `{}`, strings.Repeat("x", 200)}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				a := args[i%len(args)]
				if got := l.Digest([]byte(a)); got != want(a) {
					t.Errorf("Digest(%s) = %s, want %s", a, got, want(a))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkDigest measures the digest of a call's arguments, made for
// every call.
func BenchmarkDigest(b *testing.B) {
	l, _ := open(b, nil)
	args := []byte(`{"message":"hello through mcpgw"}`)
	b.ReportAllocs()
	for b.Loop() {
		l.Digest(args)
	}
}

// BenchmarkWrite measures appending one call's record, as the dispatcher
// does for every call (the file is written by the flush loop, in batches).
func BenchmarkWrite(b *testing.B) {
	l, _ := open(b, nil)
	r := Record{Event: EventCall, Session: "O7ZSSBR4LIMYTALPVKVMU4RM73", Client: "pi", Server: "go", Tool: "echo",
		Args: l.Digest([]byte(`{"message":"hello through mcpgw"}`)), Outcome: "ok", DurationMs: 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Write(r); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzAppendStringIsEncodingJSON: a string up to MaxField bytes is
// written as encoding/json writes it, whatever its bytes.
func FuzzAppendStringIsEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", `we"ird\`, "t\n\x01\u2028é\xff", "<a & b>", "\x7f~ ", "\b\f", "héllo\u2029", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > MaxField {
			return
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

// BenchmarkAppendRecord measures the encoding of one call's record.
func BenchmarkAppendRecord(b *testing.B) {
	r := Record{Time: time.Now(), Event: EventCall, Session: "O7ZSSBR4LIMYTALPVKVMU4RM73", Client: "pi-coding-agent", Server: "github", Tool: "search_repositories",
		Args: "hmac-sha256:0123456789abcdef0123456789abcdef", Outcome: "ok", DurationMs: 1.25}
	buf := make([]byte, 0, 512)
	var st timeStamp
	b.ReportAllocs()
	for b.Loop() {
		buf = appendRecord(buf[:0], &r, &st)
	}
}
