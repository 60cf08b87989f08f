package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// eventsOptions are `agentx events`'s flags.
type eventsOptions struct {
	issue  issueFlag
	since  string
	id     string
	follow bool
}

func newEventsCmd(a *App) *cobra.Command {
	o := &eventsOptions{}
	cmd := &cobra.Command{
		Use:   "events [--issue N] [--since T] [--id ID] [--follow]",
		Short: "Read the event log: one line per clarification change",
		Long: `Every change to a clarification appends one JSON line to
.agentx/state/events.jsonl: clarification-requested, -answered, -followed-up,
-stale, -resolved, -escalated, -abandoned, with the clarification id, issue,
agents, topic, blocking flag, round and time. Every change to an enhancement
proposal appends one too: proposal-created, -evidence, -approved, -rejected,
-implemented, with the proposal id, its issues (--issue N matches a proposal
naming N; --id takes a proposal id), its title and who acted.

What was refused or failed, with nothing changed, is logged too:
scope-refused (an agent asked someone its step's can_clarify does not list,
or a write outside its step's write scope was denied) and lock-timeout (a
write to an issue's ledger gave up waiting for its lock, naming the holder).

With a [remote], the changes other hosts made are logged too as a fetch brings
them, each once, marked "via": "remote" with the host that made it (in text,
[via remote, host NAME]); agentx remote log --issue N reads the issue's
shared chain of commits instead.

--since takes an RFC 3339 time or an age back from now (90m, 24h, 7d, 2w).
--follow keeps printing new events until interrupted. With --json each event
is printed as one JSON envelope per line (JSON Lines) when following, or as
one envelope holding the list otherwise.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "only this issue")
	cmd.Flags().StringVar(&o.since, "since", "", "only events at or after this time (RFC 3339, or an age such as 2h or 7d)")
	cmd.Flags().StringVar(&o.id, "id", "", "only this clarification")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing new events")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *eventsOptions) run(ctx context.Context, a *App) error {
	n, err := o.issue.get(a)
	if err != nil {
		return err
	}
	f := router.EventFilter{Issue: n, ID: o.id}
	if o.since != "" {
		if f.Since, err = parseSince(o.since, a.now()); err != nil {
			return err
		}
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	if o.follow {
		return followEvents(ctx, a, h.Events, f)
	}
	skipped, err := streamEvents(a, h.Events, f)
	if skipped > 0 {
		a.warnf("skipped %s in %s", words.Count(skipped, "malformed line", "malformed lines"), h.Events.Path)
	}
	return err
}

// followEvents prints the events that match f as they are appended, until
// interrupted: a line each, or under --json one envelope a line.
func followEvents(ctx context.Context, a *App, log router.EventLog, f router.EventFilter) error {
	err := log.Follow(ctx, f, 100*time.Millisecond, func(e router.Event) error {
		if a.json {
			b, err := json.Marshal(envelope{SchemaVersion: schemaVersion, Data: e})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "%s\n", b)
			return err
		}
		printEvent(a.stdout, e)
		return nil
	})
	if err == nil {
		err = ctx.Err() // stopped by a signal: exit 130 like any interrupted command
	}
	return err
}

// streamEvents prints the events that match f as the log is read, in
// constant memory however long the log is: a line each, or under --json one
// envelope whose data array is written an event at a time.
func streamEvents(a *App, log router.EventLog, f router.EventFilter) (skipped int, err error) {
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	if !a.json {
		skipped, err = log.Each(f, func(e router.Event) error {
			printEvent(w, e)
			return nil
		})
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return skipped, err
	}
	// The same bytes json.MarshalIndent gives the envelope of every other
	// command, written as the log is read.
	fmt.Fprintf(w, "{\n  \"schema_version\": %d,\n  \"data\": [", schemaVersion)
	n := 0
	skipped, err = log.Each(f, func(e router.Event) error {
		b, err := e.MarshalIndent("    ")
		if err != nil {
			return err
		}
		if n > 0 {
			w.WriteString(",")
		}
		n++
		w.WriteString("\n    ")
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return skipped, err
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]")
	if m := a.sideView(); m != nil {
		b, err := json.MarshalIndent(m, "  ", "  ")
		if err != nil {
			return skipped, err
		}
		w.WriteString(",\n  \"monitor\": ")
		w.Write(b)
	}
	w.WriteString("\n")
	w.WriteString("}\n")
	return skipped, w.Flush()
}

// printEvent prints one event on one line. The log is a file anyone can
// append to: every field is neutralised (the line as a whole).
func printEvent(w io.Writer, e router.Event) {
	if e.ProposalID != "" {
		line := fmt.Sprintf("%s  %-34s %s %s by %s: %s", stamp(e.Timestamp), e.Type, e.ProposalID, issuesOrNone(e.Issues), e.By, e.Topic)
		if e.Reason != "" {
			line += "  (" + e.Reason + ")"
		}
		fmt.Fprintf(w, "%s\n", safetext.Line(line))
		return
	}
	line := fmt.Sprintf("%s  %-34s %s %s %s -> %s round %d", stamp(e.Timestamp), e.Type, e.ClarificationID, words.IssueRef(e.IssueNumber), e.FromAgent, e.ToAgent, e.Round)
	switch {
	case e.Type == router.EventScopeRefused && e.ToAgent == "":
		line = fmt.Sprintf("%s  %-34s #%d %s writes %s", stamp(e.Timestamp), e.Type, e.IssueNumber, e.FromAgent, e.Topic)
	case e.Type == router.EventScopeRefused:
		line = fmt.Sprintf("%s  %-34s #%d %s -> %s: %s", stamp(e.Timestamp), e.Type, e.IssueNumber, e.FromAgent, e.ToAgent, e.Topic)
	case e.Type == router.EventLockTimeout && e.ClarificationID == "":
		line = fmt.Sprintf("%s  %-34s #%d %s -> %s: %s", stamp(e.Timestamp), e.Type, e.IssueNumber, e.FromAgent, e.ToAgent, e.Topic)
	}
	if e.Reason != "" {
		line += "  (" + e.Reason + ")"
	}
	if e.Via != "" {
		line += "  [via " + e.Via
		if e.Host != "" {
			line += ", host " + e.Host
		}
		line += "]"
	}
	fmt.Fprintf(w, "%s\n", safetext.Line(line))
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
		return time.Time{}, &usageError{Err: fmt.Errorf("--since %q: give an RFC 3339 time or an age such as 90m, 24h or 7d", s)}
	}
	return t, nil
}

// ageRE splits an age into weeks, days and the rest (a Go duration).
var ageRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:(\d+)w)?(?:(\d+)d)?(.*)$`) })

// parseAge reads a non-negative age: [Nw][Nd][Go duration], at least one part.
func parseAge(s string) (time.Duration, bool) {
	m := ageRE().FindStringSubmatch(s)
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
