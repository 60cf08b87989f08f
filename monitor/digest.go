package monitor

import (
	"bytes"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/buildid"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// DigestFile (under the state directory) notes, per issue with open
// questions, the version of its ledger in which a side monitor run found
// nothing to do, and when something there next falls due. The side
// runs after it then look only at the issues whose files changed or whose
// time came: without it, a write anywhere (which voids QuietFile) made the
// next run read every issue's open questions, so an ask cost more the more
// questions the whole workspace held. Derived, safe to delete.
const DigestFile = "monitor" + string(filepath.Separator) + "digest"

// issueMark is what the digest holds of one issue.
type issueMark struct {
	ledger ledger.Stamp
	due    int64 // when something next falls due (Unix ns)
}

// digest is one side run's use of DigestFile.
type digest struct {
	m       *Monitor
	settled func(loaded func(int) bool) // notes the ledgers swept, once the issues found are loaded (OpenIssuesSettling)
	now     time.Time
	header  string
	read    map[int]issueMark // the digest as read
	listed  []int             // the issues with open questions, ascending
	hot     []int             // those to look at
	isHot   map[int]bool      // the same, as a set
	stamps  map[int]issueMark // the ledger the open questions of a hot issue were read from (due unset)
	failed  map[int]bool      // hot issues whose open questions could not be read
}

// openDigest lists the issues with open questions and, against the digest,
// picks those to look at: every issue it has no note of, and those whose
// ledger changed or in which something fell due since. Only the noted
// issues' ledgers are looked up (one fstatat each). Nil when the incremental run does not
// apply: an index never built (the full run builds it), or the detectors'
// scope global (a deadlock may then join any issues). rules is m.rules().
func (m *Monitor) openDigest(now time.Time, rules string) *digest {
	s := m.Hub.Store
	if m.Config.Scope == workflow.ScopeGlobal || !s.IndexBuilt() {
		return nil
	}
	issues, settled, err := s.OpenIssuesSettling() // with the ledgers another tool changed
	if err != nil {
		return nil
	}
	d := &digest{m: m, settled: settled, now: now, header: "v2 " + buildid.ID() + " " + strconv.Quote(rules), listed: issues,
		isHot: map[int]bool{}, stamps: map[int]issueMark{}, failed: map[int]bool{}}
	d.read = readDigest(filepath.Join(s.Dir(), DigestFile), d.header)
	var noted []int
	for _, n := range issues {
		if _, ok := d.read[n]; ok {
			noted = append(noted, n)
		}
	}
	files := s.IssueStamps(noted)
	for _, n := range issues {
		mk, ok := d.read[n]
		if f, found := files[n]; ok && found && mk.ledger == f && now.UnixNano() < mk.due {
			continue // unchanged, and nothing falls due there yet
		}
		d.hot, d.isHot[n] = append(d.hot, n), true
	}
	return d
}

// coldDue is the earliest time something falls due in the issues not
// looked at (zero if none).
func (d *digest) coldDue() time.Time {
	var due int64
	for _, n := range d.listed {
		if mk := d.read[n]; !d.isHot[n] && (due == 0 || mk.due < due) {
			due = mk.due
		}
	}
	if due == 0 {
		return time.Time{}
	}
	return time.Unix(0, due)
}

// load returns the open questions of the issues to look at.
func (d *digest) load(r *Report) []ledger.IndexEntry {
	var out []ledger.IndexEntry
	var foreign []ledger.ForeignChange
	defer func() { d.m.logForeign(r, foreign) }()
	for _, n := range d.hot {
		es, file, change, err := d.m.Hub.Store.LoadEntries(n, true) // a side run writes: not a dry run
		if err != nil {
			d.failed[n] = true
			r.Problems = append(r.Problems, problem(err))
			continue
		}
		if change != nil {
			foreign = append(foreign, *change)
		}
		if file != (ledger.Stamp{}) {
			d.stamps[n] = issueMark{ledger: file}
		}
		if out == nil {
			// as read: Detect works on a copy, and the entries may be
			// shared (ledger.Store.OpenEntries); an append copies them
			out = slices.Clip(es)
			continue
		}
		out = append(out, es...)
	}
	d.settled(func(n int) bool { return d.isHot[n] && !d.failed[n] })
	return out
}

// save notes the issues looked at in which there was nothing to do, their
// files not changed too recently to trust their times (settled), and
// keeps what it noted of the others.
func (d *digest) save(entries []ledger.IndexEntry, findings []Finding) {
	found := map[int]bool{}
	for _, f := range findings {
		found[f.Issue] = true
	}
	due := map[int]int64{}
	for _, e := range entries {
		t := NextDue(e, d.now, d.m.Config)
		if t.IsZero() {
			continue
		}
		if cur, ok := due[e.Issue]; !ok || t.UnixNano() < cur {
			due[e.Issue] = t.UnixNano()
		}
	}
	wall := time.Now()
	// A note lasts quietMax at most: a file edited in place with its time
	// set back is seen within it.
	longest := d.now.Add(quietMax).UnixNano()
	// The notes kept as they were, of the issues still listed: one left
	// for an issue read this time no longer matches its files or is due,
	// so it only costs its line. The file is rewritten only for a new
	// note, so that a fleet writing its issues all the time (whose files
	// are never old enough to note) does not rewrite it at every write.
	next := map[int]issueMark{}
	for _, n := range d.listed {
		if mk, ok := d.read[n]; ok {
			next[n] = mk
		}
	}
	added := false
	for _, n := range d.hot {
		st, known := d.stamps[n]
		if !known || found[n] || d.failed[n] || !quietSettle.Settled(time.Unix(0, st.ledger.MTime), wall) {
			continue
		}
		st.due = longest
		if t, ok := due[n]; ok {
			if t <= d.now.UnixNano() {
				continue // due now: look again next time
			}
			st.due = min(t, longest)
		}
		if next[n] != st {
			next[n], added = st, true
		}
	}
	if !added {
		return
	}
	// a failure only means the next run looks at more
	_ = atomicfile.WriteDerived(d.m.Hub.Store.Dir(), filepath.Join(d.m.Hub.Store.Dir(), DigestFile), d.encode(next))
}

// encode renders marks as DigestFile holds them: the header, then a line
// per issue, ascending: the issue, its ledger's inode, size and mod time,
// and when something there next falls due.
func (d *digest) encode(marks map[int]issueMark) []byte {
	issues := slices.Sorted(maps.Keys(marks))
	b := make([]byte, 0, len(d.header)+1+len(issues)*80)
	b = append(append(b, d.header...), '\n')
	for _, n := range issues {
		mk := marks[n]
		for i, v := range [...]int64{int64(n), int64(mk.ledger.Ino), mk.ledger.Size, mk.ledger.MTime, mk.due} {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, '\n')
	}
	return b
}

// readDigest reads DigestFile if it was written with header (this build,
// these settings); anything else reads as empty. A line that does not
// parse is left out: its issue is looked at.
func readDigest(path, header string) map[int]issueMark {
	out := map[int]issueMark{}
	b, err := atomicfile.ReadFile(path)
	if err != nil {
		return out
	}
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	if string(head) != header {
		return out
	}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		var v [5]int64
		i, ok := 0, true
		for f := range bytes.SplitSeq(line, []byte(" ")) {
			if i == len(v) {
				ok = false
				break
			}
			var err error
			v[i], err = strconv.ParseInt(string(f), 10, 64)
			ok = ok && err == nil
			i++
		}
		if !ok || i != len(v) || v[0] < 0 || ledger.ValidateIssue(int(v[0])) != nil {
			continue
		}
		out[int(v[0])] = issueMark{
			ledger: ledger.Stamp{Ino: uint64(v[1]), Size: v[2], MTime: v[3]},
			due:    v[4],
		}
	}
	return out
}
