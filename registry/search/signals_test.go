package search

import (
	"math"
	"reflect"
	"slices"
	"strings"
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
	if got := CapQuery(string(make([]byte, 3*MaxQueryBytes))); len(got) != MaxQueryBytes {
		t.Errorf("CapQuery kept %d bytes, want %d", len(got), MaxQueryBytes)
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

// Words that every tool of a large server has in its schema say nothing
// about which of them a query wants, and must not make the tool named by
// them look common.
func TestSearchBoilerplateParameters(t *testing.T) {
	docs := append(cloudServer(),
		Doc{Server: "chat", Name: "list_user_groups", Description: "List the groups a chat user belongs to.",
			Schema: []byte(`{"type":"object","properties":{"user":{"type":"string"}}}`)},
		Doc{Server: "billing", Name: "cancel_subscription", Description: "Cancel a customer's subscription.",
			Schema: []byte(`{"type":"object","properties":{"subscription":{"type":"string"}}}`)},
	)
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"List all resource groups in my subscription", "cloud/group_list"},
		{"Show me my resource groups", "cloud/group_list"},
		{"Show me my subscriptions", "cloud/subscription_list"},
		{"What VMs do I have?", "cloud/vm_get"},
		{"cancel the subscription of customer 42", "billing/cancel_subscription"},
	}
	expectFirst(t, ix, docs, tests)
	// The words stay in the schemas of servers where they are not
	// boilerplate.
	if ex := ix.Explain("subscription", docIndex(docs, "billing/cancel_subscription")); ex.Score == 0 {
		t.Errorf("cancel_subscription does not match its own parameter")
	}
}

// "ID" in a request is an identifier, not "I'd".
func TestSearchIDIsAWord(t *testing.T) {
	docs := []Doc{
		{Server: "wiki", Name: "get_page", Description: "Get a wiki page by its title."},
		{Server: "wiki", Name: "get_page_by_id", Description: "Get a wiki page by its unique ID."},
	}
	ix := NewIndex(docs)
	hits, _ := ix.Search("Retrieve the page with ID 123456789", Options{Limit: 2})
	if len(hits) == 0 || hitName(docs, hits[0]) != "wiki/get_page_by_id" {
		t.Errorf("got %q, want wiki/get_page_by_id first", hitNames(docs, hits))
	}
}

func docIndex(docs []Doc, name string) int {
	return slices.IndexFunc(docs, func(d Doc) bool { return d.Server+"/"+d.Name == name })
}

// A path's directories are the data a tool is given, not what the tool
// does; its extension still says what kind of file it is.
func TestSearchPathsAreData(t *testing.T) {
	docs := []Doc{
		{Server: "music", Name: "music_files", Description: "The music files of the library."},
		{Server: "music", Name: "beat_track", Description: "Track the beats of a loaded music track."},
		{Server: "fs", Name: "list_directory", Description: "List the files and folders in a directory."},
		{Server: "fs", Name: "write_file", Description: "Write content to a file."},
		{Server: "web", Name: "write_html", Description: "Write a summary as an HTML page."},
		{Server: "notes", Name: "plan_notes", Description: "Notes of a plan."},
		{Server: "docs", Name: "markdown_to_pdf", Description: "Convert a markdown document to PDF."},
	}
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"What files are in my /root/music folder?", "fs/list_directory"},
		{"save it to /root/html/ai.txt", "fs/write_file"},
		{"turn /root/notes/plan.md into a pdf", "docs/markdown_to_pdf"},
	}
	expectFirst(t, ix, docs, tests)
	if got, want := pathsAsKinds(`save it to "/root/markdown/bitcoin.md", then ./run.sh and ~/x`), `save it to md then sh and `; got != want {
		t.Errorf("pathsAsKinds = %q, want %q", got, want)
	}
}

