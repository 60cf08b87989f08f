package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/workflow"
)

// workflowView is a workflow as --json prints it: the workflow's own fields
// (the TOML key names) and whether it is the default.
type workflowView struct {
	*workflow.Workflow
	Default bool `json:"default"`
}

func newWorkflowCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "List, show and validate the workflows that say who may ask whom",
	}
	cmd.AddCommand(newWorkflowListCmd(a), newWorkflowShowCmd(a), newWorkflowValidateCmd(a))
	return cmd
}

// workflowListOptions are `agentx workflow list`'s (it has no flags).
type workflowListOptions struct{}

func newWorkflowListCmd(a *App) *cobra.Command {
	o := &workflowListOptions{}
	return &cobra.Command{
		Use:   "list",
		Short: "List the workflows of the workspace",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *workflowListOptions) run(a *App) error {
	ws, err := a.open()
	if err != nil {
		return err
	}
	def := ws.Rules.Config.DefaultWorkflow
	views := []workflowView{}
	for _, name := range ws.Rules.Names() {
		w, err := ws.Rules.Workflow(name) // a workflow memo's file may have changed since
		if err != nil {
			return err
		}
		views = append(views, workflowView{w, name == def})
	}
	return a.emit(views, func() {
		bold := a.paint(boldAttr)
		for _, v := range views {
			mark := " "
			if v.Default {
				mark = "*"
			}
			a.printf("%s %-12s %2d steps  %s\n", mark, bold(safetext.Line(v.Name)), len(v.Steps), safetext.Line(v.Description))
		}
		if def != "" {
			a.printf("(* default workflow)\n")
		}
	})
}

// workflowShowOptions are `agentx workflow show`'s argument.
type workflowShowOptions struct {
	name string
}

func newWorkflowShowCmd(a *App) *cobra.Command {
	o := &workflowShowOptions{}
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show a workflow's steps and their clarification rules",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *workflowShowOptions) run(a *App) error {
	ws, err := a.open()
	if err != nil {
		return err
	}
	w, err := ws.Rules.Workflow(o.name)
	if err != nil {
		return err
	}
	v := workflowView{w, w.Name == ws.Rules.Config.DefaultWorkflow}
	return a.emit(v, func() { printWorkflow(a.stdout, a.paint(boldAttr), ws.Root, v) })
}

// printWorkflow prints a workflow's steps and rules for a person, its
// file relative to root, the names in bold.
func printWorkflow(w io.Writer, bold func(string) string, root string, v workflowView) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	file := v.File
	if rel, err := filepath.Rel(root, v.File); err == nil {
		file = rel
	}
	line := safetext.Line // the files come with the repository: outside text
	printf("%s  (%s)\n", bold("Workflow: "+line(v.Name)), line(file))
	if v.Description != "" {
		printf("  %s\n", line(v.Description))
	}
	for _, s := range v.Steps {
		printf("\n  %s  agent %s", bold(line(s.ID)), line(s.Agent))
		if len(s.Needs) > 0 {
			printf("  needs %s", line(strings.Join(s.Needs, ", ")))
		}
		printf("\n")
		if s.Title != "" {
			printf("    %s\n", line(s.Title))
		}
		if len(s.CanClarify) == 0 {
			printf("    may not ask clarifying questions\n")
			continue
		}
		blocking := "blocking allowed"
		if !s.ClarifyBlockingAllowed {
			blocking = "non-blocking only"
		}
		printf("    may ask %s · %s (non-blocking %d) · stale after %d min · %s\n",
			line(strings.Join(s.CanClarify, ", ")), words.Count(s.ClarifyMaxRounds, "round", "rounds"), s.ClarifyMaxRoundsNB, s.ClarifySLAMinutes, blocking)
	}
}

// workflowValidateOptions are `agentx workflow validate`'s arguments.
type workflowValidateOptions struct {
	files []string // none: the whole workspace
}

// validated is one file found valid.
type validated struct {
	File  string `json:"file"`
	Valid bool   `json:"valid"`
}

func newWorkflowValidateCmd(a *App) *cobra.Command {
	o := &workflowValidateOptions{}
	return &cobra.Command{
		Use:         "validate [FILE...]",
		Short:       "Check workflow and config files; without FILE, the whole workspace",
		Annotations: map[string]string{allRules: "yes"},
		Long: `Check workflow files (and config.toml) strictly: unknown keys, bad agent
names, an agent asking itself, rounds outside 1-20, SLA not positive, needs
naming a missing step or forming a cycle, duplicate step ids. Every problem is
reported with file:line and key. Exits 7 if any file is invalid.`,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.files = args
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *workflowValidateOptions) run(a *App) error {
	var results []validated
	var err error
	if len(o.files) == 0 {
		results, err = validateWorkspace(a)
	} else {
		results, err = validateFiles(o.files)
	}
	if err != nil {
		return err
	}
	return a.emit(results, func() {
		for _, r := range results {
			a.printf("ok  %s\n", r.File)
		}
	})
}

// validateWorkspace parses every file of the workspace now, not taken on
// the workflow memo's word.
func validateWorkspace(a *App) ([]validated, error) {
	ws, err := a.open()
	if err != nil {
		return nil, err
	}
	rules, err := workflow.Load(ws.Dir)
	if err != nil {
		return nil, err
	}
	results := []validated{{File: filepath.Join(ws.Dir, "config.toml"), Valid: true}}
	for _, name := range rules.Names() {
		w, err := rules.Workflow(name)
		if err != nil {
			return nil, err
		}
		results = append(results, validated{File: w.File, Valid: true})
	}
	return results, nil
}

// validateFiles parses the files named, and returns every problem of all
// of them.
func validateFiles(files []string) ([]validated, error) {
	var results []validated
	var errs workflow.Errors
	for _, f := range files {
		var err error
		if filepath.Base(f) == "config.toml" {
			_, err = workflow.LoadConfigFile(f)
		} else {
			_, err = workflow.LoadWorkflowFile(f)
		}
		if err != nil {
			if es, ok := err.(workflow.Errors); ok {
				errs = append(errs, es...)
				continue
			}
			return nil, err
		}
		results = append(results, validated{File: f, Valid: true})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return results, nil
}
