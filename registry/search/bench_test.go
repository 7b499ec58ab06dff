package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRunBench(t *testing.T) {
	catalog := `{"version":1,"servers":{
		"github":{"tools":[
			{"name":"create_issue","description":"Create a new issue in a repository.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}}}},
			{"name":"list_issues","description":"List issues in a repository."}]},
		"playwright":{"tools":[
			{"name":"browser_take_screenshot","description":"Take a screenshot of the current page."},
			{"name":"browser_navigate","description":"Navigate to a URL."}]}}}`
	queries := `{"query": "github issue create", "relevant": ["github/create_issue"]}
{"query": "screenshot", "relevant": ["playwright/browser_take_screenshot"]}

{"query": "repository issues", "relevant": ["github/list_issues", "github/create_issue"]}
{"query": "open the website", "relevant": ["playwright/browser_navigate"]}
{"query": "zzz", "relevant": ["github/create_issue"]}
{"query": "gone", "relevant": ["nosuch/tool"]}
`
	rep, err := RunBench(strings.NewReader(catalog), strings.NewReader(queries), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Five of six queries find a relevant tool first; "zzz" matches
	// nothing; "gone" names a tool the catalog lacks.
	want := BenchReport{Tools: 4, Servers: 2, Queries: 6, Unknown: 1, K: 10,
		RecallAt1: 4.0 / 6, RecallAt5: 4.0 / 6, RecallAt10: 4.0 / 6, RecallAtK: 4.0 / 6, MRR: 4.0 / 6}
	got := *rep
	got.Build, got.P50, got.P99, got.Max = 0, 0, 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("report = %+v\nwant     %+v", got, want)
	}
	if rep.P50 <= 0 || rep.P99 < rep.P50 || rep.Max < rep.P99 {
		t.Errorf("latencies p50 %v p99 %v max %v out of order", rep.P50, rep.P99, rep.Max)
	}

	rep, err = RunBench(strings.NewReader(catalog), strings.NewReader(queries), &BenchOptions{K: 1})
	if err != nil || rep.K != 1 || rep.RecallAtK != 4.0/6 {
		t.Errorf("K 1: %+v, %v", rep, err)
	}

	for _, tt := range []struct{ catalog, queries, err string }{
		{`{"version":2,"servers":{}}`, queries, "version 2"},
		{`{"version":1,"servers":{}}`, queries, "no tools"},
		{`[`, queries, "reading catalog"},
		{catalog, "{\"query\": \"x\"}\nnot json\n", "line 2"},
		{catalog, "\n", "no queries"},
	} {
		_, err := RunBench(strings.NewReader(tt.catalog), strings.NewReader(tt.queries), nil)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("RunBench(%.30q, %.30q) error = %v, want it to say %q", tt.catalog, tt.queries, err, tt.err)
		}
	}
}