// A catalogue word that several query words reach (through synonyms and
// related words) counts in full once, for the word where it weighs most.
func TestSearchTermCountsOnce(t *testing.T) {
	docs := []Doc{
		{Server: "pdf", Name: "save_pdf", Description: "Save the page as a PDF."},
		{Server: "notes", Name: "write_note", Description: "Write a note."},
	}
	ix := NewIndex(docs)
	s := newSearchScratch(len(docs), len(ix.terms))
	groups, _ := ix.parseQuery("document file pdf", s, false)
	pdf := ix.terms[ix.stem("pdf")]
	var full, shared int
	for _, g := range groups {
		for _, a := range g.alts {
			if a.term != pdf {
				continue
			}
			switch {
			case a.w == 1:
				full++
			case a.w > 0 && a.w < float32(ix.p.related):
				shared++ // less than a related word's own weight
			default:
				t.Errorf("pdf has weight %v in a group", a.w)
			}
		}
	}
	if full != 1 || shared != 2 {
		t.Errorf("pdf is in %d groups in full and %d at a share, want 1 and 2", full, shared)
	}
	// Explain says the same as Search.
	hits, _ := ix.Search("document file pdf", Options{})
	if ex := ix.Explain("document file pdf", hits[0].Doc); math.Abs(ex.Score-hits[0].Score) > 1e-4 {
		t.Errorf("Explain scores %v, Search %v", ex.Score, hits[0].Score)
	}
}

// A file's extension names the kind of tool it needs.
func TestSearchFileKinds(t *testing.T) {
	docs := []Doc{
		{Server: "word", Name: "get_document_text", Description: "Extract all text from a Word document."},
		{Server: "sheets", Name: "read_sheet", Description: "Read the rows of an Excel spreadsheet."},
		{Server: "slides", Name: "add_slide", Description: "Add a slide to a PowerPoint presentation."},
		{Server: "notes", Name: "read_note", Description: "Read a note and its text."},
		{Server: "files", Name: "read_file", Description: "Read a file from disk."},
	}
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"what does the text of exchange.docx say", "word/get_document_text"},
		{"read the rows of budget.xlsx", "sheets/read_sheet"},
		{"add a slide to /root/ppt/apple.pptx", "slides/add_slide"},
	}
	expectFirst(t, ix, docs, tests)
	if got := appendFileKinds(nil, "turn notes.md and b.MD into report.docx."); !slices.Equal(got, []string{"markdown", "word", "document"}) {
		t.Errorf("appendFileKinds = %q", got)
	}
}

