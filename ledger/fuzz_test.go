package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/lock"
)

// The fuzz targets of the data agentx reads from files other tools (or
// people) write. Each asserts what agentx relies on: no panic, errors of
// the documented type, and whatever decodes writes back to something that
// decodes to the same thing (encoding is a fixed point after one trip).

// FuzzParseTime: any string either parses, and the time written back
// parses again to the same instant (to the millisecond, clamped to the
// years 0000-9999 that RFC 3339 can write), or fails with an error; never
// a panic.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{
		"2026-02-26T10:00:00Z", "2026-02-26T10:00:00.123456789+01:00", "2026-02-26T10:00:00", "2026-02-26 10:00:00Z",
		"/Date(1772100000000)/", "/Date(1772100000000+0100)/", "/Date(-1)/", "/Date()/", "/Date(+)/", "/Date(9223372036854775807)/",
		"9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00+01:00", "9999-12-31T23:59:00-14:00", "yesterday", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s)
		if err != nil {
			return
		}
		b, err := T(got).MarshalJSON()
		if err != nil {
			t.Fatalf("ParseTime(%q) = %v: MarshalJSON: %v", s, got, err)
		}
		var back Time
		if err := back.UnmarshalJSON(b); err != nil {
			t.Fatalf("ParseTime(%q) = %v, written as %s, does not read back: %v", s, got, b, err)
		}
		want := got.Truncate(time.Millisecond)
		if lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC); want.Before(lo) {
			want = lo
		} else if hi := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC); want.After(hi) {
			want = hi
		}
		if !back.Equal(want) {
			t.Fatalf("ParseTime(%q) = %v, written as %s, reads back as %v, want %v", s, got, b, back.Time, want)
		}
		b2, _ := back.MarshalJSON()
		if !bytes.Equal(b, b2) {
			t.Fatalf("ParseTime(%q): written as %s, then as %s", s, b, b2)
		}
	})
}

