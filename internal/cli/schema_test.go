package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/ghmirror"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/channels/slackmode"
	"github.com/agentx-cli/agentx/internal/doctor"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/gate/skills"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// The schemas of docs/schemas are hand-written (for enums, patterns and
// descriptions a generator cannot know). They are kept in step with the
// code by these tests: every --json output the tests produce is validated
// against its schema (json_test.go, and TestJSONSchemaScenarios below);
// TestSchemasMatchGoTypes checks each printed Go type's JSON members,
// optional members and JSON types against the schema that describes it,
// and TestSchemaEnums the enums against the Go constants;
// TestLedgerSchemaAgreesWithAgentX holds the ledger record to the AgentX
// schema; and TestDocsJSONTable checks docs/json.md against jsonSchemas.

// schemaDir is docs/schemas, made absolute before any test changes
// directory (runCmd does).
var schemaDir = func() string {
	d, err := filepath.Abs(filepath.Join("..", "..", "docs", "schemas"))
	if err != nil {
		panic(err)
	}
	return d
}()

// repoRoot is the module's root directory.
var repoRoot = filepath.Join(schemaDir, "..", "..")

// schemaCache compiles each schema once, with formats (date-time) asserted.
var schemaCache = struct {
	sync.Mutex
	c    *jsonschema.Compiler
	byID map[string]*jsonschema.Schema
}{byID: map[string]*jsonschema.Schema{}}

// compiledSchema returns the schema at loc: a file of docs/schemas with an
// optional #fragment ("event.json", "ready.json#/$defs/readiness"), or, as
// "envelope:NAME", the whole stdout document of a command whose data
// NAME describes.
func compiledSchema(t *testing.T, loc string) *jsonschema.Schema {
	t.Helper()
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if s, ok := schemaCache.byID[loc]; ok {
		return s
	}
	if schemaCache.c == nil {
		schemaCache.c = jsonschema.NewCompiler()
		schemaCache.c.AssertFormat()
	}
	url := filepath.Join(schemaDir, loc)
	if name, ok := strings.CutPrefix(loc, "envelope:"); ok {
		// The envelope with data replaced by the command's schema; named as
		// if it sat in docs/schemas so that the relative $refs resolve.
		url = filepath.Join(schemaDir, "envelope-of-"+name)
		wrapper := map[string]any{
			"$schema":    "https://json-schema.org/draft/2020-12/schema",
			"$ref":       "envelope.json",
			"properties": map[string]any{"data": map[string]any{"$ref": name}},
		}
		require.NoError(t, schemaCache.c.AddResource(url, wrapper))
	}
	s, err := schemaCache.c.Compile(url)
	require.NoError(t, err, "compile schema %s", loc)
	schemaCache.byID[loc] = s
	return s
}

// validateJSON checks that text is one JSON document valid against the
// schema at loc (see compiledSchema), and returns it decoded.
func validateJSON(t *testing.T, loc, text string) any {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	require.NoError(t, err, "not one JSON document:\n%s", text)
	if err := compiledSchema(t, loc).Validate(doc); err != nil {
		t.Errorf("output does not match %s:\n%v\noutput:\n%s", loc, err, text)
	}
	return doc
}

// validateDoc checks a command's stdout against the envelope with its data
// schema.
func validateDoc(t *testing.T, dataSchema, stdout string) map[string]any {
	t.Helper()
	doc, _ := validateJSON(t, "envelope:"+dataSchema, stdout).(map[string]any)
	return doc
}

