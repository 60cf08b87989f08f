package workflow

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// Defaults for config.toml keys that are left out.
const (
	DefaultWorkflowName = "feature"
	DefaultLockWait     = 5 * time.Second
	DefaultLockStaleAge = 30 * time.Second
	// MinLockStaleAge is the shortest [lock] stale_age (lock.MinStaleAge).
	MinLockStaleAge     = time.Second
	DefaultAgentTimeout = 10 * time.Minute
	// DefaultLockFairBound and DefaultLockFairWindow are [lock] fair_bound
	// and fair_window (lock.DefaultFairBound, lock.DefaultFairWindow: the
	// lock's tests use workflow, so workflow cannot import lock).
	DefaultLockFairBound  = 400 * time.Millisecond
	DefaultLockFairWindow = 400 * time.Millisecond
	// LockFairChains is how many fair_windows in a row a writer may leave
	// the lock file absent (lock.FairChains).
	LockFairChains = 4
	// DefaultRetryDelay is how long after a responder fails agentx retries
	// it (once; a second failure escalates): a brief outage passes.
	DefaultRetryDelay = 30 * time.Second
	// DefaultNotifyTimeout bounds a notify command: it runs inside whatever
	// command triggered it (a hook, ready, the monitor), so it must be short.
	DefaultNotifyTimeout = 5 * time.Second

	// DefaultHumanSLAMinutes is how long a question to a human may stay
	// pending before the monitor calls it stale: a day.
	DefaultHumanSLAMinutes = 24 * 60
	// DefaultStuckSimilarity is the word-set (Jaccard) similarity at or above
	// which two questions count as the same question.
	DefaultStuckSimilarity = 0.8
	// DefaultMemorySimilarity is [memory] similarity: the word-set
	// similarity at or above which a resolved question counts as asking
	// the same thing as a new one.
	DefaultMemorySimilarity = 0.6
)

// The values of [memory] reuse.
const (
	// MemorySuggest: an ask lists the decisions taken before on the same
	// question (the default).
	MemorySuggest = "suggest"
	// MemoryOff: an ask lists none.
	MemoryOff = "off"
)

// The values of deadlock_scope.
const (
	ScopeIssue  = "issue"  // each issue's agents are separate workers
	ScopeGlobal = "global" // one worker per role across all issues
)

// defaultPriority is the upstream precedence used to break deadlocks, most upstream first.
var defaultPriority = []string{
	"product-manager", "architect", "ux-designer", "engineer", "reviewer",
	"devops", "data-scientist", "tester", "customer-coach",
}

// Duration is a time.Duration written in TOML as a Go duration string ("5s", "10m").
type Duration struct {
	time.Duration
}

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("invalid duration %q: want a Go duration like \"30s\" or \"10m\"", text)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(d.String()), nil
}

// Config is .agentx/config.toml with defaults applied.
type Config struct {
	DefaultWorkflow string                 `json:"default_workflow"`
	Priority        []string               `json:"priority"`          // upstream precedence, most upstream first
	MaxQuestions    int                    `json:"max_questions"`     // per asker per run on an issue; 0 = unlimited
	HumanSLAMinutes int                    `json:"human_sla_minutes"` // a question to human is stale after this
	DeadlockScope   string                 `json:"deadlock_scope"`    // ScopeIssue or ScopeGlobal
	StuckSimilarity float64                `json:"stuck_similarity"`  // 0 < x <= 1
	Lock            LockConfig             `json:"lock"`
	Agents          map[string]AgentConfig `json:"agents"`           // responders by agent name; never nil
	Notify          *NotifyConfig          `json:"notify,omitempty"` // nil when [notify] is absent
	Humans          HumansConfig           `json:"humans"`           // who may act as a person
	GitHub          *GitHubConfig          `json:"github,omitempty"` // nil when [github] is absent
	Remote          *RemoteConfig          `json:"remote,omitempty"` // nil when [remote] is absent: one machine
	Slack           *SlackConfig           `json:"slack,omitempty"`  // nil when [slack] is absent
	Skills          SkillsConfig           `json:"skills"`           // where agentx skills drafts and validates skills
	MCP             MCPConfig              `json:"mcp"`              // the MCP server's [mcp] table
	Context         ContextConfig          `json:"context"`          // what a question carries: the [context] table
	Memory          MemoryConfig           `json:"memory"`           // decision memory: the [memory] table
	File            string                 `json:"file,omitempty"`   // "" for DefaultConfig

	defaultWorkflowSet  bool // default_workflow was written in the file
	defaultWorkflowLine int  // and its line
}

