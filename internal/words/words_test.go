package words

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n         int
		one, many string
		want      string
	}{
		{1, "command", "commands", "1 command"},
		{2, "command", "commands", "2 commands"},
		{0, "entry", "entries", "0 entries"},
		{1, "entry", "entries", "1 entry"},
		{21, "new reply", "new replies", "21 new replies"},
		{-1, "attempt", "attempts", "-1 attempts"},
	} {
		if got := Count(tc.n, tc.one, tc.many); got != tc.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tc.n, tc.one, tc.many, got, tc.want)
		}
	}
}

func TestIssue(t *testing.T) {
	for _, tc := range []struct {
		n                   int
		issue, ref, onIssue string
	}{
		{42, "issue #42", "#42", "on issue #42"},
		{1, "issue #1", "#1", "on issue #1"},
		{0, "no issue", "no issue", "without an issue"},
	} {
		if got := Issue(tc.n); got != tc.issue {
			t.Errorf("Issue(%d) = %q, want %q", tc.n, got, tc.issue)
		}
		if got := IssueRef(tc.n); got != tc.ref {
			t.Errorf("IssueRef(%d) = %q, want %q", tc.n, got, tc.ref)
		}
		if got := OnIssue(tc.n); got != tc.onIssue {
			t.Errorf("OnIssue(%d) = %q, want %q", tc.n, got, tc.onIssue)
		}
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct {
		s, extra string
		want     bool
	}{
		{"architect", "-", true},
		{"product-manager", "-", true},
		{"a1", "-", true},
		{"9lives", "-", true},
		{"", "-", false},
		{"-lead", "-", false},
		{"Lead", "-", false},
		{"lead_dev", "-", false},
		{"lead_dev", "_-", true},
		{"_lead", "_-", false},
		{"lead dev", "-", false},
		{"léad", "-", false},
		{"lead\n", "-", false},
	} {
		if got := Slug(tc.s, tc.extra); got != tc.want {
			t.Errorf("Slug(%q, %q) = %v, want %v", tc.s, tc.extra, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"issue", "status", "json", "agent", "all", "from", "to", "topic"}
	tests := []struct{ typed, want string }{
		{"isue", "issue"},
		{"stauts", "status"},
		{"jsno", "json"},
		{"ISSUE", "issue"},
		{"agnet", "agent"},
		{"tpoic", "topic"},
		{"zzzzzz", ""},
		{"x", ""},
		{"everything", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.typed, known); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"architect", "engineer", "product-manager"}
	for _, tt := range []struct{ typed, want string }{
		{"architekt", "did you mean architect?"},
		{"enginer", "did you mean engineer?"},
		{"Engineer", "did you mean engineer? names are case-sensitive"},
		{"designer", ""},
		{"x", ""},
	} {
		if got := DidYouMean(tt.typed, known); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

type hinted struct {
	hint string
	err  error
}

func (e *hinted) Error() string { return "hinted" }
func (e *hinted) Hint() string  { return e.hint }
func (e *hinted) Unwrap() error { return e.err }

type other struct{}

func (other) Error() string { return "other" }
func (other) Hint() string  { return "its own" }

// TestTable: a table words the kinds it names, leaves the others their own
// hint, and moves down the chain past an error with none.
func TestTable(t *testing.T) {
	table := Table{Word(func(e *hinted) string {
		if e.hint == "" {
			return ""
		}
		return "worded: " + e.hint
	})}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"worded", fmt.Errorf("ctx: %w", &hinted{hint: "h"}), "worded: h"},
		{"its own", other{}, "its own"},
		{"down the chain", &hinted{err: other{}}, "its own"},
		{"none", errors.New("plain"), ""},
	}
	for _, tt := range tests {
		if got := table.Hint(tt.err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if k := table.Kinds(); len(k) != 1 || k[0] != reflect.TypeFor[*hinted]() {
		t.Errorf("Kinds: %v", k)
	}
}