// validateStateFiles checks the files agentx wrote in the workspace at
// root: each ledger against ledger.json, each event log line against
// event.json. skip names ledgers planted by the test.
func validateStateFiles(t *testing.T, root string, skip ...string) {
	t.Helper()
	state := filepath.Join(root, ".agentx", "state")
	ledgers, err := filepath.Glob(filepath.Join(state, "clarifications", "issue-*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, ledgers)
	for _, p := range ledgers {
		if slices.Contains(skip, filepath.Base(p)) {
			continue
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		validateJSON(t, "ledger.json", string(data))
	}
	data, err := os.ReadFile(filepath.Join(state, router.EventsFile))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		validateJSON(t, "event.json", l)
	}
}

// runCmdCtx is runCmd under ctx.
func runCmdCtx(t *testing.T, ctx context.Context, dir string, env map[string]string, args ...string) result {
	t.Helper()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	a := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: testGetenv(env)}
	code := run(ctx, a, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestJSONSchemaScenarios produces the outputs the plain run of
// TestJSONContract does not: monitor findings of every kind in the
// envelope and in errors, the monitor's waiting list, stale items,
// clarify show --issue, a strict hook that fails, a hook with the monitor
// off, events --follow, and doctor with findings.
func TestJSONSchemaScenarios(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	day0 := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration, extra ...string) map[string]string {
		env := map[string]string{"AGENTX_NOW": day0.Add(d).Format(time.RFC3339)}
		for i := 0; i+1 < len(extra); i += 2 {
			env[extra[i]] = extra[i+1]
		}
		return env
	}
	ok := func(t *testing.T, env map[string]string, args ...string) string {
		t.Helper()
		r := runCmd(t, dir, env, "", append(args, "--json")...)
		require.Equal(t, 0, r.code, "%s: %s", strings.Join(args, " "), r.stderr)
		return r.stdout
	}

	ok(t, at(0), "init")
	// The human is notified by this test binary (as agentx demo does), so a
	// stale question to a human is retried; a workflow lets two agents ask
	// each other, for a deadlock.
	appendConfig(t, dir, fmt.Sprintf("\n[notify]\ncommand = [%q, \"demo-responder\", \"notify\"]\n", exe))
	writePlatformWorkflow(t, dir)

	validateDoc(t, "clarification.json", ok(t, at(0), "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "human", "--topic", "Launch", "--question", "Monday?"))

	t.Run("monitor marks stale and retries", func(t *testing.T) {
		doc := validateDoc(t, "monitor.json", ok(t, at(26*time.Hour), "monitor"))
		assert.Contains(t, jsonText(doc), `"retry":true`)
	})
	t.Run("monitor waiting", func(t *testing.T) {
		doc := validateDoc(t, "monitor.json", ok(t, at(27*time.Hour), "monitor"))
		assert.Contains(t, jsonText(doc), `"waiting":[`)
	})
	t.Run("deadlock in the envelope", func(t *testing.T) {
		validateDoc(t, "clarification.json", ok(t, at(27*time.Hour), "clarify", "ask", "--workflow", "platform", "--issue", "2", "--from", "ux-designer", "--to", "engineer", "--topic", "Offline", "--question", "Cache a week?"))
		doc := validateDoc(t, "clarification.json", ok(t, at(27*time.Hour), "clarify", "ask", "--workflow", "platform", "--issue", "2", "--from", "engineer", "--to", "ux-designer", "--topic", "Offline", "--question", "Which screens?"))
		assert.Contains(t, jsonText(doc["monitor"]), `"kind":"deadlock"`)
		assert.Contains(t, jsonText(doc["monitor"]), `"cycle":[`)
	})
	t.Run("wait on an escalated question", func(t *testing.T) {
		r := runCmd(t, dir, at(27*time.Hour), "", "clarify", "wait", "CLR-2-002", "--timeout", "1s", "--json")
		require.Equal(t, 8, r.code, r.stderr)
		doc, _ := validateJSON(t, "error.json", r.stderr).(map[string]any)
		assert.Equal(t, "escalated", asMap(doc["data"])["status"], "no answer: the record is in data")
	})
	t.Run("show --issue", func(t *testing.T) {
		doc := validateDoc(t, "clarify-show.json", ok(t, at(27*time.Hour), "clarify", "show", "--issue", "2"))
		assert.Len(t, doc["data"], 2)
	})
	t.Run("stale items", func(t *testing.T) {
		doc := validateDoc(t, "clarify-stale.json", ok(t, at(27*time.Hour), "clarify", "stale"))
		assert.Contains(t, jsonText(doc), `"escalatesAt"`)
	})
	t.Run("inbox question", func(t *testing.T) {
		doc := validateDoc(t, "inbox.json", ok(t, at(27*time.Hour), "inbox", "--agent", "engineer", "--peek"))
		assert.Contains(t, jsonText(doc), `"kind":"question"`)
	})
	t.Run("inbox answer of two replies", func(t *testing.T) {
		ok(t, at(27*time.Hour), "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect", "--topic", "Region", "--question", "Which region?")
		ok(t, at(27*time.Hour), "clarify", "answer", "CLR-3-001", "--from", "architect", "--body", "eu-west-1")
		ok(t, at(27*time.Hour), "clarify", "answer", "CLR-3-001", "--from", "human", "--as", "pat", "--body", "Backups in eu-central-1.")
		doc := validateDoc(t, "inbox.json", ok(t, at(27*time.Hour), "inbox", "--agent", "engineer", "--peek", "--issue", "3"))
		assert.Contains(t, jsonText(doc), `"body":"eu-west-1\n\nBackups in eu-central-1."`)
		assert.Contains(t, jsonText(doc), `"answers":[{"at":"2026-02-27T13:00:00.000Z","body":"eu-west-1","by":"architect"},{"at":"2026-02-27T13:00:00.000Z","body":"Backups in eu-central-1.","by":"human","person":"pat"}]`)
	})
	t.Run("stats", func(t *testing.T) {
		// a round a person replied to first, for the waits per person
		ok(t, at(27*time.Hour), "clarify", "ask", "--issue", "4", "--from", "engineer", "--to", "human", "--topic", "Launch day", "--question", "Tuesday?")
		ok(t, at(27*time.Hour+5*time.Minute), "clarify", "answer", "CLR-4-001", "--from", "human", "--as", "pat", "--body", "Yes.")
		doc := validateDoc(t, "stats.json", ok(t, at(27*time.Hour+5*time.Minute), "clarify", "stats"))
		waits := jsonText(asMap(doc["data"])["waits"]) // keys sorted
		assert.Contains(t, waits, `"byPerson":[{"person":"pat","replied":{"median":300,"p90":300,"rounds":1,"total":300}}]`)
		assert.Contains(t, waits, `"byAsker":[{"agent":"engineer",`)
		assert.Contains(t, waits, `"longestOpen":[{"from":"engineer","id":"CLR-1-001",`)
	})
	t.Run("ready escalated", func(t *testing.T) {
		doc := validateDoc(t, "ready.json", ok(t, at(27*time.Hour), "ready"))
		assert.Contains(t, jsonText(doc), `"ESCALATED"`)
	})
	t.Run("error with monitor findings", func(t *testing.T) {
		// a day on, the monitor escalates the stale question as a side effect
		r := runCmd(t, dir, at(51*time.Hour), "", "clarify", "show", "CLR-9-001", "--json")
		assert.Equal(t, ExitNotFound.N, r.code)
		assert.Empty(t, r.stdout)
		doc, _ := validateJSON(t, "error.json", r.stderr).(map[string]any)
		assert.Contains(t, jsonText(doc["monitor"]), `"action":"escalate"`)
	})
	t.Run("hook finish --strict blocked", func(t *testing.T) {
		r := runCmd(t, dir, at(51*time.Hour), "", "hook", "finish", "--strict", "--issue", "2", "--agent", "engineer", "--json")
		assert.Equal(t, ExitBlocked.N, r.code)
		doc := validateDoc(t, "hook.json", r.stdout)
		assert.Contains(t, jsonText(doc), `"blockedBy":[`)
		validateJSON(t, "error.json", r.stderr)
	})
	t.Run("hook with the monitor off", func(t *testing.T) {
		doc := validateDoc(t, "hook.json", ok(t, at(51*time.Hour, envNoMonitor, "1"), "hook", "start", "--issue", "3", "--agent", "architect"))
		assert.NotContains(t, doc["data"], "monitor")
	})
	t.Run("state", func(t *testing.T) {
		validateDoc(t, "state.json", ok(t, at(51*time.Hour), "state"))
	})
	t.Run("events --follow", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r := runCmdCtx(t, ctx, dir, at(51*time.Hour), "events", "--follow", "--json")
		assert.Equal(t, ExitInterrupted.N, r.code)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		assert.Greater(t, len(lines), 5)
		for _, l := range lines {
			validateDoc(t, "event.json", l)
		}
		validateJSON(t, "error.json", r.stderr)
	})
	t.Run("state files", func(t *testing.T) {
		validateStateFiles(t, dir)
	})
	t.Run("index rebuilt, corrupt ledger", func(t *testing.T) {
		clar := filepath.Join(dir, ".agentx", "state", "clarifications")
		require.NoError(t, os.WriteFile(filepath.Join(clar, "issue-99.json"), []byte("{"), 0o644))
		require.NoError(t, os.RemoveAll(filepath.Join(dir, ".agentx", "state", ledger.IndexDir)))
		doc := validateDoc(t, "clarify-list.json", ok(t, at(51*time.Hour), "clarify", "list"))
		assert.Contains(t, jsonText(doc["monitor"]), `"index":"built from the ledgers`)
		assert.Contains(t, jsonText(doc["monitor"]), `"problems":[`)
	})
	t.Run("doctor with findings", func(t *testing.T) {
		// a ledger another AgentX tool wrote, which bends the AgentX schema
		fixture, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "interop", "round-zero.json"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".agentx", "state", "clarifications", "issue-9.json"), fixture, 0o644))
		// and a state/.gitignore of an earlier version
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".agentx", "state", ".gitignore"), []byte("*.lock\n"), 0o644))
		r := runCmd(t, dir, at(51*time.Hour), "", "doctor", "--json")
		assert.Equal(t, ExitInvalidData.N, r.code)
		doc := validateDoc(t, "doctor.json", r.stdout)
		assert.Contains(t, jsonText(doc), `"severity":"warning"`)
		assert.Contains(t, jsonText(doc), `"severity":"error"`)
		assert.Contains(t, jsonText(doc), `"check":"gitignore"`)
		validateJSON(t, "error.json", r.stderr)
		// the round-0 record that ledger holds, printed as read
		validateDoc(t, "clarification.json", ok(t, at(51*time.Hour), "clarify", "show", "CLR-9-001"))
	})
}