// LockConfig is the [lock] table.
type LockConfig struct {
	Wait     Duration `json:"wait"`      // how long a writer waits for a ledger lock
	StaleAge Duration `json:"stale_age"` // a lock older than this may be taken over
	// FairBound and FairWindow: agentx writers hand the lock to one another
	// for at most FairBound before leaving the lock file absent for
	// FairWindow, for AgentX tools that poll for it; "0" in either: never.
	FairBound  Duration `json:"fair_bound"`
	FairWindow Duration `json:"fair_window"`
}

// AgentConfig is one [agents.NAME] table: how to run that agent as a
// responder (command), and how to reach it as an asker (resume, hold).
type AgentConfig struct {
	Command    []string `json:"command"` // argv; the question arrives on stdin, the answer is stdout
	Timeout    Duration `json:"timeout"`
	RetryDelay Duration `json:"retry_delay"` // after a failure, the one retry comes this much later
	// Resume is the argv template that wakes the agent when an answer
	// lands after its turn ended: {session}, {issue}, {id} and {agent} are
	// filled in; the answer arrives on stdin.
	Resume []string `json:"resume,omitempty"`
	// Queue is the argv template that delivers to the agent's session while
	// the client that runs it is still open (Codex: codex queue --thread
	// {session} --message {text}): used instead of Resume while the
	// session's client process, which its Stop hook reported, runs.
	// {text} is what came back, also given on stdin.
	Queue []string `json:"queue,omitempty"`
	// Hold is how long agentx hook stop holds the agent's turn for the
	// answer to its blocking question (0: the command's default).
	Hold Duration `json:"hold,omitzero"`
}

// ResumePlaceholders are the fields an [agents.NAME] resume template may
// name.
var ResumePlaceholders = []string{"{session}", "{issue}", "{id}", "{agent}"}

// QueuePlaceholders are the fields an [agents.NAME] queue template may
// name: those of resume, and {text}, what came back.
var QueuePlaceholders = append(slices.Clone(ResumePlaceholders), "{text}")

// NotifyConfig is the [notify] table: the command run when a human is asked or a
// clarification escalates.
type NotifyConfig struct {
	Command []string `json:"command"`
	Timeout Duration `json:"timeout"` // how long one run may take (default 5s); then it is killed
}

// HumansConfig is the [humans] table: who may act as a person (answer a
// question to human, resolve an escalation).
type HumansConfig struct {
	// Allow lists the people who may, by the name agentx records for them
	// (--as NAME, else git user.email, else user.name, else $USER),
	// compared case-insensitively. Empty: anyone at a shell launched as no
	// agent.
	Allow []string `json:"allow"`
	// Confirm: a person's action from the command line is confirmed at
	// the controlling terminal (/dev/tty), and refused where there is
	// none. false turns that off, for scripted demos and tests. Default
	// true.
	Confirm bool `json:"confirm"`
	// Accounts, when set, lists the OS accounts (user names, or numeric
	// uids) a person's action from the command line must run as: the
	// kernel's word for who runs the process, not a name it claims. Agents
	// run as other accounts. Empty: any account.
	Accounts []string `json:"accounts"`
}