// A query's action tells apart siblings that share every other word.
func TestSearchActions(t *testing.T) {
	docs := []Doc{
		{Server: "cloud", Name: "create_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "get_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "remove_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "storage_keys_report", Description: "Storage account keys."}, // no action
	}
	ix := NewIndex(docs)
	rank := func(query, name string) int {
		hits, _ := ix.Search(query, Options{})
		return slices.IndexFunc(hits, func(h Hit) bool { return hitName(docs, h) == name })
	}
	del := rank("purge the storage keys", "cloud/remove_storage_keys")
	for _, other := range []string{"cloud/get_storage_keys", "cloud/create_storage_keys"} {
		if r := rank("purge the storage keys", other); r < del {
			t.Errorf("%s is at %d for a delete, before remove_storage_keys (%d)", other, r, del)
		}
	}
	// A create: the tools with another action come after, the one with
	// none is not set back.
	q := "register the storage keys"
	create, report := rank(q, "cloud/create_storage_keys"), rank(q, "cloud/storage_keys_report")
	for _, other := range []string{"cloud/get_storage_keys", "cloud/remove_storage_keys"} {
		if r := rank(q, other); r < create || r < report {
			t.Errorf("%s is at %d for a create, before create (%d) or the report (%d)", other, r, create, report)
		}
	}
}

// Explain says when a tool's action is not the query's, and scores as
// Search does.
func TestExplainActions(t *testing.T) {
	docs := []Doc{
		{Server: "cloud", Name: "create_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "remove_storage_keys", Description: "Storage account keys."},
	}
	ix := NewIndex(docs)
	hits, _ := ix.Search("purge the storage keys", Options{})
	for _, h := range hits {
		ex := ix.Explain("purge the storage keys", h.Doc)
		if want := hitName(docs, h) == "cloud/create_storage_keys"; ex.OtherAction != want {
			t.Errorf("%s: OtherAction %v", hitName(docs, h), ex.OtherAction)
		}
		if math.Abs(ex.Score-h.Score) > 1e-4 {
			t.Errorf("%s: Explain scores %v, Search %v", hitName(docs, h), ex.Score, h.Score)
		}
		if ex.OtherAction && !strings.Contains(ex.String(), "another thing") {
			t.Errorf("%s: %s", hitName(docs, h), ex)
		}
	}
}

// expectFirst checks that each query finds its tool first.
func expectFirst(t *testing.T, ix *Index, docs []Doc, tests []struct{ query, want string }) {
	t.Helper()
	for _, tt := range tests {
		hits, err := ix.Search(tt.query, Options{Limit: 5})
		if err != nil || len(hits) == 0 || hitName(docs, hits[0]) != tt.want {
			t.Errorf("Search(%q) = %q, %v; want %s first", tt.query, hitNames(docs, hits), err, tt.want)
		}
	}
}

// A query that writes out a tool's whole name (as the server names it, or
// as the gateway shows it) asks for that tool, even when a sibling's
// description matches more of its words; a one-word name is only a word.
func TestSearchFullToolName(t *testing.T) {
	docs := []Doc{
		{Server: "osrs", Name: "osrs_wiki_parse_page", Description: "Parse an Old School RuneScape wiki page into detailed text."},
		{Server: "osrs", Name: "osrs_wiki_get_page_info", Description: "Information about pages."},
		{Server: "flights", Name: "searchFlightItineraries", Description: "Search flight itineraries departing from a city on a date."},
		{Server: "flights", Name: "searchFlightsByDepArr", Description: "Flights between two airports."},
		{Server: "web", Name: "search", Description: "Search the web for flights, pages and more."},
	}
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"On the Old School RuneScape wiki, retrieve detailed information about the page \"Tutorial\" using osrs_wiki_get_page_info.", "osrs/osrs_wiki_get_page_info"},
		{"call osrs_osrs_wiki_get_page_info for the page Tutorial in Old School RuneScape, detailed", "osrs/osrs_wiki_get_page_info"},
		{"Use searchFlightsByDepArr to search flight itineraries departing from LHR on 2023-02-15.", "flights/searchFlightsByDepArr"},
	}
	expectFirst(t, ix, docs, tests)
	if ex := ix.Explain("searchflightsbydeparr please", docIndex(docs, "flights/searchFlightsByDepArr")); !ex.FullName || !strings.Contains(ex.String(), "its full name in the query") {
		t.Errorf("the explanation does not say the name was written in full: %v", ex)
	}
	if ex := ix.Explain("search flights", docIndex(docs, "web/search")); ex.FullName {
		t.Errorf("a one-word name counts as written in full: %v", ex)
	}
}

// A word's synonyms count as the word would, not as rarer words: "show"
// reaches "list", which most tools say, and "enumerate", which one does;
// the tool named for what the query asks must not lose to the one whose
// description happens to use the rare synonym.
func TestSearchSynonymsWeighNoMoreThanTheWord(t *testing.T) {
	docs := []Doc{
		{Server: "db", Name: "mysql_server_list", Description: "Lists all MySQL server instances in the resource group, with their names and status, for server management."},
		{Server: "db", Name: "mysql_table_list", Description: "Enumerates all tables of a database on a MySQL server instance."},
		{Server: "db", Name: "mysql_database_list", Description: "Lists the databases on a MySQL server."},
		{Server: "db", Name: "mysql_database_query", Description: "Runs a query on a MySQL database."},
	}
	for _, thing := range []string{"storage accounts", "key vaults", "clusters", "subscriptions", "resource groups", "registries", "topics", "queues"} {
		docs = append(docs, Doc{Server: "cloud", Name: strings.ReplaceAll(thing, " ", "_") + "_list", Description: "Lists the " + thing + " of a subscription."})
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"Show me my MySQL servers", "db/mysql_server_list"},
		{"Show me the MySQL databases in server srv1", "db/mysql_database_list"},
	})
}