// TestWorkflowListEmpty: with no workflows, workflow list prints an empty
// array, as its schema wants (it once printed null).
func TestWorkflowListEmpty(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	ws := filepath.Join(dir, ".agentx")
	files, _ := filepath.Glob(filepath.Join(ws, "workflows", "*.toml"))
	for _, f := range files {
		require.NoError(t, os.Remove(f))
	}
	cfg, err := os.ReadFile(filepath.Join(ws, "config.toml"))
	require.NoError(t, err)
	cfg = regexp.MustCompile(`(?m)^default_workflow.*$`).ReplaceAll(cfg, nil)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "config.toml"), cfg, 0o644))
	r := runCmd(t, dir, nil, "", "workflow", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	validateDoc(t, "workflow-list.json", r.stdout)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// rawSchemas holds the schema files as plain JSON, for the structural
// checks below.
var rawSchemas = sync.OnceValues(func() (map[string]map[string]any, error) {
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[filepath.Base(f)] = m
	}
	return out, nil
})

// node is a subschema and the file it is in (for resolving its $refs).
type node struct {
	file string
	s    map[string]any
}

// resolve follows ref ("file.json#/ptr", "#/ptr" or "file.json") from
// file.
func resolve(t *testing.T, files map[string]map[string]any, file, ref string) node {
	t.Helper()
	f, ptr, _ := strings.Cut(ref, "#")
	if f == "" {
		f = file
	}
	var cur any = files[f]
	require.NotNil(t, cur, "%s: $ref %q: no such file", file, ref)
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		m, ok := cur.(map[string]any)
		require.True(t, ok, "%s: $ref %q does not resolve", file, ref)
		cur = m[tok]
	}
	m, ok := cur.(map[string]any)
	require.True(t, ok, "%s: $ref %q does not resolve to a schema", file, ref)
	return node{f, m}
}

