package doctor

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/ledger"
)

// conforms reports whether ledger JSON certainly passes the AgentX schema
// (as ValidateSchema applies it), in one pass over its tokens with nothing
// decoded into maps: the schema validator, which needs the document as
// generic values, costs most of a first doctor run on thousands of ledgers.
// It accepts a subset of what the schema does (timestamps only as agentx
// and the AgentX tools write them, integers only as plain digits, no
// duplicate keys); whatever it does not accept goes to the validator,
// which decides and says why. FuzzConformsImpliesValid holds it to that.
func conforms(data []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true))
	ok := object(dec, func(name string) bool {
		switch name {
		case "issueNumber":
			return integer(dec, 0)
		case "clarifications":
			return array(dec, 0, func() bool { return record(dec) })
		}
		return false
	}, "issueNumber", "clarifications")
	if !ok {
		return false
	}
	_, err := dec.ReadToken()
	return err == io.EOF // nothing after the document
}

// object reads an object whose members member checks (false: not
// certainly valid, or not a member the schema allows), with every name in
// required present and no name twice.
func object(dec *jsontext.Decoder, member func(name string) bool, required ...string) bool {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	var seen [16]string // the schema's objects have 13 members at most
	n := 0
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil || n == len(seen) {
			return false
		}
		name := tok.String()
		if slices.Contains(seen[:n], name) || !member(name) {
			return false
		}
		seen[n] = name
		n++
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	for _, r := range required {
		if !slices.Contains(seen[:n], r) {
			return false
		}
	}
	return true
}

// array reads an array of at least min items, each checked by item.
func array(dec *jsontext.Decoder, min int, item func() bool) bool {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return false
	}
	n := 0
	for dec.PeekKind() != ']' {
		if dec.PeekKind() == 0 || !item() {
			return false
		}
		n++
	}
	_, err := dec.ReadToken()
	return err == nil && n >= min
}

var recordRequired = []string{"id", "from", "to", "topic", "blocking", "status", "round", "maxRounds", "created", "staleAfter", "resolvedAt", "thread"}

// record reads a clarification record.
func record(dec *jsontext.Decoder) bool {
	return object(dec, func(name string) bool {
		switch name {
		case ledger.ExtraKey:
			return dec.SkipValue() == nil // left out of the check
		case "id":
			return str(dec, clarificationID)
		case "from", "to":
			return str(dec, agentName)
		case "topic":
			return str(dec, nonEmpty)
		case "blocking":
			tok, err := dec.ReadToken()
			return err == nil && (tok.Kind() == 't' || tok.Kind() == 'f')
		case "status":
			return str(dec, oneOf("pending", "answered", "resolved", "stale", "escalated", "abandoned"))
		case "round", "maxRounds":
			return integer(dec, 1)
		case "created", "staleAfter":
			return str(dec, timestamp)
		case "resolvedAt":
			if dec.PeekKind() == 'n' {
				_, err := dec.ReadToken()
				return err == nil
			}
			return str(dec, timestamp)
		case "thread":
			return array(dec, 1, func() bool { return entry(dec) })
		case "recordType":
			return str(dec, oneOf("clarification", "brainstorm"))
		}
		return false
	}, recordRequired...)
}

// entry reads a thread entry.
func entry(dec *jsontext.Decoder) bool {
	return object(dec, func(name string) bool {
		switch name {
		case "round":
			return integer(dec, 1)
		case "from":
			return str(dec, agentName)
		case "type":
			return str(dec, oneOf("question", "answer", "resolution", "escalation"))
		case "body":
			return str(dec, nonEmpty)
		case "timestamp":
			return str(dec, timestamp)
		}
		return false
	}, "round", "from", "type", "body", "timestamp")
}

// str reads a string that ok accepts.
func str(dec *jsontext.Decoder, ok func(string) bool) bool {
	if dec.PeekKind() != '"' {
		return false
	}
	tok, err := dec.ReadToken()
	return err == nil && ok(tok.String())
}

// integer reads a number written as plain digits, at least min.
func integer(dec *jsontext.Decoder, min int) bool {
	if dec.PeekKind() != '0' {
		return false
	}
	v, err := dec.ReadValue()
	if err != nil || len(v) == 0 || len(v) > 9 {
		return false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n >= min
}

func nonEmpty(s string) bool { return s != "" }

func oneOf(vs ...string) func(string) bool {
	return func(s string) bool {
		for _, v := range vs {
			if s == v {
				return true
			}
		}
		return false
	}
}

// agentName is ^[a-z0-9][a-z0-9-]*$.
func agentName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0) {
			return false
		}
	}
	return s != ""
}

// clarificationID is ^CLR-[0-9]+-[0-9]{3}$, or an id past CLR-N-999 (the
// documented deviation ValidateSchema accepts).
func clarificationID(s string) bool {
	_, seq, err := ledger.ParseID(s)
	return err == nil && (len(s)-strings.LastIndexByte(s, '-') == 4 || seq > 999)
}

// timestamp is a date-time as the AgentX tools write it: UTC, "Z",
// seconds, at most nine digits of fraction, every field in range.
func timestamp(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > len("2006-01-02T15:04:05.000000000Z") || s[len(s)-1] != 'Z' {
		return false
	}
	for i := 0; i < len(s)-1; i++ {
		c := s[i]
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != 'T' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		case 19:
			if c != '.' || len(s) == 21 {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