// MCPConfig is the [mcp] table: what the MCP server (agentx mcp) may do
// beyond its tools.
type MCPConfig struct {
	// Elicit lets ask_human also show its question as a form (MCP
	// elicitation) to the person at the client the agent runs in, when the
	// client can show one. Off by default: an answer through the form is
	// recorded as a person's, and the client is the agent's own.
	Elicit bool `json:"elicit"`
}

// ContextConfig is the [context] table: what a question carries to its
// answerer besides its text (the files and lines its asker names, the
// asked agent's artifact, the issue's text).
type ContextConfig struct {
	// Budget is the most bytes of file text one question carries; what
	// does not fit is left out, and a note says so. 0: none.
	Budget int `json:"budget"`
}

// Bounds of [context] budget.
const (
	DefaultContextBudget = 8000
	MaxContextBudget     = 64 << 10
)

// MemoryConfig is the [memory] table: what an ask is told of the
// decisions taken before on the same question.
type MemoryConfig struct {
	// Reuse is MemorySuggest (an ask lists up to three resolved
	// clarifications of the workspace that asked the same thing) or
	// MemoryOff.
	Reuse string `json:"reuse"`
	// Similarity is the word-set (Jaccard) similarity, 0 < x <= 1, at or
	// above which a resolved question asks the same thing as a new one
	// (a question with the same topic, as clarify stats groups topics,
	// always does).
	Similarity float64 `json:"similarity"`
}

// Suggests reports whether an ask lists the decisions taken before.
func (m MemoryConfig) Suggests() bool { return m.Reuse != MemoryOff }

// maxPersonLen is the longest name a person may be recorded by, in bytes
// (ledger.MaxPersonLen).
const maxPersonLen = 128

// DefaultConfig returns the configuration used when config.toml is absent.
// DefaultMaxQuestions is max_questions when config.toml leaves it out:
// the questions one agent may ask in one run on an issue (since its last
// hook there), as in the minion design: an agent that needs a fourth
// answer should decide and record its assumption.
const DefaultMaxQuestions = 3

func DefaultConfig() *Config {
	return &Config{
		DefaultWorkflow: DefaultWorkflowName,
		Priority:        slices.Clone(defaultPriority),
		MaxQuestions:    DefaultMaxQuestions,
		HumanSLAMinutes: DefaultHumanSLAMinutes,
		DeadlockScope:   ScopeIssue,
		StuckSimilarity: DefaultStuckSimilarity,
		Lock:            LockConfig{Wait: Duration{DefaultLockWait}, StaleAge: Duration{DefaultLockStaleAge}, FairBound: Duration{DefaultLockFairBound}, FairWindow: Duration{DefaultLockFairWindow}},
		Agents:          map[string]AgentConfig{},
		Skills:          SkillsConfig{Dir: DefaultSkillsDir},
		Humans:          HumansConfig{Confirm: true},
		Context:         ContextConfig{Budget: DefaultContextBudget},
		Memory:          MemoryConfig{Reuse: MemorySuggest, Similarity: DefaultMemorySimilarity},
	}
}

// HumanSLA is how long a question to a human may stay pending before it is stale.
func (c *Config) HumanSLA() time.Duration { return time.Duration(c.HumanSLAMinutes) * time.Minute }

// LoadConfigFile reads and validates config.toml. Invalid content gives Errors
// listing every problem; a read failure (including a missing file) gives the wrapped
// *fs.PathError.
func LoadConfigFile(path string) (*Config, error) {
	data, err := atomicfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return parseConfig(path, data)
}

