package setup

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agentx-cli/agentx/workflow"
)

// Codex is what agentx setup codex writes for one agent: the MCP server in
// .codex/config.toml and Codex's hooks in .codex/hooks.json.
type Codex struct {
	Server
	Hold        time.Duration // hook stop's --hold, written when HoldSet
	HoldSet     bool
	StopTimeout int // seconds: the Stop hook's timeout (StopTimeout)
}

// Hooks are the hooks agentx manages in Codex's .codex/hooks.json: the
// inbox when a session starts and with each prompt, and hook stop at the
// end of each turn. Codex reads Claude Code's hook output shapes (a block
// decision, additionalContext) and runs each command in the session's
// directory, where agentx finds the workspace.
func (c Codex) Hooks() []Hook {
	agent := " --agent " + c.Agent
	inbox := "agentx inbox" + agent + " --format claude-hook"
	stop := stopCommand(agent, c.Issue, c.Hold, c.HoldSet)
	return []Hook{
		{Event: "SessionStart", Command: inbox + " --hook-event SessionStart", sub: []string{"inbox"}},
		{Event: "UserPromptSubmit", Command: inbox, sub: []string{"inbox"}},
		{Event: "Stop", Command: stop, Timeout: c.StopTimeout, sub: []string{"hook", "stop"}},
	}
}

// MergeCodexHooks puts agentx's hooks for c into a Codex hooks.json (empty
// data: a new file), as MergeClaudeSettings does for Claude Code.
func MergeCodexHooks(data []byte, c Codex) ([]byte, error) {
	return mergeHooks(data, c.Hooks())
}

// codexTable is the key of agentx's server in Codex's config.toml.
var codexTable = []string{"mcp_servers", "agentx"}

