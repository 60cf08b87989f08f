//go:build unix

package router

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// resolvedWorkspace writes n resolved clarifications straight into h's
// ledgers (a hundred an issue, from issue 1), their topics and questions
// drawn from a small vocabulary so that some ask alike, each with a
// summary of a sentence or two, and makes the decision files.
func resolvedWorkspace(tb testing.TB, h *Hub, n int) {
	tb.Helper()
	for issue := 1; (issue-1)*100 < n; issue++ {
		l := &ledger.Ledger{IssueNumber: issue}
		for k := 0; k < 100 && (issue-1)*100+k < n; k++ {
			i := (issue-1)*100 + k
			w := benchWords(i)
			at := ledger.T(t0.Add(-time.Duration(n-i) * time.Minute))
			topic, question := benchQuestion(i)
			c := l.Ask(ledger.NewQuestion{From: "engineer", To: "architect", Topic: topic, Body: question, MaxRounds: 3, SLA: time.Hour}, at.Time)
			c.Status = ledger.Resolved
			c.Thread = append(c.Thread,
				ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Timestamp: at,
					Body: fmt.Sprintf("The %s, with a %s in front of it: the %s alone does not hold the load we expect from the %s.", w(2), w(5), w(1), w(6))},
				ledger.ThreadEntry{Round: 1, From: "engineer", Type: ledger.Resolution, Body: "Resolved with the answer.", Timestamp: at})
			c.ResolvedAt = &at
			c.Ext().Summary = fmt.Sprintf("Use the %s with a %s in front of it for the %s.", w(2), w(5), w(0))
		}
		data, err := ledger.Encode(l)
		if err != nil {
			tb.Fatal(err)
		}
		path := h.Store.Path(issue)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := h.Store.RebuildDecisions(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// benchWords are the words of the benchmark's i-th question.
func benchWords(i int) func(j int) string {
	words := strings.Fields("database cache queue retry timeout schema index token session export import adapter " +
		"migration rollout flag billing invoice search ranking upload storage bucket region replica backup")
	return func(j int) string { return words[(i*7+j*13)%len(words)] }
}

// benchQuestion is the benchmark's i-th question: 26 topics, each asked
// in one of 26 ways.
func benchQuestion(i int) (topic, question string) {
	w := benchWords(i)
	return w(0) + " " + w(1), fmt.Sprintf("Should the %s use the %s or the %s for the %s, given the %s?", w(0), w(1), w(2), w(3), w(4))
}

// cpuTime is the CPU (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAskDecisionMemory is what decision memory costs an ask: the
// whole Hub.Ask (rules, lock, ledger write with its fsyncs, event, the
// decisions taken before) on a workspace with no resolved clarification,
// with 10, and with 10,000; and, on that last one, with [memory] reuse off.
// Each ask is on an issue of its own among 50, as agents on different
// issues ask. go test ./router -run XXX -bench AskDecisionMemory
func BenchmarkAskDecisionMemory(b *testing.B) {
	for _, c := range []struct {
		name     string
		resolved int
		config   string
	}{
		{"resolved=0", 0, ""},
		{"resolved=10", 10, ""},
		{"resolved=10000", 10000, ""},
		{"resolved=10000/reuse=off", 10000, "[memory]\nreuse = \"off\"\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir, rules := testenv.Workspace(b, c.config)
			rules.Config.MaxQuestions = 0 // as many asks as the benchmark makes
			h := New(ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, func() time.Time { return t0 }), rules, dir)
			h.Runner = &fakeRunner{}
			resolvedWorkspace(b, h, c.resolved)
			ctx := context.Background()
			topic, question := benchQuestion(3) // one asked before, on one of 26 topics
			matched := 0
			i := 0
			runtime.GC() // not the making of the workspace's garbage
			cpu := cpuTime()
			for b.Loop() {
				i++
				rec, err := h.Ask(ctx, AskRequest{Issue: 100000 + i%50, From: "engineer", To: "architect", NonBlocking: true, Topic: topic, Question: question})
				if err != nil {
					b.Fatal(err)
				}
				matched = len(rec.DecidedBefore)
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(matched), "decided/op")
		})
	}
}
