package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// gitRemote returns the workspace's remote, or nil in one-machine mode.
func gitRemote(ws *workspace.Workspace) *remote.Git {
	g, _ := remote.Of(ws.Store).Transport().(*remote.Git)
	return g
}

// setOffline keeps the workspace's store off the remote (--offline): reads
// are the local copy, writes go to the outbox.
func (a *App) setOffline(ws *workspace.Workspace) {
	remote.Of(ws.Store).SetOffline(a.offline)
}

// envHost names this host in the commits it makes (default: the
// machine's host name), for hosts that share one (containers).
const envHost = "AGENTX_HOST"

// nameHost applies AGENTX_HOST to the workspace's remote.
func (a *App) nameHost(ws *workspace.Workspace) {
	g := gitRemote(ws)
	v := a.getenv(envHost)
	if g == nil || v == "" {
		return
	}
	if !remote.PlainHost(v) {
		a.warnf("%s=%q is not a plain host name (letters, digits, '.', '-', '_', at most 64): the machine's host name is used", envHost, v)
		return
	}
	g.Host = v
}

// remoteSide brings the local copies up to the remote once per command, at
// most once per [remote] interval across commands (ready, hooks, the
// monitor, clarify). An unreachable remote is a warning: the local copy
// stands.
func (a *App) remoteSide(ctx context.Context, ws *workspace.Workspace) {
	g := gitRemote(ws)
	rep := remote.Of(ws.Store)
	if g == nil || rep.Offline() {
		return
	}
	r, err := remote.Refresh(ctx, rep, g, false)
	if err != nil {
		a.warnf("remote: %v", err)
		return
	}
	a.fetchedAt = r.AsOf
	if r.Offline != "" {
		a.warnf("remote: %s: reading the local copy", r.Offline)
	}
	for _, p := range r.Problems {
		a.warnf("remote: %s", p)
	}
	a.warnSkew(ws)
}

// warnSkew says, in one line, that this host's clock and another's
// disagree (remote.Skews): the monitor here takes no time-based action on
// other hosts' questions meanwhile.
func (a *App) warnSkew(ws *workspace.Workspace) {
	skews, err := remote.Skews(ws.Store)
	if err != nil || len(skews) == 0 {
		return // an unreadable record of the clocks: the monitor holds, agentx doctor says why
	}
	more := ""
	if n := len(skews) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d other %s)", n, words.Plural(n, "host", "hosts"))
	}
	effect := "no stale, retry or escalation of other hosts' questions on this host until they agree"
	if !slices.ContainsFunc(skews, remote.Skew.Holds) {
		effect = "commits dated in this host's future hold nothing back: other hosts' questions are still judged here"
	}
	a.warnf("remote: clocks disagree: %s%s, more than [remote] max_skew: %s (agentx doctor; docs/remote.md, clocks)", skews[0], more, effect)
}

// newMonitor is monitor.New(h) that, in remote mode, judges other hosts'
// questions by what this host knows of the clocks (remote.Judge).
func newMonitor(h *router.Hub) *monitor.Monitor {
	m := monitor.New(h)
	if j := remote.NewJudge(h.Store); j != nil {
		m.Config.Judge = j.At
	}
	return m
}

// logPulled appends to the event log, marked as pulled from the remote,
// the changes other hosts made that a fetch brings, so that the inbox
// delivers an answer given elsewhere and agentx events shows it. The
// GitHub and Slack modes skip them: the host that made a change mirrors it.
func (a *App) logPulled(ws *workspace.Workspace) {
	rep := remote.Of(ws.Store)
	if rep == nil {
		return
	}
	log := router.EventLog{Path: filepath.Join(ws.Store.Dir(), router.EventsFile)}
	appendAll := func(events []router.Event) {
		for _, e := range events {
			if err := log.Append(e); err != nil {
				a.warnf("%v", err)
				return
			}
		}
	}
	rep.OnRefused(func(issue int, he *remote.HistoryError) {
		e := router.EventFor(router.EventRemoteRefused, issue, nil, ws.Store.Now())
		e.Topic, e.Reason, e.By, e.Host = he.Ref, he.Error(), router.HubAgent, he.Host
		appendAll([]router.Event{e})
	})
	rep.OnSkew(func(s remote.Skew) {
		e := router.EventFor(router.EventClockSkew, s.Issue, nil, ws.Store.Now())
		e.Topic, e.Reason, e.By, e.Host = "clock", s.String(), router.HubAgent, s.Host
		appendAll([]router.Event{e})
	})
	rep.OnPulled(func(issue int, changes []remote.Pulled) {
		a.pulled.Store(true)
		appendAll(router.PulledEvents(issue, changes, ws.Store.Now()))
	})
	rep.OnOutcomes(func(issue int, outs []remote.Outcome, l *ledger.Ledger) {
		appendAll(router.OvertakenEvents(issue, outs, l, ws.Store.Now()))
	})
}