// An action word in a description ("it filters the logs to show only...")
// says less about what a tool does than in a name: there it weighs less
// than a noun would in its place, while in a name it weighs as much.
func TestSearchVerbsInProseWeighLess(t *testing.T) {
	docs := []Doc{
		{Server: "s", Name: "alpha", Description: "Filters the logs to show the data."},
		{Server: "s", Name: "beta", Description: "Filters the logs to chart the data."},
		{Server: "s", Name: "show_data", Description: "Data."},
		{Server: "s", Name: "chart_data", Description: "Data."},
	}
	ix := NewIndex(docs)
	verb, noun := ix.Explain("show", 0).Score, ix.Explain("chart", 1).Score
	if verb <= 0 || verb > 0.8*noun {
		t.Errorf("a verb in a description scores %.3f, a noun in its place %.3f; want the verb under 0.8 of the noun", verb, noun)
	}
	verb, noun = ix.Explain("show", 2).Score, ix.Explain("chart", 3).Score
	if verb <= 0 || math.Abs(verb-noun) > 1e-6 {
		t.Errorf("a verb in a name scores %.3f, a noun in its place %.3f; want the same", verb, noun)
	}
}

// A plural asks for the list, a singular for one: between the tools a
// server has for one resource, "the keys in the vault" wants key_list and
// "the key k1 in the vault" key_get; a query that asks to delete is left
// to its action.
func TestSearchNumberPicksListOrGet(t *testing.T) {
	docs := []Doc{
		{Server: "vault", Name: "keyvault_key_list", Description: "List all key names in a key vault."},
		{Server: "vault", Name: "keyvault_key_get", Description: "Get the details of a key in a key vault: its type, version and attributes."},
		{Server: "vault", Name: "keyvault_key_delete", Description: "Delete a key from a key vault."},
		{Server: "vault", Name: "keyvault_secret_list", Description: "List all secret names in a key vault."},
		{Server: "vault", Name: "keyvault_secret_get", Description: "Get the value and attributes of a secret in a key vault."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"Show me the keys in the key vault myvault", "vault/keyvault_key_list"},
		{"Show me the key k1 in the key vault myvault", "vault/keyvault_key_get"},
		{"Show me the secrets in the key vault myvault", "vault/keyvault_secret_list"},
		{"Show me the secret s1 in the key vault myvault", "vault/keyvault_secret_get"},
		{"Delete the keys k1 and k2 from the key vault", "vault/keyvault_key_delete"},
	})
	q := "Show me the keys in the key vault myvault"
	hits, _ := ix.Search(q, Options{Limit: 1})
	ex := ix.Explain(q, hits[0].Doc)
	if !ex.Number || math.Abs(ex.Score-hits[0].Score) > 1e-4 || !strings.Contains(ex.String(), "lists what the query names in the plural") {
		t.Errorf("explanation of %s: %v, score %.4f; search scored %.4f", hitName(docs, hits[0]), ex, ex.Score, hits[0].Score)
	}
}

func TestQuotedSpans(t *testing.T) {
	tests := []struct {
		text string
		want string // quoted parts in [brackets]
	}{
		{`find "products" now`, `find [products] now`},
		{`the title 'My Travel Plans', please`, `the title [My Travel Plans], please`},
		{`don't touch Bob's file`, `don't touch Bob's file`},
		{`“curly” and 'single'`, `[curly] and [single]`},
		{`an "unclosed quote`, `an unclosed quote`},
		{`'it's here'`, `[it's here]`},
	}
	for _, tc := range tests {
		var b strings.Builder
		quotedSpans(tc.text, func(span string, quoted bool) {
			if quoted {
				b.WriteString("[" + span + "]")
			} else {
				b.WriteString(span)
			}
		})
		if b.String() != tc.want {
			t.Errorf("quotedSpans(%q) = %q, want %q", tc.text, b.String(), tc.want)
		}
	}
}

