package workflow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Set is the configuration and workflows of one workspace.
type Set struct {
	Config    *Config
	Workflows map[string]*Workflow // by Workflow.Name; of a Set from LoadMemo, those parsed so far (use Workflow)

	broken Errors               // LoadPartial, LoadMemo: the problems of the workflow files left out (see Broken)
	lazy   map[string]string    // LoadMemo: the workflows not parsed yet, by name: their files
	full   func() (*Set, error) // LoadMemo: the full LoadPartial
	mu     *sync.Mutex          // LoadMemo: guards Workflows, broken and lazy (a Set is shared by an MCP server's calls)
}

// lock locks a Set from LoadMemo, whose Workflows fill as they are asked
// for, and returns the unlock; a Set from Load never changes.
func (s *Set) lock() func() {
	if s.mu == nil {
		return func() {}
	}
	s.mu.Lock()
	return s.mu.Unlock
}

// Load reads agentxDir/config.toml (absent: DefaultConfig) and every
// agentxDir/workflows/*.toml in name order (files starting with "." are skipped). It
// checks every file and returns all their problems together as Errors, including a
// workflow name defined twice and a default_workflow, when config.toml sets one, that
// names no workflow. I/O failures, such as a missing agentxDir, are returned wrapped.
func Load(agentxDir string) (*Set, error) { return load(agentxDir, false) }

// LoadPartial is Load for whoever uses one workflow, or none: a workflow file
// with a problem (or a second definition of a workflow name) is left out of
// the Set, its problems kept for Broken, and the other workflows load;
// asking the Set for a workflow it does not hold then fails with them
// (BrokenError). config.toml holds every rule: a problem there fails as in
// Load, with every file's problems.
func LoadPartial(agentxDir string) (*Set, error) { return load(agentxDir, true) }

func load(agentxDir string, partial bool) (*Set, error) {
	if _, err := os.Stat(agentxDir); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	var errs, broken Errors
	collect := func(err error) error {
		var es Errors
		if errors.As(err, &es) {
			errs = append(errs, es...)
			return nil
		}
		return err
	}

	cfg, err := LoadConfigFile(filepath.Join(agentxDir, "config.toml"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cfg = DefaultConfig()
	case err != nil:
		if err := collect(err); err != nil {
			return nil, err
		}
	}

	set := &Set{Config: cfg, Workflows: map[string]*Workflow{}}
	dir := filepath.Join(agentxDir, "workflows")
	names, err := workflowFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	for _, name := range names {
		w, err := LoadWorkflowFile(filepath.Join(dir, name))
		var es Errors
		switch {
		case errors.As(err, &es):
		case err != nil:
			return nil, err
		default:
			if prev, dup := set.Workflows[w.Name]; dup {
				es = Errors{{
					File: w.File, Line: w.nameLine, Key: "workflow.name",
					Msg:  fmt.Sprintf("workflow %q is already defined in %s", w.Name, prev.File),
					Hint: "workflow names must be unique; the name defaults to the file name",
				}}
			} else {
				set.Workflows[w.Name] = w
			}
		}
		if partial {
			broken = append(broken, es...)
		} else {
			errs = append(errs, es...)
		}
	}
	if len(errs) > 0 {
		errs = append(errs, broken...) // config.toml stops everything: say all there is
	}

	// with a file left out, the default may be its: Workflow("") says so
	if cfg != nil && cfg.defaultWorkflowSet && len(errs) == 0 && len(broken) == 0 {
		if _, ok := set.Workflows[cfg.DefaultWorkflow]; !ok {
			errs = append(errs, &Error{
				File: cfg.File, Line: cfg.defaultWorkflowLine, Key: "default_workflow",
				Msg:  fmt.Sprintf("no workflow named %q in %s", cfg.DefaultWorkflow, dir),
				Hint: suggest(cfg.DefaultWorkflow, set.Names(), "workflows"),
			})
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	sortErrors(broken)
	set.broken = broken
	return set, nil
}

// Broken is the problems of the workflow files a Set from LoadPartial or
// LoadMemo left out, in file then line order; nil when every file loaded.
func (s *Set) Broken() Errors {
	defer s.lock()()
	return s.broken
}

// Workflow returns the named workflow; "" means the config's default_workflow. An
// unknown name gives a *LookupError with ErrUnknownWorkflow, or, while a workflow
// file is left out (Broken), a *BrokenError: the workflow may be that file's.
func (s *Set) Workflow(name string) (*Workflow, error) {
	if name == "" && s.Config != nil {
		name = s.Config.DefaultWorkflow
	}
	defer s.lock()()
	if w, ok := s.Workflows[name]; ok {
		return w, nil
	}
	if s.lazy != nil {
		w, err := s.parseLazy(name)
		if err != nil || w != nil {
			return w, err
		}
	}
	if len(s.broken) > 0 {
		return nil, brokenError(name, s.broken)
	}
	return nil, &LookupError{Kind: ErrUnknownWorkflow, Workflow: name, Known: s.names()}
}

// Names returns the workflow names, sorted.
func (s *Set) Names() []string {
	defer s.lock()()
	return s.names()
}

func (s *Set) names() []string {
	names := map[string]bool{}
	for n := range s.Workflows {
		names[n] = true
	}
	for n := range s.lazy {
		names[n] = true
	}
	return sortedKeys(names)
}

// Agents returns the agents the workspace names, each once, sorted: the
// config's priority list and responders, and every workflow's step agents
// and the agents they may ask. human, a built-in target, is not one.
func (s *Set) Agents() []string {
	seen := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			if n != "" && n != Human {
				seen[n] = true
			}
		}
	}
	if s.Config != nil {
		add(s.Config.Priority...)
		add(sortedKeys(s.Config.Agents)...)
	}
	defer s.lock()()
	_ = s.unlazy() // a workflow that no longer parses adds no agents
	for _, w := range s.Workflows {
		for _, st := range w.Steps {
			add(st.Agent)
			add(st.CanClarify...)
		}
	}
	return sortedKeys(seen)
}

// workflowFiles lists the workflow files in dir that Load reads, in name
// order: *.toml, not starting with ".". A missing dir has none.
func workflowFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".toml") {
			names = append(names, name)
		}
	}
	return names, nil
}
