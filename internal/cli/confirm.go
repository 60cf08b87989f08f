package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentx-cli/agentx/internal/osaccount"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/router"
)

// openTerminal opens the controlling terminal, where a person confirms an
// action (as sudo and ssh ask for a password there): never stdin or
// stdout, which the tool that started agentx may hold. A process started
// by an agent's tool shell has none. Tests replace it.
var openTerminal = func() (io.ReadWriteCloser, error) {
	return os.OpenFile("/dev/tty", os.O_RDWR, 0)
}

// errNoTerminal is a confirmation asked of a process with no controlling terminal.
var errNoTerminal = errors.New("no controlling terminal")

// maxAnswer bounds what is read of a confirmation's answer.
const maxAnswer = 256

// confirmAtTerminal asks question on the controlling terminal and reports
// whether the person answered yes. ctx ending (Ctrl-C) is a no.
func confirmAtTerminal(ctx context.Context, question string) (bool, error) {
	t, err := openTerminal()
	if err != nil {
		return false, fmt.Errorf("%w: %v", errNoTerminal, err)
	}
	defer t.Close()
	if _, err := fmt.Fprintf(t, "%s [y/N] ", question); err != nil {
		return false, fmt.Errorf("%w: %v", errNoTerminal, err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(io.LimitReader(t, maxAnswer)).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		ans := strings.ToLower(strings.TrimSpace(s))
		return ans == "y" || ans == "yes", nil
	case <-ctx.Done():
		fmt.Fprintln(t)
		return false, ctx.Err()
	}
}

// confirmPerson confirms, at the controlling terminal, the person's action
// this command takes as human (router.Caller.Confirm), unless the
// workspace turned confirmation off ([humans] confirm = false). No
// terminal, or an answer other than yes, refuses the action.
//
// With [humans] accounts, the process must first run as one of those OS
// accounts, and the files that hold the list must be out of other
// accounts' reach (osaccount.Check): the kernel's word, which an agent
// running as another account cannot give.
func (a *App) confirmPerson(person string) error {
	if ws, err := a.open(); err == nil {
		if accounts := ws.Rules.Config.Humans.Accounts; len(accounts) > 0 {
			// the list, the directory that holds it, and the one that holds
			// that (where .agentx could be renamed away and replaced)
			if err := osaccount.Check(accounts, filepath.Join(ws.Dir, "config.toml"), ws.Dir); err != nil {
				return &router.IdentityError{Kind: router.IdentityAccount, Err: err}
			}
			if err := osaccount.CheckParent(accounts, ws.Root); err != nil {
				return &router.IdentityError{Kind: router.IdentityAccount, Err: err}
			}
		}
		if !ws.Rules.Config.Humans.Confirm {
			return nil
		}
	}
	ctx := a.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	q := fmt.Sprintf("agentx: %s acts as a person (human): agentx %s\nIs that you, and do you mean it?",
		safetext.Line(person), safetext.Line(strings.Join(a.args, " ")))
	ok, err := confirmAtTerminal(ctx, q)
	switch {
	case errors.Is(err, errNoTerminal):
		return &router.IdentityError{Kind: router.IdentityNoTerminal}
	case err != nil:
		return err
	case !ok:
		return &router.IdentityError{Kind: router.IdentityNotConfirmed}
	}
	return nil
}
