package doctor

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// LedgerSchema is the AgentX clarification ledger schema (a copy of
// testdata/interop/agentx-clarification-ledger.schema.json).
//
//go:embed ledger.schema.json
var LedgerSchema []byte

// The checks.
const (
	CheckLedger = "ledger" // parses and passes agentx's validation
	CheckSchema = "schema" // passes the AgentX schema
	CheckLock   = "lock"   // no stale lock files
	CheckTemp   = "temp"   // no temp files left by killed writers
	CheckIndex  = "index"  // the index matches the ledgers
	CheckLayout = "layout" // each large ledger's layout memo, if in force, describes it
	// CheckDecisions: decision memory, once made, holds the ledgers'
	// resolved clarifications, and no other.
	CheckDecisions = "decisions"
	// state/.gitignore has the patterns agentx init writes
	CheckGitignore = "gitignore"
	// an agent's resume command can run: configured and trusted (found by
	// the command line, which knows this machine's trust)
	CheckWake = "wake"
)

// The severities. Only errors make the workspace unhealthy: a warning is
// something agentx copes with (a ledger from another AgentX tool that bends
// the schema, a temp file that may still be in use).
const (
	Error   = "error"
	Warning = "warning"
)

// Finding is one problem found, and what was done about it.
type Finding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Problem  string `json:"problem"`
	Fixed    bool   `json:"fixed"`
	Action   string `json:"action,omitempty"` // what --fix did, or what to do
}

// Report is what a doctor run found.
type Report struct {
	Ledgers        int       `json:"ledgers"`
	Clarifications int       `json:"clarifications"`
	Open           int       `json:"open"`
	LockFiles      int       `json:"lockFiles"`
	Findings       []Finding `json:"findings"`
	Remaining      int       `json:"remaining"` // errors not fixed
}

// Options tune a run.
type Options struct {
	Fix      bool
	StaleAge time.Duration    // a lock or temp file older than this is stale; 0: lock.DefaultStaleAge
	Now      func() time.Time // the clock; nil: time.Now
	// Gitignore is what agentx init writes to state/.gitignore: each of
	// its patterns must have a line there. "" skips the check.
	Gitignore string
}

// Run checks the state under store and, with opts.Fix, repairs stale lock
// files, leftover temp files and the index. A corrupt or invalid ledger is
// reported, never rewritten.
func Run(ctx context.Context, store *ledger.Store, opts Options) (*Report, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StaleAge <= 0 {
		opts.StaleAge = lock.DefaultStaleAge
	}
	r := &Report{Findings: []Finding{}}
	built, records, unsound, decided, err := checkLedgers(ctx, store, r)
	if err != nil {
		return nil, err
	}
	if err := checkFiles(ctx, store, opts, r); err != nil {
		return nil, err
	}
	if err := checkState(store, opts, r); err != nil {
		return nil, err
	}
	checkIndex(ctx, store, opts, r, built)
	checkDecisions(ctx, store, opts, r, decided, unsound)
	if err := crossCheckEvents(ctx, store, opts, r, records, unsound); err != nil {
		return nil, err
	}
	checkGitignore(store, opts, r)
	if opts.Fix {
		fixLayouts(r)
	}
	for _, f := range r.Findings {
		if f.Severity == Error && !f.Fixed {
			r.Remaining++
		}
	}
	return r, nil
}

// compileSchema resolves the embedded schema once. It uses
// github.com/google/jsonschema-go, which the MCP SDK already brings in and
// whose package start-up costs well under a millisecond: every hook runs
// agentx, and a validator that compiles its meta-schemas at init would tax
// each of them.
var compileSchema = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	var sch jsonschema.Schema
	if err := json.Unmarshal(LedgerSchema, &sch); err != nil {
		return nil, fmt.Errorf("ledger schema: %w", err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("ledger schema: %w", err)
	}
	return rs, nil
})

// validateSchema is ValidateSchema; tests count the calls.
var validateSchema = ValidateSchema

// ValidateSchema checks ledger JSON against the AgentX schema, with
// agentx's own additions (the "agentx" key of each record) left out and
// ids past CLR-N-999 accepted.
func ValidateSchema(data []byte) error {
	if conforms(data) {
		return nil
	}
	return validateWithSchema(data)
}

