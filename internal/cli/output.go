package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// schemaVersion is the version of every --json document agentx prints.
const schemaVersion = 1

type envelope struct {
	SchemaVersion int `json:"schema_version"`
	Data          any `json:"data"`
	Monitor       any `json:"monitor,omitempty"` // side-effect monitor findings, if any
	remoteMembers
}

// remoteMembers are what the remote mode adds to every document (the
// error document too).
type remoteMembers struct {
	Unsynced  []string `json:"unsynced,omitempty"`   // changes kept in the outbox: the remote was out of reach
	LocalCopy []string `json:"local_copy,omitempty"` // changes that stand but the local copy could not take (Store.Notes)
	// Overtaken: queued changes this command delivered otherwise than
	// made (renumbered, superseded).
	Overtaken []overtaken `json:"overtaken,omitempty"`
	// RemoteAsOf: when the shared ledgers this command read were fetched,
	// if earlier than this command (a workspace-wide read within the
	// [remote] interval).
	RemoteAsOf *ledger.Time `json:"remote_as_of,omitempty"`
}

// remote returns the remote mode's members of this command's document.
func (a *App) remote() remoteMembers {
	return remoteMembers{Unsynced: a.unsynced(), LocalCopy: a.localCopy(), Overtaken: a.overtaken(), RemoteAsOf: a.asOf()}
}

type errorBody struct {
	Code     string `json:"code"`
	ExitCode int    `json:"exit_code"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
}

type errorEnvelope struct {
	SchemaVersion int       `json:"schema_version"`
	Error         errorBody `json:"error"`
	Data          any       `json:"data,omitempty"` // what the failure leaves to act on (wait_timeout: the record)
	Monitor       any       `json:"monitor,omitempty"`
	remoteMembers
}

// emit prints a command's result: under --json the envelope with data,
// otherwise whatever text does.
//
// A command that runs the monitor and emits before it ran (in its body)
// is printed after it, by the lifecycle: the envelope then carries what
// the monitor did. Printing itself runs nothing.
func (a *App) emit(data any, text func()) error {
	if a.side != nil && !a.side.ran {
		a.outs = append(a.outs, func() error { return a.emit(data, text) })
		return nil
	}
	if a.json {
		b, err := json.MarshalIndent(envelope{SchemaVersion: schemaVersion, Data: data, Monitor: a.sideView(), remoteMembers: a.remote()}, "", "  ")
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", b)
		return err
	}
	text()
	return nil
}

// emitEach is emit of a list whose items each produces one at a time,
// calling put on every one: under --json the document emit would print,
// byte for byte, written as the items come, so no item is kept once
// written; otherwise put is text, called on every item, and done is
// called after the last. Nothing is written before the first item or the
// end, so an error from each before any item leaves stdout empty for the
// error document.
//
// It must run in a command's view (App.later), after the monitor: what it
// writes is not buffered as emit's is.
func emitEach[T any](a *App, each func(put func(item T) error) error, text func(item T) error, done func()) error {
	if !a.json {
		if err := each(text); err != nil {
			return err
		}
		done()
		return nil
	}
	// The envelope with a stand-in for the data, cut around it: what comes
	// before the list and after it, as json.MarshalIndent lays them out.
	const hole = `"\u0000items\u0000"`
	b, err := json.MarshalIndent(envelope{SchemaVersion: schemaVersion, Data: json.RawMessage(hole), Monitor: a.sideView(), remoteMembers: a.remote()}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	head, tail, _ := bytes.Cut(b, []byte(hole))
	w := bufio.NewWriter(a.stdout)
	n := 0
	err = each(func(item T) error {
		ib, err := json.MarshalIndent(item, "    ", "  ")
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		if n == 0 {
			w.Write(head)
			w.WriteString("[\n    ")
		} else {
			w.WriteString(",\n    ")
		}
		n++
		_, err = w.Write(ib)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		w.Write(head)
		w.WriteString("[]")
	} else {
		w.WriteString("\n  ]")
	}
	w.Write(tail)
	w.WriteString("\n")
	return w.Flush()
}

// fail prints err the way the output mode asks and returns its exit code.
func (a *App) fail(err error) int {
	code := errorExit(err)
	var coded *codedError
	if errors.As(err, &coded) && coded.Quiet {
		return code.N
	}
	hint := hintOf(err)
	msg := a.worded(err)
	// A question recorded before the failure: the asker gets its id all the
	// same (alone on stdout, or as the error document's data).
	var recorded *router.RecordedError
	if errors.As(err, &recorded) && !a.json {
		fmt.Fprintf(a.stdout, "%s\n", recorded.Record.ID)
	}
	if a.json {
		var data any
		switch {
		case coded != nil:
			data = coded.Data
		case recorded != nil:
			data = recorded.Record
		default:
			data = supersededData(err)
		}
		b, _ := json.Marshal(errorEnvelope{SchemaVersion: schemaVersion, Error: errorBody{
			Code: code.Name, ExitCode: code.N, Message: msg, Hint: hint,
		}, Data: data, Monitor: a.sideView(), remoteMembers: a.remote()})
		fmt.Fprintf(a.stderr, "%s\n", b)
		return code.N
	}
	// An error may quote input, a file name or a file's content: in text
	// it is neutralised, its following lines (workflow.Errors has one
	// problem a line) indented under the first.
	fmt.Fprint(a.stderr, safetext.Indent(msg, "agentx: ", "  "))
	if hint != "" {
		fmt.Fprintf(a.stderr, "hint: %s\n", safetext.Line(hint))
	}
	return code.N
}

// worded is err's message in the command line's words: input the packages
// name by its field (from, topic) is named by the command's flag (--from)
// when the value came from that flag, and by the environment variable it
// came from when that is the flag's default (AGENTX_AGENT for --from).
func (a *App) worded(err error) string {
	msg := err.Error()
	var in *ledger.InputError
	if a.cmd == nil || !errors.As(err, &in) || a.cmd.Flags().Lookup(in.Field) == nil {
		return msg
	}
	named := *in
	switch env := flagEnv(in.Field); {
	case a.cmd.Flags().Changed(in.Field):
		named.Field = "--" + in.Field
	case env != "" && a.getenv(env) == in.Value:
		named.Field = env
	default:
		return msg
	}
	return strings.Replace(msg, in.Error(), named.Error(), 1)
}

// flagEnv is the environment variable a flag defaults to ("" for none).
func flagEnv(flag string) string {
	if flag == "from" || flag == "agent" {
		return router.EnvAgent
	}
	return ""
}

// warnf prints a warning on stderr, neutralised to one line: warnings
// quote files and errors that came from outside.
func (a *App) warnf(format string, args ...any) {
	fmt.Fprintf(a.stderr, "agentx: warning: %s\n", safetext.Line(fmt.Sprintf(format, args...)))
}
