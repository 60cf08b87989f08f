package router

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Decision memory: nobody asks twice. An ask is told of the resolved
// clarifications of the workspace that asked the same thing (the same
// topic once normalised as clarify stats groups topics, or a question at
// least [memory] similarity alike), newest first, at most MaxDecided. The
// question is asked all the same; its asker may instead proceed on one of
// them (Reuse), an assumption that cites it, which a person sees in the
// queue and may overturn by replying.

// MaxDecided is the most decisions an ask is told of.
const MaxDecided = 3

// The ways a decision matches a new question (Decided.Match).
const (
	MatchTopic    = "topic"    // the same topic key
	MatchQuestion = "question" // a question at least [memory] similarity alike
)

// Decided is a decision taken before on what an ask asks.
type Decided struct {
	ID         string      `json:"id"`
	Issue      int         `json:"issue"`
	Topic      string      `json:"topic"`
	Summary    string      `json:"summary"` // what was decided (ledger.Clarification.Decision)
	ResolvedAt ledger.Time `json:"resolvedAt"`
	// Commit is the asker's commit when the decision's question was
	// asked, where it was recorded.
	Commit string `json:"commit,omitempty"`
	// Match is how it matched: MatchTopic or MatchQuestion; Similarity
	// is how alike the two questions are (0 to 1, two decimals).
	Match      string  `json:"match"`
	Similarity float64 `json:"similarity"`
	// Outdated: a file its question came with has changed since (its
	// SHA-256 differs) or is gone; Changed names them.
	Outdated bool     `json:"outdated,omitempty"`
	Changed  []string `json:"changed,omitempty"`
}

// DecidedBefore returns the decisions taken before on what a question with
// topic and question asks (see Decided), unless [memory] reuse is off.
func (h *Hub) DecidedBefore(ctx context.Context, topic, question string) ([]Decided, error) {
	m := h.Rules().Config.Memory
	if !m.Suggests() {
		return nil, nil
	}
	ms, err := h.Store.FindDecided(ctx, ledger.DecisionQuery{Topic: topic, Question: question, Similarity: m.Similarity, Max: MaxDecided})
	if err != nil {
		return nil, err
	}
	out := make([]Decided, 0, len(ms))
	for _, dm := range ms {
		d := Decided{
			ID: dm.ID, Issue: dm.Issue, Topic: dm.Topic, Summary: dm.Summary, ResolvedAt: dm.Resolved,
			Commit: dm.Commit, Match: MatchQuestion, Similarity: math.Round(dm.Similarity*100) / 100,
		}
		if dm.SameTopic {
			d.Match = MatchTopic
		}
		d.Changed = ChangedRefs(h.Dir, dm.Refs)
		d.Outdated = len(d.Changed) > 0
		out = append(out, d)
	}
	return out, nil
}

// ChangedRefs returns the files of refs (a question's context) that have
// changed since, under the repository root: a SHA-256 that differs, or a
// file gone or unreadable; each once, in order. The issue's text (kind
// issue) is no file of the repository and is not checked; a path that
// would leave the root counts as gone.
func ChangedRefs(root string, refs []ledger.ContextRef) []string {
	if len(refs) == 0 {
		return nil
	}
	var out []string
	checked := map[string]bool{}
	var r *os.Root
	for _, ref := range refs {
		if ref.Kind == "issue" || checked[ref.Path] {
			continue
		}
		checked[ref.Path] = true
		if r == nil {
			var err error
			if r, err = os.OpenRoot(root); err != nil {
				return nil // no repository to look at: nothing is known to have changed
			}
			defer func() { _ = r.Close() }()
		}
		if sum, err := fileSHA256(r, ref.Path); err != nil || !strings.EqualFold(sum, ref.SHA256) {
			out = append(out, ref.Path)
		}
	}
	return out
}

// fileSHA256 is the SHA-256 of the file at p (slash-separated, relative
// to r), in hex; r refuses a path or link that leaves it.
func fileSHA256(r *os.Root, p string) (string, error) {
	if !fs.ValidPath(path.Clean(p)) || path.IsAbs(p) {
		return "", fs.ErrInvalid
	}
	f, err := r.Open(path.Clean(p))
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	hash := sha256.New()
	if _, err := io.Copy(hash, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(hash.Sum(nil)), nil
}

// Reuse records that the asker of clarification id proceeds on the
// earlier decision of clarification decision (resolved), while id waits
// for its answer: an assumption that cites it (ledger.Reuse), with note as
// its text (default: the decision, and where it was taken). The question
// stays open: a person sees the reuse in the queue (todo, the desk) and
// overturns it by replying to the question, which reaches the asker as a
// late answer beside this assumption, as any answer to an assumed
// question does.
func (h *Hub) Reuse(ctx context.Context, id, by, decision, note string) (Record, error) {
	if err := h.named(id, decision); err != nil {
		return Record{}, err
	}
	if _, _, err := ledger.ParseID(decision); err != nil {
		return Record{}, &ledger.InputError{Field: "reuse", Value: decision, Msg: "is not a clarification id (example: CLR-42-003)"}
	}
	if decision == id {
		return Record{}, &ledger.InputError{Field: "reuse", Value: decision, Msg: "is the question itself: name the earlier clarification whose decision you reuse"}
	}
	d, err := h.Store.Get(decision)
	if err != nil {
		return Record{}, err
	}
	if d.Status != ledger.Resolved {
		return Record{}, &ledger.InputError{Field: "reuse", Value: decision, Msg: fmt.Sprintf("is %s, not resolved: only a decision taken can be reused", d.Status)}
	}
	summary := d.Decision()
	if note == "" {
		issue, _, _ := ledger.ParseID(decision)
		note = fmt.Sprintf("Reusing the decision of %s (#%d, %s): %s", decision, issue, resolvedDay(d), summary)
	}
	return h.assume(ctx, id, by, note, &ledger.Reuse{ID: decision, Summary: summary})
}

// resolvedDay is the day c was resolved, as a decision is dated.
func resolvedDay(c *ledger.Clarification) string {
	at := c.Created.Time
	if c.ResolvedAt != nil {
		at = c.ResolvedAt.Time
	}
	return at.UTC().Format(time.DateOnly)
}

// ReuseOf is the decision the assumption a reuses, worded for people:
// "CLR-42-003: Use PostgreSQL." ("" when a reuses none).
func ReuseOf(a *ledger.Assumption) string {
	if a == nil || a.Reuses == nil {
		return ""
	}
	return a.Reuses.ID + ": " + a.Reuses.Summary
}
