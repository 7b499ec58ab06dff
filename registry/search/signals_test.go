package search

import (
	"reflect"
	"testing"
)

func TestSplitClauses(t *testing.T) {
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"list my repos", nil},
		{"Get the forecast for cell '8a2', then list all stations.", []string{"Get the forecast for cell '8a2',", "list all stations."}},
		{"Scan main.py with Semgrep and then get the results; finally, list languages.",
			[]string{"Scan main.py with Semgrep and", "get the results;", "finally, list languages."}},
		{"Read v1.2 notes. Then summarize them", []string{"Read v1.2 notes.", "summarize them"}},
		{"Create a note, and retrieve its content", []string{"Create a note,", "and retrieve its content"}},
		{"Fetch price for 600000.SH from 2020, with daily data", nil},
	} {
		if got := splitClauses(tt.query); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitClauses(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

// TestNamedServerAndClauses: a request naming a server ranks that server's
// tool first, though another server's tool matches its words as well; in a
// request of two steps, the tool that fits one step whole outranks one
// whose name takes a word from each.
func TestNamedServerAndClauses(t *testing.T) {
	docs := []Doc{
		{Server: "Qase MCP", Name: "get_project", Description: "Get a project by code."},
		{Server: "Writer", Name: "getProjectDetails", Description: "Get project details."},
		{Server: "Writer", Name: "list_documents", Description: "List documents."},
		{Server: "Weather", Name: "get_forecast_for_cell", Description: "Forecast for an H3 cell."},
		{Server: "Weather", Name: "get_stations_in_cell", Description: "Stations in an H3 cell."},
		{Server: "Weather", Name: "get_all_stations", Description: "All stations."},
	}
	ix := NewIndex(docs)
	first := func(q string) string {
		hits, err := ix.Search(q, Options{Limit: 3})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%q: %v, %v", q, hits, err)
		}
		return docs[hits[0].Doc].Name
	}
	if got := first("On Qase, get the project details for code PQR"); got != "get_project" {
		t.Errorf("named server: first = %s, want get_project", got)
	}
	if got := first("Get the forecast for cell 8a2 and then list all stations"); got == "get_stations_in_cell" {
		t.Errorf("two steps: first = %s, a mix of both", got)
	}
	if got := capQuery(string(make([]byte, 3*maxQueryBytes))); len(got) != maxQueryBytes {
		t.Errorf("capQuery kept %d bytes, want %d", len(got), maxQueryBytes)
	}
}

// TestExplainAgreesWithSearch: Explain's score is Search's, and its term
// matches add up to the whole query's part of it.
func TestExplainAgreesWithSearch(t *testing.T) {
	docs := synthCatalog(300)
	ix := NewIndex(docs)
	for _, q := range []string{"create an issue", "list repos, then delete the branch", "screnshot", "github pull request review comments"} {
		hits, err := ix.Search(q, Options{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			ex := ix.Explain(q, h.Doc)
			if d := ex.Score - h.Score; d > 1e-3*h.Score || d < -1e-3*h.Score {
				t.Errorf("%q, %s: Explain score %.4f, Search %.4f", q, docs[h.Doc].Name, ex.Score, h.Score)
			}
			if len(ex.Matches) == 0 {
				t.Errorf("%q, %s: no term matches", q, docs[h.Doc].Name)
			}
		}
	}
}
