package cachefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Entry is one server's cached metadata.
//
// Tools are written in the adapter's CachedTool shape (name, description,
// inputSchema, outputSchema, and uiResourceUri / uiVisibility / uiStreamMode
// derived from _meta exactly as its serializeTools does) plus the other MCP
// fields (title, annotations, icons, _meta), which the adapter ignores. When
// an entry written by the adapter is read, its ui* fields are turned back
// into _meta.ui (resourceUri, visibility, pi-mcp-adapter.streamMode) so that
// nothing it knew is lost and writing the entry again gives the same ui*.
// Items without a name (tools, prompts, prompt arguments) or without a name
// or URI (resources) are dropped on write, as the adapter drops them.
//
// Like the adapter, pass no Resources for a server whose exposeResources is
// false.
type Entry struct {
	ConfigHash string // Hash of the server's Identity
	Tools      []*mcp.Tool
	Resources  []*mcp.Resource
	// Prompts is optional: nil means unknown (not written), an empty non-nil
	// slice means the server has none.
	Prompts []*mcp.Prompt
	// Instructions from the server's initialize result; "" = none.
	Instructions string
	// TTL is the ttlMs hint of the server's tools/list result, nil = none. It
	// shortens the entry's validity; 0 makes it never valid.
	TTL *time.Duration
	// CacheScope is the cacheScope hint of tools/list ("public", "private").
	CacheScope string
	// CachedAt is when the metadata was fetched; stored in whole
	// milliseconds. Put writes the current time when it is zero.
	CachedAt time.Time
	// Extra holds the entry's fields this package does not know, as read;
	// Put writes them back unchanged, so rewriting an entry another writer
	// extended keeps its extensions.
	Extra map[string]json.RawMessage
}

// Valid reports whether e is usable for a server with identity hash hash at
// time now, with the adapter's rule (isServerCacheValid): the hashes match,
// cachedAt is set, and the entry's age is below maxAge (maxAge <= 0: no
// limit), or, when the entry carries a TTL, strictly below the smaller of the
// two.
func (e *Entry) Valid(hash string, now time.Time, maxAge time.Duration) bool {
	if e == nil || hash == "" || e.ConfigHash != hash || e.CachedAt.IsZero() {
		return false
	}
	return fresh(msOf(e.CachedAt), e.TTL, now, maxAge)
}

func msOf(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }

func fresh(cachedAtMs float64, ttl *time.Duration, now time.Time, maxAge time.Duration) bool {
	age := float64(now.UnixMilli()) - cachedAtMs
	maxMs := float64(maxAge.Milliseconds())
	if ttl != nil {
		t := float64(ttl.Milliseconds())
		if t == 0 {
			return false
		}
		if maxMs > 0 {
			t = min(t, maxMs)
		}
		return age < t
	}
	return maxMs <= 0 || age <= maxMs
}

// Keys of an entry object, in the order they are written.
const (
	keyConfigHash   = "configHash"
	keyTools        = "tools"
	keyResources    = "resources"
	keyPrompts      = "prompts"
	keyInstructions = "instructions"
	keyTTLMs        = "ttlMs"
	keyCacheScope   = "cacheScope"
	keyCachedAt     = "cachedAt"
)

// UI keys of the adapter's CachedTool and the _meta.ui keys they come from.
const (
	metaUI           = "ui"
	metaUIResource   = "resourceUri"
	metaUIVisibility = "visibility"
	metaUIStreamMode = "pi-mcp-adapter.streamMode"
	metaUIResourceV0 = "ui/resourceUri" // older flat _meta key
)

// toolJSON is a cached tool as stored: MCP's fields plus the adapter's.
type toolJSON struct {
	mcp.Tool
	// The schemas are kept as JSON rather than decoded into maps: a map
	// tree takes several times the memory of its JSON, and a cached
	// schema is mostly only passed on.
	InputSchema   json.RawMessage `json:"inputSchema"`
	OutputSchema  json.RawMessage `json:"outputSchema"`
	UIResourceURI any             `json:"uiResourceUri"`
	UIVisibility  any             `json:"uiVisibility"`
	UIStreamMode  any             `json:"uiStreamMode"`
}

var errBadEntry = errors.New("malformed cache entry")