func parseConfig(file string, data []byte) (*Config, error) {
	d, top, ok := parseDoc(file, data)
	if !ok {
		return nil, d.result()
	}
	c := DefaultConfig()
	c.File = file
	var lock, agents, notify, humans, github, remote, slack, skills, mcp, context, memory toml.Primitive
	defined := d.decodeTable(top, nil, nil, []field{
		{"default_workflow", &c.DefaultWorkflow, "a string"},
		{"priority", &c.Priority, "an array of strings"},
		{"max_questions", &c.MaxQuestions, "an integer"},
		{"human_sla_minutes", &c.HumanSLAMinutes, "an integer"},
		{"deadlock_scope", &c.DeadlockScope, "a string"},
		{"stuck_similarity", &c.StuckSimilarity, "a float"},
		{"lock", &lock, "a table"},
		{"agents", &agents, "a table"},
		{"notify", &notify, "a table"},
		{"humans", &humans, "a table"},
		{"github", &github, "a table"},
		{"remote", &remote, "a table"},
		{"slack", &slack, "a table"},
		{"skills", &skills, "a table"},
		{"mcp", &mcp, "a table"},
		{"context", &context, "a table"},
		{"memory", &memory, "a table"},
	})
	c.defaultWorkflowSet = defined["default_workflow"]
	c.defaultWorkflowLine = d.ix.line("default_workflow")
	d.topLevel(c, defined)
	// each table, in the order its problems are listed
	tables := []struct {
		name   string
		prim   toml.Primitive
		decode func(toml.Primitive)
	}{
		{"lock", lock, func(t toml.Primitive) { d.lock(t, &c.Lock) }},
		{"agents", agents, func(t toml.Primitive) { d.agents(t, c.Agents) }},
		{"notify", notify, func(t toml.Primitive) { d.notify(t, &c.Notify) }},
		{"humans", humans, func(t toml.Primitive) { d.humans(t, &c.Humans) }},
		{"github", github, func(t toml.Primitive) { c.GitHub = d.github(t) }},
		{"remote", remote, func(t toml.Primitive) { c.Remote = d.remote(t) }},
		{"slack", slack, func(t toml.Primitive) { c.Slack = d.slack(t) }},
		{"skills", skills, func(t toml.Primitive) { d.skills(t, &c.Skills) }},
		{"mcp", mcp, func(t toml.Primitive) { d.mcp(t, &c.MCP) }},
		{"context", context, func(t toml.Primitive) { d.context(t, &c.Context) }},
		{"memory", memory, func(t toml.Primitive) { d.memory(t, &c.Memory) }},
	}
	for _, t := range tables {
		if defined[t.name] {
			t.decode(t.prim)
		}
	}
	d.checkUndecoded()
	if err := d.result(); err != nil {
		return nil, err
	}
	return c, nil
}

// topLevel checks the top-level keys of config.toml that defined holds.
func (d *doc) topLevel(c *Config, defined map[string]bool) {
	if defined["default_workflow"] && c.DefaultWorkflow == "" {
		d.addf([]string{"default_workflow"}, []string{"default_workflow"}, "", "must not be empty")
	}
	if defined["priority"] {
		d.priority(c.Priority)
	}
	if defined["max_questions"] && c.MaxQuestions < 0 {
		p := []string{"max_questions"}
		d.addf(p, p, "0 means unlimited", "must be 0 or more, got %d", c.MaxQuestions)
	}
	if defined["human_sla_minutes"] {
		p := []string{"human_sla_minutes"}
		d.slaMinutes(c.HumanSLAMinutes, p, p, "1440 is a day")
	}
	if defined["deadlock_scope"] && c.DeadlockScope != ScopeIssue && c.DeadlockScope != ScopeGlobal {
		p := []string{"deadlock_scope"}
		d.addf(p, p, `"issue": each issue's agents are separate workers; "global": one worker per role across issues`,
			"must be %q or %q, got %q", ScopeIssue, ScopeGlobal, c.DeadlockScope)
	}
	if defined["stuck_similarity"] && !(c.StuckSimilarity > 0 && c.StuckSimilarity <= 1) { // NaN fails too
		p := []string{"stuck_similarity"}
		d.addf(p, p, "a fraction of shared words, e.g. 0.8; 1 flags only identical questions", "must be greater than 0 and at most 1, got %v", c.StuckSimilarity)
	}
}

