package workspace

import (
	"path/filepath"
	"time"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/workflow"
)

// Workspace is an opened .agentx directory: its rules and its state.
type Workspace struct {
	Root  string        // the repository root
	Dir   string        // Root/.agentx
	Rules *workflow.Set // config.toml and workflows/*.toml
	Store *ledger.Store // state/: ledgers and agent statuses
}

// StateDir is the state directory inside .agentx.
const StateDir = "state"

// Open finds the workspace (explicit root, else the nearest ancestor of
// start holding .agentx), loads its configuration and workflows, and opens
// its state with the configured lock timings and the given clock.
func Open(explicit, start string, now func() time.Time) (*Workspace, error) {
	root, err := Find(explicit, start)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, Dir)
	// through the memo: a command parses config.toml and only the workflow
	// it uses, while the files are as when they were last all checked
	memo := filepath.Join(dir, StateDir, "cache", "workflows")
	rules, err := workflow.LoadMemo(dir, memo)
	if err != nil {
		return nil, err
	}
	opts := lock.Options{
		Wait:     rules.Config.Lock.Wait.Duration,
		StaleAge: rules.Config.Lock.StaleAge.Duration,
		Agent:    "agentx",
		Fair:     lock.Fairness{Bound: rules.Config.Lock.FairBound.Duration, Window: rules.Config.Lock.FairWindow.Duration},
	}
	if cfg := rules.Config.Remote; cfg != nil {
		// A writer holds the lock across its exchanges with the
		// remote: its waiters wait for those too.
		opts.Wait = max(opts.Wait, 3*cfg.Timeout.Duration)
	}
	store := ledger.NewStore(filepath.Join(dir, StateDir), opts, now)
	if cfg := rules.Config.Remote; cfg != nil {
		remote.Attach(store, remote.New(root, cfg))
	}
	return &Workspace{
		Root:  root,
		Dir:   dir,
		Rules: rules,
		Store: store,
	}, nil
}
