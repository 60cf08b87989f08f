package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

func newEventsCmd(a *app) *cobra.Command {
	var (
		issue  issueFlag
		since  string
		id     string
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "events [--issue N] [--since T] [--id ID] [--follow]",
		Short: "Read the event log: one line per clarification change",
		Long: `Every change to a clarification appends one JSON line to
.agentx/state/events.jsonl: clarification-requested, -answered, -followed-up,
-stale, -resolved, -escalated, -abandoned, with the clarification id, issue,
agents, topic, blocking flag, round and time.

--since takes an RFC 3339 time or an age back from now (90m, 24h, 7d, 2w).
--follow keeps printing new events until interrupted. With --json each event
is printed as one JSON envelope per line (JSON Lines) when following, or as
one envelope holding the list otherwise.`,
		Args: cobra.NoArgs,
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			n, err := issue.get(a)
			if err != nil {
				return err
			}
			f := router.EventFilter{Issue: n, ID: id}
			if since != "" {
				if f.Since, err = parseSince(since, a.now()); err != nil {
					return err
				}
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			if follow {
				err := h.Events.Follow(ctx, f, 100*time.Millisecond, func(e router.Event) error {
					if a.json {
						b, err := json.Marshal(envelope{SchemaVersion: schemaVersion, Data: e})
						if err != nil {
							return err
						}
						_, err = fmt.Fprintf(a.stdout, "%s\n", b)
						return err
					}
					a.printEvent(e)
					return nil
				})
				if err == nil {
					err = ctx.Err() // stopped by a signal: exit 130 like any interrupted command
				}
				return err
			}
			res, err := h.Events.Read(f)
			if err != nil {
				return err
			}
			if res.Skipped > 0 {
				a.warnf("skipped %d malformed line(s) in %s", res.Skipped, h.Events.Path)
			}
			evs := res.Events
			if evs == nil {
				evs = []router.Event{}
			}
			return a.emit(evs, func() {
				for _, e := range evs {
					a.printEvent(e)
				}
			})
		}),
	}
	issue.register(cmd, "only this issue")
	cmd.Flags().StringVar(&since, "since", "", "only events at or after this time (RFC 3339, or an age such as 2h or 7d)")
	cmd.Flags().StringVar(&id, "id", "", "only this clarification")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	return cmd
}

// printEvent prints one event on one line. The log is a file anyone can
// append to: every field is neutralised (the line as a whole).
func (a *app) printEvent(e router.Event) {
	line := fmt.Sprintf("%s  %-27s %s #%d %s -> %s round %d", stamp(e.Timestamp), e.Type, e.ClarificationID, e.IssueNumber, e.FromAgent, e.ToAgent, e.Round)
	if e.Reason != "" {
		line += "  (" + e.Reason + ")"
	}
	a.printf("%s\n", safetext.Line(line))
}

// parseSince reads an absolute time (RFC 3339) or an age back from now: a
// duration (90m, 24h), with weeks and days in front if wanted (7d, 2w,
// 1w2d, 1d12h).
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, ok := parseAge(s); ok {
		return now.Add(-d), nil
	}
	t, err := ledger.ParseTime(s)
	if err != nil {
		return time.Time{}, &usageError{err: fmt.Errorf("--since %q: give an RFC 3339 time or an age such as 90m, 24h or 7d", s)}
	}
	return t, nil
}

// ageRE splits an age into weeks, days and the rest (a Go duration).
var ageRE = regexp.MustCompile(`^(?:(\d+)w)?(?:(\d+)d)?(.*)$`)

// parseAge reads a non-negative age: [Nw][Nd][Go duration], at least one part.
func parseAge(s string) (time.Duration, bool) {
	m := ageRE.FindStringSubmatch(s)
	if m == nil || s == "" {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{7 * 24 * time.Hour, 24 * time.Hour} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.Atoi(m[i+1])
		if err != nil || n > 10000 {
			return 0, false
		}
		d += time.Duration(n) * unit
	}
	if rest := m[3]; rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 {
			return 0, false
		}
		d += r
	}
	return d, true
}
