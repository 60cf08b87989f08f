package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/frontends/desk"
	"github.com/agentx-cli/agentx/internal/frontends/mcpserver"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/gate/skills"
	"github.com/agentx-cli/agentx/internal/osaccount"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/setup"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// hintedErrors is one of each kind of error a front end words a hint for
// (and each variant its hint depends on): the core's errors, which carry
// their kind and fields; the command line's own (usage, coded) never reach
// another front end.
func hintedErrors() map[string]error {
	opts := []router.Option{{N: 1, Text: "Thursday", Decision: "Thursday"}, {N: 2, Text: "Friday", Decision: "Friday"}}
	ask := func(kind router.RuleKind) *router.RuleError {
		return &router.RuleError{Kind: kind, Msg: "refused", From: "engineer", To: "architect", Workflow: "bug", Step: "fix",
			Issue: 7, Asked: 1, Max: 1, Allowed: []string{"product-manager", ledger.Human}}
	}
	party := func(op string, allowed ...string) *router.RuleError {
		return &router.RuleError{Kind: router.RuleParty, Msg: "refused", ID: "CLR-7-001", Op: op, Allowed: allowed}
	}
	who := func(kind router.IdentityKind) *router.IdentityError {
		return &router.IdentityError{Kind: kind, Field: "from", Claimed: "architect", Agent: "engineer", Via: "the MCP server",
			Person: "ann", Allow: []string{"bob"}, Err: errors.New("no name")}
	}
	history := func(kind, settled string) *remote.HistoryError {
		return &remote.HistoryError{Kind: kind, Issue: 7, Ref: "origin refs/agentx/clarifications/issue-7", Settled: settled,
			Found: "def456", Commit: "0badc0de", Host: "laptop", Why: "rewrites a record"}
	}
	errs := map[string]error{
		"rule scope":          ask(router.RuleScope),
		"rule blocking":       ask(router.RuleBlocking),
		"rule blocking human": &router.RuleError{Kind: router.RuleBlocking, Msg: "refused", From: "engineer", To: ledger.Human, Workflow: "bug", Step: "fix"},
		"rule cap":            ask(router.RuleCap),
		"rule cap session":    &router.RuleError{Kind: router.RuleCap, Msg: "refused", From: "engineer", Issue: 7, Asked: 1, Max: 1, Session: true},
		"rule party agents":   party(router.OpAnswer, "architect"),
		"rule party person":   party(router.OpResolve, ledger.Human),
		"rule party both":     party(router.OpResolve, "architect", ledger.Human),
		"identity account not listed": &router.IdentityError{Kind: router.IdentityAccount, Field: "as", Claimed: "ann",
			Err: &osaccount.Error{Kind: osaccount.KindNotListed, Account: "agent"}},
		"wait timeout":        &router.WaitTimeoutError{ID: "CLR-7-001"},
		"option":              &router.OptionError{ID: "CLR-7-001", N: 3, Options: opts},
		"option needs text":   &router.OptionError{ID: "CLR-7-001", N: 2, Options: []router.Option{opts[0], {N: 2, Text: "other"}}, NoBody: true},
		"option none offered": &router.OptionError{ID: "CLR-7-001", N: 1},
		"input":               &ledger.InputError{Field: "to", Value: "architekt", Msg: "is not an agent", Advice: "did you mean architect?"},
		"corrupt ledger":      &ledger.CorruptError{Path: "/w/.agentx/state/clarifications/issue-7.json", Err: errors.New("bad")},
		"corrupt derived":     &ledger.CorruptError{Path: "/w/.agentx/state/inbox.json", Err: errors.New("bad"), Derived: true},
		"workflow broken":     &workflow.BrokenError{Workflow: "bug", Own: true, Errs: workflow.Errors{{File: "bug.toml", Msg: "bad"}}},
		"remote busy":         &remote.BusyError{Remote: "origin", Attempts: 5},
		"handed lost":         &ledger.HandedLostError{Issue: 7},
		"handed change lost":  &ledger.HandedLostError{Issue: 7, ID: "CLR-7-002", What: "an answer"},
		"remote superseded":   &remote.SupersededError{Issue: 7, Changed: []string{"CLR-7-001"}, Err: errors.New("answered")},
		"remote renumbered":   &remote.RenumberedError{Issue: 7, ID: "CLR-7-002", As: "CLR-7-003"},
		"history rewound":     history(remote.HistoryRewound, "abc123"),
		"history deleted":     history(remote.HistoryDeleted, "abc123"),
		"history invalid":     history(remote.HistoryInvalid, "abc123"),
		"history unsigned":    history(remote.HistoryUnsigned, "abc123"),
		"history no copy":     history(remote.HistoryInvalid, ""),
		"symlink":             &atomicfile.SymlinkError{Path: "/w/.agentx/state/x.json", Target: "/home/u/.bashrc"},
		"no workspace":        &workspace.NotFoundError{Start: "/w"},
		"no workspace at":     &workspace.NotFoundError{Root: "/w"},
		"workspace exists":    &workspace.ExistsError{Paths: []string{"/w/.agentx/config.toml"}},
		"setup data":          &setup.DataError{Path: ".mcp.json", Line: 2, Msg: "invalid JSON"},
		"setup merge":         &setup.MergeError{Path: ".codex/config.toml", Msg: "inline table", Want: "[mcp_servers.agentx]\ncommand = \"agentx\"\nargs = [\"mcp\"]\nenv = { AGENTX_AGENT = \"engineer\" }\n"},
		"draft wrong type":    &proposal.DraftError{ID: "PROP-001", Type: proposal.TypeToolFix, Status: proposal.Approved},
		"draft drafted":       &proposal.DraftError{ID: "PROP-001", Type: proposal.TypeNewSkill, Status: proposal.Approved, Drafted: &proposal.Drafted{Path: ".claude/skills/x/SKILL.md"}},
		"draft pending":       &proposal.DraftError{ID: "PROP-001", Type: proposal.TypeNewSkill, Status: proposal.Pending},
		"draft rejected":      &proposal.DraftError{ID: "PROP-001", Type: proposal.TypeNewSkill, Status: proposal.Rejected},
		"skill exists":        &skills.ExistsError{Path: ".claude/skills/x"},
		"skill name":          &skills.NameError{Name: "X", Why: "has an upper-case letter"},
	}
	for _, k := range []router.IdentityKind{
		router.IdentityOtherAgent, router.IdentityAgentAsPerson, router.IdentityAgentsOnly, router.IdentityNotAllowed,
		router.IdentityNoName, router.IdentityHub, router.IdentityNotAnAgent, router.IdentityNoTerminal,
		router.IdentityNotConfirmed, router.IdentityAccount,
	} {
		errs["identity "+string(k)] = who(k)
	}
	all := maps.Clone(errs)
	for name, err := range errs {
		all[name+", wrapped"] = fmt.Errorf("clarify: %w", err) // a command's context changes no hint
	}
	return all
}