// validateWithSchema is ValidateSchema by the schema validator alone.
func validateWithSchema(data []byte) error {
	rs, err := compileSchema()
	if err != nil {
		return err
	}
	var doc any
	if err := jsonv2.Unmarshal(data, &doc, jsontext.AllowInvalidUTF8(true)); err != nil {
		return err
	}
	if m, ok := doc.(map[string]any); ok {
		if cs, ok := m["clarifications"].([]any); ok {
			for _, c := range cs {
				if rec, ok := c.(map[string]any); ok {
					delete(rec, ledger.ExtraKey)
					// The schema's id pattern stops at 999; past that AgentX
					// writers (and agentx) use more digits, a documented
					// deviation that is not a problem to report.
					if id, ok := rec["id"].(string); ok {
						if issue, seq, err := ledger.ParseID(id); err == nil && seq > 999 {
							rec["id"] = fmt.Sprintf("CLR-%d-999", issue)
						}
					}
				}
			}
		}
	}
	if err := rs.Validate(doc); err != nil {
		return errors.New(locate(rs, doc, err))
	}
	return nil
}

// locate names where a ledger breaks the schema: the validator reports
// schema paths, so each record is checked alone to find the first bad one,
// and its message is cut to "/clarifications/N/field: problem".
func locate(rs *jsonschema.Resolved, doc any, err error) string {
	m, _ := doc.(map[string]any)
	cs, _ := m["clarifications"].([]any)
	for i, rec := range cs {
		single := map[string]any{"issueNumber": m["issueNumber"], "clarifications": []any{rec}}
		if e := rs.Validate(single); e != nil {
			msg := e.Error()
			if k := strings.LastIndex(msg, "validating "); k >= 0 {
				msg = msg[k+len("validating "):]
			}
			field := ""
			if k := strings.LastIndex(msg, "/properties/"); k >= 0 {
				msg = msg[k+len("/properties/"):]
				field = "/"
			} else if k := strings.Index(msg, ": "); k >= 0 {
				msg = msg[k+2:]
			}
			return fmt.Sprintf("/clarifications/%d%s%s", i, field, msg)
		}
	}
	return flatten(err.Error())
}

// flatten puts a validator's indented error tree on one line.
func flatten(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if l != "" && !strings.HasPrefix(l, "jsonschema validation failed") {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// checkLedgers reads, decodes and checks every ledger once, and returns the
// index of open clarifications they imply (what checkIndex compares with),
// what the event checks need of the records of each sound ledger, the
// issues whose ledger is not sound, and the resolved clarifications of
// each sound ledger (what checkDecisions compares with).
func checkLedgers(ctx context.Context, store *ledger.Store, r *Report) (*ledger.Index, map[int][]recordSum, map[int]bool, map[int][]string, error) {
	issues, err := store.Issues()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// Each ledger is checked on its own (the schema check costs most), on
	// every core; the results are merged in issue order.
	memo := loadSchemaMemo(store)
	defer memo.save(ctx, store)
	results := make([]ledgerCheck, len(issues))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(issues)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(issues); i = int(next.Add(1)) - 1 {
				results[i] = checkLedger(store, issues[i], memo)
			}
		})
	}
	wg.Wait()
	built := ledger.NewIndex()
	records, unsound, decided := map[int][]recordSum{}, map[int]bool{}, map[int][]string{}
	for i, c := range results {
		if c.read {
			r.Ledgers++
		}
		if c.records == nil {
			unsound[issues[i]] = true
		} else {
			records[issues[i]] = c.records
			if len(c.resolved) > 0 {
				decided[issues[i]] = c.resolved
			}
		}
		for _, f := range c.findings {
			r.add(f)
		}
		r.Clarifications += c.clarifications
		r.Open += len(c.open)
		if len(c.open) > 0 {
			built.Issues[issues[i]] = c.open
		}
	}
	return built, records, unsound, decided, nil
}

// ledgerCheck is what checking one ledger found: whether the file could be
// read, the findings, and, when the ledger is sound, how many
// clarifications it holds and the index entries of its open ones. Not the
// ledger: the checks of every ledger are kept until they are merged, and
// the ledgers themselves, all at once, would be most of what agentx reads.
type ledgerCheck struct {
	read           bool
	findings       []Finding
	clarifications int
	open           []ledger.IndexEntry
	records        []recordSum // nil when the ledger is not sound
	resolved       []string    // the ids of its resolved clarifications, ascending
}