// object is what an object schema allows, across $ref and allOf.
type object struct {
	props    map[string]node
	required map[string]bool
	closed   bool
}

func objectOf(t *testing.T, files map[string]map[string]any, n node) object {
	t.Helper()
	o := object{props: map[string]node{}, required: map[string]bool{}}
	var walk func(n node)
	walk = func(n node) {
		if ref, ok := n.s["$ref"].(string); ok {
			walk(resolve(t, files, n.file, ref))
		}
		for _, sub := range asList(n.s["allOf"]) {
			walk(node{n.file, sub.(map[string]any)})
		}
		for k, v := range asMap(n.s["properties"]) {
			if prev, ok := o.props[k]; ok {
				// a property named at two levels: both apply
				o.props[k] = node{n.file, map[string]any{"allOf": []any{v, prev.s}}}
				continue
			}
			o.props[k] = node{n.file, v.(map[string]any)}
		}
		for _, r := range asList(n.s["required"]) {
			o.required[r.(string)] = true
		}
	}
	walk(n)
	o.closed = n.s["additionalProperties"] == false || n.s["unevaluatedProperties"] == false
	return o
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }

// jsonTypes is the set of JSON types a schema allows, from type, const and
// enum, through $ref, anyOf, oneOf and allOf ("" when it does not say).
func jsonTypes(t *testing.T, files map[string]map[string]any, n node) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	valueType := func(v any) string {
		switch x := v.(type) {
		case nil:
			return "null"
		case bool:
			return "boolean"
		case string:
			return "string"
		case float64:
			if x == float64(int64(x)) {
				return "integer"
			}
			return "number"
		case []any:
			return "array"
		}
		return "object"
	}
	switch ty := n.s["type"].(type) {
	case string:
		out[ty] = true
	case []any:
		for _, x := range ty {
			out[x.(string)] = true
		}
	}
	if v, ok := n.s["const"]; ok {
		out[valueType(v)] = true
	}
	for _, v := range asList(n.s["enum"]) {
		out[valueType(v)] = true
	}
	if ref, ok := n.s["$ref"].(string); ok {
		for k := range jsonTypes(t, files, resolve(t, files, n.file, ref)) {
			out[k] = true
		}
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		for _, sub := range asList(n.s[kw]) {
			for k := range jsonTypes(t, files, node{n.file, sub.(map[string]any)}) {
				out[k] = true
			}
		}
	}
	return out
}

// goField is one member of a Go type's JSON encoding.
type goField struct {
	typ       reflect.Type
	omitempty bool
}

// jsonFields lists the members encoding/json writes for struct type t,
// with embedded structs' fields promoted.
func jsonFields(t reflect.Type) map[string]goField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	out := map[string]goField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out[name] = goField{typ: f.Type, omitempty: omit}
	}
	return out
}

// customJSON are the printed types with their own MarshalJSON, and the
// JSON type each writes.
var customJSON = map[reflect.Type]string{
	reflect.TypeFor[ledger.Time]():     "string",
	reflect.TypeFor[router.Duration](): "integer",
}

// goJSONType is the JSON type Go type t is written as, and whether a nil
// value is written as null.
func goJSONType(t reflect.Type) (typ string, nullable bool) {
	if t.Kind() == reflect.Pointer {
		typ, _ = goJSONType(t.Elem())
		return typ, true
	}
	if c, ok := customJSON[t]; ok {
		return c, false
	}
	switch t.Kind() {
	case reflect.String:
		return "string", false
	case reflect.Bool:
		return "boolean", false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", false
	case reflect.Float32, reflect.Float64:
		return "number", false
	case reflect.Slice, reflect.Array:
		return "array", false
	case reflect.Map, reflect.Struct:
		return "object", false
	}
	return "", false
}