// FuzzDecode: a ledger file either decodes, or fails with a *CorruptError
// naming the file. What decodes encodes, decodes again, and encodes to the
// same bytes.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("../testdata/interop/*.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		`{"issueNumber":42,"clarifications":[{"id":"CLR-42-001","created":"/Date()/"}]}`,
		`{"issueNumber":42,"clarifications":[{"id":"CLR-42-001","staleAfter":"10000-01-01T00:29:00.000Z"}]}`,
		`{"issueNumber":42,"clarifications":[null]}`,
		`{"issueNumber":42,"clarifications":[{"thread":[{"timestamp":null,"body":"\u001b[2J"}]}]}`,
		`{"issueNumber":1e400}`, `[]`, `null`, ``, `{"clarifications":{}}`,
		`{"issueNumber":1,"x":[1.50,"\u00e9"],"clarifications":[{"id":"CLR-1-001","from":"a","status":"resolved","id":"CLR-1-002"}]}`,
		`{"issueNumber":1,"clarifications":[{"status":"resolved","id":"CLR-1-001","from":"a","round":"x","x":{"y":null}}]}`,
		`{"issueNumber":1,"clarifications":[{"id":"CLR-1-001","agentx":{"github":[ {"entry":0,"comment":1e2} ],"slack":null,"z":1}},{"id":"CLR-1-002","status":"resolved","from":"a","agentx":{"slack":{"ts":"\u00e9"},"github":[]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Decode("issue-1.json", data)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != "issue-1.json" {
				t.Fatalf("Decode error %T %v: want a *CorruptError naming the file", err, err)
			}
			return
		}
		// what agentx writes it reads back, and writes the same again
		out, out2 := rewrite(t, "whole", l)
		if !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable:\n%s\n---\n%s", out, out2)
		}

		// A write reads the final records sealed and writes them back as
		// read: what it writes must say what writing the whole ledger says.
		sl, err := decode("issue-1.json", data, true)
		if err != nil {
			t.Fatalf("decodes whole but not sealed: %v", err)
		}
		if _, out3 := rewrite(t, "sealed", sl); !bytes.Equal(out, out3) {
			t.Fatalf("a sealed read writes another ledger:\n%s\n---\n%s", out, out3)
		}
	})
}

// rewrite encodes l, decodes that whole, and encodes it again.
func rewrite(t *testing.T, read string, l *Ledger) (first, second []byte) {
	first, err := Encode(l)
	if err != nil {
		t.Fatalf("Encode of a ledger read %s: %v", read, err)
	}
	l2, err := Decode("issue-1.json", first)
	if err != nil {
		t.Fatalf("what agentx writes from a ledger read %s it cannot read: %v\n%s", read, err, first)
	}
	second, err = Encode(l2)
	if err != nil {
		t.Fatalf("second Encode: %v", err)
	}
	return first, second
}

// FuzzParseID: an id parses to numbers that format back to an id parsing
// to the same numbers, or fails with an *InputError.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"CLR-42-001", "CLR-0-999999999", "CLR-999999999-001", "CLR-42-0001", "CLR-42-01", "CLR--1-001", "clr-42-001", "CLR-42-001\n", "CLR-٤٢-001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		issue, seq, err := ParseID(s)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseID(%q): %T %v, want an *InputError", s, err, err)
			}
			return
		}
		if err := ValidateIssue(issue); err != nil {
			t.Fatalf("ParseID(%q) = issue %d, which ValidateIssue refuses: %v", s, issue, err)
		}
		id := FormatID(issue, seq)
		i2, s2, err := ParseID(id)
		if err != nil || i2 != issue || s2 != seq {
			t.Fatalf("ParseID(%q) = %d, %d; FormatID gives %q, which parses as %d, %d, %v", s, issue, seq, id, i2, s2, err)
		}
	})
}

// FuzzParseIssue: an issue number parses to one ValidateIssue accepts and
// that prints back to itself, or fails with an *InputError.
func FuzzParseIssue(f *testing.F) {
	for _, s := range []string{"42", "#42", " 7 ", "0", "-1", "+1", "999999999", "1000000000", "9223372036854775808", "", "#", "٤٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseIssue(s)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseIssue(%q): %T %v, want an *InputError", s, err, err)
			}
			return
		}
		if err := ValidateIssue(n); err != nil {
			t.Fatalf("ParseIssue(%q) = %d, which ValidateIssue refuses: %v", s, n, err)
		}
		if m, err := ParseIssue(strconv.Itoa(n)); err != nil || m != n {
			t.Fatalf("ParseIssue(%q) = %d, which does not parse back: %d, %v", s, n, m, err)
		}
	})
}

// FuzzReadState: an index file and agent-status.json either read, or fail
// with a *CorruptError; what reads writes back to what reads the same; and
// no index file content is trusted over the ledger.
func FuzzReadState(f *testing.F) {
	for _, s := range []string{
		`{"version":2,"issue":42,"ledger":{"ino":7,"size":10,"mtime":1},"due":"2026-02-26T10:30:00Z","entries":[{"id":"CLR-42-001","from":"engineer","to":"architect","blocking":true,"status":"pending","round":1,"asked":"2026-02-26T10:00:00Z","staleAfter":"2026-02-26T10:30:00Z","q":"AAECAw=="}]}`,
		`{"engineer":{"status":"blocked-clarification","issue":42,"lastActivity":"2026-02-26T10:00:00Z","clarificationId":"CLR-42-001","waitingOn":"architect"},"architect":null}`,
		`{"version":1,"issues":{"x":[]}}`, `{"engineer":{"lastActivity":"/Date()/"}}`, `{"a":{"issue":1e99}}`, `{"version":1,"issues":{"1":[{"staleAfter":"/Date(99999999999999999)/"}]}}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	store := NewStore(dir, lock.Options{}, nil)
	if _, _, err := store.RebuildIndex(f.Context()); err != nil {
		f.Fatal(err)
	}
	indexFile := IndexDir + "/issue-42.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{indexFile, AgentStatusFile} {
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var ii issueIndex
		checkState(t, store, indexFile, &ii, func() any { return &issueIndex{} })
		// whatever the index file holds, the index reads (issue 42 has no
		// ledger: the file's stamp cannot match, so it is not trusted)
		ix, skipped, err := store.ReadIndex()
		if err != nil || len(skipped) > 0 || len(ix.Issues) > 0 {
			t.Fatalf("ReadIndex with a foreign index file = %v, %v, %v", ix, skipped, err)
		}
		m, err := store.ReadAgents()
		checkStateErr(t, AgentStatusFile, err)
		if err == nil {
			for name, st := range m {
				if st == nil {
					t.Fatalf("ReadAgents kept a null status for %q", name)
				}
			}
			var m2 AgentStatuses
			checkState(t, store, AgentStatusFile, &m2, func() any { return &AgentStatuses{} })
		}
	})
}

// checkState reads name into v, and if that works, writes v as agentx
// writes state files, reads it into fresh() and checks the two agree.
func checkState(t *testing.T, store *Store, name string, v any, fresh func() any) {
	t.Helper()
	err := store.ReadState(name, v)
	checkStateErr(t, name, err)
	if err != nil {
		return
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("%s: what reads does not encode: %v", name, err)
	}
	v2 := fresh()
	if err := json.Unmarshal(b, v2); err != nil {
		t.Fatalf("%s: what agentx writes it cannot read: %v\n%s", name, err, b)
	}
	b2, err := json.MarshalIndent(v2, "", "  ")
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("%s: encoding is not stable (%v):\n%s\n---\n%s", name, err, b, b2)
	}
}

func checkStateErr(t *testing.T, name string, err error) {
	t.Helper()
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) {
		t.Fatalf("%s: %T %v, want a *CorruptError", name, err, err)
	}
}