// validRaw is Valid on an entry as stored (valid JSON), without decoding
// its tools.
func validRaw(raw json.RawMessage, hash string, now time.Time, maxAge time.Duration) bool {
	if hash == "" {
		return false
	}
	var configHash string
	var cachedAt, ttlMs any
	err := eachMember(raw, func(k string, v []byte) bool {
		switch k {
		case keyConfigHash:
			_ = json.Unmarshal(v, &configHash)
		case keyCachedAt:
			_ = json.Unmarshal(v, &cachedAt)
		case keyTTLMs:
			_ = json.Unmarshal(v, &ttlMs)
		}
		return true
	})
	if err != nil || configHash != hash {
		return false
	}
	at, ok := cachedAt.(float64)
	if !ok || at == 0 {
		return false
	}
	ttl, _ := ttlOf(ttlMs)
	return fresh(at, ttl, now, maxAge)
}

// ttlOf accepts what the adapter accepts as ttlMs: a non-negative safe
// integer.
func ttlOf(v any) (*time.Duration, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1<<53-1 || f != math.Trunc(f) {
		return nil, false
	}
	d := time.Duration(f) * time.Millisecond
	if f > float64(math.MaxInt64/int64(time.Millisecond)) {
		d = math.MaxInt64
	}
	return &d, true
}