// frontEndWords are the words no hint of the MCP server or the desk may
// hold: the command line's commands and flags, and environment variables.
var frontEndWords = regexp.MustCompile(`agentx [a-z]|--|\bAGENTX_[A-Z]|\$[A-Za-z{]`)

// TestFrontEndHints: the MCP server and the desk word every hinted error
// in their own terms (no `agentx ` command, no --flag, no environment
// variable), and give a hint wherever the command line gives one.
func TestFrontEndHints(t *testing.T) {
	for name, err := range hintedErrors() {
		cli, mcp, page := hintOf(err), mcpserver.Hint(err), desk.Hint(err)
		if cli != "" {
			assert.NotEmpty(t, mcp, "%s: the MCP server gives no hint; the command line's: %q", name, cli)
			assert.NotEmpty(t, page, "%s: the desk gives no hint; the command line's: %q", name, cli)
		}
		assert.NotRegexp(t, frontEndWords, mcp, "%s: the MCP server's hint", name)
		assert.NotRegexp(t, frontEndWords, page, "%s: the desk's hint", name)
		assert.NotContains(t, mcp, "agentx ", "%s: the MCP server's hint", name)
		assert.NotContains(t, page, "agentx ", "%s: the desk's hint", name)
	}
}

// coreKept are the core hints that still hold the command line's words: a
// merge refusal's hint shows the entry to write, whose env names the agent.
var coreKept = []string{"internal/setup.MergeError"}

// TestCoreHintsNeutral: a core error's own hint names no front end's
// command, flag or variable; each front end words those in its table.
func TestCoreHintsNeutral(t *testing.T) {
	for name, err := range hintedErrors() {
		var h words.Hinter
		if !errors.As(err, &h) || slices.Contains(coreKept, typeName(reflect.TypeOf(h))) {
			continue
		}
		own := words.Table{}.Hint(err)
		assert.NotRegexp(t, frontEndWords, own, "%s: the core's own hint", name)
	}
}

// cliOnly are the errors with a hint that only the command line makes
// (its usage errors, its worded outcomes, a gate it could not read).
var cliOnly = []string{"internal/cli.codedError", "internal/cli.usageError", "internal/cli.gateUnreadable"}

// TestHintedErrorsComplete: hintedErrors holds every error type of the
// module that has a Hint, and the MCP server's and the desk's tables word
// each, so a new kind cannot go unworded by a front end.
func TestHintedErrorsComplete(t *testing.T) {
	sampled := map[string]bool{}
	for _, err := range hintedErrors() {
		for e := err; e != nil; e = errors.Unwrap(e) {
			sampled[typeName(reflect.TypeOf(e))] = true
		}
	}
	worded := func(table words.Table) map[string]bool {
		names := map[string]bool{}
		for _, k := range table.Kinds() {
			names[typeName(k)] = true
		}
		return names
	}
	mcp, page := worded(mcpserver.Wording()), worded(desk.Wording())
	for _, name := range hintedTypes(t) {
		if slices.Contains(cliOnly, name) {
			continue
		}
		assert.True(t, sampled[name], "%s has a Hint: add one to hintedErrors", name)
		assert.True(t, mcp[name], "%s has a Hint: word it in the MCP server's table (mcpserver.Wording)", name)
		assert.True(t, page[name], "%s has a Hint: word it in the desk's table (desk.Wording)", name)
	}
}

// hintedTypes are the module's types with a Hint method, named as
// typeName names them, from the source.
func hintedTypes(t *testing.T) []string {
	t.Helper()
	hint := regexp.MustCompile(`(?m)^func \(\w+ \*(\w+)\) Hint\(\) string`)
	root := filepath.Join("..", "..")
	var names []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		for _, m := range hint.FindAllStringSubmatch(string(data), -1) {
			names = append(names, filepath.ToSlash(rel)+"."+m[1])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("found only %v: the scan is broken", names)
	}
	return names
}

// typeName names an error's type by its package's directory in the
// module: ledger.CorruptError.
func typeName(tp reflect.Type) string {
	if tp.Kind() == reflect.Pointer {
		tp = tp.Elem()
	}
	return strings.TrimPrefix(tp.PkgPath(), module+"/") + "." + tp.Name()
}

// module is the module's path, to name a type by its package's directory.
const module = "github.com/agentx-cli/agentx"