// gateIssue makes the gate on one issue (ready --issue N) current, whatever
// the interval: one ls-remote of the issue's ref, a fetch if it moved. It
// fails closed: a shared ledger that exists but cannot be read (corrupt,
// too large, a tree that is not the ledger alone) or that this host
// refuses (moved back, deleted, rewritten) is the gate's error, exit 7,
// never READY from an older copy.
func (a *App) gateIssue(ctx context.Context, h *router.Hub, issue *int) error {
	rep := remote.Of(h.Store)
	g, _ := rep.Transport().(*remote.Git)
	if g == nil || issue == nil || rep.Offline() {
		return nil
	}
	_, err := remote.Watch(ctx, rep, g, *issue)
	var ce *ledger.CorruptError
	var he *remote.HistoryError
	switch {
	case errors.As(err, &he):
		return err
	case errors.As(err, &ce):
		return &gateUnreadable{err: err, ref: g.Name(*issue), issue: *issue}
	case err != nil:
		a.warnf("remote: %v", err)
	}
	return nil
}

// gateUnreadable is the shared ledger of the issue a gate is on that
// exists but cannot be read: not READY, exit 7.
type gateUnreadable struct {
	err   error
	ref   string
	issue int
}

func (e *gateUnreadable) Error() string {
	return fmt.Sprintf("%s is not ready: its shared ledger cannot be read: %v", words.Issue(e.issue), e.err)
}
func (e *gateUnreadable) Unwrap() error { return e.err }

// Hint says how to repair it with git.
func (e *gateUnreadable) Hint() string {
	ref := e.ref[strings.LastIndex(e.ref, " ")+1:]
	return fmt.Sprintf("git log --stat %s shows its commits; a host whose copy is right puts it back with agentx sync --republish, or with git: git push --force-with-lease=%s:<the bad commit> <remote> <a good commit>:%s", ref, ref, ref)
}

// named is what every command that names a clarification by id does
// first, in remote mode. A read (show, wait) brings that issue's local
// copy up to the remote (gateIssue: one ls-remote, a fetch only if the ref
// moved), so an answer given on another host is seen at once and an id
// made elsewhere is found. A change (answer, follow-up, resolve, ...)
// fetches the issue under its lock anyway and runs on the shared ledger,
// so that a change another host made first is told as superseded, with
// what it did; it looks ahead only for an id the local copy lacks (made
// elsewhere), which what it reads first (the asked agent, as --from's
// default) needs. The hub then refuses an id this host printed while
// offline for a question since delivered under another id
// (remote.RenumberedError, exit 6: router's Hub.named).
func (a *App) named(ctx context.Context, h *router.Hub, id string, change bool) error {
	issue, _, err := ledger.ParseID(id)
	if err != nil {
		return nil // the command reports a malformed id
	}
	if _, err := h.Store.Get(id); !change || errors.Is(err, ledger.ErrNotFound) {
		a.gateIssue(ctx, h, &issue)
	}
	return nil
}

// unsynced lists the changes this command kept in the outbox.
func (a *App) unsynced() []string {
	if a.ws == nil {
		return nil
	}
	if rep := remote.Of(a.ws.Store); rep != nil {
		return rep.Unsynced()
	}
	return nil
}

// localCopy is what went wrong after a change of this command stood
// (published, or durable in the outbox): the local copy it could not update.
func (a *App) localCopy() []string {
	if a.ws == nil {
		return nil
	}
	if rep := remote.Of(a.ws.Store); rep != nil {
		return rep.Notes()
	}
	return nil
}

// overtaken is, in the envelope, one queued change this command
// delivered otherwise than it was made.
type overtaken struct {
	Outcome string      `json:"outcome"`      // renumbered or superseded
	ID      string      `json:"id"`           // the clarification it was made to
	As      string      `json:"as,omitempty"` // renumbered: the id it was delivered under
	Message string      `json:"message"`      // the change, as its commit names it
	By      string      `json:"by,omitempty"` // who made it
	At      ledger.Time `json:"at"`           // when it was delivered
}