func checkLedger(store *ledger.Store, n int, memo *schemaMemo) (c ledgerCheck) {
	path := store.Path(n)
	data, st, err := ledger.ReadStamped(path)
	if err != nil {
		c.findings = append(c.findings, Finding{Check: CheckLedger, Severity: Error, Path: path, Problem: err.Error()})
		return c
	}
	c.read = true
	l, err := ledger.Decode(path, data)
	if err == nil && l.IssueNumber != n {
		err = fmt.Errorf("issueNumber is %d but the file is for issue %d", l.IssueNumber, n)
	}
	if err == nil {
		if verr := l.Validate(); verr != nil {
			err = fmt.Errorf("invalid: %w", verr)
		}
	}
	if err != nil {
		c.findings = append(c.findings, Finding{Check: CheckLedger, Severity: Error, Path: path, Problem: err.Error(),
			Action: "fix it by hand, or move it aside (mv " + path + " " + path + ".corrupt); agentx never overwrites it"})
		return c
	}
	c.clarifications = len(l.Clarifications)
	c.records = summarize(l)
	for _, rec := range l.Clarifications {
		if rec.Status == ledger.Resolved {
			c.resolved = append(c.resolved, rec.ID)
		}
	}
	slices.Sort(c.resolved)
	one := ledger.NewIndex()
	one.Set(l)
	c.open = one.Issues[n]
	var le *ledger.LayoutError
	if err := store.CheckLayoutOf(l, data, st); errors.As(err, &le) {
		c.findings = append(c.findings, Finding{Check: CheckLayout, Severity: Error, Path: le.Path, Problem: le.Error(),
			Action: "agentx doctor --fix removes it (derived: the next write reads the ledger whole and makes a new one)"})
	}
	if memo.passed(n, st) {
		return c // this very file passed before
	}
	if err := validateSchema(data); err != nil {
		c.findings = append(c.findings, Finding{Check: CheckSchema, Severity: Warning, Path: path, Problem: "does not match the AgentX ledger schema: " + err.Error(),
			Action: "agentx reads it; other AgentX tools may not"})
		return c
	}
	memo.pass(n, st)
	return c
}

