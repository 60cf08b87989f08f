package relay

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/router"
)

func TestPickReply(t *testing.T) {
	opts := []router.Option{{N: 1, Text: "Exponential backoff", Decision: "Exponential backoff"}, {N: 2, Text: "A fixed delay", Decision: "A fixed delay"}}
	for _, tc := range []struct {
		text string
		opts []router.Option
		want router.Reply
	}{
		{"2", opts, router.Reply{Option: 2}},
		{" 2. ", opts, router.Reply{Option: 2}},
		{"#2", opts, router.Reply{Option: 2}},
		{"option 1", opts, router.Reply{Option: 1}},
		{"Option  1: but capped", opts, router.Reply{Option: 1, Body: "but capped"}},
		{"#2 but only on weekends", opts, router.Reply{Option: 2, Body: "but only on weekends"}},
		{"#2, but only on weekends", opts, router.Reply{Option: 2, Body: "but only on weekends"}},
		{"a fixed delay!", opts, router.Reply{Option: 2}},
		{"7", opts, router.Reply{Option: 7}}, // refused by the hub, naming the options
		{"#0", opts, router.Reply{Body: "#0"}},
		{"2 retries, then give up", opts, router.Reply{Body: "2 retries, then give up"}},
		{"#2x", opts, router.Reply{Body: "#2x"}},
		{"#12345", opts, router.Reply{Body: "#12345"}},
		{"options are fine", opts, router.Reply{Body: "options are fine"}},
		{"2", nil, router.Reply{Body: "2"}},
		{"#2 is merged", nil, router.Reply{Body: "#2 is merged"}},
	} {
		got := PickReply(tc.text, tc.opts)
		assert.Equal(t, tc.want, got, "%q", tc.text)
	}
}

func FuzzPickReply(f *testing.F) {
	opts := []router.Option{{N: 1, Text: "A"}, {N: 2, Text: "B"}}
	for _, s := range []string{"2", "#2 note", "option 1: x", "A", "#", "option ", "#9999 x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := PickReply(s, opts)
		if r.Option < 0 || r.Option > 9999 {
			t.Fatalf("option %d from %q", r.Option, s)
		}
		if utf8.ValidString(s) && !utf8.ValidString(r.Body) {
			t.Fatalf("body %q from %q", r.Body, s)
		}
		if strings.TrimSpace(s) != "" && r.Option == 0 && r.Body == "" {
			t.Fatalf("%q lost", s)
		}
	})
}