// overtaken lists the queued changes this command delivered otherwise
// than they were made: each was acknowledged earlier (unsynced) and is
// told here, in the event log and in its author's inbox.
func (a *App) overtaken() []overtaken {
	if a.ws == nil {
		return nil
	}
	var out []overtaken
	for _, o := range remote.Of(a.ws.Store).Overtaken() {
		out = append(out, overtaken{Outcome: o.Outcome, ID: o.ID, As: o.As, Message: o.Message, By: o.By, At: o.At})
	}
	return out
}

// asOf is when the shared ledgers a workspace-wide read used were
// fetched, if that was earlier than this command (nil otherwise).
func (a *App) asOf() *ledger.Time {
	if !a.wide || a.fetchedAt.IsZero() {
		return nil
	}
	t := ledger.T(a.fetchedAt)
	return &t
}

// noteUnsynced says, in text mode on stderr, which changes this command
// kept in the outbox, what went wrong after a change stood, what became
// of queued changes it delivered otherwise than made, and how old the
// shared ledgers a workspace-wide read used are (under --json the
// envelope's unsynced, local_copy, overtaken and remote_as_of members do).
func (a *App) noteUnsynced() {
	if a.json {
		return
	}
	for _, n := range a.localCopy() {
		a.warnf("%s", n)
	}
	for _, o := range a.overtaken() {
		if o.Outcome == remote.OutcomeRenumbered {
			fmt.Fprintf(a.stderr, "agentx: renumbered: %s (made while the remote was out of reach) was delivered as %s: another host had taken %s; %s on this host is refused from now on\n",
				safetext.Line(o.Message), safetext.Line(o.As), safetext.Line(o.ID), safetext.Line(o.ID))
			continue
		}
		fmt.Fprintf(a.stderr, "agentx: superseded: %s (made while the remote was out of reach, by %s) was not delivered: another host changed %s first; agentx clarify show %s reads what it did\n",
			safetext.Line(o.Message), safetext.Line(cmp.Or(o.By, "someone")), safetext.Line(o.ID), safetext.Line(o.ID))
	}
	if at := a.asOf(); at != nil {
		fmt.Fprintf(a.stderr, "agentx: remote: as of %s ago (fetched at most once per [remote] interval; agentx sync fetches now)\n", todo.Ago(time.Since(at.Time)))
	}
	for _, m := range a.unsynced() {
		fmt.Fprintf(a.stderr, "agentx: unsynced: %s (kept in the outbox: the remote could not be reached; agentx sync delivers it)\n", safetext.Line(m))
	}
}

// supersededData is, under --json, the error document's data of a
// superseded change: the clarification as the other host left it.
func supersededData(err error) any {
	var re *remote.RenumberedError
	if errors.As(err, &re) {
		if re.Now == nil {
			return nil
		}
		return router.Record{IssueNumber: re.Issue, Clarification: re.Now}
	}
	var se *remote.SupersededError
	if !errors.As(err, &se) || len(se.Changed) == 0 {
		return nil
	}
	c := se.Current(se.Changed[0])
	if c == nil {
		return nil
	}
	return router.Record{IssueNumber: se.Issue, Clarification: c}
}

// remoteWait is h.Wait that, with a remote, polls the clarification's ref
// (ls-remote, a fetch only when it moved) with backoff from 1 s to the
// [remote] interval, so that an answer made on another host reaches the
// waiting asker.
func (a *App) remoteWait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	rep := remote.Of(h.Store)
	g, _ := rep.Transport().(*remote.Git)
	if g == nil || rep.Offline() {
		return h.Wait(ctx, id, timeout)
	}
	issue, _, err := ledger.ParseID(id)
	if err != nil {
		return router.Record{}, err
	}
	start := time.Now()
	step := time.Second
	for {
		if _, err := remote.Watch(ctx, rep, g, issue); err != nil {
			a.warnf("remote: %v", err)
		}
		left := timeout - time.Since(start)
		rec, err := h.Wait(ctx, id, max(min(step, left), 0))
		var te *router.WaitTimeoutError
		if !errors.As(err, &te) || time.Since(start) >= timeout {
			if te != nil {
				te.Waited = time.Since(start)
			}
			return rec, err
		}
		step = min(step*2, max(g.Interval, time.Second))
	}
}

