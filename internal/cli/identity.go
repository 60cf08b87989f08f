package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/osaccount"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// caller is who this process acts as (router.Caller decides): the agent
// AGENTX_AGENT names, or, without it, a person, named by --as, git config
// or $USER, and allowed by [humans] in config.toml.
func (a *App) caller() *router.Caller {
	if a.who == nil {
		a.who = &router.Caller{
			Agent: a.getenv(router.EnvAgent),
			Person: func() (string, error) {
				if a.as != "" {
					return a.as, nil // --as names the person: nothing to look up
				}
				dir := ""
				if ws, err := a.open(); err == nil {
					dir = ws.Root
				}
				return personName(dir, a.getenv)
			},
			Allow: func() ([]string, error) {
				ws, err := a.open()
				if err != nil {
					return nil, err
				}
				return ws.Rules.Config.Humans.Allow, nil
			},
			Confirm: a.confirmPerson,
		}
	}
	return a.who
}

// claim checks a --from or --agent value (flag without dashes) against
// who this process is, and returns who acts ("" when neither the flag nor
// AGENTX_AGENT names anyone).
func (a *App) claim(flag, value string) (string, error) {
	return a.caller().Claim(flag, value)
}

// claimAs is claim for the commands a person may run: --as NAME names the
// person acting as human, so it stands for --from human.
func (a *App) claimAs(from, as string) (string, error) {
	if as != "" {
		if from != "" && from != ledger.Human {
			return "", &usageError{Err: fmt.Errorf("--as names the person acting as human: give it alone or with --from human, not with --from %s", from)}
		}
		a.as, from = as, ledger.Human
	}
	return a.claim("from", from)
}

// personName is the name a person acting as human is recorded by, when
// --as does not give it: the git user.email of the repository at dir,
// else its user.name, else $USER (or %USERNAME%).
func personName(dir string, getenv func(string) string) (string, error) {
	for _, key := range []string{"user.email", "user.name"} {
		if v := gitConfig(dir, key); v != "" {
			return v, nil
		}
	}
	for _, env := range []string{"USER", "USERNAME"} {
		if v := strings.TrimSpace(getenv(env)); v != "" {
			return v, nil
		}
	}
	return "", errors.New("no --as NAME, no git user.email or user.name, no $USER")
}

// gitConfig reads one git setting as seen from dir; "" if git is missing,
// the key unset, or git slow to answer.
func gitConfig(dir, key string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "--get", key)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// askPerson is what a refused agent is told to do instead of acting as a
// person: ask one. A refusal never says how a person's command is run
// (an agent would read that as the way around it).
const askPerson = "ask a person (clarify ask --to human, or ask_human over MCP) and carry on with what you can do"

// whoHint words the hint of a refusal of who acts, for the command line:
// who may do it, and how a person does it. "" for other errors.
func whoHint(err error) string { return router.WhoHint(err, cliWords) }

var cliWords = router.WhoWords{
	Identity: func(e *router.IdentityError) string {
		switch e.Kind {
		case router.IdentityOtherAgent:
			return fmt.Sprintf("this process acts only as %s: leave out --%s. Another agent acts in its own session", e.Agent, e.Field)
		case router.IdentityAgentAsPerson, router.IdentityAgentsOnly:
			return "only a person acts as human: " + askPerson
		case router.IdentityNotAllowed:
			return "only the people listed in [humans] allow of .agentx/config.toml act as human; if you are one, name yourself as listed with --as NAME"
		case router.IdentityNoName:
			return "name yourself with --as NAME (or set git config user.email)"
		case router.IdentityHub:
			return "agentx writes its own entries; act as yourself"
		case router.IdentityNotAnAgent:
			return "launch each agent with its own name (AGENTX_AGENT=engineer); to involve a person, " + askPerson
		case router.IdentityNoTerminal:
			// only a process launched as no agent gets here: speak to a person
			return "an agent does not act as a person: " + askPerson + ". A person whose command ran with no terminal (an IDE task, a Makefile, ssh without -t, the background) runs it in a terminal, or answers at the desk (agentx desk, started in a terminal); the workspace's owner may turn the confirmation off for scripts ([humans] confirm)"
		case router.IdentityAccount:
			var oe *osaccount.Error
			if errors.As(e.Err, &oe) && oe.Kind == osaccount.KindNotListed {
				return "people act from the OS accounts [humans] accounts lists, agents from others; an agent asks a person instead: " + askPerson
			}
			return "the accounts boundary holds only while no other account can change the list: a person who owns the workspace fixes that (docs/security.md, OS accounts)"
		case router.IdentityNotConfirmed:
			return "nothing was done; to go on, run the command again and answer y at the terminal"
		}
		return ""
	},
	Agents: func(agents []string) string {
		return strings.Join(agents, " or ") + " does it in its own session"
	},
	Person: func(op, id string, only bool) string {
		way := fmt.Sprintf("a person may %s %s: to have it done, %s", op, id, askPerson)
		if only {
			return "only a person may: " + way
		}
		return way
	},
}
