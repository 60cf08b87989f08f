package ledger

import "testing"

// TestRoundAnswer: the answer to the current round is every answer entry of
// that round, in order (a person may reply more than once); earlier
// rounds' answers are not part of it.
func TestRoundAnswer(t *testing.T) {
	e := func(round int, typ EntryType, body string) ThreadEntry {
		return ThreadEntry{Round: round, From: "x", Type: typ, Body: body}
	}
	tests := []struct {
		name   string
		round  int
		thread []ThreadEntry
		want   string
	}{
		{"no answer yet", 1, []ThreadEntry{e(1, Question, "q")}, ""},
		{"one answer", 1, []ThreadEntry{e(1, Question, "q"), e(1, Answer, "a")}, "a"},
		{"two replies", 1, []ThreadEntry{e(1, Question, "q"), e(1, Answer, "a"), e(1, Answer, "and b")}, "a\n\nand b"},
		{"only this round's", 2, []ThreadEntry{e(1, Question, "q"), e(1, Answer, "old"), e(2, Question, "q2"), e(2, Answer, "new")}, "new"},
		{"next round not answered", 2, []ThreadEntry{e(1, Question, "q"), e(1, Answer, "old"), e(2, Question, "q2")}, ""},
		{"after a resolution", 1, []ThreadEntry{e(1, Question, "q"), e(1, Answer, "a"), e(1, Resolution, "done")}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Clarification{Round: tt.round, Thread: tt.thread}
			if got := c.RoundAnswer(); got != tt.want {
				t.Fatalf("RoundAnswer() = %q, want %q", got, tt.want)
			}
		})
	}
}