// priority checks the priority list: agent names, each listed once.
func (d *doc) priority(names []string) {
	p := []string{"priority"}
	for i, name := range names {
		switch {
		case !isAgentName(name):
			d.addf(p, p, agentNameHint, "invalid agent name %q", name)
		case slices.Index(names, name) < i:
			d.addf(p, p, "", "%q is listed twice", name)
		}
	}
}

// lock decodes the [lock] table into l.
func (d *doc) lock(prim toml.Primitive, l *LockConfig) {
	p := []string{"lock"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return
	}
	def := d.decodeTable(t, p, p, []field{
		{"wait", &l.Wait, "a duration string"},
		{"stale_age", &l.StaleAge, "a duration string"},
		{"fair_bound", &l.FairBound, "a duration string"},
		{"fair_window", &l.FairWindow, "a duration string"},
	})
	d.positive(def["wait"], l.Wait, with(p, "wait"))
	for _, k := range []struct {
		key string
		v   Duration
	}{{"fair_bound", l.FairBound}, {"fair_window", l.FairWindow}} {
		if def[k.key] && k.v.Duration < 0 {
			d.addf(with(p, k.key), with(p, k.key), `"0" turns the fair hand-off off`, "must not be negative, got %q", k.v.String())
		}
	}
	// a writer leaves the lock file absent for up to FairChains
	// windows in a row: a window set must fit in its wait (with the
	// default window and a short wait, the lock cuts the windows
	// short at the wait)
	if w := l.FairWindow; def["fair_window"] && l.FairBound.Duration > 0 && LockFairChains*w.Duration >= l.Wait.Duration {
		d.addf(with(p, "fair_window"), with(p, "fair_window"), fmt.Sprintf("a writer leaves the lock file absent for up to %d windows in a row while AgentX tools come in, within its wait", LockFairChains),
			"must be less than a quarter of wait (%s), got %q", l.Wait.String(), w.String())
	}
	if def["stale_age"] && l.StaleAge.Duration < MinLockStaleAge {
		d.addf(with(p, "stale_age"), with(p, "stale_age"), "a foreign tool's live lock would be taken from under it; agentx's own locks never go stale while their process lives",
			"must be at least %s, got %q", MinLockStaleAge, l.StaleAge.String())
	}
}

// agents decodes the [agents] table's agents into into.
func (d *doc) agents(prim toml.Primitive, into map[string]AgentConfig) {
	p := []string{"agents"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return
	}
	for _, name := range sortedKeys(t) {
		if a, ok := d.agent(name, t[name]); ok {
			into[name] = a
		}
	}
}

// notify decodes the [notify] table into *n.
func (d *doc) notify(prim toml.Primitive, into **NotifyConfig) {
	p := []string{"notify"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return
	}
	n := &NotifyConfig{Timeout: Duration{DefaultNotifyTimeout}}
	def := d.decodeTable(t, p, p, []field{
		{"command", &n.Command, "an array of strings"},
		{"timeout", &n.Timeout, "a duration string"},
	})
	d.command(t, def["command"], n.Command, with(p, "command"), `e.g. command = ["./scripts/notify.sh"]; leave [notify] out to notify nobody`)
	d.positive(def["timeout"], n.Timeout, with(p, "timeout"))
	*into = n
}

// humans decodes the [humans] table into h.
func (d *doc) humans(prim toml.Primitive, h *HumansConfig) {
	p := []string{"humans"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return
	}
	def := d.decodeTable(t, p, p, []field{{"allow", &h.Allow, "an array of strings"}, {"confirm", &h.Confirm, "a boolean"},
		{"accounts", &h.Accounts, "an array of strings"}})
	d.people(def["allow"], h.Allow, with(p, "allow"))
	d.accounts(def["accounts"], h.Accounts, with(p, "accounts"))
}

