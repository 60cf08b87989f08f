package evaluate

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// Job is one evaluation to run: whose work, on which step.
type Job struct {
	Issue       int
	Agent       string
	Workflow    *workflow.Workflow
	Step        *workflow.Step
	Attempt     int // 1-based, within the step's cycle
	MaxAttempts int
	Previous    []*Attempt // earlier attempts in the cycle, for a review's context
}

// Runner runs checks as real processes.
type Runner struct {
	Dir   string        // the repository root: checks run here
	Env   []string      // base environment; nil: os.Environ()
	Store *ledger.Store // the issue's clarifications, for a review's context
	Run   func(ctx context.Context, argv []string, dir string, env []string, stdin []byte, timeout time.Duration) router.ProcessResult
	Diff  func(ctx context.Context) string // the work's diff for a review; nil: git diff HEAD
}

// Checks runs the step's checks in order and returns what each said. A
// cancelled ctx stops it with ctx's error.
func (r Runner) Checks(ctx context.Context, job Job) ([]CheckResult, error) {
	var review []byte
	out := make([]CheckResult, 0, len(job.Step.Evaluate))
	for _, c := range job.Step.Evaluate {
		var stdin []byte
		if c.Review {
			if review == nil {
				review = []byte(r.reviewInput(ctx, job))
			}
			stdin = review
		}
		res := r.check(ctx, job, c, stdin)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// check runs one check.
func (r Runner) check(ctx context.Context, job Job, c workflow.Check, stdin []byte) CheckResult {
	base := r.Env
	if base == nil {
		base = os.Environ()
	}
	// The check runs as the worker whose hook runs it: it may read
	// agentx's state, and acts as no one else.
	env := append(append([]string(nil), base...),
		"AGENTX_AGENT="+job.Agent,
		"AGENTX_ISSUE="+strconv.Itoa(job.Issue),
		"AGENTX_WORKFLOW="+job.Workflow.Name,
		"AGENTX_STEP="+job.Step.ID,
		"AGENTX_CHECK="+c.Name,
		"AGENTX_ATTEMPT="+strconv.Itoa(job.Attempt),
	)
	run := r.Run
	if run == nil {
		run = router.RunProcess
	}
	timeout := c.Timeout.Duration
	if timeout <= 0 {
		timeout = workflow.DefaultCheckTimeout
	}
	start := time.Now()
	res := run(ctx, c.Command, r.Dir, env, stdin, timeout)
	cr := CheckResult{
		Name: c.Name, Command: append([]string(nil), c.Command...), ExitCode: res.ExitCode,
		TimedOut: res.TimedOut, DurationMs: time.Since(start).Milliseconds(),
	}
	output := strings.TrimSpace(string(res.Stdout))
	if e := strings.TrimSpace(string(res.Stderr)); e != "" {
		output = strings.TrimSpace(output + "\n" + e)
	}
	cr.Output = tail(output, MaxOutput)
	cr.OutputBytes = res.StdoutLen + int64(len(res.Stderr))
	switch {
	case res.TimedOut:
		cr.Verdict = NeedsRevision
		cr.Feedback = fmt.Sprintf("%s did not finish within %s (everything it started was killed): make it finish, or raise the check's timeout.\n%s", c.Command[0], timeout, tail(output, MaxFeedback/2))
	case res.Canceled == nil && res.ExitCode < 0:
		// it never ran: a configuration problem no revision fixes
		cr.Verdict = Fail
		cr.Feedback = "the check could not run: " + res.Describe(c.Command, timeout)
	default:
		cr.Verdict, cr.Feedback, cr.JSON = Decide(res.Stdout, res.ExitCode, c.FailExitCodes, output)
	}
	return cr
}

// maxDiff bounds the diff a review gets, in bytes.
const maxDiff = 256 << 10

// reviewInput is what a review check gets on stdin: the issue's context
// (the step, the attempt, earlier feedback, the clarifications settled on
// the issue) and the diff of the work.
func (r Runner) reviewInput(ctx context.Context, job Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Review the %s agent's work on issue #%d.\n\n", job.Agent, job.Issue)
	fmt.Fprintf(&b, "Workflow: %s\nStep: %s", job.Workflow.Name, job.Step.ID)
	if job.Step.Title != "" {
		fmt.Fprintf(&b, " (%s)", job.Step.Title)
	}
	fmt.Fprintf(&b, "\nAttempt: %d of %d\n", job.Attempt, job.MaxAttempts)
	if job.Step.CompletionCriteria != "" {
		fmt.Fprintf(&b, "Completion criteria: %s\n", job.Step.CompletionCriteria)
	}
	for _, p := range job.Previous {
		fmt.Fprintf(&b, "\nFeedback on attempt %d (%s):\n", p.Attempt, p.Verdict.Label())
		for _, c := range p.Checks {
			if c.Verdict != Pass {
				fmt.Fprintf(&b, "  %s: %s\n", c.Name, indent(head(c.Feedback, 2048)))
			}
		}
	}
	if r.Store != nil {
		if l, err := r.Store.Read(job.Issue); err == nil && len(l.Clarifications) > 0 {
			b.WriteString("\nClarifications on this issue:\n")
			for _, c := range l.Clarifications {
				fmt.Fprintf(&b, "  %s (%s) %s -> %s: %s\n", c.ID, c.Status, c.From, c.To, c.Topic)
				if last := lastSay(c); last != "" {
					fmt.Fprintf(&b, "    %s\n", indent(head(last, 1024)))
				}
			}
		}
	}
	diff := r.diff(ctx)
	b.WriteString("\nDiff of the work:\n")
	b.WriteString(diff)
	b.WriteString("\n\nAnswer on stdout with one JSON line: " +
		`{"verdict": "pass" | "needs_revision" | "fail", "feedback": "what to change, specifically"}` + "\n")
	return b.String()
}

func lastSay(c *ledger.Clarification) string {
	for i := len(c.Thread) - 1; i >= 0; i-- {
		if e := c.Thread[i]; e.Type == ledger.Answer || e.Type == ledger.Resolution {
			return e.Body
		}
	}
	return ""
}

func indent(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ") }

// diff is the work's diff: the caller's Diff, else `git diff HEAD` and
// the untracked files, bounded.
func (r Runner) diff(ctx context.Context) string {
	if r.Diff != nil {
		return head(r.Diff(ctx), maxDiff)
	}
	git := func(args ...string) (string, bool) {
		res := router.RunProcess(ctx, append([]string{"git"}, args...), r.Dir, os.Environ(), nil, 30*time.Second)
		return string(res.Stdout), res.Err == nil && res.ExitCode == 0
	}
	d, ok := git("diff", "HEAD")
	if !ok {
		return "(no diff: not a git repository with a commit, or git is missing)"
	}
	if u, ok := git("ls-files", "--others", "--exclude-standard"); ok && strings.TrimSpace(u) != "" {
		d += "\nUntracked files:\n" + u
	}
	if strings.TrimSpace(d) == "" {
		return "(no changes since HEAD)"
	}
	return head(d, maxDiff)
}