// checkFiles walks the state directory for lock files, temp files and
// shadows whose ledger is gone.
func checkFiles(ctx context.Context, store *ledger.Store, opts Options, r *Report) error {
	var locks, temps, shadows []string
	err := filepath.WalkDir(store.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := d.Name()
		switch {
		case atomicfile.IsShadow(name):
			shadows = append(shadows, p)
		case strings.Contains(name, lock.Suffix+lock.TempInfix) || atomicfile.IsTemp(name):
			temps = append(temps, p)
		case strings.HasSuffix(name, lock.Suffix):
			locks = append(locks, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("doctor: walk %s: %w", store.Dir(), err)
	}
	r.LockFiles = len(locks)
	lopts := lock.Options{StaleAge: opts.StaleAge, Now: opts.Now}
	for _, p := range locks {
		ex, err := lock.Examine(p, lopts)
		var nr *lock.NotRegularError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // released meanwhile
		case errors.As(err, &nr):
			r.add(Finding{Check: CheckLock, Severity: Error, Path: p, Problem: nr.Error(),
				Action: "agentx refuses to use this issue until a person removes it: rm " + p})
			continue
		case err != nil:
			r.add(Finding{Check: CheckLock, Severity: Error, Path: p, Problem: err.Error(), Action: "check the file by hand"})
			continue
		case !ex.Stale:
			continue
		}
		f := Finding{Check: CheckLock, Severity: Error, Path: p, Problem: "stale lock: " + ex.Reason,
			Action: "agentx doctor --fix removes it (a writer would take it over anyway)"}
		if opts.Fix {
			removed, why, err := lock.RemoveIfStale(p, lopts)
			switch {
			case err != nil:
				f.Action = "could not remove it: " + err.Error()
			case removed:
				f.Fixed, f.Action = true, "removed"
			default:
				f.Fixed, f.Action = true, "left alone: "+why
			}
		}
		r.add(f)
	}
	for _, p := range temps {
		fi, err := os.Stat(p)
		if err != nil {
			continue // gone meanwhile
		}
		age := opts.Now().Sub(fi.ModTime())
		f := Finding{Check: CheckTemp, Severity: Warning, Path: p,
			Problem: fmt.Sprintf("temp file modified %s ago: it may still be being written", age.Round(time.Second)),
			Action:  fmt.Sprintf("left alone until it is older than %s", opts.StaleAge)}
		if age > opts.StaleAge {
			// Only while no agentx process holds the lock it was written
			// under: a writer at work, however old its file looks (a clock
			// set ahead), keeps it, and doctor says so with --fix or
			// without (looking makes no queue file where none is).
			held, err := false, error(nil)
			if l := tempLock(p); l == "" {
				if opts.Fix {
					err = os.Remove(p)
				}
			} else if opts.Fix {
				held, err = lock.IfIdle(l, func() error { return os.Remove(p) })
			} else if _, serr := os.Lstat(l + lock.QueueSuffix); serr == nil {
				held, err = lock.IfIdle(l, func() error { return nil })
			}
			if held {
				f.Problem = "temp file of a live writer: an agentx process holds the lock it is written under"
				f.Action = "left alone"
			} else {
				f.Severity = Error
				f.Problem = fmt.Sprintf("temp file left by a killed writer (modified %s ago)", age.Round(time.Second))
				switch {
				case !opts.Fix:
					f.Action = "agentx doctor --fix removes it"
				case err != nil && !errors.Is(err, fs.ErrNotExist):
					f.Action = "could not remove it: " + err.Error()
				default:
					f.Fixed, f.Action = true, "removed"
				}
			}
		}
		r.add(f)
	}
	for _, p := range shadows {
		// A shadow holds the version before last of its ledger (see
		// atomicfile.Options.Shadow): with the ledger there, it is the
		// next write's to use; without it, it may be all that is left.
		of := atomicfile.ShadowedBy(p)
		if _, err := os.Lstat(of); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		name := filepath.Base(of)
		r.add(Finding{Check: CheckTemp, Severity: Warning, Path: p,
			Problem: "the shadow of " + name + ", which is gone: it holds an earlier version of that file",
			Action:  "left alone (never removed by --fix): to recover the ledger from it, copy it to " + name + "; else delete it"})
	}
	return nil
}

// checkIndex compares the index with what the ledgers say (built, from
// checkLedgers: the ledgers are not read again).
func checkIndex(ctx context.Context, store *ledger.Store, opts Options, r *Report, built *ledger.Index) {
	path := store.IndexPath()
	var problem string
	ix, _, err := store.ReadIndex()
	switch {
	case err != nil:
		problem = err.Error()
	case !ix.Equal(built):
		problem = "does not match the ledgers: " + diff(ix, built)
	default:
		return
	}
	f := Finding{Check: CheckIndex, Severity: Error, Path: path, Problem: problem, Action: "agentx doctor --fix rebuilds it from the ledgers"}
	if opts.Fix {
		if _, _, err := store.RebuildIndex(ctx); err != nil {
			f.Action = "could not rebuild it: " + err.Error()
		} else {
			f.Fixed, f.Action = true, "rebuilt from the ledgers"
		}
	}
	r.add(f)
}

// checkDecisions compares decision memory, once an ask made it, with the
// resolved clarifications of the sound ledgers (decided, from checkLedgers):
// a decision it lacks is one no ask is told of, one it holds that a ledger
// does not is one an ask is told of wrongly. Derived: --fix makes it
// afresh from the ledgers.
func checkDecisions(ctx context.Context, store *ledger.Store, opts Options, r *Report, decided map[int][]string, unsound map[int]bool) {
	held, built, err := store.HeldDecisions()
	var problem string
	switch {
	case err != nil:
		problem = err.Error()
	case !built:
		return // made by the next ask
	default:
		var lacks, extra []string
		for n, ids := range decided {
			for _, id := range ids {
				if !slices.Contains(held[n], id) {
					lacks = append(lacks, id)
				}
			}
		}
		for n, ids := range held {
			if unsound[n] {
				continue // its ledger is reported already
			}
			for _, id := range ids {
				if !slices.Contains(decided[n], id) {
					extra = append(extra, id)
				}
			}
		}
		if len(lacks) == 0 && len(extra) == 0 {
			return
		}
		slices.SortFunc(lacks, compareIDs)
		slices.SortFunc(extra, compareIDs)
		var parts []string
		if len(lacks) > 0 {
			parts = append(parts, fmt.Sprintf("lacks %d resolved clarification(s) (%s)", len(lacks), firstFew(lacks)))
		}
		if len(extra) > 0 {
			parts = append(parts, fmt.Sprintf("offers %d that no ledger holds as resolved (%s)", len(extra), firstFew(extra)))
		}
		problem = "decision memory " + strings.Join(parts, " and ")
	}
	f := Finding{Check: CheckDecisions, Severity: Warning, Path: store.DecisionsPath(), Problem: problem,
		Action: "agentx doctor --fix makes it afresh from the ledgers (asks are told of decisions from it)"}
	if opts.Fix {
		if err := store.RebuildDecisions(ctx); err != nil {
			f.Action = "could not make it afresh: " + err.Error()
		} else {
			f.Fixed, f.Action = true, "made afresh from the ledgers"
		}
	}
	r.add(f)
}

// compareIDs orders clarification ids by issue, then sequence.
func compareIDs(a, b string) int {
	ai, as, _ := ledger.ParseID(a)
	bi, bs, _ := ledger.ParseID(b)
	if ai != bi {
		return ai - bi
	}
	return as - bs
}

// firstFew names up to three ids, and how many more.
func firstFew(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:3], ", ") + fmt.Sprintf(" and %d more", len(ids)-3)
}