// mcp decodes the [mcp] table into m.
func (d *doc) mcp(prim toml.Primitive, m *MCPConfig) {
	p := []string{"mcp"}
	if t, ok := d.table(prim, p, p); ok {
		d.decodeTable(t, p, p, []field{{"elicit", &m.Elicit, "a boolean"}})
	}
}

// context decodes the [context] table into cc.
func (d *doc) context(prim toml.Primitive, cc *ContextConfig) {
	p := []string{"context"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return
	}
	def := d.decodeTable(t, p, p, []field{{"budget", &cc.Budget, "an integer"}})
	if b := cc.Budget; def["budget"] && (b < 0 || b > MaxContextBudget) {
		d.addf(with(p, "budget"), with(p, "budget"), "bytes of file text a question carries, e.g. 8000; 0 gives none",
			"must be between 0 and %d, got %d", MaxContextBudget, b)
	}
}

// memory decodes the [memory] table into m.
func (d *doc) memory(prim toml.Primitive, m *MemoryConfig) {
	p := []string{"memory"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return
	}
	def := d.decodeTable(t, p, p, []field{
		{"reuse", &m.Reuse, "a string"},
		{"similarity", &m.Similarity, "a float"},
	})
	if def["reuse"] && m.Reuse != MemorySuggest && m.Reuse != MemoryOff {
		d.addf(with(p, "reuse"), with(p, "reuse"), `"suggest": an ask lists the decisions taken before on the same question; "off": it lists none`,
			"must be %q or %q, got %q", MemorySuggest, MemoryOff, m.Reuse)
	}
	if def["similarity"] && !(m.Similarity > 0 && m.Similarity <= 1) { // NaN fails too
		d.addf(with(p, "similarity"), with(p, "similarity"), "a fraction of shared words, e.g. 0.6; 1 matches only questions with the same words",
			"must be greater than 0 and at most 1, got %v", m.Similarity)
	}
}

// people checks a decoded list of people's names: each printable, not
// blank, within maxPersonLen bytes, listed once.
func (d *doc) people(defined bool, names []string, p []string) {
	if !defined {
		return
	}
	const hint = `names as agentx records them: an email or a user name, e.g. ["alice@example.com", "bob"]`
	for i, name := range names {
		switch {
		case strings.TrimSpace(name) != name || name == "":
			d.addf(p, p, hint, "%q: a name must not be empty or start or end with spaces", name)
		case !utf8.ValidString(name) || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			d.addf(p, p, hint, "%q: a name must not hold control or invisible characters", name)
		case len(name) > maxPersonLen:
			d.addf(p, p, hint, "%q: a name must be at most %d bytes", name, maxPersonLen)
		case slices.IndexFunc(names[:i], func(n string) bool { return strings.EqualFold(n, name) }) >= 0:
			d.addf(p, p, "", "%q is listed twice", name)
		}
	}
}

// accounts checks [humans] accounts: OS user names or numeric uids.
func (d *doc) accounts(defined bool, names []string, p []string) {
	if !defined {
		return
	}
	const hint = `the OS accounts people act from, e.g. accounts = ["alice", "1001"]; agents run as other accounts`
	if len(names) == 0 {
		d.addf(p, p, hint, "empty: list at least one account, or leave the key out")
	}
	for i, name := range names {
		switch {
		case name == "" || len(name) > 64 || strings.IndexFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-$@", r))
		}) >= 0 || name[0] == '-':
			d.addf(p, p, hint, "%q: not an account name (letters, digits, . _ - $ @; at most 64 bytes)", name)
		case slices.Contains(names[:i], name):
			d.addf(p, p, "", "%q is listed twice", name)
		}
	}
}