// remoteView is what agentx remote enable and agentx sync print.
type remoteView struct {
	Enabled bool           `json:"enabled"` // [remote] is configured
	Remote  string         `json:"remote,omitempty"`
	Refs    string         `json:"refs,omitempty"`
	Offline string         `json:"offline,omitempty"` // why the remote could not be reached
	Updated []int          `json:"updated"`           // issues whose local copy changed
	Sent    []int          `json:"delivered"`         // issues whose outbox was delivered
	Pending []pendingIssue `json:"pending"`           // what the outbox still holds
	// Republished is what sync --republish put back.
	Republished []remote.Republished `json:"republished,omitempty"`
}

// pendingIssue is one issue's outbox and what became of changes delivered
// otherwise than made.
type pendingIssue struct {
	Issue    int              `json:"issue"`
	Changes  []pendingChange  `json:"changes"`
	Outcomes []remote.Outcome `json:"outcomes,omitempty"`
}

type pendingChange struct {
	Message string      `json:"message"`
	At      ledger.Time `json:"at"`
	Why     string      `json:"why,omitempty"`
}

// outbox reads what the outbox holds, and the outcomes recorded per issue
// (every issue with a sync state; no call to the remote).
func outbox(store *ledger.Store) ([]pendingIssue, error) {
	issues, err := store.IssuesWithFile(remote.SyncDir)
	if err != nil {
		return nil, err
	}
	out := []pendingIssue{}
	for _, n := range issues {
		st, err := remote.ReadSync(store, n)
		if err != nil {
			return nil, err
		}
		if len(st.Pending) == 0 && len(st.Outcomes) == 0 {
			continue
		}
		p := pendingIssue{Issue: n, Changes: []pendingChange{}, Outcomes: st.Outcomes}
		for _, q := range st.Pending {
			p.Changes = append(p.Changes, pendingChange{Message: q.Message, At: q.At, Why: q.Why})
		}
		out = append(out, p)
	}
	return out, nil
}

func newSyncCmd(a *App) *cobra.Command {
	var status, republish bool
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "With a [remote]: fetch every issue's ref, deliver the outbox; --status shows what is pending",
		Long: `With a [remote] table in .agentx/config.toml, every change is published on the
remote as it is made; a change made while the remote could not be reached is
kept in the outbox (reported "unsynced") and delivered by the next command
that reaches it, or by agentx sync. sync fetches every issue's ref now
(regardless of the interval), makes it the local copy and delivers the
outbox. --status makes no call to the remote: it lists what the outbox holds,
and what became of queued changes another host had overtaken (renumbered,
superseded). --republish puts this host's chain back on every issue's ref
this host refuses (moved back by a restored backup or a force push, deleted
by git push --mirror, or given a commit that does not only append): what the
other chain added since is kept, renumbered if need be, and the push leases
the ref at what was found. See docs/remote.md.`,
		Example: `  agentx sync
  agentx sync --status --json
  agentx sync --republish`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			// The hub (without the refresh: sync fetches below, forced) lets
			// the lifecycle's last step wake an agent with an answer pulled.
			ws, _, err := a.openHub(false)
			if err != nil {
				return err
			}
			v := remoteView{Updated: []int{}, Sent: []int{}}
			g := gitRemote(ws)
			if g != nil {
				v.Enabled, v.Remote, v.Refs = true, g.Remote, g.Refs
				if !status {
					rep := remote.Of(ws.Store)
					r, err := remote.Refresh(ctx, rep, g, true)
					if err != nil {
						return err
					}
					v.Offline, v.Updated, v.Sent = r.Offline, r.Updated, r.Delivered
					if rep.Offline() {
						v.Offline = "--offline"
					}
					for _, p := range r.Problems {
						a.warnf("remote: %s", p)
					}
					if republish && v.Offline == "" {
						if v.Republished, err = republishAll(ctx, ws.Store); err != nil {
							return err
						}
					}
				}
			}
			if v.Pending, err = outbox(ws.Store); err != nil {
				return err
			}
			if err := a.emit(v, func() { a.remoteText(v, status) }); err != nil {
				return err
			}
			if !status && v.Offline != "" {
				return &codedError{Code: ExitFailure, Msg: "remote " + v.Remote + ": " + v.Offline + ": the outbox is kept", Quiet: !a.json,
					Todo: "agentx sync again once the remote can be reached"}
			}
			if !status && g != nil {
				// A ref this host refuses (moved back, deleted, rewritten)
				// and did not put back is sync's failure: exit 7.
				he, err := refused(ws.Store)
				if err != nil {
					return err
				}
				if he != nil {
					return he
				}
			}
			// Delivering is sync's work: a queued change another host
			// overtook is its failure (the stderr lines say which).
			for _, o := range a.overtaken() {
				if o.Outcome == remote.OutcomeSuperseded {
					return &codedError{Code: ExitSuperseded, Msg: fmt.Sprintf("%s was not delivered: another host changed %s first", o.Message, o.ID), Quiet: !a.json,
						Todo: fmt.Sprintf("agentx clarify show %s reads what the other host did", o.ID)}
				}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&status, "status", false, "show what the outbox holds, with no call to the remote")
	cmd.Flags().BoolVar(&republish, "republish", false, "put this host's chain back on the refs it refuses (moved back, deleted, rewritten)")
	cmd.MarkFlagsMutuallyExclusive("status", "republish")
	return cmd
}

