package cli

import (
	"context"
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
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "List the workflows of the workspace",
			Args:  cobra.NoArgs,
			RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
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
			}),
		},
		&cobra.Command{
			Use:   "show NAME",
			Short: "Show a workflow's steps and their clarification rules",
			Args:  cobra.ExactArgs(1),
			RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
				ws, err := a.open()
				if err != nil {
					return err
				}
				w, err := ws.Rules.Workflow(args[0])
				if err != nil {
					return err
				}
				v := workflowView{w, w.Name == ws.Rules.Config.DefaultWorkflow}
				return a.emit(v, func() { a.printWorkflow(ws.Root, v) })
			}),
		},
		newWorkflowValidateCmd(a),
	)
	return cmd
}

func (a *App) printWorkflow(root string, v workflowView) {
	bold := a.paint(boldAttr)
	file := v.File
	if rel, err := filepath.Rel(root, v.File); err == nil {
		file = rel
	}
	line := safetext.Line // the files come with the repository: outside text
	a.printf("%s  (%s)\n", bold("Workflow: "+line(v.Name)), line(file))
	if v.Description != "" {
		a.printf("  %s\n", line(v.Description))
	}
	for _, s := range v.Steps {
		a.printf("\n  %s  agent %s", bold(line(s.ID)), line(s.Agent))
		if len(s.Needs) > 0 {
			a.printf("  needs %s", line(strings.Join(s.Needs, ", ")))
		}
		a.printf("\n")
		if s.Title != "" {
			a.printf("    %s\n", line(s.Title))
		}
		if len(s.CanClarify) == 0 {
			a.printf("    may not ask clarifying questions\n")
			continue
		}
		blocking := "blocking allowed"
		if !s.ClarifyBlockingAllowed {
			blocking = "non-blocking only"
		}
		a.printf("    may ask %s · %s (non-blocking %d) · stale after %d min · %s\n",
			line(strings.Join(s.CanClarify, ", ")), words.Count(s.ClarifyMaxRounds, "round", "rounds"), s.ClarifyMaxRoundsNB, s.ClarifySLAMinutes, blocking)
	}
}

func newWorkflowValidateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:         "validate [FILE...]",
		Short:       "Check workflow and config files; without FILE, the whole workspace",
		Annotations: map[string]string{allRules: "yes"},
		Long: `Check workflow files (and config.toml) strictly: unknown keys, bad agent
names, an agent asking itself, rounds outside 1-20, SLA not positive, needs
naming a missing step or forming a cycle, duplicate step ids. Every problem is
reported with file:line and key. Exits 7 if any file is invalid.`,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			type result struct {
				File  string `json:"file"`
				Valid bool   `json:"valid"`
			}
			var results []result
			if len(args) == 0 {
				ws, err := a.open()
				if err != nil {
					return err
				}
				// every file parsed now, not taken on the workflow memo's word
				rules, err := workflow.Load(ws.Dir)
				if err != nil {
					return err
				}
				results = append(results, result{File: filepath.Join(ws.Dir, "config.toml"), Valid: true})
				for _, name := range rules.Names() {
					w, err := rules.Workflow(name)
					if err != nil {
						return err
					}
					results = append(results, result{File: w.File, Valid: true})
				}
			} else {
				var errs workflow.Errors
				for _, f := range args {
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
						return err
					}
					results = append(results, result{File: f, Valid: true})
				}
				if len(errs) > 0 {
					return errs
				}
			}
			return a.emit(results, func() {
				for _, r := range results {
					a.printf("ok  %s\n", r.File)
				}
			})
		}),
	}
}