// Words in quotes are mostly the data a tool is given (a title, a search
// term, an index's name), not what it does: in a query for the note
// "Test plans", the quoted words count half, and the note still counts in
// full.
func TestSearchQuotedWordsAreData(t *testing.T) {
	docs := []Doc{
		{Server: "memory", Name: "read_note", Description: "Read a markdown note by its title or permalink."},
		{Server: "qa", Name: "get_plans", Description: "Get the test plans of a project."},
		{Server: "search", Name: "search", Description: "Search the documents of an index with a query."},
	}
	ix := NewIndex(docs)
	plans, note := docIndex(docs, "qa/get_plans"), docIndex(docs, "memory/read_note")
	quoted, bare := ix.Explain(`Find the note "Test plans"`, plans).Score, ix.Explain(`Find the note Test plans`, plans).Score
	if quoted <= 0 || quoted > 0.6*bare {
		t.Errorf("get_plans scores %.3f with the quoted title, %.3f with it bare; want at most 0.6 of it", quoted, bare)
	}
	quoted, bare = ix.Explain(`Find the note "Test plans"`, note).Score, ix.Explain(`Find the note Test plans`, note).Score
	if quoted <= 0 || math.Abs(quoted-bare) > 1e-6 {
		t.Errorf("read_note scores %.3f with the quoted title, %.3f with it bare; want the same", quoted, bare)
	}
}

// A catalogue's misspelt word ("strology") still answers the word the
// ranking knows ("astrology", and "horoscope" through it); a word one
// letter away that is another word ("discord" for "discard") does not.
func TestSearchMisspeltCatalogueWords(t *testing.T) {
	docs := []Doc{
		{Server: "s", Name: "StrologyTool", Description: "Povides strology services for you."},
		{Server: "s", Name: "zodiac_facts", Description: "Facts about the stars and planets."},
		{Server: "s", Name: "send_discord", Description: "Send a message to a Discord channel."},
		{Server: "s", Name: "trash_file", Description: "Move a file to the trash."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"what does astrology say about me", "s/StrologyTool"},
		{"read my horoscope for today", "s/StrologyTool"},
	})
	if _, ok := ix.termOf(stem("discard")); ok {
		t.Errorf("discard matched a catalogue word; only discord is one letter away, and that is another word")
	}
	if hits, _ := ix.Search("discard", Options{}); len(hits) != 1 || docs[hits[0].Doc].Name != "trash_file" {
		t.Errorf("discard: hits %v, want trash_file alone (through its synonym trash)", hits)
	}
}

// Words that only qualify a request ("specific", "reliable", "options")
// weigh less than the words that name what it wants: a tool whose
// description happens to use them does not outrank the tool for the thing.
func TestSearchFillerWordsWeighLess(t *testing.T) {
	docs := []Doc{
		{Server: "s", Name: "market_news", Description: "Reliable updates on options and specific stocks."},
		{Server: "s", Name: "laptop_finder", Description: "Find a laptop."},
		{Server: "s", Name: "stock_quote", Description: "Latest stock quote, based on the exchange's feed."},
		{Server: "s", Name: "gold_quote", Description: "Latest quote of gold."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"specific reliable options for a laptop", "s/laptop_finder"},
		{"my 9g of gold: its value based on the latest quote", "s/gold_quote"},
	})
	if w, noun := ix.Explain("based", 2).Score, ix.Explain("exchange", 2).Score; w <= 0 || w >= noun {
		t.Errorf("'based' (phrasing) scores %.3f, a noun of the same rarity %.3f; want less", w, noun)
	}
	if w := ix.Explain("specific", 0).Score; w <= 0 || w >= ix.Explain("stocks", 0).Score {
		t.Errorf("a filler word scores %.3f, a noun of the same rarity %.3f; want less", w, ix.Explain("stocks", 0).Score)
	}
}