// goSchemas maps each Go type that commands print (as data or inside it)
// to the schema that describes it. open marks the definitions that are
// closed where they are used (with unevaluatedProperties) rather than in
// themselves.
var goSchemas = []struct {
	typ    reflect.Type
	schema string
	open   bool
}{
	{reflect.TypeFor[envelope](), "envelope.json", false},
	{reflect.TypeFor[errorEnvelope](), "error.json", false},
	{reflect.TypeFor[errorBody](), "error.json#/$defs/error", false},
	{reflect.TypeFor[recordView](), "clarification.json", false},
	{reflect.TypeFor[inbox.Receipt](), "clarification.json#/$defs/receipt", false},
	{reflect.TypeFor[ledger.Clarification](), "clarification.json#/$defs/record", true},
	{reflect.TypeFor[ledger.ThreadEntry](), "clarification.json#/$defs/threadEntry", false},
	{reflect.TypeFor[ledger.Extra](), "clarification.json#/$defs/extra", false},
	{reflect.TypeFor[ledger.Context](), "clarification.json#/$defs/extra/properties/context", false},
	{reflect.TypeFor[ledger.ContextRef](), "clarification.json#/$defs/extra/properties/context/properties/refs/items", false},
	{reflect.TypeFor[brief.Issue](), "issue.json", false},
	{reflect.TypeFor[ledger.Assumption](), "clarification.json#/$defs/assumption", false},
	{reflect.TypeFor[ledger.Person](), "clarification.json#/$defs/person", false},
	{reflect.TypeFor[chanref.GitHubRef](), "clarification.json#/$defs/githubRef", false},
	{reflect.TypeFor[chanref.SlackThread](), "clarification.json#/$defs/slackThread", false},
	{reflect.TypeFor[chanref.SlackPost](), "clarification.json#/$defs/slackPost", false},
	{reflect.TypeFor[GitHubView](), "github.json", false},
	{reflect.TypeFor[ghmirror.Status](), "github.json#/$defs/status", false},
	{reflect.TypeFor[ghmirror.BehindIssue](), "github.json#/$defs/behindIssue", false},
	{reflect.TypeFor[ghmirror.Rate](), "github.json#/$defs/rate", false},
	{reflect.TypeFor[ghmirror.PollReport](), "github.json#/$defs/read", false},
	{reflect.TypeFor[ghmirror.Handled](), "github.json#/$defs/handled", false},
	{reflect.TypeFor[ghmirror.PushReport](), "github.json#/$defs/pushed", false},
	{reflect.TypeFor[ghmirror.IssueReport](), "github.json#/$defs/issue", false},
	{reflect.TypeFor[SlackView](), "slack.json", false},
	{reflect.TypeFor[slackmode.Status](), "slack.json#/$defs/status", false},
	{reflect.TypeFor[relay.BehindIssue](), "slack.json#/$defs/behindIssue", false},
	{reflect.TypeFor[slackmode.PollReport](), "slack.json#/$defs/read", false},
	{reflect.TypeFor[slackmode.Handled](), "slack.json#/$defs/handled", false},
	{reflect.TypeFor[slackmode.PushReport](), "slack.json#/$defs/pushed", false},
	{reflect.TypeFor[slackmode.IssueReport](), "slack.json#/$defs/issue", false},
	{reflect.TypeFor[ledger.MonitorState](), "clarification.json#/$defs/monitorState", false},
	{reflect.TypeFor[ledger.Ledger](), "ledger.json", false},
	{reflect.TypeFor[ledger.AgentStatus](), "state.json#/$defs/agentStatus", true},
	{reflect.TypeFor[router.Readiness](), "ready.json#/$defs/readiness", false},
	{reflect.TypeFor[router.Event](), "event.json", false},
	{reflect.TypeFor[router.Stats](), "stats.json", false},
	{reflect.TypeFor[router.Count](), "stats.json#/$defs/count", false},
	{reflect.TypeFor[router.PairStats](), "stats.json#/$defs/pair", false},
	{reflect.TypeFor[router.AgentStats](), "stats.json#/$defs/agent", false},
	{reflect.TypeFor[router.Waits](), "stats.json#/properties/waits", false},
	{reflect.TypeFor[router.WaitFigures](), "stats.json#/$defs/waitFigures", false},
	{reflect.TypeFor[router.AgentWaits](), "stats.json#/$defs/agentWaits", false},
	{reflect.TypeFor[router.PersonWaits](), "stats.json#/$defs/personWaits", false},
	{reflect.TypeFor[router.OpenWait](), "stats.json#/$defs/openWait", false},
	{reflect.TypeFor[workflowView](), "workflow.json", false},
	{reflect.TypeFor[workflow.Step](), "workflow.json#/$defs/step", false},
	{reflect.TypeFor[monitor.Report](), "monitor.json", false},
	{reflect.TypeFor[monitor.Finding](), "monitor.json#/$defs/finding", false},
	{reflect.TypeFor[monitor.Waiting](), "monitor.json#/$defs/waiting", false},
	{reflect.TypeFor[monitor.Problem](), "monitor.json#/$defs/problem", false},
	{reflect.TypeFor[monitor.Item](), "clarify-stale.json#/items", false},
	{reflect.TypeFor[hookResult](), "hook.json", false},
	{reflect.TypeFor[doctor.Report](), "doctor.json", false},
	{reflect.TypeFor[trust.Status](), "trust.json", false},
	{reflect.TypeFor[trust.Command](), "trust.json#/$defs/command", false},
	{reflect.TypeFor[doctor.Finding](), "doctor.json#/$defs/finding", false},
	{reflect.TypeFor[inbox.Result](), "inbox.json", false},
	{reflect.TypeFor[inbox.Item](), "inbox.json#/$defs/item", false},
	{reflect.TypeFor[inbox.Reply](), "inbox.json#/$defs/reply", false},
	{reflect.TypeFor[proposal.Proposal](), "proposal.json", false},
	{reflect.TypeFor[proposal.Evidence](), "proposal.json#/properties/evidence/items", false},
	{reflect.TypeFor[proposal.Drafted](), "proposal.json#/properties/drafted", false},
	{reflect.TypeFor[proposal.Decision](), "proposal.json#/properties/decisions/items", false},
	{reflect.TypeFor[proposal.Mirror](), "proposal.json#/properties/mirror", false},
	{reflect.TypeFor[proposal.GitHubRef](), "proposal.json#/properties/mirror/properties/github/items", false},
	{reflect.TypeFor[skills.Skill](), "skill.json", false},
	{reflect.TypeFor[skills.Problem](), "skill.json#/$defs/problem", false},
}

