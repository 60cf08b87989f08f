package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// A change is what -answers and -assumptions time: a change other than
// an ask that every host makes at once on questions already asked.
type change struct {
	noun string                          // "answers"
	verb string                          // "answer", the clarify command
	args func(host int) []string         // its flags after the id
	made func(*ledger.Clarification) int // how many of these changes a record holds
}

// answering is -answers: the one asked answers.
var answering = change{noun: "answers", verb: "answer",
	args: func(host int) []string {
		return []string{"--from", "architect", "--body", fmt.Sprintf("Three tries, host %d.", host)}
	},
	made: func(c *ledger.Clarification) int {
		if c.Status == ledger.Answered {
			return 1
		}
		return 0
	},
}

// assuming is -assumptions: the asker records what it proceeds on (a
// change to agentx's own key alone, no thread entry).
var assuming = change{noun: "assumptions", verb: "assume",
	args: func(host int) []string {
		return []string{"--from", "engineer", "--assumption", fmt.Sprintf("Proceeding on the default, host %d.", host)}
	},
	made: func(c *ledger.Clarification) int {
		if c.X == nil {
			return 0
		}
		return len(c.X.Assumptions)
	},
}

// resolving is -resolutions: the asker resolves the question answered
// (-answers first), closing the record.
var resolving = change{noun: "resolutions", verb: "resolve",
	args: func(host int) []string {
		return []string{"--from", "engineer", "--body", fmt.Sprintf("Done with three tries, host %d.", host)}
	},
	made: func(c *ledger.Clarification) int {
		if c.Status == ledger.Resolved {
			return 1
		}
		return 0
	},
}

// changeAll times chs once a row's asks are made: every host makes them,
// all at once, on k of the questions on its issue (on one issue, host i
// the i-th, i+hosts-th, ... of them; with procs processes a host, each
// makes k, all at once), through the remote as the asks
// went; with more than one change (-together), host i+j makes chs[j] on
// host i's questions, the changes of a round at the same moment. It
// prints, per change, those acknowledged, refused as remote_busy and
// failed otherwise, latency p50/p99 and changes a second, and how many
// the remote's ledgers hold afterwards; git commands a change, of them
// all.
func changeAll(ctx context.Context, chs []change, name, bin string, w *world, hosts, issues, k, procs int) {
	// each issue's ledger on the remote, read once: host i works on
	// issue i+1, or all on issue 1
	read := func() []*ledger.Ledger {
		var ls []*ledger.Ledger
		for issue := 1; issue <= issues; issue++ {
			l := remoteLedger(w.bare, issue)
			if l == nil {
				fmt.Fprintf(os.Stderr, "%s: %s: no ledger of issue %d on the remote\n", name, chs[0].noun, issue)
				return nil
			}
			ls = append(ls, l)
		}
		return ls
	}
	count := func(ls []*ledger.Ledger, ch change) int {
		n := 0
		for _, l := range ls {
			for _, c := range l.Clarifications {
				n += ch.made(c)
			}
		}
		return n
	}
	ls := read()
	if ls == nil {
		return
	}
	had := make([]int, len(chs))
	for j, ch := range chs {
		had[j] = count(ls, ch)
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
		ids[i] = ids[i][:min(k*procs, len(ids[i]))]
	}
	// the git commands before are counted; these start afresh
	_ = os.Truncate(w.gitLog, 0)
	_ = os.Truncate(w.gitLog+".times", 0)
	w.asks = map[string]askRun{}
	rs := make([]result, len(chs))
	var mu sync.Mutex
	var all result
	each(w, &all, 0, k, procs, func(i, n int) (time.Duration, error) {
		if n >= len(ids[i]) {
			return 0, errSkip
		}
		var wg sync.WaitGroup
		for j, ch := range chs {
			wg.Go(func() {
				h := (i + j) % len(w.hosts)
				argv := append([]string{bin, "clarify", ch.verb, ids[i][n]}, ch.args(h)...)
				d, err := onHost(ctx, w, h, ch.verb+" "+ids[i][n], w.started(h, n), append(argv, "--json")...)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					rs[j].lat = append(rs[j].lat, d)
					rs[j].slow = append(rs[j].slow, fmt.Sprintf("%08d host %d round %d: %.0f ms", d.Microseconds(), h, n, ms(d)))
				case errors.Is(err, errBusy):
					rs[j].busy++
				default:
					rs[j].failed++
					fmt.Fprintln(os.Stderr, err)
				}
			})
		}
		wg.Wait()
		return 0, errSkip // counted above, per change
	})
	done := 0
	for j := range chs {
		done += len(rs[j].lat)
	}
	gitPer, which := gitCommands(w.gitLog, done)
	after := read()
	for j, ch := range chs {
		r := &rs[j]
		defer func() { fmt.Print(slowestLines(name+" "+ch.noun, w, r)) }()
		slices.Sort(r.lat)
		ok := len(r.lat)
		fmt.Printf("  %s, %d/%d %s: %d ok, %d busy, %d failed; git/change %.2f; p50 %.0f ms, p99 %.0f ms; %.1f a second; %d more on the remote (%s)\n",
			name, hosts, issues, ch.noun, ok, r.busy, r.failed, gitPer, ms(pct(r.lat, 50)), ms(pct(r.lat, 99)),
			float64(ok)/all.wall.Seconds(), count(after, ch)-had[j], which)
	}
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