func decodeEntry(raw json.RawMessage) (*Entry, error) {
	fields, err := members(raw)
	if err != nil {
		return nil, errBadEntry
	}
	e := &Entry{}
	for k, v := range fields {
		var err error
		switch k {
		case keyConfigHash:
			err = json.Unmarshal(v, &e.ConfigHash)
		case keyTools:
			e.Tools, err = decodeTools(v)
		case keyResources:
			err = json.Unmarshal(v, &e.Resources)
		case keyPrompts:
			err = json.Unmarshal(v, &e.Prompts)
			if err == nil && e.Prompts == nil && !isNull(v) {
				e.Prompts = []*mcp.Prompt{}
			}
		case keyInstructions:
			if json.Unmarshal(v, &e.Instructions) != nil {
				e.extra(k, v)
			}
		case keyTTLMs:
			var n any
			_ = json.Unmarshal(v, &n)
			var ok bool
			if e.TTL, ok = ttlOf(n); !ok {
				e.extra(k, v)
			}
		case keyCacheScope:
			if json.Unmarshal(v, &e.CacheScope) != nil {
				e.extra(k, v)
			}
		case keyCachedAt:
			var ms any
			_ = json.Unmarshal(v, &ms)
			if f, ok := ms.(float64); ok && f != 0 {
				e.CachedAt = time.Unix(0, int64(f*1e6))
			}
		default:
			e.extra(k, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", errBadEntry, k, err)
		}
	}
	e.Tools = slices.DeleteFunc(e.Tools, func(t *mcp.Tool) bool { return t == nil })
	e.Resources = slices.DeleteFunc(e.Resources, func(r *mcp.Resource) bool { return r == nil })
	e.Prompts = slices.DeleteFunc(e.Prompts, func(p *mcp.Prompt) bool { return p == nil })
	return e, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func (e *Entry) extra(k string, v json.RawMessage) {
	if e.Extra == nil {
		e.Extra = make(map[string]json.RawMessage)
	}
	e.Extra[k] = v
}

func decodeTools(raw json.RawMessage) ([]*mcp.Tool, error) {
	var tj []*toolJSON
	if err := json.Unmarshal(raw, &tj); err != nil {
		return nil, err
	}
	tools := make([]*mcp.Tool, 0, len(tj))
	for _, t := range tj {
		if t == nil {
			continue
		}
		if len(t.InputSchema) > 0 && !isNull(t.InputSchema) {
			t.Tool.InputSchema = t.InputSchema
		}
		if len(t.OutputSchema) > 0 && !isNull(t.OutputSchema) {
			t.Tool.OutputSchema = t.OutputSchema
		}
		if t.Meta == nil && (t.UIResourceURI != nil || t.UIVisibility != nil || t.UIStreamMode != nil) {
			// Written by the adapter, which keeps no _meta: put what it
			// derived back where it came from.
			ui := map[string]any{}
			if t.UIResourceURI != nil {
				ui[metaUIResource] = t.UIResourceURI
			}
			if t.UIVisibility != nil {
				ui[metaUIVisibility] = t.UIVisibility
			}
			if t.UIStreamMode != nil {
				ui[metaUIStreamMode] = t.UIStreamMode
			}
			t.Meta = mcp.Meta{metaUI: ui}
		}
		tools = append(tools, &t.Tool)
	}
	return tools, nil
}

// toolOut is a tool as written: the adapter's CachedTool fields first, in
// its order, then the rest of MCP's.
type toolOut struct {
	Name          string               `json:"name"`
	Description   string               `json:"description,omitempty"`
	InputSchema   any                  `json:"inputSchema,omitempty"`
	OutputSchema  any                  `json:"outputSchema,omitempty"`
	UIResourceURI string               `json:"uiResourceUri,omitempty"`
	UIVisibility  *[]string            `json:"uiVisibility,omitempty"`
	UIStreamMode  string               `json:"uiStreamMode,omitempty"`
	Title         string               `json:"title,omitempty"`
	Annotations   *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Icons         []mcp.Icon           `json:"icons,omitempty"`
	Meta          mcp.Meta             `json:"_meta,omitempty"`
}

type resourceOut struct {
	URI         string           `json:"uri"`
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Title       string           `json:"title,omitempty"`
	MIMEType    string           `json:"mimeType,omitempty"`
	Size        int64            `json:"size,omitempty"`
	Annotations *mcp.Annotations `json:"annotations,omitempty"`
	Icons       []mcp.Icon       `json:"icons,omitempty"`
	Meta        mcp.Meta         `json:"_meta,omitempty"`
}

type promptOut struct {
	Name        string                `json:"name"`
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	Arguments   []*mcp.PromptArgument `json:"arguments,omitempty"`
	Icons       []mcp.Icon            `json:"icons,omitempty"`
	Meta        mcp.Meta              `json:"_meta,omitempty"`
}

// encodeEntry writes e as a compact JSON object; cachedAt is now when
// e.CachedAt is zero.
func encodeEntry(e *Entry, now time.Time) ([]byte, error) {
	w := newJSONWriter()
	written := map[string]bool{}
	key := func(k string) {
		if len(written) > 0 {
			w.buf.WriteByte(',')
		}
		written[k] = true
		w.str(k)
		w.buf.WriteByte(':')
	}
	w.buf.WriteByte('{')
	key(keyConfigHash)
	w.str(e.ConfigHash)
	key(keyTools)
	if err := writeArray(w, e.Tools, toolOutOf); err != nil {
		return nil, err
	}
	key(keyResources)
	if err := writeArray(w, e.Resources, resourceOutOf); err != nil {
		return nil, err
	}
	if e.Prompts != nil {
		key(keyPrompts)
		if err := writeArray(w, e.Prompts, promptOutOf); err != nil {
			return nil, err
		}
	}
	if e.Instructions != "" {
		key(keyInstructions)
		w.str(e.Instructions)
	}
	if e.TTL != nil {
		key(keyTTLMs)
		if err := w.value(max(e.TTL.Milliseconds(), 0)); err != nil {
			return nil, err
		}
	}
	if e.CacheScope != "" {
		key(keyCacheScope)
		w.str(e.CacheScope)
	}
	extras := make([]string, 0, len(e.Extra))
	for k := range e.Extra {
		if k != keyCachedAt && !written[k] {
			extras = append(extras, k)
		}
	}
	slices.Sort(extras)
	for _, k := range extras {
		v := e.Extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("encoding extra field %q: invalid JSON", k)
		}
		key(k)
		w.buf.Write(bytes.TrimSpace(v))
	}
	key(keyCachedAt)
	at := e.CachedAt
	if at.IsZero() {
		at = now
	}
	if err := w.value(at.UnixMilli()); err != nil {
		return nil, err
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}

// writeArray writes items as a JSON array of what conv makes of each,
// leaving out those it refuses (ok false); kind and name label an item in
// an error.
func writeArray[T any](w *jsonWriter, items []T, conv func(T) (v any, kind, name string, ok bool)) error {
	w.buf.WriteByte('[')
	n := 0
	for _, it := range items {
		v, kind, name, ok := conv(it)
		if !ok {
			continue
		}
		if n++; n > 1 {
			w.buf.WriteByte(',')
		}
		if err := w.value(v); err != nil {
			return fmt.Errorf("encoding %s %q: %w", kind, name, err)
		}
	}
	w.buf.WriteByte(']')
	return nil
}

func toolOutOf(t *mcp.Tool) (any, string, string, bool) {
	if t == nil || t.Name == "" {
		return nil, "", "", false
	}
	out := toolOut{
		Name:         t.Name,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
		Title:        t.Title,
		Annotations:  t.Annotations,
		Icons:        t.Icons,
		Meta:         t.Meta,
	}
	out.UIResourceURI, out.UIVisibility, out.UIStreamMode = uiOf(t.Meta)
	return out, "tool", t.Name, true
}

func resourceOutOf(r *mcp.Resource) (any, string, string, bool) {
	if r == nil || r.Name == "" || r.URI == "" {
		return nil, "", "", false
	}
	return resourceOut{URI: r.URI, Name: r.Name, Description: r.Description, Title: r.Title,
		MIMEType: r.MIMEType, Size: r.Size, Annotations: r.Annotations, Icons: r.Icons, Meta: r.Meta}, "resource", r.URI, true
}

func promptOutOf(p *mcp.Prompt) (any, string, string, bool) {
	if p == nil || p.Name == "" {
		return nil, "", "", false
	}
	out := promptOut{Name: p.Name, Title: p.Title, Description: p.Description, Icons: p.Icons, Meta: p.Meta}
	if p.Arguments != nil {
		out.Arguments = slices.DeleteFunc(slices.Clone(p.Arguments), func(a *mcp.PromptArgument) bool {
			return a == nil || a.Name == ""
		})
	}
	return out, "prompt", p.Name, true
}

// uiOf derives the adapter's uiResourceUri, uiVisibility and uiStreamMode
// from a tool's _meta, as its getToolUiResourceUri, extractUiToolVisibility
// and extractToolUiStreamMode do.
func uiOf(meta mcp.Meta) (resourceURI string, visibility *[]string, streamMode string) {
	if meta == nil {
		return "", nil, ""
	}
	uiRaw, hasUI := meta[metaUI]
	ui, uiIsMap := asMap(uiRaw)

	// getToolUiResourceUri: _meta.ui.resourceUri, else _meta["ui/resourceUri"];
	// kept only when it is a string starting with ui:// (else it throws,
	// which serializeTools turns into no value).
	var uri any
	var found bool
	if uiIsMap {
		uri, found = ui[metaUIResource]
	}
	if !found {
		uri, found = meta[metaUIResourceV0]
	}
	if s, ok := uri.(string); found && ok && strings.HasPrefix(s, "ui://") {
		resourceURI = s
	}

	// extractUiToolVisibility: only an object ui (not an array) counts; a
	// visibility that is not an array of "model"/"app" hides the tool ([]).
	if hasUI && uiIsMap {
		if v, ok := ui[metaUIVisibility]; ok {
			vis := []string{}
			list, isList := asList(v)
			for _, x := range list {
				s, _ := x.(string)
				if s != "model" && s != "app" {
					vis = []string{}
					break
				}
				if !slices.Contains(vis, s) {
					vis = append(vis, s)
				}
			}
			if !isList {
				vis = []string{}
			}
			visibility = &vis
		}
		if s, ok := ui[metaUIStreamMode].(string); ok && (s == "eager" || s == "stream-first") {
			streamMode = s
		}
	}
	return resourceURI, visibility, streamMode
}

// asMap returns v as a JSON object, converting other Go map or struct
// values through JSON.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case nil:
		return nil, false
	case map[string]any:
		return m, true
	case mcp.Meta:
		return m, true
	}
	var m map[string]any
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case nil:
		return nil, false
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	var l []any
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &l) != nil || l == nil {
		return nil, false
	}
	return l, true
}

// jsonWriter builds compact JSON without HTML escaping, so that text reads
// as the adapter's JSON.stringify writes it.
type jsonWriter struct {
	buf bytes.Buffer
	tmp bytes.Buffer
	enc *json.Encoder
}

func newJSONWriter() *jsonWriter {
	w := &jsonWriter{}
	w.enc = json.NewEncoder(&w.tmp)
	w.enc.SetEscapeHTML(false)
	return w
}

func (w *jsonWriter) value(v any) error {
	w.tmp.Reset()
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.buf.Write(bytes.TrimSuffix(w.tmp.Bytes(), []byte("\n")))
	return nil
}

func (w *jsonWriter) str(s string) { _ = w.value(s) }
