package wake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// Dir is the wake state's directory, relative to the state directory.
const Dir = "wake"

// StateFile is agent's wake state, relative to the state directory.
func StateFile(agent string) string { return path.Join(Dir, agent+".json") }

// LogFile is where the output of agent's resume commands goes.
func LogFile(agent string) string { return path.Join(Dir, agent+".log") }

// Kinds are the inbox items that wake an agent: what came back to its own
// questions. A question waiting for it to answer waits for its next turn.
var Kinds = []inbox.Kind{inbox.KindAnswer, inbox.KindResolved, inbox.KindEscalated, inbox.KindAbandoned}

// anyIssue is the key of a session or hold not tied to one issue.
const anyIssue = "0"

// claimGrace is how long a claim whose process cannot be checked (another
// system) is left to the process that made it.
const claimGrace = 2 * time.Minute

// maxWoken bounds the claims kept per agent, the oldest dropped first.
const maxWoken = 500

// Session is where an agent can be reached: what its client's hook said.
type Session struct {
	ID         string `json:"id"`
	Cwd        string `json:"cwd,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	// Owner is the client's process that ran the hook (0: not known):
	// while it runs, the session is open, and an [agents.NAME] queue
	// command delivers to it instead of resume.
	Owner int         `json:"owner,omitempty"`
	At    ledger.Time `json:"at"`
	// Started is when this session was first seen: max_questions counts
	// the questions asked in it (router.AskRequest.Session).
	Started *ledger.Time `json:"started,omitempty"`
}

// Hold is a turn being held for an answer (agentx hook stop): while it
// lasts the hook delivers, and nothing is woken.
type Hold struct {
	PID   int         `json:"pid"`
	Until ledger.Time `json:"until"`
}

// Claim is one wake: the items it delivers, the text the resume command
// got, and how far it went. A claim whose process died before it started
// the command is taken over by the next agentx process.
type Claim struct {
	Issue   int         `json:"issue"`
	Keys    []string    `json:"keys"`
	IDs     []string    `json:"ids"`
	Text    string      `json:"text"`
	PID     int         `json:"pid"`
	At      ledger.Time `json:"at"`
	Started bool        `json:"started,omitempty"` // the resume command was started
	Marked  bool        `json:"marked,omitempty"`  // its items are marked delivered in the inbox
	Error   string      `json:"error,omitempty"`   // the command could not be started
}

// State is an agent's wake state, in state/wake/AGENT.json, under its lock.
type State struct {
	Sessions map[string]Session `json:"sessions,omitempty"` // by issue ("0": any)
	Holds    map[string]Hold    `json:"holds,omitempty"`    // by issue ("0": any)
	Waiters  map[string]Waiter  `json:"waiters,omitempty"`  // by session id
	Claims   []Claim            `json:"claims,omitempty"`   // oldest first
}

func issueKey(issue *int) string {
	if issue == nil {
		return anyIssue
	}
	return strconv.Itoa(*issue)
}

// RecordSession remembers where agent can be reached for issue (nil: any
// issue), as its client's hook said.
func RecordSession(ctx context.Context, store *ledger.Store, agent string, issue *int, s Session) error {
	if s.ID == "" {
		return nil
	}
	if err := ledger.ValidateAgent("agent", agent); err != nil {
		return err
	}
	if err := ValidSession(s.ID); err != nil {
		return err
	}
	var st State
	err := store.UpdateState(ctx, StateFile(agent), &st, func() error {
		if st.Sessions == nil {
			st.Sessions = map[string]Session{}
		}
		k := issueKey(issue)
		if old, ok := st.Sessions[k]; ok && old.ID == s.ID && old.Cwd == s.Cwd && old.Transcript == s.Transcript && old.Owner == s.Owner {
			return errUnchanged
		}
		s.At = ledger.T(store.Now())
		if old, ok := st.Sessions[k]; ok && old.ID == s.ID && old.Started != nil {
			s.Started = old.Started
		} else {
			s.Started = &s.At
		}
		st.Sessions[k] = s
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return err
}

// SessionStarted is when agent's session id was first seen on issue (nil:
// any), nil when that session was not recorded there.
func SessionStarted(store *ledger.Store, agent string, issue *int, id string) *time.Time {
	var st State
	if id == "" || store.ReadState(StateFile(agent), &st) != nil {
		return nil
	}
	s, ok := st.Sessions[issueKey(issue)]
	if !ok || s.ID != id || s.Started == nil {
		return nil
	}
	t := s.Started.Time
	return &t
}

// errUnchanged ends an update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// Holding records that this process holds agent's turn on issue until
// until; release ends it. Nothing is woken for the agent meanwhile: the
// holder delivers.
func Holding(ctx context.Context, store *ledger.Store, agent string, issue *int, until time.Time) (release func(), err error) {
	k := issueKey(issue)
	var st State
	err = store.UpdateState(ctx, StateFile(agent), &st, func() error {
		if st.Holds == nil {
			st.Holds = map[string]Hold{}
		}
		st.Holds[k] = Hold{PID: os.Getpid(), Until: ledger.T(until)}
		return nil
	})
	if err != nil {
		return func() {}, err
	}
	return releaser(ctx, store, agent, func(st *State) bool {
		if h, ok := st.Holds[k]; ok && h.PID == os.Getpid() {
			delete(st.Holds, k)
			return true
		}
		return false
	}), nil
}

// releaser is a release function: it removes, under agent's wake lock,
// what drop finds of this process's in the state (drop reports whether it
// removed anything), even once ctx has ended.
func releaser(ctx context.Context, store *ledger.Store, agent string, drop func(*State) bool) func() {
	return func() {
		var st State
		_ = store.UpdateState(context.WithoutCancel(ctx), StateFile(agent), &st, func() error {
			if !drop(&st) {
				return errUnchanged
			}
			return nil
		})
	}
}

// Waker wakes the agents that configure a resume command when what came
// back to their questions lands after their turn ended.
type Waker struct {
	Store  *ledger.Store
	Agents map[string]workflow.AgentConfig
	Root   string // the workspace root: where a resume runs without a session's cwd
	// Start runs a resume command detached (nil: Detach).
	Start func(argv []string, dir string, env []string, stdin, log string) error
	// Step, when set (and Start is not), is the argv of an agentx step the
	// resume command is started through: it records the claim started,
	// under the agent's wake lock, and then becomes the command
	// (StartClaimed), so a waker killed once it started it never leaves
	// the claim to be started again.
	Step []string
	// Warn reports a problem with one agent's wake; the others go on.
	Warn func(error)
	// Allow, when set, decides whether agent's resume command may run on
	// this machine (the workspace's commands are trusted). An agent it
	// refuses is not woken: nothing is claimed for it, and a claim made
	// before is left for when it may.
	Allow func(agent string) bool
}

// allowed reports whether agent's resume command may run.
func (w *Waker) allowed(agent string) bool { return w.Allow == nil || w.Allow(agent) }

// Woke is one resume command started.
type Woke struct {
	Agent string   `json:"agent"`
	Issue int      `json:"issue"`
	IDs   []string `json:"ids"`
	Argv  []string `json:"argv"`
}

// Run wakes, once each, the agents with something new to wake for, and
// finishes the wakes another process claimed and did not finish (it was
// killed). It costs nothing for a workspace where no agent has a resume
// command, and one stat of the event log per such agent when nothing new
// was appended since its last look.
func (w *Waker) Run(ctx context.Context) []Woke {
	var woke []Woke
	names := make([]string, 0, len(w.Agents))
	for name, a := range w.Agents {
		if len(a.Resume) > 0 || len(a.Queue) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, agent := range names {
		got, err := w.agent(ctx, agent)
		if err != nil && w.Warn != nil {
			w.Warn(fmt.Errorf("wake %s: %w", agent, err))
		}
		woke = append(woke, got...)
	}
	return woke
}

// agent wakes one agent: unfinished claims first, then what is new.
func (w *Waker) agent(ctx context.Context, agent string) ([]Woke, error) {
	var woke []Woke
	if err := w.finish(ctx, agent, &woke); err != nil {
		return woke, err
	}
	res, err := inbox.Check(ctx, w.Store, inbox.Options{Agent: agent, Peek: true, Kinds: Kinds, Limit: inbox.HookLimit})
	if err != nil || len(res.Items) == 0 || !w.allowed(agent) {
		return woke, err
	}
	byIssue := map[int][]inbox.Item{}
	var issues []int
	for _, it := range res.Items {
		if _, ok := byIssue[it.Issue]; !ok {
			issues = append(issues, it.Issue)
		}
		byIssue[it.Issue] = append(byIssue[it.Issue], it)
	}
	for _, n := range issues {
		c, ok, err := w.claim(ctx, agent, n, res, byIssue[n])
		if err != nil {
			return woke, err
		}
		if ok {
			if wk, err := w.run(ctx, agent, c); err != nil {
				return woke, err
			} else if wk != nil {
				woke = append(woke, *wk)
			}
		}
	}
	return woke, nil
}

// claim records, under the agent's wake lock, that this process wakes it
// for items on issue n: unless a hook holds its turn there, no session is
// known where the command needs one, or every item was claimed already.
func (w *Waker) claim(ctx context.Context, agent string, n int, res inbox.Result, items []inbox.Item) (Claim, bool, error) {
	var c Claim
	ok := false
	var st State
	err := w.Store.UpdateState(ctx, StateFile(agent), &st, func() error {
		now := w.Store.Now()
		if st.deliverer(n, now) {
			return errUnchanged // the hook that holds the turn, or the session's live waiter, delivers
		}
		// Only an agent whose hook ran on this machine is woken: its
		// session is in state/wake, which is never committed, so the
		// commands a cloned repository's config names are not run for
		// agents that never worked here. A template without {session}
		// (a fresh run in CI) still needs that hook to have run.
		s, known := sessionOf(st, n)
		if !known || w.template(agent, s) == nil {
			return errUnchanged // nowhere to deliver: no session here, or only a queue and its client is gone
		}
		claimed := map[string]bool{}
		for _, cl := range st.Claims {
			for _, key := range cl.Keys {
				claimed[key] = true
			}
		}
		// What a held hook or a live waiter delivered is marked in the inbox
		// before its hold or waiter record goes: looked at again under this
		// lock, an item it took is no longer there to claim.
		undelivered, err := stillNew(ctx, w.Store, agent, n)
		if err != nil {
			return err
		}
		var take []inbox.Item
		for _, it := range items {
			if k := ClaimKey(it); !claimed[k] && undelivered[k] {
				take = append(take, it)
			}
		}
		if len(take) == 0 {
			return errUnchanged
		}
		c = st.claim(n, agent, take, "", now)
		ok = true
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return c, ok, err
}

// stillNew is the claim keys of what waits to be delivered to agent on
// issue n now: a look that marks nothing and takes no lock.
func stillNew(ctx context.Context, store *ledger.Store, agent string, n int) (map[string]bool, error) {
	res, err := inbox.Check(ctx, store, inbox.Options{Agent: agent, Issue: &n, Peek: true, Kinds: Kinds})
	if err != nil {
		return nil, err
	}
	keys := make(map[string]bool, len(res.Items))
	for _, it := range res.Items {
		keys[ClaimKey(it)] = true
	}
	return keys, nil
}

// finish takes over the claims another process made and did not finish.
func (w *Waker) finish(ctx context.Context, agent string, woke *[]Woke) error {
	var st State
	if err := w.Store.ReadState(StateFile(agent), &st); err != nil {
		return err
	}
	now := w.Store.Now()
	for _, c := range st.Claims {
		if c.Started && c.Marked || c.Error != "" {
			continue
		}
		if c.PID == os.Getpid() || alive(c.PID) && now.Sub(c.At.Time) < claimGrace {
			continue // its process is on it
		}
		// take it over: the claim is re-made as this process's
		var mine Claim
		taken := false
		err := w.Store.UpdateState(ctx, StateFile(agent), &st, func() error {
			for i := range st.Claims {
				cl := &st.Claims[i]
				if slices.Equal(cl.Keys, c.Keys) && cl.PID == c.PID && !(cl.Started && cl.Marked) {
					cl.PID, cl.At = os.Getpid(), ledger.T(w.Store.Now())
					mine, taken = *cl, true
					return nil
				}
			}
			return errUnchanged
		})
		if err != nil && !errors.Is(err, errUnchanged) {
			return err
		}
		if taken {
			wk, err := w.run(ctx, agent, mine)
			if err != nil {
				return err
			}
			if wk != nil {
				*woke = append(*woke, *wk)
			}
		}
	}
	return nil
}

// run starts c's resume command (unless it was started) and marks its
// items delivered (unless they were), recording each step.
func (w *Waker) run(ctx context.Context, agent string, c Claim) (*Woke, error) {
	var wk *Woke
	if !c.Started && !w.allowed(agent) {
		return nil, nil // the claim waits for the command to be trusted
	}
	if !c.Started {
		st := w.sessionFor(agent, c.Issue)
		if st.ID != "" {
			if err := ValidSession(st.ID); err != nil {
				// the wake state was edited by hand (or by an agent's
				// Write tool): nothing it names goes into a command
				return nil, fmt.Errorf("%s: %w: not resumed", StateFile(agent), err)
			}
		}
		tmpl := w.template(agent, st)
		if tmpl == nil {
			return nil, nil // only a queue, and the session's client has gone: the claim waits
		}
		argv := Fill(tmpl, st.ID, c.Issue, first(c.IDs), agent, c.Text)
		argv[0] = w.program(argv[0])
		dir := w.dir(st.Cwd)
		env := append(os.Environ(), "AGENTX_AGENT="+agent, "AGENTX_ISSUE="+strconv.Itoa(c.Issue))
		start, cmd, stepped := w.Start, argv, false
		if start == nil {
			start = Detach
			if len(w.Step) > 0 {
				// the step records the claim started, then becomes argv
				cmd = append(append(slices.Clone(w.Step), agent, c.Keys[0], "--"), argv...)
				env = append(env, "AGENTX_ROOT="+w.Root)
				stepped = true
			}
		}
		var startErr error
		if stepped {
			// the step would fail out of sight: a command that is not
			// there fails here, as it would without the step
			startErr = findCommand(argv[0], dir)
		}
		if startErr == nil {
			startErr = start(cmd, dir, env, c.Text, filepath.Join(w.Store.Dir(), LogFile(agent)))
		}
		if startErr != nil || !stepped {
			if err := w.update(ctx, agent, c, func(cl *Claim) {
				cl.Started = startErr == nil
				if startErr != nil {
					cl.Error = startErr.Error()
				}
			}); err != nil {
				return nil, err
			}
		}
		if startErr != nil {
			return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), startErr)
		}
		wk = &Woke{Agent: agent, Issue: c.Issue, IDs: c.IDs, Argv: argv}
	}
	if !c.Marked {
		if err := w.markDelivered(ctx, agent, c); err != nil {
			return wk, err
		}
		if err := w.update(ctx, agent, c, func(cl *Claim) { cl.Marked = true }); err != nil {
			return wk, err
		}
	}
	return wk, nil
}

// StartClaimed records, under agent's wake lock, that the claim whose
// first item key is key was started by this process, unless it was
// already (another step of the same claim, started by a process that took
// the claim over, got there first) or it is gone. It reports whether this
// process is to start the command: the agentx step (Waker.Step) then
// becomes it.
func StartClaimed(ctx context.Context, store *ledger.Store, agent, key string) (bool, error) {
	if err := ledger.ValidateAgent("agent", agent); err != nil {
		return false, err
	}
	mine := false
	var st State
	err := store.UpdateState(ctx, StateFile(agent), &st, func() error {
		for i := range st.Claims {
			cl := &st.Claims[i]
			if len(cl.Keys) == 0 || cl.Keys[0] != key {
				continue
			}
			if cl.Started {
				return errUnchanged
			}
			cl.Started, cl.PID, mine = true, os.Getpid(), true
			return nil
		}
		return errUnchanged
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return mine, err
}

// markDelivered marks c's clarifications seen by agent as they stand, so
// that its inbox does not deliver again what the resume command got.
func (w *Waker) markDelivered(ctx context.Context, agent string, c Claim) error {
	l, err := w.Store.Read(c.Issue)
	if err != nil {
		return err
	}
	for _, id := range c.IDs {
		if cl := l.Find(id); cl != nil {
			if err := inbox.MarkSeen(ctx, w.Store, agent, cl, inbox.ViaResume); err != nil {
				return err
			}
		}
	}
	return nil
}

// update changes the claim c in agent's state under its lock.
func (w *Waker) update(ctx context.Context, agent string, c Claim, fn func(*Claim)) error {
	var st State
	err := w.Store.UpdateState(context.WithoutCancel(ctx), StateFile(agent), &st, func() error {
		for i := range st.Claims {
			// a claim's keys are its own: no two claims share an item
			if slices.Equal(st.Claims[i].Keys, c.Keys) {
				fn(&st.Claims[i])
				return nil
			}
		}
		return errUnchanged
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return err
}

// sessionFor is agent's session for issue n, or for any issue.
func (w *Waker) sessionFor(agent string, n int) Session {
	var st State
	if err := w.Store.ReadState(StateFile(agent), &st); err != nil {
		return Session{}
	}
	s, _ := sessionOf(st, n)
	return s
}

// claim records that this process wakes agent on issue n with items
// (their keys with suffix added), keeping the newest maxWoken claims, and
// returns the claim.
func (st *State) claim(n int, agent string, items []inbox.Item, suffix string, now time.Time) Claim {
	c := Claim{Issue: n, PID: os.Getpid(), At: ledger.T(now)}
	for _, it := range items {
		c.Keys = append(c.Keys, ClaimKey(it)+suffix)
		c.IDs = append(c.IDs, it.ID)
	}
	c.Text = inbox.Text(inbox.Result{Agent: agent, Items: items, Marked: true})
	st.Claims = append(st.Claims, c)
	if len(st.Claims) > maxWoken {
		st.Claims = st.Claims[len(st.Claims)-maxWoken:]
	}
	return c
}

// ClaimKey is what a wake delivers of item: its key, and for an answer
// the time of its latest reply, so that a person's second reply to a
// round wakes the agent again while a claim of the first does not.
func ClaimKey(it inbox.Item) string {
	if it.Kind == inbox.KindAnswer {
		return it.Key + "@" + it.At.UTC().Format(time.RFC3339Nano)
	}
	return it.Key
}

func sessionOf(st State, n int) (Session, bool) {
	if s, ok := st.Sessions[strconv.Itoa(n)]; ok {
		return s, true
	}
	s, ok := st.Sessions[anyIssue]
	return s, ok
}

// template is the command that delivers to agent's session s: its queue
// while the client that runs the session is open (Session.Owner), else
// its resume; nil when neither applies.
func (w *Waker) template(agent string, s Session) []string {
	a := w.Agents[agent]
	if len(a.Queue) > 0 && s.Owner > 0 && alive(s.Owner) {
		return a.Queue
	}
	if len(a.Resume) > 0 {
		return a.Resume
	}
	return nil
}

// Fill makes an argv from a resume or queue template.
func Fill(tmpl []string, session string, issue int, id, agent, text string) []string {
	r := strings.NewReplacer("{session}", session, "{issue}", strconv.Itoa(issue), "{id}", id, "{agent}", agent, "{text}", text)
	out := make([]string, len(tmpl))
	for i, a := range tmpl {
		out[i] = r.Replace(a)
	}
	return out
}

// program is a resume command's program as trusted: a relative path (one
// with a slash) is the workspace's file, whatever directory the command
// runs in, never one a session's directory names.
func (w *Waker) program(name string) string {
	if strings.ContainsAny(name, `/\`) && !filepath.IsAbs(name) {
		return filepath.Join(w.Root, name)
	}
	return name
}

// dir is where a resume command runs: the session's directory when it is
// the workspace or inside it (a hook's payload names it, and any process
// can send one), else the workspace root.
func (w *Waker) dir(cwd string) string {
	if cwd == "" || !isDir(cwd) || !within(w.Root, cwd) {
		return w.Root
	}
	return cwd
}

// within reports whether path is root or inside it, links resolved.
func within(root, path string) bool {
	r, err1 := filepath.EvalSymlinks(root)
	p, err2 := filepath.EvalSymlinks(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// findCommand checks that name can be run from dir: found on PATH, or a
// file there when it names a path.
func findCommand(name, dir string) error {
	if strings.ContainsRune(name, os.PathSeparator) || strings.ContainsRune(name, '/') {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		_, err := os.Stat(name)
		return err
	}
	_, err := exec.LookPath(name)
	return err
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Detach starts argv in dir with env, detached from this process (its own
// process group: a Ctrl-C or the end of this command does not reach it),
// stdin the text, stdout and stderr appended to log. It does not wait.
func Detach(argv []string, dir string, env []string, stdin, log string) error {
	if len(argv) == 0 {
		return fmt.Errorf("an empty command")
	}
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return err
	}
	out, err := atomicfile.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	in, err := os.CreateTemp(filepath.Dir(log), ".stdin-*")
	if err != nil {
		return err
	}
	defer func() {
		in.Close()
		_ = os.Remove(in.Name()) // the child keeps its open copy
	}()
	if _, err := in.WriteString(stdin); err != nil {
		return err
	}
	if _, err := in.Seek(0, 0); err != nil {
		return err
	}
	fmt.Fprintf(out, "--- %s %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, out
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
