package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentx-cli/agentx/ledger"
)

// An input schema is flat: each argument is a string, an integer, a
// number, a boolean, or an array of one of those, optionally with an
// enum. Optional arguments are plain types, not ["null", T] unions (the Go
// type of an optional argument is a pointer or a slice, which
// jsonschema.For makes nullable): a client that reads a union cannot tell
// what to send (the MCP Inspector sends a string), and null as an argument
// means the same as leaving it out.

// plainInput makes s, a tool's input schema, the shape clients expect:
// each property's ["null", T] becomes T.
func plainInput(s *jsonschema.Schema) *jsonschema.Schema {
	for _, p := range s.Properties {
		notNull(p)
		if p.Items != nil {
			notNull(p.Items)
		}
	}
	return s
}

// notNull makes a ["null", T] schema a T schema.
func notNull(p *jsonschema.Schema) {
	if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
		p.Type = p.Types[0]
		if p.Type == "null" {
			p.Type = p.Types[1]
		}
		p.Types = nil
	}
}

// argsProblem is what is wrong with one argument.
func argsProblem(name, format string, a ...any) *ledger.InputError {
	return &ledger.InputError{Field: "argument", Value: name, Msg: fmt.Sprintf(format, a...)}
}

// normalizeArgs checks a call's arguments m against s, the tool's flat
// input schema, and puts them in the shape the schema says: an optional
// argument given as null is left out, and a number or boolean sent as a
// string ("0", "true", as some clients' forms do) is read as one. Every
// problem is an *ledger.InputError naming the argument, what it got and
// what it wants; the problems of several arguments are reported in the
// order of their names, the first one.
func normalizeArgs(m map[string]any, s *jsonschema.Schema) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := s.Properties[k]
		if p == nil {
			return argsProblem(k, "is not an argument of this tool; it takes %s", strings.Join(sortedKeys(s.Properties), ", "))
		}
		v := m[k]
		if v == nil {
			if slices.Contains(s.Required, k) {
				return argsProblem(k, "is null: it is required, %s", want(p))
			}
			delete(m, k)
			continue
		}
		got, err := value(k, v, p)
		if err != nil {
			return err
		}
		m[k] = got
	}
	for _, k := range s.Required {
		if _, ok := m[k]; !ok {
			return argsProblem(k, "is missing: it is required, %s", want(s.Properties[k]))
		}
	}
	return nil
}

// value checks v, argument k's value, against its schema p, converting a
// string that spells a number or a boolean.
func value(k string, v any, p *jsonschema.Schema) (any, error) {
	if p.Type == "array" {
		items, ok := v.([]any)
		if !ok {
			return nil, argsProblem(k, "is %s, want an array of %s", describe(v), plural(p.Items))
		}
		for i, it := range items {
			got, err := scalar(fmt.Sprintf("%s[%d]", k, i), it, p.Items)
			if err != nil {
				return nil, err
			}
			items[i] = got
		}
		return items, nil
	}
	return scalar(k, v, p)
}

func scalar(k string, v any, p *jsonschema.Schema) (any, error) {
	if p == nil {
		return v, nil
	}
	if str, ok := v.(string); ok && p.Type != "string" {
		if got, ok := fromString(str, p.Type); ok {
			v = got
		}
	}
	if !hasType(v, p.Type) {
		return nil, argsProblem(k, "is %s, %s", describe(v), want(p))
	}
	if len(p.Enum) > 0 && !slices.Contains(p.Enum, v) {
		return nil, argsProblem(k, "is %s, %s", describe(v), want(p))
	}
	return v, nil
}

// fromString reads s as a value of type t, if it spells one exactly.
func fromString(s, t string) (any, bool) {
	switch t {
	case "integer":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > -1<<53 && n < 1<<53 {
			return float64(n), true
		}
	case "number":
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && strings.TrimSpace(s) == s {
			return f, true
		}
	case "boolean":
		switch s {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return nil, false
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		f, ok := v.(float64)
		return ok && !math.IsInf(f, 0)
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && math.Abs(f) < 1<<53
	}
	return true // an argument of no given type: the schema's validation decides
}

// describe names v for a message: its JSON type and, for a scalar, its
// value, quoted and cut short.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "the string " + strconv.Quote(clip(v, 40))
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// want says what an argument of schema p wants.
func want(p *jsonschema.Schema) string {
	if p == nil {
		return "want any value"
	}
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			b, _ := json.Marshal(e)
			vals[i] = string(b)
		}
		return "want one of " + strings.Join(vals, ", ")
	}
	switch p.Type {
	case "array":
		return "want an array of " + plural(p.Items)
	case "integer":
		return "want an integer"
	case "":
		return "want any value"
	}
	return "want a " + p.Type
}

func plural(items *jsonschema.Schema) string {
	if items == nil || items.Type == "" {
		return "values"
	}
	return items.Type + "s"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
