package slackmode

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

var opts = []string{"Exponential backoff", "A fixed delay"}

// TestParseReply proves how a thread reply becomes an answer.
func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		text    string
		options []string
		want    Reply
	}{
		{"Exponential, capped at 30 s.", nil, Reply{Text: "Exponential, capped at 30 s."}},
		{"  2  ", nil, Reply{Text: "2"}},
		{"2", opts, Reply{Text: "A fixed delay", Option: 2}},
		{"2.", opts, Reply{Text: "A fixed delay", Option: 2}},
		{"#1", opts, Reply{Text: "Exponential backoff", Option: 1}},
		{"Option 1", opts, Reply{Text: "Exponential backoff", Option: 1}},
		{"a FIXED delay", opts, Reply{Text: "A fixed delay", Option: 2}},
		{"a fixed delay!", opts, Reply{Text: "A fixed delay", Option: 2}},
		{"1, but cap it at 30 s", opts, Reply{Text: "Exponential backoff: but cap it at 30 s", Option: 1}},
		{"3", opts, Reply{Text: "3"}},
		{"0", opts, Reply{Text: "0"}},
		{"12 retries", opts, Reply{Text: "12 retries"}},
		{"1x faster", opts, Reply{Text: "1x faster"}},
		{"use &lt;b&gt; &amp; go", nil, Reply{Text: "use <b> & go"}},
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

// FuzzParseReply feeds the reply parser: a reply it takes is text the
// ledger stores (valid UTF-8, not blank, within the body limit), and an
// option it names is one offered, answered with its label. Options are
// what the hub takes (ledger.ValidateText).
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"2", "#1", "option 2: later", "A fixed delay", "&lt;!channel&gt;", "1\u202e", "\xff", ""} {
		f.Add(s, "Exponential backoff", "A fixed delay")
	}
	f.Fuzz(func(t *testing.T, text, o1, o2 string) {
		options := []string{o1, o2}
		for _, o := range options {
			if ledger.ValidateText("option", o, ledger.MaxTopicLen) != nil {
				return // the hub takes only valid options
			}
		}
		r, err := ParseReply(text, options)
		if err != nil {
			return
		}
		if !utf8.ValidString(r.Text) || strings.TrimSpace(r.Text) == "" && r.Option == 0 {
			t.Fatalf("reply %q taken as %q", text, r.Text)
		}
		if r.Option < 0 || r.Option > len(options) {
			t.Fatalf("option %d of %d", r.Option, len(options))
		}
		if r.Option > 0 && !strings.HasPrefix(r.Text, options[r.Option-1]) {
			t.Fatalf("option %d answered as %q", r.Option, r.Text)
		}
		if r.Option == 0 && len(r.Text) > ledger.MaxBodyLen {
			t.Fatalf("%d bytes taken", len(r.Text))
		}
	})
}
