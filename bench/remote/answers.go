package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// answerAll times changes other than asks (-answers): once a row's asks
// are made, every host answers, all at once, k of the questions on its
// issue (on one issue, host i the i-th, i+hosts-th, ... of them), through
// the remote as the asks went. It prints the answers acknowledged,
// refused as remote_busy and failed otherwise, git commands an answer,
// latency p50/p99 and answers a second, and how many questions the
// remote's ledgers hold answered afterwards.
func answerAll(ctx context.Context, name, bin string, w *world, hosts, issues, k int) {
	// each issue's ledger on the remote, read once: host i works on
	// issue i+1, or all on issue 1
	read := func() []*ledger.Ledger {
		var ls []*ledger.Ledger
		for issue := 1; issue <= issues; issue++ {
			l := remoteLedger(w.bare, issue)
			if l == nil {
				fmt.Fprintf(os.Stderr, "%s: answers: no ledger of issue %d on the remote\n", name, issue)
				return nil
			}
			ls = append(ls, l)
		}
		return ls
	}
	ls := read()
	if ls == nil {
		return
	}
	ids := make([][]string, len(w.hosts))
	for i := range w.hosts {
		l := ls[0]
		if issues > 1 {
			l = ls[i]
		}
		for p, c := range l.Clarifications {
			if issues > 1 || p%hosts == i {
				ids[i] = append(ids[i], c.ID)
			}
		}
		ids[i] = ids[i][:min(k, len(ids[i]))]
	}
	// the asks' git commands are counted; the answers' start afresh
	_ = os.Truncate(w.gitLog, 0)
	_ = os.Truncate(w.gitLog+".times", 0)
	var r result
	each(w, &r, 0, k, func(i, n int) (time.Duration, error) {
		if n >= len(ids[i]) {
			return 0, errSkip
		}
		return onHost(ctx, w, i, "answer "+ids[i][n], nil, bin, "clarify", "answer", ids[i][n], "--from", "architect",
			"--body", fmt.Sprintf("Three tries, host %d.", i), "--json")
	})
	slices.Sort(r.lat)
	ok := len(r.lat)
	gitPer, which := gitCommands(w.gitLog, ok)
	answered := 0
	for _, l := range read() {
		for _, c := range l.Clarifications {
			if c.Status == ledger.Answered {
				answered++
			}
		}
	}
	fmt.Printf("  %s, %d/%d answers: %d ok, %d busy, %d failed; git/answer %.2f; p50 %.0f ms, p99 %.0f ms; %.1f answers/s; %d answered on the remote (%s)\n",
		name, hosts, issues, ok, r.busy, r.failed, gitPer, ms(pct(r.lat, 50)), ms(pct(r.lat, 99)),
		float64(ok)/r.wall.Seconds(), answered, which)
}

// errSkip is a round a host has nothing to do in.
var errSkip = errors.New("nothing to do")

// remoteLedger is the remote's ledger of issue, nil if none can be read.
func remoteLedger(bare string, issue int) *ledger.Ledger {
	ref := fmt.Sprintf("refs/agentx/clarifications/issue-%d:issue-%d.json", issue, issue)
	data, err := exec.Command("git", "-C", bare, "cat-file", "blob", ref).Output()
	if err != nil {
		return nil
	}
	l, err := ledger.Decode("remote", data)
	if err != nil {
		return nil
	}
	return l
}