// agent decodes one [agents.NAME] table.
func (d *doc) agent(name string, prim toml.Primitive) (AgentConfig, bool) {
	p := []string{"agents", name}
	a := AgentConfig{Timeout: Duration{DefaultAgentTimeout}, RetryDelay: Duration{DefaultRetryDelay}}
	t, ok := d.table(prim, p, p)
	if !ok {
		return a, false
	}
	n := len(d.errs)
	switch {
	case !isAgentName(name):
		d.addf(p, p, agentNameHint, "invalid agent name %q", name)
	case name == Human:
		d.addf(p, p, "configure [notify] to reach people", "%q is a built-in target and is never run", Human)
	}
	def := d.decodeTable(t, p, p, []field{
		{"command", &a.Command, "an array of strings"},
		{"timeout", &a.Timeout, "a duration string"},
		{"retry_delay", &a.RetryDelay, "a duration string"},
		{"resume", &a.Resume, "an array of strings"},
		{"queue", &a.Queue, "an array of strings"},
		{"hold", &a.Hold, "a duration string"},
	})
	// a table that only says how to reach the agent as an asker (resume,
	// queue, hold) needs no responder command
	_, resume := t["resume"]
	_, queue := t["queue"]
	_, hold := t["hold"]
	if _, present := t["command"]; present || !(resume || queue || hold) {
		d.command(t, def["command"], a.Command, with(p, "command"), `e.g. command = ["claude", "-p"]; leave the agent out to answer by hand`)
	}
	if def["resume"] {
		d.template(a.Resume, with(p, "resume"), ResumePlaceholders, `["claude", "-p", "--resume", "{session}"]`)
	}
	if def["queue"] && d.template(a.Queue, with(p, "queue"), QueuePlaceholders, `["codex", "queue", "--thread", "{session}", "--message", "{text}"]`) &&
		!slices.ContainsFunc(a.Queue, func(arg string) bool { return strings.Contains(arg, "{session}") }) {
		d.addf(with(p, "queue"), with(p, "queue"), "a queue delivers to the session: name it with {session}", "no {session}")
	}
	d.positive(def["timeout"], a.Timeout, with(p, "timeout"))
	d.positive(def["retry_delay"], a.RetryDelay, with(p, "retry_delay"))
	d.positive(def["hold"], a.Hold, with(p, "hold"))
	return a, len(d.errs) == n
}

// command checks the command key of table t: present (else missing is
// the hint), and a non-empty argv once decoded.
func (d *doc) command(t map[string]toml.Primitive, defined bool, argv []string, p []string, missing string) {
	if _, present := t["command"]; !present {
		d.addf(p, p, missing, "required")
	}
	if !defined {
		return
	}
	if len(argv) == 0 || argv[0] == "" {
		d.addf(p, p, `an argv array, e.g. ["claude", "-p"]`, "must not be empty")
	}
}

// template checks a resume or queue template: a non-empty argv whose
// braces name only placeholders; it reports whether it passed.
func (d *doc) template(argv []string, p []string, placeholders []string, example string) bool {
	if len(argv) == 0 || argv[0] == "" {
		d.addf(p, p, "an argv template, e.g. "+example, "must not be empty")
		return false
	}
	for _, arg := range argv {
		rest := arg
		for _, ph := range placeholders {
			rest = strings.ReplaceAll(rest, ph, "")
		}
		if strings.ContainsAny(rest, "{}") {
			d.addf(p, p, "use "+strings.Join(placeholders, ", "), "%q: an unknown placeholder", arg)
			return false
		}
	}
	return true
}

// slaMinutes checks an SLA in minutes: positive, and small enough that
// the time.Duration it becomes does not overflow.
func (d *doc) slaMinutes(v int, p, plain []string, hint string) {
	if v <= 0 {
		d.addf(p, plain, hint, "must be greater than 0, got %d", v)
	} else if v > MaxSLAMinutes {
		d.addf(p, plain, hint, "must be between 1 and %d (100 years), got %d", MaxSLAMinutes, v)
	}
}

// positive checks a decoded duration.
func (d *doc) positive(defined bool, v Duration, p []string) {
	if defined && v.Duration <= 0 {
		d.addf(p, p, "", "must be greater than 0, got %q", v.String())
	}
}
