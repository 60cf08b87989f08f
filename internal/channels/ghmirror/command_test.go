package ghmirror

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		body string
		want Command
		err  string
	}{
		{"/answer CLR-42-001 Use exponential backoff.", Command{VerbAnswer, "CLR-42-001", "Use exponential backoff."}, ""},
		{"\n  /answer  CLR-42-001 first line\nsecond line\r\n", Command{VerbAnswer, "CLR-42-001", "first line\nsecond line"}, ""},
		{"/answer CLR-42-001\nOn the next line.", Command{VerbAnswer, "CLR-42-001", "On the next line."}, ""},
		{"/resolve CLR-42-1000 decision: schema-per-tenant", Command{VerbResolve, "CLR-42-1000", "decision: schema-per-tenant"}, ""},
		{"Looks good to me.", Command{VerbPlain, "", "Looks good to me."}, ""},
		{"/answer", Command{Verb: VerbAnswer}, "/answer needs a clarification id first"},
		{"/answer CLR-42 yes", Command{Verb: VerbAnswer}, "/answer needs a clarification id first"},
		{"/resolve CLR-42-001", Command{Verb: VerbResolve, ID: "CLR-42-001"}, "has no decision"},
		{"/answer CLR-42-001   \n  ", Command{Verb: VerbAnswer, ID: "CLR-42-001"}, "has no answer"},
		{"/approve", Command{}, ErrNotCommand.Error()},
		{"/answers CLR-42-001 x", Command{}, ErrNotCommand.Error()},
		{"  \n\t", Command{}, ErrNotCommand.Error()},
		{"\xff/answer", Command{}, "not valid UTF-8"},
		{strings.Repeat("a", ledger.MaxBodyLen+1), Command{}, "agentx reads at most"},
	}
	for _, tt := range tests {
		got, err := ParseCommand(tt.body)
		if tt.err != "" {
			require.Error(t, err, "%q", tt.body)
			assert.Contains(t, err.Error(), tt.err, "%q", tt.body)
		} else {
			require.NoError(t, err, "%q", tt.body)
		}
		assert.Equal(t, tt.want, got, "%q", tt.body)
	}
}

// FuzzParseCommand feeds the parser any comment: it never panics, a
// command it takes names a clarification id and carries valid, non-blank
// text within the ledger's limit, which the ledger would store.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"/answer CLR-42-001 yes", "/resolve CLR-1-001 decision: x\nmore", "plain reply", "/answer", "",
		"/answer CLR-42-001 \x1b]0;title\x07", "/resolve CLR-9-999999999 a", "\r\n/answer\tCLR-42-001\tx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, err := ParseCommand(body)
		if err != nil {
			if c.Text != "" {
				t.Fatalf("an error with text %q", c.Text)
			}
			return
		}
		if !utf8.ValidString(c.Text) || strings.TrimSpace(c.Text) != c.Text || c.Text == "" {
			t.Fatalf("text %q", c.Text)
		}
		if err := ledger.ValidateText("answer", c.Text, ledger.MaxBodyLen); err != nil {
			t.Fatalf("the ledger would refuse %q: %v", c.Text, err)
		}
		switch c.Verb {
		case VerbAnswer, VerbResolve:
			if _, _, err := ledger.ParseID(c.ID); err != nil {
				t.Fatalf("id %q", c.ID)
			}
		case VerbPlain:
			if c.ID != "" {
				t.Fatalf("plain with id %q", c.ID)
			}
		default:
			t.Fatalf("verb %q", c.Verb)
		}
		if errors.Is(err, ErrNotCommand) {
			t.Fatal("unreachable")
		}
	})
}