// MergeCodexConfig puts agentx's MCP server for s into a Codex
// config.toml (empty data: a new file), as the table
//
//	[mcp_servers.agentx]
//	command = "agentx"
//	args = ["mcp"]
//	env = { AGENTX_AGENT = "engineer" }
//
// The text is edited, not re-encoded: the lines of an existing
// [mcp_servers.agentx] table (and its sub-tables) are replaced by the new
// table, which keeps that table's other keys, its args when they start
// with "mcp" and its other variables; with none, the table is added at the
// end. Every other line, comments included, stays as it was. The result is
// decoded again and must hold the same as before but for agentx's table,
// else nothing is returned but a *MergeError.
func MergeCodexConfig(data []byte, s Server) ([]byte, error) {
	src := string(data)
	doc, md, err := decodeTOML(src)
	if err != nil {
		return nil, err
	}
	old, present := lookup(doc, codexTable...)
	oldTable, isTable := old.(map[string]any)
	if present && !isTable {
		return nil, &MergeError{Msg: fmt.Sprintf("mcp_servers.agentx is %s, not a table", tomlKind(old)), Want: codexText(codexWant(nil, s), md, "\n")}
	}
	want := codexWant(oldTable, s)
	if present && reflect.DeepEqual(oldTable, want) {
		return data, nil
	}
	nl := "\n"
	if strings.Contains(src, "\r\n") {
		nl = "\r\n"
	}
	table := codexText(want, md, nl)
	lines := strings.SplitAfter(src, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	hs := workflow.Headers(src)
	regions := codexRegions(hs, lines)
	if present && len(regions) == 0 {
		return nil, &MergeError{Msg: "mcp_servers.agentx is not written as a [mcp_servers.agentx] table (an inline table or dotted keys), which agentx does not edit", Want: table}
	}
	if _, ok := doc["mcp_servers"]; ok && !slices.ContainsFunc(hs, func(h workflow.Header) bool { return h.Keys[0] == "mcp_servers" }) {
		// an inline table cannot take another table after it
		return nil, &MergeError{Msg: "mcp_servers is written as an inline table or dotted keys, which agentx does not edit", Want: table}
	}
	var out []string
	if len(regions) == 0 {
		out = lines
		if n := len(out); n > 0 && !strings.HasSuffix(out[n-1], "\n") {
			out[n-1] += nl
		}
		if n := len(out); n > 0 && strings.TrimSpace(out[n-1]) != "" {
			out = append(out, nl) // a blank line before the table
		}
		out = append(out, table)
	} else {
		next := 0
		for i, r := range regions {
			out = append(out, lines[next:r[0]]...)
			if i == 0 {
				out = append(out, table)
			}
			next = r[1]
		}
		out = append(out, lines[next:]...)
	}
	result := strings.Join(out, "")
	if err := sameBut(doc, result, want); err != nil {
		return nil, &MergeError{Msg: "agentx's table could not be written without changing the rest of the file: " + err.Error(), Want: table}
	}
	return []byte(result), nil
}

// decodeTOML decodes TOML text, a syntax error as a *DataError.
func decodeTOML(src string) (map[string]any, toml.MetaData, error) {
	doc := map[string]any{}
	md, err := toml.Decode(src, &doc)
	if err != nil {
		de := &DataError{Msg: "invalid TOML: " + err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			de.Line, de.Col, de.Msg = pe.Position.Line, pe.Position.Col, "invalid TOML: "+pe.Message
		}
		return nil, md, de
	}
	return doc, md, nil
}

// codexWant is agentx's table for s, keeping what old (the table there
// now, or nil) has that agentx does not set.
func codexWant(old map[string]any, s Server) map[string]any {
	want := maps.Clone(old)
	if want == nil {
		want = map[string]any{}
	}
	want["command"] = "agentx"
	if args, ok := old["args"].([]any); !ok || len(args) == 0 || args[0] != "mcp" {
		want["args"] = []any{"mcp"}
	}
	env, _ := old["env"].(map[string]any)
	env = maps.Clone(env)
	if env == nil {
		env = map[string]any{}
	}
	env["AGENTX_AGENT"] = s.Agent
	if s.Issue > 0 {
		env["AGENTX_ISSUE"] = strconv.Itoa(s.Issue)
	} else {
		delete(env, "AGENTX_ISSUE")
	}
	want["env"] = env
	return want
}

// codexText writes table t as [mcp_servers.agentx]: command, args and env
// first, then the other keys in the order the file had them (md).
func codexText(t map[string]any, md toml.MetaData, nl string) string {
	var b strings.Builder
	b.WriteString("[mcp_servers.agentx]" + nl)
	for _, k := range keyOrder(t, md, codexTable, "command", "args", "env") {
		fmt.Fprintf(&b, "%s = %s%s", tomlKey(k), inlineTOML(t[k], md, append(slices.Clone(codexTable), k)), nl)
	}
	return b.String()
}

// keyOrder is t's keys: first those of first that t has, then the others
// as the file at path had them (md), then any left, sorted.
func keyOrder(t map[string]any, md toml.MetaData, path []string, first ...string) []string {
	var keys []string
	add := func(k string) {
		if _, ok := t[k]; ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range first {
		add(k)
	}
	for _, k := range md.Keys() {
		if len(k) == len(path)+1 && slices.Equal(k[:len(path)], path) {
			add(k[len(path)])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		add(k)
	}
	return keys
}

// inlineTOML writes a value on one line: tables as inline tables.
func inlineTOML(v any, md toml.MetaData, path []string) string {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			return "{}"
		}
		var parts []string
		first := []string{}
		if slices.Equal(path, append(slices.Clone(codexTable), "env")) {
			first = []string{"AGENTX_AGENT", "AGENTX_ISSUE"}
		}
		for _, k := range keyOrder(v, md, path, first...) {
			parts = append(parts, tomlKey(k)+" = "+inlineTOML(v[k], md, append(slices.Clone(path), k)))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case []map[string]any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = inlineTOML(e, md, nil)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = inlineTOML(e, md, nil)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	var b bytes.Buffer
	_ = toml.NewEncoder(&b).Encode(map[string]any{"v": v})
	return strings.TrimSuffix(strings.TrimPrefix(b.String(), "v = "), "\n")
}

// tomlKey writes a key bare when it can be, else quoted.
func tomlKey(k string) string {
	bare := k != ""
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			bare = false
		}
	}
	if bare {
		return k
	}
	return inlineTOML(k, toml.MetaData{}, nil)
}

// codexRegions are the line ranges [from, to) of lines that hold
// [mcp_servers.agentx] and its sub-tables: from each such header to the
// next header, less the blank and comment lines just before it (they
// belong to what follows); tables apart only by blank lines are one
// region.
func codexRegions(hs []workflow.Header, lines []string) [][2]int {
	var regions [][2]int
	for i, h := range hs {
		if len(h.Keys) < 2 || !slices.Equal(h.Keys[:2], codexTable) {
			continue
		}
		from, to := h.Line-1, len(lines)
		if i+1 < len(hs) {
			to = hs[i+1].Line - 1
		}
		for to > from+1 {
			if t := strings.TrimSpace(lines[to-1]); t != "" && !strings.HasPrefix(t, "#") {
				break
			}
			to--
		}
		if n := len(regions); n > 0 && blank(lines[regions[n-1][1]:from]) {
			regions[n-1][1] = to // a sub-table right after: one region
			continue
		}
		regions = append(regions, [2]int{from, to})
	}
	return regions
}

// blank says whether lines are all empty or white space.
func blank(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// sameBut decodes result and checks that it holds what doc holds, but for
// agentx's table, which is want.
func sameBut(doc map[string]any, result string, want map[string]any) error {
	got, _, err := decodeTOML(result)
	if err != nil {
		return err
	}
	if have, _ := lookup(got, codexTable...); !reflect.DeepEqual(have, want) {
		return errors.New("the table does not read back as written")
	}
	if !reflect.DeepEqual(without(got), without(doc)) {
		return errors.New("other keys would change")
	}
	return nil
}

// without is doc less agentx's table (and mcp_servers, if that was all).
func without(doc map[string]any) map[string]any {
	doc = maps.Clone(doc)
	if servers, ok := doc["mcp_servers"].(map[string]any); ok {
		servers = maps.Clone(servers)
		delete(servers, "agentx")
		doc["mcp_servers"] = servers
		if len(servers) == 0 {
			delete(doc, "mcp_servers")
		}
	}
	return doc
}

// lookup is the value at a key path.
func lookup(doc map[string]any, path ...string) (any, bool) {
	var v any = doc
	for _, k := range path {
		t, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = t[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func tomlKind(v any) string {
	switch v.(type) {
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case string:
		return "a string"
	}
	return fmt.Sprintf("a %T", v)
}
