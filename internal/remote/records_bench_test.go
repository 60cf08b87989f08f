package remote

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// BenchmarkChangeMessage20000: what a remote write spends finding what
// it changed (changeMessage, then carried, as an intent does) on a ledger
// of 20,000 clarifications, 2,000 of them open, decoded from its bytes
// (the closed ones sealed), one question added. Each record is looked at
// once: a record opened by a search from the start, per record, made it
// quadratic.
func BenchmarkChangeMessage20000(b *testing.B) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	l := &ledger.Ledger{IssueNumber: 1}
	for i := range 20_000 {
		c := l.Ask(ledger.NewQuestion{From: "engineer", To: "architect", Topic: fmt.Sprint("t", i), Body: "Which retry budget applies here?", SLA: time.Hour}, t0)
		if i%10 != 0 {
			c.Status = ledger.Resolved
		}
	}
	data, err := ledger.Encode(l)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		l, err := ledger.DecodeIssue("bench", 1, data)
		if err != nil {
			b.Fatal(err)
		}
		before := recStates(l)
		l.Ask(ledger.NewQuestion{From: "engineer", To: "architect", Topic: "new", Body: "And the timeout?", SLA: time.Hour}, t0.Add(time.Minute))
		b.StartTimer()
		if changeMessage(before, l) == "" {
			b.Fatal("no change found")
		}
		if _, _, ok := carried(before, l); !ok {
			b.Fatal("not carried")
		}
	}
}