// With Explain, the report explains the queries whose first result is
// not relevant: the relevant tool's rank when the search ranks it, else
// the tool the query names.
func TestRunBenchMisses(t *testing.T) {
	catalog := `{"version":1,"servers":{"github":{"tools":[
		{"name":"create_issue","description":"Create a new issue."},
		{"name":"list_issues","description":"List issues of a repository."},
		{"name":"list_commits","description":"List commits of a branch."}]}}}`
	queries := `{"query":"list the issues","relevant":["github/create_issue"]}
{"query":"commits","relevant":["github/list_commits"]}
{"query":"commits","relevant":["github/create_issue"]}
{"query":"commits","relevant":["no/such"]}
`
	rep, err := RunBench(strings.NewReader(catalog), strings.NewReader(queries), &BenchOptions{Explain: 5})
	if err != nil {
		t.Fatal(err)
	}
	type miss struct {
		query, first, relevant string
		rank                   int
	}
	var got []miss
	for _, m := range rep.Misses {
		got = append(got, miss{m.Query, m.First, m.Relevant, m.Rank})
		if m.FirstWhy.Score <= 0 || (m.Rank > 0) != (m.RelevantWhy.Score > 0) {
			t.Errorf("%q: explanations %+v and %+v", m.Query, m.FirstWhy, m.RelevantWhy)
		}
	}
	want := []miss{
		{"list the issues", "github/list_issues", "github/create_issue", 3},
		{"commits", "github/list_commits", "github/create_issue", 0},
		{"commits", "github/list_commits", "", 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("misses %+v\nwant   %+v", got, want)
	}
	rep, _ = RunBench(strings.NewReader(catalog), strings.NewReader(queries), &BenchOptions{Explain: 1})
	if len(rep.Misses) != 1 {
		t.Errorf("Explain 1 explained %d misses", len(rep.Misses))
	}
}

func logBench(t *testing.T, name string, rep *BenchReport) {
	t.Logf("%s: %d queries, R@1 %.3f R@5 %.3f R@10 %.3f MRR %.3f, p50 %v", name, rep.Queries, rep.RecallAt1, rep.RecallAt5, rep.RecallAt10, rep.MRR, rep.P50)
}

// metatoolDir is the MetaTool benchmark in the shared folder beside the
// repository clone.
const metatoolDir = "../../../shared/bench/toolsearch/metatool"

func openMetatool(t testing.TB, name string) *os.File { return openShared(t, metatoolDir, name) }

// openShared opens a file of a benchmark set in the shared folder beside
// the clone, skipping the test when the set is not there.
func openShared(t testing.TB, dir, name string) *os.File {
	f, err := os.Open(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		t.Skipf("%s: not present", filepath.Join(dir, name))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// benchFloor is a query file of a set and the figures it must keep.
type benchFloor struct {
	queries     string
	minR5, minM float64
}

// checkBenchFloors runs the bench on each query file of the set in dir.
func checkBenchFloors(t *testing.T, dir string, floors []benchFloor) {
	for _, tt := range floors {
		rep, err := RunBench(openShared(t, dir, "catalog.json"), openShared(t, dir, tt.queries), nil)
		if err != nil {
			t.Fatal(err)
		}
		logBench(t, tt.queries, rep)
		if rep.RecallAt5 < tt.minR5 || rep.MRR < tt.minM {
			t.Errorf("%s: R@5 %.3f MRR %.3f, want R@5 ≥ %.3f and MRR ≥ %.3f", tt.queries, rep.RecallAt5, rep.MRR, tt.minR5, tt.minM)
		}
	}
}

func TestMetatoolBench(t *testing.T) {
	checkBenchFloors(t, metatoolDir, []benchFloor{
		{"queries.jsonl", 0.70, 0.58},
		{"queries-multi.jsonl", 0.85, 0},
	})
}

// TestMCPBench runs the bench on testdata: 99 tools of 15 MCP servers
// as they describe themselves, and 94 queries of the kinds a model sends:
// keywords, sentences, typos and names in other cases.
func TestMCPBench(t *testing.T) {
	catalog, err := os.Open("testdata/mcp-catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	defer catalog.Close()
	queries, err := os.Open("testdata/mcp-queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer queries.Close()
	rep, err := RunBench(catalog, queries, nil)
	if err != nil {
		t.Fatal(err)
	}
	logBench(t, "mcp-queries.jsonl", rep)
	if rep.Queries != 94 || rep.Unknown != 0 {
		t.Errorf("%d queries, %d unknown; want 94 and 0", rep.Queries, rep.Unknown)
	}
	if rep.RecallAt1 < 0.80 || rep.RecallAt5 < 0.92 {
		t.Errorf("R@1 %.3f R@5 %.3f, want R@1 ≥ 0.80 and R@5 ≥ 0.92", rep.RecallAt1, rep.RecallAt5)
	}
}

// TestSearchTuning compares the ranking's levers on MetaTool. Tuning uses
// every fifth query; the others are held out to check that a change
// generalises. Run with MCPGW_SEARCH_TUNE=1 -v.
func TestSearchTuning(t *testing.T) {
	if os.Getenv("MCPGW_SEARCH_TUNE") == "" {
		t.Skip("set MCPGW_SEARCH_TUNE=1 to compare ranking variants")
	}
	docs, _, err := readBenchCatalog(openMetatool(t, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	single, err := readBenchQueries(openMetatool(t, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	multi, err := readBenchQueries(openMetatool(t, "queries-multi.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	mcpFile, err := os.ReadFile("testdata/mcp-catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	mcpDocs, mcpServers, err := readBenchCatalog(bytes.NewReader(mcpFile))
	if err != nil {
		t.Fatal(err)
	}
	mcpQueriesFile, err := os.ReadFile("testdata/mcp-queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	mcpQueries, err := readBenchQueries(bytes.NewReader(mcpQueriesFile))
	if err != nil {
		t.Fatal(err)
	}
	var tune, held []benchQuery
	for i, q := range single {
		if i%5 == 0 {
			tune = append(tune, q)
		} else {
			held = append(held, q)
		}
	}
	variants := []struct {
		name string
		set  func(p *rankParams)
	}{
		{"default", func(p *rankParams) {}},
		{"no synonyms", func(p *rankParams) { p.synonym = 0 }},
		{"no related", func(p *rankParams) { p.related = 0 }},
		{"no prefix", func(p *rankParams) { p.prefix = 0 }},
		{"no pairs", func(p *rankParams) { p.pair = 0 }},
		{"no typos", func(p *rankParams) { p.typo = 0 }},
		{"no exact", func(p *rankParams) { p.weight[fieldNameExact] = 0 }},
		{"no dated", func(p *rankParams) { p.dated = 0 }},
		{"no plural", func(p *rankParams) { p.plural = 0 }},
		{"hard max", func(p *rankParams) { p.soft = 0 }},
		{"k1 0.9", func(p *rankParams) { p.k1 = 0.9 }},
		{"k1 2", func(p *rankParams) { p.k1 = 2 }},
		{"b desc .5", func(p *rankParams) { p.b[fieldDescription] = 0.5 }},
		{"name ×2", func(p *rankParams) { p.weight[fieldName] = 2 }},
		{"name ×5", func(p *rankParams) { p.weight[fieldName] = 5 }},
		{"plain-ish", func(p *rankParams) {
			*p = rankParams{k1: 1.2, segCover: 1, minPrefix: 99}
			p.weight[fieldName], p.weight[fieldDescription] = 1, 1
			p.b[fieldName], p.b[fieldDescription] = 0.75, 0.75
		}},
	}
	for _, v := range variants {
		p := defaultParams
		v.set(&p)
		a, _ := runSearchBench(docs, 1, tune, 10, &p)
		b, _ := runSearchBench(docs, 1, held, 10, &p)
		c, _ := runSearchBench(docs, 1, multi, 10, &p)
		m, _ := runSearchBench(mcpDocs, mcpServers, mcpQueries, 10, &p)
		t.Logf("%-12s tune R@5 %.3f MRR %.3f | held-out R@1 %.3f R@5 %.3f MRR %.3f | multi R@5 %.3f MRR %.3f | mcp R@1 %.3f R@5 %.3f",
			v.name, a.RecallAt5, a.MRR, b.RecallAt1, b.RecallAt5, b.MRR, c.RecallAt5, c.MRR, m.RecallAt1, m.RecallAt5)
	}
}

// synthCatalog generates n tools shaped like real MCP servers (services,
// objects, verbs; snake, camel, kebab and dotted names; input schemas),
// deterministically.
func synthCatalog(n int) []Doc {
	type service struct {
		name, title string
		objects     []string
	}
	services := []service{
		{"github", "GitHub", []string{"issue", "pull_request", "branch", "commit", "repository", "release", "workflow", "gist", "label", "milestone"}},
		{"gitlab", "GitLab", []string{"merge_request", "pipeline", "project", "issue", "job", "runner", "tag"}},
		{"jira", "Jira", []string{"issue", "project", "sprint", "board", "comment", "worklog", "epic"}},
		{"linear", "Linear", []string{"issue", "cycle", "team", "project", "comment"}},
		{"slack", "Slack", []string{"channel", "message", "user", "reaction", "thread", "file", "reminder"}},
		{"discord", "Discord", []string{"guild", "channel", "message", "role", "member"}},
		{"notion", "Notion", []string{"page", "database", "block", "comment", "user"}},
		{"gdrive", "Google Drive", []string{"file", "folder", "permission", "comment", "revision"}},
		{"gmail", "Gmail", []string{"message", "draft", "label", "thread", "attachment"}},
		{"calendar", "Google Calendar", []string{"event", "calendar", "attendee", "reminder"}},
		{"stripe", "Stripe", []string{"customer", "invoice", "payment_intent", "subscription", "refund", "product", "price"}},
		{"shopify", "Shopify", []string{"order", "product", "customer", "inventory_item", "collection"}},
		{"aws", "AWS", []string{"s3_bucket", "s3_object", "ec2_instance", "ebs_volume", "lambda_function", "sqs_queue", "iam_role"}},
		{"kubernetes", "Kubernetes", []string{"pod", "deployment", "service", "namespace", "node", "secret", "config_map"}},
		{"docker", "Docker", []string{"container", "image", "volume", "network"}},
		{"postgres", "PostgreSQL", []string{"table", "query", "schema", "index", "row"}},
		{"sentry", "Sentry", []string{"issue", "event", "project", "release"}},
		{"datadog", "Datadog", []string{"metric", "monitor", "dashboard", "log", "incident"}},
		{"figma", "Figma", []string{"file", "frame", "component", "comment"}},
		{"spotify", "Spotify", []string{"track", "playlist", "album", "artist"}},
		{"youtube", "YouTube", []string{"video", "channel", "playlist", "comment", "caption"}},
		{"weather", "Weather", []string{"forecast", "alert", "observation", "station"}},
		{"maps", "Maps", []string{"place", "route", "geocode", "distance_matrix"}},
		{"twitter", "X", []string{"tweet", "user", "timeline", "follower"}},
		{"browser", "Browser", []string{"page", "tab", "screenshot", "element", "cookie"}},
		{"filesystem", "Filesystem", []string{"file", "directory", "path", "symlink"}},
		{"salesforce", "Salesforce", []string{"lead", "opportunity", "account", "contact", "case"}},
		{"zendesk", "Zendesk", []string{"ticket", "macro", "view", "organization"}},
		{"airtable", "Airtable", []string{"base", "table", "record", "field"}},
		{"confluence", "Confluence", []string{"page", "space", "attachment", "label"}},
	}
	verbs := []string{"create", "get", "list", "update", "delete", "search", "add", "remove",
		"archive", "export", "import", "sync", "move", "copy", "describe", "fetch", "upload", "download", "start", "stop"}
	phrases := map[string]string{
		"create": "Create a new %s in %s.", "get": "Get details of a specific %s from %s.",
		"list": "List %ss in %s with pagination and filters.", "update": "Update an existing %s in %s.",
		"delete": "Delete a %s from %s. This cannot be undone.", "search": "Search %ss in %s by keyword.",
		"add": "Add a %s to %s.", "remove": "Remove a %s from %s.", "archive": "Archive a %s in %s.",
		"export": "Export a %s from %s as JSON or CSV.", "import": "Import a %s into %s from a file.",
		"sync": "Synchronise a %s with %s.", "move": "Move a %s to another place in %s.",
		"copy": "Copy a %s within %s.", "describe": "Describe the %s and its settings in %s.",
		"fetch": "Fetch the latest %s data from %s.", "upload": "Upload a %s to %s.",
		"download": "Download a %s from %s.", "start": "Start a %s in %s.", "stop": "Stop a running %s in %s.",
	}
	extra := []string{"Requires an access token.", "Returns at most 100 items per page.",
		"Use the id returned by the list call.", "Results are sorted by creation time.",
		"Supports dry run.", "Rate limited to 60 calls a minute.", ""}
	rng := rand.New(rand.NewPCG(1, 2))
	// Made-up words (product, field and team names) give the catalogue a
	// vocabulary as large as a real one's: tens of thousands of words.
	syllables := []string{"ka", "ro", "mi", "tel", "van", "dor", "qui", "sel", "bra", "nu", "pex", "lo",
		"tri", "gan", "fo", "zu", "mar", "ish", "on", "el", "stra", "vy", "cor", "den"}
	coined := make([]string, 20000)
	for i := range coined {
		var w strings.Builder
		for range 2 + rng.IntN(3) {
			w.WriteString(syllables[rng.IntN(len(syllables))])
		}
		coined[i] = w.String()
	}
	coin := func() string { return coined[rng.IntN(len(coined))] }
	var docs []Doc
	for inst := 0; len(docs) < n; inst++ {
		for _, svc := range services {
			server := svc.name
			if inst > 0 {
				server = fmt.Sprintf("%s-%d", svc.name, inst)
			}
			for _, obj := range svc.objects {
				for _, verb := range verbs {
					if len(docs) == n {
						return docs
					}
					if rng.IntN(3) == 0 {
						continue
					}
					var name string
					switch rng.IntN(5) {
					case 0:
						name = verb + "_" + obj
					case 1:
						name = camel(verb + "_" + obj)
					case 2:
						name = strings.ReplaceAll(verb+"-"+obj, "_", "-")
					case 3:
						name = obj + "." + verb
					default:
						name = svc.name + "_" + verb + "_" + obj
					}
					human := strings.ReplaceAll(obj, "_", " ")
					desc := fmt.Sprintf(phrases[verb], human, svc.title) + " " + extra[rng.IntN(len(extra))] +
						fmt.Sprintf(" Works with %s and %s projects.", coin(), coin())
					schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
						obj + "_id":      map[string]any{"type": "string", "description": "The " + human + " identifier"},
						"limit":          map[string]any{"type": "integer", "description": "Maximum number of results"},
						"cursor":         map[string]any{"type": "string", "description": "Pagination cursor"},
						coin() + "_mode": map[string]any{"type": "string", "description": "The " + coin() + " setting"},
					}})
					docs = append(docs, Doc{Server: server, Name: name, Description: desc, Schema: schema,
						ServerDescription: svc.title + " integration"})
				}
			}
		}
	}
	return docs
}

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

var benchQueries = []string{
	"github issue create",
	"screenshot",
	"list pods",
	"slack post message",
	"delete s3 bucket",
	"weather forecast",
	"merge request pipeline",
	"Please create a new issue in the repository describing the login bug",
	"Can you show me all the running containers on this machine?",
	"I need to export the customer list from Stripe as a CSV file so that I can share it with the finance team",
	"search",
	"get",
	"download the latest invoice",
	"playlist",
	"What is the weather going to be like tomorrow, and are there any alerts for my area?",
	"upload a file to google drive and share it with my team",
	"screnshot page",
	"kubernets deploymnet",
}

func TestSearchDoesNotAllocatePerTool(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocations vary")
	}
	allocs := func(n int) float64 {
		ix := NewIndex(synthCatalog(n))
		ix.Search("warm the pool", Options{Limit: 5})
		return testing.AllocsPerRun(20, func() {
			for _, q := range benchQueries {
				ix.Search(q, Options{Limit: 5})
			}
		})
	}
	small, large := allocs(1000), allocs(10000)
	if large > small+float64(len(benchQueries)) {
		t.Errorf("allocations per round: %v over 1,000 tools, %v over 10,000; want about the same", small, large)
	}
}

func TestSynthCatalog(t *testing.T) {
	docs := synthCatalog(10000)
	if len(docs) != 10000 {
		t.Fatalf("synthCatalog(10000) made %d tools", len(docs))
	}
	if again := synthCatalog(10000); !slices.EqualFunc(docs, again, func(a, b Doc) bool {
		return a.Server == b.Server && a.Name == b.Name && a.Description == b.Description
	}) {
		t.Fatal("synthCatalog is not deterministic")
	}
	ix := NewIndex(docs)
	hits, _ := ix.Search("github issue create", Options{Limit: 1})
	if len(hits) != 1 || !strings.HasPrefix(docs[hits[0].Doc].Server, "github") || !strings.Contains(strings.ToLower(docs[hits[0].Doc].Name), "create") {
		t.Errorf("Search(github issue create) over the synthetic catalogue = %+v", hits)
	}
}

// BenchmarkSearch searches a synthetic 10,000-tool catalogue with keyword
// and sentence queries for the best 10, and reports the per-search p50 and
// p99 of wall time and, where the system tells it, of the thread's CPU time
// (which a busy machine does not inflate).
func BenchmarkSearch(b *testing.B) { benchmarkSearch(b, 10) }

// BenchmarkSearchAll is BenchmarkSearch for every match (Limit 0), as
// mcp({search}) asks.
func BenchmarkSearchAll(b *testing.B) { benchmarkSearch(b, 0) }

func benchmarkSearch(b *testing.B, limit int) {
	ix := NewIndex(synthCatalog(10000))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wall := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c0, ok := threadCPU()
		t := time.Now()
		if _, err := ix.Search(benchQueries[i%len(benchQueries)], Options{Limit: limit}); err != nil {
			b.Fatal(err)
		}
		wall = append(wall, time.Since(t))
		if c1, _ := threadCPU(); ok {
			cpu = append(cpu, c1-c0)
		}
	}
	b.StopTimer()
	report := func(d []time.Duration, unit string) {
		if len(d) == 0 {
			return
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-"+unit)
		b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-"+unit)
	}
	report(wall, "ns")
	report(cpu, "cpu-ns")
}

// BenchmarkNewIndex builds the index of a synthetic 10,000-tool catalogue,
// and reports the heap the index keeps (index-MB), the catalogue itself
// not counted.
func BenchmarkNewIndex(b *testing.B) {
	docs := synthCatalog(10000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := NewIndex(docs)
	ix.Search("warm the pool", Options{Limit: 5})
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ix)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		NewIndex(docs)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "index-MB")
}

func BenchmarkSearchRegex(b *testing.B) {
	ix := NewIndex(synthCatalog(10000))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ix.Search(`^(create|add)_.*issue`, Options{Regex: true, Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// mscbenchDir is MSC-Bench's tool-retrieval set (real MCP servers) in the
// shared folder beside the repository clone.
const mscbenchDir = "../../../shared/bench/toolsearch/mscbench"

// TestMSCBench holds the ranking's figures on MSC-Bench: 2,375 tools of 491
// real servers, 1,554 requests for one tool and 430 for several.
func TestMSCBench(t *testing.T) {
	checkBenchFloors(t, mscbenchDir, []benchFloor{
		{"queries.jsonl", 0.96, 0.915},
		{"queries-multi.jsonl", 0.97, 0.925},
	})
}

// BenchmarkSearchPathological searches 10,000 tools for a pasted 18 KB
// base64 blob: the query is capped, so this costs a few ordinary queries.
func BenchmarkSearchPathological(b *testing.B) {
	ix := NewIndex(synthCatalog(10000))
	blob := make([]byte, 18000)
	for i := range blob {
		blob[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i*7919)%64]
	}
	q := "decode this " + string(blob)
	b.ResetTimer()
	for range b.N {
		if _, err := ix.Search(q, Options{Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
}