// carried are the members ledger.Extra carries for the channels as raw
// JSON, and the Go type the channel writes in each.
var carried = map[string]reflect.Type{
	chanref.GitHubKey: reflect.TypeFor[[]chanref.GitHubRef](),
	chanref.SlackKey:  reflect.TypeFor[*chanref.SlackThread](),
}

// TestSchemasMatchGoTypes: each printed Go type has exactly the members its
// schema names, those it always writes (no omitempty) are required, the
// others are not, and each member's JSON type is the schema's.
func TestSchemasMatchGoTypes(t *testing.T) {
	files, err := rawSchemas()
	require.NoError(t, err)
	for _, gs := range goSchemas {
		t.Run(gs.typ.String(), func(t *testing.T) {
			n := resolve(t, files, "", gs.schema)
			o := objectOf(t, files, n)
			assert.Equal(t, !gs.open, o.closed, "%s: additionalProperties (or unevaluatedProperties) false", gs.schema)
			fields := jsonFields(gs.typ)
			assert.ElementsMatch(t, keys(fields), keys(o.props), "%s: the members of %s", gs.schema, gs.typ)
			for name, f := range fields {
				prop, ok := o.props[name]
				if !ok {
					continue
				}
				assert.Equal(t, !f.omitempty, o.required[name], "%s: %q is required exactly when %s always writes it", gs.schema, name, gs.typ)
				if f.typ.Kind() == reflect.Interface {
					continue // any: the schema says
				}
				if f.typ == reflect.TypeFor[jsontext.Value]() {
					require.Contains(t, carried, name, "%s: raw JSON %q: the type written in it", gs.typ, name)
					f.typ = carried[name]
				}
				typ, nullable := goJSONType(f.typ)
				want := map[string]bool{typ: true}
				if nullable && !f.omitempty {
					want["null"] = true
				}
				assert.Equal(t, want, jsonTypes(t, files, prop), "%s: JSON type of %q (Go %s)", gs.schema, name, f.typ)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSchemaEnums: the enums of the schemas are the Go constants.
func TestSchemaEnums(t *testing.T) {
	files, err := rawSchemas()
	require.NoError(t, err)
	strs := func(vs ...any) []string {
		var out []string
		for _, v := range vs {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	tests := []struct {
		at   string
		want []string
	}{
		{"defs.json#/$defs/status", strs(toAny(ledger.Statuses)...)},
		{"defs.json#/$defs/agentState", strs(toAny(ledger.AgentStates)...)},
		{"clarification.json#/$defs/threadEntry/properties/type", strs(ledger.Question, ledger.Answer, ledger.Resolution, ledger.Escalation)},
		{"clarification.json#/$defs/record/properties/recordType", strs(ledger.RecordClarification, ledger.RecordBrainstorm)},
		{"event.json#/properties/type", strs(router.EventRemoteRefused, router.EventClockSkew, router.EventRenumbered, router.EventChangeSuperseded, router.EventRequested, router.EventAnswered, router.EventFollowedUp, router.EventStale, router.EventResolved, router.EventEscalated, router.EventAbandoned, router.EventResponderFailed, router.EventSuperseded,
			router.EventProposalCreated, router.EventProposalEvidence, router.EventProposalApproved, router.EventProposalRejected, router.EventProposalImplemented,
			router.EventScopeRefused, router.EventLockTimeout)},
		{"clarification.json#/properties/outcome", strs(toAny(router.Outcomes)...)},
		{"clarification.json#/$defs/extra/properties/context/properties/refs/items/properties/kind", strs(brief.KindRef, brief.KindArtifact, brief.KindIssue)},
		{"ready.json#/$defs/readiness/properties/state", strs(router.StateReady, router.StateBlocked, router.StateEscalated)},
		{"monitor.json#/$defs/finding/properties/kind", strs(monitor.KindStale, monitor.KindStuck, monitor.KindDeadlock, monitor.KindAbandoned, monitor.KindResponderFailed)},
		{"monitor.json#/$defs/finding/properties/action", strs(monitor.ActMarkStale, monitor.ActRetry, monitor.ActEscalate, monitor.ActAbandon, monitor.ActResolve)},
		{"monitor.json#/$defs/finding/properties/result", strs(monitor.Planned, monitor.Done, monitor.Skipped, monitor.Failed, monitor.Deferred)},
		{"clarify-stale.json#/items/properties/kind", strs(monitor.KindStale, monitor.KindStuck)},
		{"inbox.json#/$defs/item/properties/kind", strs(inbox.KindAnswer, inbox.KindQuestion, inbox.KindResolved, inbox.KindEscalated, inbox.KindAbandoned, inbox.KindRevision, inbox.KindRenumbered, inbox.KindOvertaken)},
		{"doctor.json#/$defs/finding/properties/check", strs(toAny(doctor.Checks)...)},
		{"doctor.json#/$defs/finding/properties/severity", strs(doctor.Error, doctor.Warning)},
		{"hook.json#/properties/hook", strs(router.HookStart, router.HookFinish)},
		{"skill.json#/properties/status", strs(toAny(skills.Statuses)...)},
		{"skill.json#/properties/origin", strs(skills.OriginManual, skills.OriginProposal)},
		{"skill.json#/$defs/problem/properties/check", strs(toAny(skills.Checks)...)},
		{"proposal.json#/properties/status", strs(toAny(proposal.Statuses)...)},
		{"proposal.json#/properties/type", strs(toAny(proposal.Types)...)},
		{"proposal.json#/properties/decisions/items/properties/status", strs(proposal.Approved, proposal.Rejected, proposal.Implemented)},
	}
	for _, tt := range tests {
		assert.ElementsMatch(t, tt.want, strs(asList(resolve(t, files, "", tt.at).s["enum"])...), tt.at)
	}

	// error codes: every exit code but ok, each with its number
	e := resolve(t, files, "", "error.json#/$defs/error")
	var codes []string
	pairs := map[string]float64{}
	for _, alt := range asList(e.s["oneOf"]) {
		p := asMap(asMap(alt)["properties"])
		pairs[asMap(p["code"])["const"].(string)] = asMap(p["exit_code"])["const"].(float64)
	}
	for _, c := range ExitCodes {
		if c == ExitOK {
			continue
		}
		codes = append(codes, c.Name)
		assert.Equal(t, float64(c.N), pairs[c.Name], "error.json: exit_code of %s", c.Name)
	}
	assert.Len(t, pairs, len(codes))
	assert.ElementsMatch(t, codes, strs(asList(asMap(asMap(e.s["properties"])["code"])["enum"])...), "error.json: the codes")
}

// enumOf is a schema's enum, through $ref.
func enumOf(t *testing.T, files map[string]map[string]any, n node) []any {
	t.Helper()
	if e := asList(n.s["enum"]); e != nil {
		return e
	}
	if ref, ok := n.s["$ref"].(string); ok {
		return enumOf(t, files, resolve(t, files, n.file, ref))
	}
	return nil
}

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// agentxSchema is the AgentX ledger schema agentx interoperates with.
var agentxSchema = filepath.Join(repoRoot, "testdata", "interop", "agentx-clarification-ledger.schema.json")

// TestLedgerSchemaAgreesWithAgentX: docs/schemas/ledger.json (and the
// record in clarification.json) has the AgentX schema's members, required
// members and enums, plus the agentx key; both accept what agentx writes
// from every AgentX fixture, except the two documented differences; both
// reject the same broken records.
func TestLedgerSchemaAgreesWithAgentX(t *testing.T) {
	files, err := rawSchemas()
	require.NoError(t, err)
	raw, err := os.ReadFile(agentxSchema)
	require.NoError(t, err)
	var ax map[string]any
	require.NoError(t, json.Unmarshal(raw, &ax))
	axFiles := map[string]map[string]any{"agentx.json": ax}
	axDef := func(name string) object {
		return objectOf(t, axFiles, resolve(t, axFiles, "agentx.json", "#/definitions/"+name))
	}

	pairs := []struct {
		ours   string
		theirs object
		extra  []string // our members the AgentX schema does not have
	}{
		{"ledger.json", objectOf(t, axFiles, node{"agentx.json", ax}), nil},
		{"clarification.json#/$defs/record", axDef("clarificationRecord"), []string{ledger.ExtraKey}},
		{"clarification.json#/$defs/threadEntry", axDef("threadEntry"), nil},
	}
	for _, p := range pairs {
		o := objectOf(t, files, resolve(t, files, "", p.ours))
		want := append(keys(p.theirs.props), p.extra...)
		assert.ElementsMatch(t, want, keys(o.props), "%s: members", p.ours)
		assert.Equal(t, p.theirs.required, o.required, "%s: required", p.ours)
		for name, their := range p.theirs.props {
			if enum := enumOf(t, axFiles, their); enum != nil {
				assert.ElementsMatch(t, enum, enumOf(t, files, o.props[name]), "%s: enum of %s", p.ours, name)
			}
		}
	}

	c := jsonschema.NewCompiler()
	c.AssertFormat()
	theirs, err := c.Compile(agentxSchema)
	require.NoError(t, err)
	ours := compiledSchema(t, "ledger.json")
	stripped := func(doc any) any {
		var cp any
		b, _ := json.Marshal(doc)
		_ = json.Unmarshal(b, &cp)
		for _, r := range asList(asMap(cp)["clarifications"]) {
			delete(asMap(r), ledger.ExtraKey)
		}
		return cp
	}

	// Every AgentX fixture, as agentx writes it back.
	fixtures, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "interop", "*.json"))
	require.NoError(t, err)
	var good map[string]any
	for _, f := range fixtures {
		if strings.HasSuffix(f, ".schema.json") {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		l, err := ledger.Decode(f, data)
		require.NoError(t, err)
		out, err := ledger.Encode(l)
		require.NoError(t, err)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		require.NoError(t, err)
		if filepath.Base(f) == "extension-issue-number-per-record.json" {
			// A member neither schema knows, written by another tool:
			// agentx keeps it (docs/file-formats.md), so the file stays
			// outside both schemas, as it was.
			assert.Equal(t, json.Number("7"), asMap(asList(asMap(doc)["clarifications"])[0])["issueNumber"], "%s: the foreign member is kept", f)
			assert.Error(t, theirs.Validate(stripped(doc)), f)
			continue
		}
		assert.NoError(t, ours.Validate(doc), "%s as agentx writes it", f)
		// The differences, both documented in docs/json.md: a record
		// another AgentX tool opened without a question (round 0, empty
		// thread), and ids past CLR-N-999, which agentx writes.
		switch filepath.Base(f) {
		case "round-zero.json", "seq-over-999.json":
			assert.Error(t, theirs.Validate(stripped(doc)), "%s: a known difference from the AgentX schema", f)
		default:
			assert.NoError(t, theirs.Validate(stripped(doc)), f)
		}
		if filepath.Base(f) == "issue-0.json" {
			good = doc.(map[string]any)
		}
	}
	require.NotNil(t, good)

	// Broken records: both schemas reject each.
	mutations := map[string]func(r, e map[string]any){
		"bad status":          func(r, e map[string]any) { r["status"] = "bogus" },
		"bad entry type":      func(r, e map[string]any) { e["type"] = "comment" },
		"bad agent name":      func(r, e map[string]any) { r["from"] = "Engineer" },
		"empty topic":         func(r, e map[string]any) { r["topic"] = "" },
		"unknown member":      func(r, e map[string]any) { r["priority"] = 1 },
		"unknown entry field": func(r, e map[string]any) { e["by"] = "x" },
		"resolvedAt number":   func(r, e map[string]any) { r["resolvedAt"] = 5 },
		"blocking string":     func(r, e map[string]any) { r["blocking"] = "yes" },
		"round 0 with thread": func(r, e map[string]any) { r["round"] = 0 },
		"entry round 0":       func(r, e map[string]any) { e["round"] = 0 },
		"maxRounds 0":         func(r, e map[string]any) { r["maxRounds"] = 0 },
		"empty body":          func(r, e map[string]any) { e["body"] = "" },
		"bad id":              func(r, e map[string]any) { r["id"] = "CLR-0-01" },
		"bad time":            func(r, e map[string]any) { r["created"] = "yesterday" },
		"empty thread":        func(r, e map[string]any) { r["thread"] = []any{} },
	}
	for _, name := range []string{"id", "from", "to", "topic", "blocking", "status", "round", "maxRounds", "created", "staleAfter", "resolvedAt", "thread"} {
		mutations["no "+name] = func(r, e map[string]any) { delete(r, name) }
	}
	for _, name := range []string{"round", "from", "type", "body", "timestamp"} {
		mutations["entry without "+name] = func(r, e map[string]any) { delete(e, name) }
	}
	for name, mutate := range mutations {
		doc := stripped(good).(map[string]any)
		r := asMap(asList(doc["clarifications"])[0])
		mutate(r, asMap(asList(r["thread"])[0]))
		assert.Error(t, theirs.Validate(doc), "AgentX schema accepts %s", name)
		assert.Error(t, ours.Validate(doc), "ledger.json accepts %s", name)
	}
}

// TestDocsJSONTable: docs/json.md lists each command with the schema
// jsonSchemas gives it, links every schema file, and has the exit codes.
func TestDocsJSONTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(schemaDir, "..", "json.md"))
	require.NoError(t, err)
	// | `agentx clarify list`, `agentx clarify` | [clarify-list.json](schemas/clarify-list.json) | ...
	row := regexp.MustCompile("(?m)^\\| ((?:`agentx[^`]*`(?:, )?)+) \\| \\[([a-z-]+\\.json)\\]\\(schemas/([a-z-]+\\.json)\\)")
	got := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		assert.Equal(t, m[2], m[3], "json.md: link text and target of %s", m[1])
		for _, cmd := range strings.Split(m[1], ", ") {
			cmd = strings.Trim(cmd, "`")
			assert.NotContains(t, got, cmd, "json.md lists %s twice", cmd)
			got[cmd] = m[2]
		}
	}
	assert.Equal(t, jsonSchemas, got, "docs/json.md's table and jsonSchemas")
	files, err := rawSchemas()
	require.NoError(t, err)
	for f := range files {
		assert.Contains(t, string(data), "(schemas/"+f+")", "docs/json.md does not link %s", f)
	}
	for _, c := range ExitCodes {
		row := regexp.MustCompile(fmt.Sprintf("(?m)^\\| %d \\| `%s` \\| %s", c.N, c.Name, regexp.QuoteMeta(c.Meaning)))
		assert.True(t, row.Match(data), "docs/json.md's exit code table has no row | %d | `%s` | %s", c.N, c.Name, c.Meaning)
	}
}