// refused returns the first refusal an issue's sync state records (nil:
// none): a shared version this host does not adopt.
func refused(store *ledger.Store) (*remote.HistoryError, error) {
	_, first, err := refusedIssues(store)
	return first, err
}

// refusedIssues lists the issues whose sync state records a refusal,
// with the first of them.
func refusedIssues(store *ledger.Store) ([]int, *remote.HistoryError, error) {
	issues, err := store.IssuesWithFile(remote.SyncDir)
	if err != nil {
		return nil, nil, err
	}
	var out []int
	var first *remote.HistoryError
	for _, n := range issues {
		st, err := remote.ReadSync(store, n)
		if err != nil {
			return nil, nil, err
		}
		if st.Refused != nil {
			out = append(out, n)
			if first == nil {
				first = &st.Refused.HistoryError
			}
		}
	}
	return out, first, nil
}

// republishAll runs remote.Republish on every issue whose sync state
// records a refusal.
func republishAll(ctx context.Context, store *ledger.Store) ([]remote.Republished, error) {
	issues, _, err := refusedIssues(store)
	if err != nil {
		return nil, err
	}
	out := []remote.Republished{}
	for _, n := range issues {
		r, err := remote.Of(store).Republish(ctx, n)
		if errors.Is(err, remote.ErrNothingRefused) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("issue %d: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// remoteText prints a remoteView.
func (a *App) remoteText(v remoteView, status bool) {
	if !v.Enabled {
		a.printf("no [remote] in .agentx/config.toml: the ledgers are this machine's alone (agentx remote enable origin shares them)\n")
		return
	}
	for _, r := range v.Republished {
		was := r.Was
		if was == "" {
			was = "a deleted ref"
		}
		a.printf("%s: republished %s over %s\n", words.IssueRef(r.Issue), r.Head, was)
		for _, n := range r.Renumbered {
			a.printf("  kept from the other chain: %s\n", safetext.Line(n))
		}
		for _, id := range r.Superseded {
			a.printf("  superseded on the other chain: %s (this host's copy had moved on)\n", safetext.Line(id))
		}
	}
	if !status {
		switch {
		case v.Offline != "":
			a.printf("remote %s: not reached (%s)\n", safetext.Line(v.Remote), safetext.Line(v.Offline))
		default:
			a.printf("remote %s: %s updated, %s delivered\n", safetext.Line(v.Remote), words.Count(len(v.Updated), "issue", "issues"), words.Count(len(v.Sent), "outbox", "outboxes"))
		}
	}
	n := 0
	for _, p := range v.Pending {
		n += len(p.Changes)
	}
	if n == 0 {
		a.printf("outbox: empty\n")
	} else {
		a.printf("outbox: %s unsynced\n", words.Count(n, "change", "changes"))
	}
	for _, p := range v.Pending {
		for _, c := range p.Changes {
			a.printf("  %s  %s  %s  (%s)\n", words.IssueRef(p.Issue), c.At.UTC().Format(time.RFC3339), safetext.Line(c.Message), safetext.Line(c.Why))
		}
	}
	for _, p := range v.Pending {
		for _, o := range p.Outcomes {
			switch o.Outcome {
			case remote.OutcomeRenumbered:
				a.printf("  %s  %s: delivered as %s (another host had taken %s): %s\n", words.IssueRef(p.Issue), safetext.Line(o.ID), safetext.Line(o.As), safetext.Line(o.ID), safetext.Line(o.Message))
			default:
				a.printf("  %s  %s: superseded (another host changed it first): %s\n", words.IssueRef(p.Issue), safetext.Line(o.ID), safetext.Line(o.Message))
			}
		}
	}
}

func newRemoteCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remote",
		Short: "Share the ledgers with other machines through git refs on the repository's remote",
		Long: `agentx remote enable NAME adds [remote] git = "NAME" to .agentx/config.toml,
checks that the remote answers, fetches every issue's ref and publishes the
ledgers this machine holds that the remote has not. From then on each issue's
ledger is the commit chain of refs/agentx/clarifications/issue-N on that
remote, and every write is published there. See docs/remote.md.`,
	}
	cmd.AddCommand(newRemoteEnableCmd(a))
	cmd.AddCommand(newRemoteLogCmd(a))
	return cmd
}

func newRemoteEnableCmd(a *App) *cobra.Command {
	var branch string
	cmd := &cobra.Command{
		Use:     "enable NAME",
		Short:   "Share this workspace's ledgers on git remote NAME (checks it, fetches, publishes)",
		Example: `  agentx remote enable origin`,
		Args:    cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			name := args[0]
			if !workflow.ValidGitRemote(name) {
				return &usageError{Err: fmt.Errorf("%q is not a git remote: give a remote's name (git remote -v) or a URL", safetext.Line(name))}
			}
			ws, err := a.open()
			if err != nil {
				return err
			}
			if cur := ws.Rules.Config.Remote; cur != nil && (cur.Git != name || cur.Branch != branch) {
				return &codedError{Code: ExitUsage, Msg: fmt.Sprintf("%s already has [remote] git = %q: edit it there to change it", ws.Rules.Config.File, cur.Git)}
			}
			cfg := &workflow.RemoteConfig{Git: name, Branch: branch, Interval: workflow.Duration{Duration: workflow.DefaultRemoteInterval},
				Timeout: workflow.Duration{Duration: workflow.DefaultRemoteTimeout}, Attempts: workflow.DefaultRemoteAttempts}
			g := remote.New(ws.Root, cfg)
			if _, err := g.Check(ctx); err != nil {
				return err
			}
			if ws.Rules.Config.Remote == nil {
				if err := appendRemote(ws, name, branch); err != nil {
					return err
				}
				a.ws = nil
				if ws, err = a.open(); err != nil {
					return err
				}
				if g = gitRemote(ws); g == nil {
					return errors.New("the [remote] table did not take")
				}
			}
			rep := remote.Of(ws.Store)
			r, err := remote.Refresh(ctx, rep, g, true)
			if err != nil {
				return err
			}
			v := remoteView{Enabled: true, Remote: g.Remote, Refs: g.Refs, Offline: r.Offline, Updated: r.Updated, Sent: []int{}}
			// Publish the ledgers the remote does not hold.
			heads, err := g.Local(ctx)
			if err != nil {
				return err
			}
			issues, err := ws.Store.Issues()
			if err != nil {
				return err
			}
			for _, n := range issues {
				if heads[n] != "" {
					continue
				}
				reached, err := rep.Sync(ctx, n, nil)
				if err != nil {
					return err
				}
				if reached {
					v.Sent = append(v.Sent, n)
				}
			}
			if v.Pending, err = outbox(ws.Store); err != nil {
				return err
			}
			return a.emit(v, func() {
				a.printf("remote %s: the ledgers are shared under %s (%s fetched, %d published)\n", safetext.Line(g.Remote), g.Refs, words.Count(len(v.Updated), "issue", "issues"), len(v.Sent))
			})
		}),
	}
	cmd.Flags().StringVar(&branch, "branch", "", "keep the ledgers on branches BRANCH/issue-N instead of custom refs (for hosts that refuse refs outside refs/heads)")
	return cmd
}

// appendRemote adds the [remote] table to config.toml (creating it if
// need be), then checks the result loads.
func appendRemote(ws *workspace.Workspace, name, branch string) error {
	path := filepath.Join(ws.Dir, "config.toml")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var b strings.Builder
	b.Write(data)
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n# The ledgers are shared through git refs on this remote (docs/remote.md).\n[remote]\ngit = %q\n", name)
	if branch != "" {
		fmt.Fprintf(&b, "branch = %q\n", branch)
	}
	if _, err := workflow.ParseConfig(path, []byte(b.String())); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(b.String()), 0o644)
}