// fixLayouts removes the layout memos that do not describe their ledgers.
func fixLayouts(r *Report) {
	for i, f := range r.Findings {
		if f.Check != CheckLayout {
			continue
		}
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.Findings[i].Action = "could not remove it: " + err.Error()
			continue
		}
		r.Findings[i].Fixed, r.Findings[i].Action = true, "removed (derived: the next write makes a new one)"
	}
}

// diff names the issues whose entries differ.
func diff(have, want *ledger.Index) string {
	seen := map[int]bool{}
	var bad []int
	for _, ix := range []*ledger.Index{have, want} {
		for n := range ix.Issues {
			if seen[n] {
				continue
			}
			seen[n] = true
			a := &ledger.Index{Issues: map[int][]ledger.IndexEntry{n: have.Issues[n]}}
			b := &ledger.Index{Issues: map[int][]ledger.IndexEntry{n: want.Issues[n]}}
			if len(have.Issues[n]) == 0 {
				delete(a.Issues, n)
			}
			if len(want.Issues[n]) == 0 {
				delete(b.Issues, n)
			}
			if !a.Equal(b) {
				bad = append(bad, n)
			}
		}
	}
	sort.Ints(bad)
	parts := make([]string, 0, len(bad))
	for _, n := range bad {
		parts = append(parts, fmt.Sprintf("#%d (index: %d open, ledger: %d open)", n, len(have.Issues[n]), len(want.Issues[n])))
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return "issues " + strings.Join(parts, ", ")
}

func (r *Report) add(f Finding) { r.Findings = append(r.Findings, f) }

// tempLock is the lock a temp file is written under ("": none, a temp
// file of a writer that takes no lock, removed by its age alone): a
// lock's own prepared file (issue-7.json.lock.tmp-held) its lock; a data
// file's temp file under its lock (atomicfile.LockedTemp,
// .issue-7.json.tmp-locked) the lock it is written under
// (ledger.WrittenUnder: an issue's index file and layout memo, the
// issue's ledger lock).
func tempLock(p string) string {
	dir, name := filepath.Split(p)
	if i := strings.Index(name, lock.Suffix+lock.TempInfix); i >= 0 {
		return filepath.Join(dir, name[:i+len(lock.Suffix)])
	}
	data, ok := strings.CutSuffix(strings.TrimPrefix(name, "."), ".tmp-locked")
	if !ok || atomicfile.LockedTemp(filepath.Join(dir, data)) != p {
		return ""
	}
	return ledger.WrittenUnder(filepath.Join(dir, data)) + lock.Suffix
}