// A number in a request ("3 days", "line 10") is data for the tool: a tool
// whose text happens to have the number does not outrank the tool for the
// words around it.
func TestSearchNumbersAreData(t *testing.T) {
	docs := []Doc{
		{Server: "chess", Name: "find_move", Description: "Replay the 2024 games 10 to 12 moves deep."},
		{Server: "stays", Name: "search_stays", Description: "Search homestays and rooms to rent, for a number of adults and children."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"homestays for 2 adults from 2024 10 12", "stays/search_stays"},
	})
	if n, w := ix.Explain("2024", 0).Score, ix.Explain("replay", 0).Score; n <= 0 || n >= w {
		t.Errorf("a number scores %.3f, a word as rare %.3f; want less", n, w)
	}
}

// A tool named for a kind of file answers a request for another kind less:
// "save it to summary.md" wants write_file, not save_as_pdf, though both
// save; a request for a PDF still gets save_as_pdf.
func TestSearchOtherKindOfFile(t *testing.T) {
	docs := []Doc{
		{Server: "browser", Name: "save_as_pdf", Description: "Save the current page as a PDF file."},
		{Server: "fs", Name: "write_file", Description: "Create a new file or overwrite a file with new content."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"save the notes to a file at /root/notes/summary.md", "fs/write_file"},
		{"Save the page as a PDF", "browser/save_as_pdf"},
	})
	ex := ix.Explain("save it to summary.md", 0)
	if !ex.OtherKind || !strings.Contains(ex.String(), "another kind of file") {
		t.Errorf("save_as_pdf for a markdown file: %s; want it to say it handles another kind", ex)
	}
	if ix.Explain("save it as report.pdf", 0).OtherKind {
		t.Errorf("save_as_pdf for a PDF is counted as another kind")
	}
}

