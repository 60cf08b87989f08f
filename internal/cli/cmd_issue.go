package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
)

func newIssueCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "issue",
		Short: "An issue's text, which every question on it carries to the one asked",
	}
	cmd.AddCommand(newIssueDescribeCmd(a))
	return cmd
}

// describeOptions are `agentx issue describe`'s flags and argument.
type describeOptions struct {
	n           int
	title, body string
}

func newIssueDescribeCmd(a *App) *cobra.Command {
	o := &describeOptions{}
	cmd := &cobra.Command{
		Use:   "describe N [--title T] [--body TEXT | stdin]",
		Short: "Write issue N's title and text, which its questions carry to the one asked",
		Long: `Write issue N's title and text to .agentx/issues/N.md ("# Title", a blank
line, the text). Every question asked on the issue carries them to the one
asked (in its card, within [context] budget), so an answerer knows what the
work is for. A part not given is kept as the file has it; the body is
--body, else stdin when it is not a terminal. The file is replaced whole,
never through a symbolic link. In GitHub mode the issue's text on GitHub is
not read: describe the issue here too.`,
		Example: `  agentx issue describe 42 --title "Cache invalidation" --body "Users see stale prices after a deploy."
  agentx issue describe 42 < issue-42.md`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			n, err := ledger.ParseIssue(args[0])
			if err == nil && n == 0 {
				err = &ledger.InputError{Field: "issue", Value: args[0], Msg: "must be an issue number from 1"}
			}
			if err != nil {
				return usage(err)
			}
			o.n = n
			return o.run(a, cmd)
		}),
	}
	cmd.Flags().StringVar(&o.title, "title", "", "the issue's title, one line (default: kept)")
	cmd.Flags().StringVar(&o.body, "body", "", "the issue's text (default: stdin when it is not a terminal; else kept)")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *describeOptions) run(a *App, cmd *cobra.Command) error {
	body := o.body
	if body == "" && !cmd.Flags().Changed("body") {
		var err error
		if body, err = optionalStdin(a.stdin); err != nil {
			return err
		}
	}
	if o.title == "" && strings.TrimSpace(body) == "" {
		return usage(errors.New("give --title T, --body TEXT, or the text on stdin"))
	}
	ws, err := a.open()
	if err != nil {
		return err
	}
	is, err := brief.Describe(ws.Root, o.n, o.title, strings.TrimSpace(body))
	var in *ledger.InputError
	if errors.As(err, &in) {
		in.Field = "--" + in.Field
		return usage(in)
	}
	if err != nil {
		return err
	}
	return a.emit(is, func() {
		a.printf("issue #%d: %s written", o.n, is.Path)
		if is.Title != "" {
			a.printf(" (%s)", safetext.Line(is.Title))
		}
		a.printf("\n")
	})
}

// optionalStdin is stdin's text when stdin is not a terminal ("" when it
// is, or is empty), within a ledger body's size.
func optionalStdin(stdin io.Reader) (string, error) {
	if f, ok := stdin.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(stdin, ledger.MaxBodyLen+1))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return string(b), nil
}
