package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
)

// gitRemote returns the workspace's remote, or nil in one-machine mode.
func gitRemote(ws *workspace.Workspace) *remote.Git {
	g, _ := remote.Of(ws.Store).Transport().(*remote.Git)
	return g
}

// setOffline keeps the workspace's store off the remote (--offline): reads
// are the local copy, writes go to the outbox.
func setOffline(ws *workspace.Workspace, offline bool) {
	remote.Of(ws.Store).SetOffline(offline)
}

// warnFunc prints a warning (App.warnf).
type warnFunc func(format string, args ...any)

// envHost names this host in the commits it makes (default: the
// machine's host name), for hosts that share one (containers).
const envHost = "AGENTX_HOST"

// nameHost applies AGENTX_HOST (v) to the workspace's remote.
func nameHost(ws *workspace.Workspace, v string, warnf warnFunc) {
	g := gitRemote(ws)
	if g == nil || v == "" {
		return
	}
	if !remote.PlainHost(v) {
		warnf("%s=%q is not a plain host name (letters, digits, '.', '-', '_', at most 64): the machine's host name is used", envHost, v)
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
	warnSkew(ws, a.warnf)
}

// warnSkew says, in one line, that this host's clock and another's
// disagree (remote.Skews): the monitor here takes no time-based action on
// other hosts' questions meanwhile.
func warnSkew(ws *workspace.Workspace, warnf warnFunc) {
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
	warnf("remote: clocks disagree: %s%s, more than [remote] max_skew: %s (agentx doctor; docs/remote.md, clocks)", skews[0], more, effect)
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
func logPulled(ws *workspace.Workspace, pulled *atomic.Bool, warnf warnFunc) {
	rep := remote.Of(ws.Store)
	if rep == nil {
		return
	}
	log := router.EventLog{Path: filepath.Join(ws.Store.Dir(), router.EventsFile)}
	appendAll := func(events []router.Event) {
		for _, e := range events {
			if err := log.Append(e); err != nil {
				warnf("%v", err)
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
		pulled.Store(true)
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
func (op *opened) unsynced() []string {
	if op.ws == nil {
		return nil
	}
	if rep := remote.Of(op.ws.Store); rep != nil {
		return rep.Unsynced()
	}
	return nil
}

// localCopy is what went wrong after a change of this command stood
// (published, or durable in the outbox): the local copy it could not update.
func (op *opened) localCopy() []string {
	if op.ws == nil {
		return nil
	}
	if rep := remote.Of(op.ws.Store); rep != nil {
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
func (op *opened) overtaken() []overtaken {
	if op.ws == nil {
		return nil
	}
	var out []overtaken
	for _, o := range remote.Of(op.ws.Store).Overtaken() {
		out = append(out, overtaken{Outcome: o.Outcome, ID: o.ID, As: o.As, Message: o.Message, By: o.By, At: o.At})
	}
	return out
}

// asOf is when the shared ledgers a workspace-wide read used were
// fetched, if that was earlier than this command (nil otherwise).
func (op *opened) asOf() *ledger.Time {
	if !op.wide || op.fetchedAt.IsZero() {
		return nil
	}
	t := ledger.T(op.fetchedAt)
	return &t
}

// noteUnsynced says, in text mode on stderr, which changes this command
// kept in the outbox, what went wrong after a change stood, what became
// of queued changes it delivered otherwise than made, and how old the
// shared ledgers a workspace-wide read used are (under --json the
// envelope's unsynced, local_copy, overtaken and remote_as_of members do).
func (op *opened) noteUnsynced(stderr io.Writer, warnf warnFunc) {
	for _, n := range op.localCopy() {
		warnf("%s", n)
	}
	for _, o := range op.overtaken() {
		if o.Outcome == remote.OutcomeRenumbered {
			fmt.Fprintf(stderr, "agentx: renumbered: %s (made while the remote was out of reach) was delivered as %s: another host had taken %s; %s on this host is refused from now on\n",
				safetext.Line(o.Message), safetext.Line(o.As), safetext.Line(o.ID), safetext.Line(o.ID))
			continue
		}
		fmt.Fprintf(stderr, "agentx: superseded: %s (made while the remote was out of reach, by %s) was not delivered: another host changed %s first; agentx clarify show %s reads what it did\n",
			safetext.Line(o.Message), safetext.Line(cmp.Or(o.By, "someone")), safetext.Line(o.ID), safetext.Line(o.ID))
	}
	if at := op.asOf(); at != nil {
		fmt.Fprintf(stderr, "agentx: remote: as of %s ago (fetched at most once per [remote] interval; agentx sync fetches now)\n", todo.Ago(time.Since(at.Time)))
	}
	for _, m := range op.unsynced() {
		fmt.Fprintf(stderr, "agentx: unsynced: %s (kept in the outbox: the remote could not be reached; agentx sync delivers it)\n", safetext.Line(m))
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