// A query that carries an identifier wants the tool that takes one, not
// the search tool of the same server; without one, the search tool.
func TestSearchIdentifierPicksTheToolThatTakesIt(t *testing.T) {
	docs := []Doc{
		{Server: "arxiv", Name: "search_papers", Description: "Search for papers on arXiv.",
			Schema: []byte(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
		{Server: "arxiv", Name: "get_paper", Description: "Get detailed information about a specific paper.",
			Schema: []byte(`{"type":"object","properties":{"paper_id":{"type":"string"}},"required":["paper_id"]}`)},
		{Server: "hn", Name: "search", Description: "Search for stories and comments on Hacker News.",
			Schema: []byte(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
		{Server: "hn", Name: "getStoryWithComments", Description: "Get a story with its comments.",
			Schema: []byte(`{"type":"object","properties":{"id":{"type":"number"}},"required":["id"]}`)},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"Introduce me to the paper on arxiv 2203.12277", "arxiv/get_paper"},
		{"Find papers on arxiv about diffusion", "arxiv/search_papers"},
		{"Read the comments on hacker news story 44490510", "hn/getStoryWithComments"},
		{"Find stories and comments on hacker news about Go", "hn/search"},
	})
	ex := ix.Explain("paper 2203.12277", 1)
	if !ex.Identifier || !strings.Contains(ex.String(), "takes an identifier") {
		t.Errorf("get_paper for a paper ID: %s; want it to say it takes an identifier", ex)
	}
	if ix.Explain("paper 2203.12277", 0).Identifier {
		t.Errorf("search_papers counted as taking an identifier")
	}
	for q, want := range map[string]bool{
		"story 44490510": true, "issue #812": true, "NCT04280705": true, "2203.12277": true,
		"born in 2008": false, "9.5g of gold": false, "1234": false, "#": false, "$1,299.00": false,
	} {
		if got := hasIdentifier(q); got != want {
			t.Errorf("hasIdentifier(%q) = %v, want %v", q, got, want)
		}
	}
	for name, want := range map[string]bool{
		"id": true, "ID": true, "paper_id": true, "storyId": true, "item-ids": true, "userIds": true,
		"valid": false, "paid": false, "query": false, "i": false, "squid": false,
	} {
		if got := idName([]byte(name)); got != want {
			t.Errorf("idName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A catalogue written in Chinese is found by a query in Chinese, though
// neither puts spaces between words.
func TestSearchChineseText(t *testing.T) {
	docs := []Doc{
		{Server: "rail", Name: "get-tickets", Description: "查询12306余票信息。"},
		{Server: "rail", Name: "get-train-route-stations", Description: "查询特定列车车次在指定区间内的途径车站、到站时间。"},
		{Server: "cook", Name: "whatToEat", Description: "不知道吃什么？根据人数直接推荐适合的菜品组合"},
		{Server: "cook", Name: "getAllRecipes", Description: "获取所有菜谱"},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"查询明天北京到上海的余票", "rail/get-tickets"},
		{"这趟列车经停哪些车站", "rail/get-train-route-stations"},
		{"不知道今晚吃什么", "cook/whatToEat"},
		{"给我看看所有菜谱", "cook/getAllRecipes"},
	})
}

// TestSearchDeprecatedAndNumber: a server that keeps a deprecated tool
// beside its replacement (server-filesystem's read_file and
// read_text_file) ranks the replacement first for what both do, unless
// the query names the old one; a name with the plural of what the query
// asks for in the singular (read_multiple_files for "a file") comes after
// one without.
func TestSearchDeprecatedAndNumber(t *testing.T) {
	docs := []Doc{
		{Server: "filesystem", Name: "read_file", Description: "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."},
		{Server: "filesystem", Name: "read_text_file", Description: "Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read."},
		{Server: "filesystem", Name: "read_multiple_files", Description: "Read the contents of multiple files simultaneously. This is more efficient than reading files one by one when you need to analyze or compare multiple files."},
		{Server: "filesystem", Name: "write_file", Description: "Create a new file or completely overwrite an existing file with new content."},
		{Server: "tracker", Name: "search", Description: "(Deprecated) Search issues by keyword. Use search_v2."},
		{Server: "tracker", Name: "search_v2", Description: "Search issues by keyword, label or assignee."},
		{Server: "tracker", Name: "get_issue", Description: "This tool is deprecated in favor of get_issue_v2. Get an issue by its number."},
		{Server: "tracker", Name: "get_issue_v2", Description: "Get an issue by its number, with its comments."},
		{Server: "apis", Name: "list_deprecated_endpoints", Description: "List the API endpoints that the spec marks deprecated."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"read a file", "filesystem/read_text_file"},
		{"read file", "filesystem/read_text_file"},
		{"Show me what is in the file notes.txt", "filesystem/read_text_file"},
		{"read_file", "filesystem/read_file"},
		{"read all the files in the folder", "filesystem/read_multiple_files"},
		{"search issues", "tracker/search_v2"},
		{"get issue 42", "tracker/get_issue_v2"},
		{"which endpoints are deprecated", "apis/list_deprecated_endpoints"},
	})
}

func TestDeprecated(t *testing.T) {
	for desc, want := range map[string]bool{
		"Read a file. DEPRECATED: Use read_text_file instead.":    true,
		"Deprecated. Use search_v2.":                              true,
		"[Deprecated] Search issues.":                             true,
		"Search issues (deprecated).":                             true,
		"This tool is deprecated; use get_issue_v2.":              true,
		"Get an issue. Deprecated in favour of get_issue_v2.":     true,
		"List the API endpoints that the spec marks deprecated.":  false,
		"Identify deprecated NPM packages in a list of packages.": false,
		"Read a file.": false,
	} {
		if got := deprecated(desc); got != want {
			t.Errorf("deprecated(%q) = %v, want %v", desc, got, want)
		}
	}
}
