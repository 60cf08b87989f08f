package slackmode

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

var opts = []router.Option{{N: 1, Text: "Exponential backoff", Decision: "Exponential backoff"}, {N: 2, Text: "A fixed delay", Decision: "A fixed delay"}}

// TestParseReply proves how a thread reply becomes a reply to the hub.
func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		text    string
		options []router.Option
		want    router.Reply
	}{
		{"Exponential, capped at 30 s.", nil, router.Reply{Body: "Exponential, capped at 30 s."}},
		{"  2  ", nil, router.Reply{Body: "2"}},
		{"2", opts, router.Reply{Option: 2}},
		{"2.", opts, router.Reply{Option: 2}},
		{"#1", opts, router.Reply{Option: 1}},
		{"Option 1", opts, router.Reply{Option: 1}},
		{"a FIXED delay", opts, router.Reply{Option: 2}},
		{"a fixed delay!", opts, router.Reply{Option: 2}},
		{"#1, but cap it at 30 s", opts, router.Reply{Option: 1, Body: "but cap it at 30 s"}},
		{"1, but cap it at 30 s", opts, router.Reply{Body: "1, but cap it at 30 s"}},
		{"3", opts, router.Reply{Option: 3}}, // the hub refuses it, naming the options
		{"0", opts, router.Reply{Body: "0"}},
		{"12 retries", opts, router.Reply{Body: "12 retries"}},
		{"1x faster", opts, router.Reply{Body: "1x faster"}},
		{"use &lt;b&gt; &amp; go", nil, router.Reply{Body: "use <b> & go"}},
		{"#2 &lt;b&gt;", opts, router.Reply{Option: 2, Body: "<b>"}},
	} {
		got, err := ParseReply(tc.text, tc.options)
		require.NoError(t, err, tc.text)
		assert.Equal(t, tc.want, got, tc.text)
	}
	_, err := ParseReply("  \n", opts)
	assert.ErrorIs(t, err, ErrEmpty)
	_, err = ParseReply("\xff", nil)
	assert.ErrorContains(t, err, "UTF-8")
	_, err = ParseReply(strings.Repeat("x", ledger.MaxBodyLen+1), nil)
	assert.ErrorContains(t, err, "at most")
}

// FuzzParseReply feeds the reply parser: a reply it takes is valid UTF-8
// within the body limit, never blank unless it picks an option, and its
// option is a number from 1.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"2", "#1", "option 2: later", "A fixed delay", "&lt;!channel&gt;", "1\u202e", "\xff", ""} {
		f.Add(s, "Exponential backoff", "A fixed delay")
	}
	f.Fuzz(func(t *testing.T, text, o1, o2 string) {
		options := []router.Option{{N: 1, Text: o1, Decision: o1}, {N: 2, Text: o2, Decision: o2}}
		r, err := ParseReply(text, options)
		if err != nil {
			return
		}
		if !utf8.ValidString(r.Body) || strings.TrimSpace(r.Body) == "" && r.Option == 0 {
			t.Fatalf("reply %q taken as %q", text, r.Body)
		}
		if r.Option < 0 || len(r.Body) > ledger.MaxBodyLen {
			t.Fatalf("reply %q taken as option %d, %d bytes", text, r.Option, len(r.Body))
		}
	})
}
