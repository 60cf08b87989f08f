package monitor

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/buildid"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/fstime"
	"github.com/agentx-cli/agentx/ledger"
)

// QuietFile (under the state directory) is where a side monitor run that
// found nothing to do notes what it looked at and when something next
// falls due, so that the runs after it skip the scan until then, or until
// something changes (see Monitor.SkipQuiet). Derived, safe to delete.
const QuietFile = "monitor" + string(filepath.Separator) + "quiet"

// quietSettle is how old a change must be before the time a file system
// gave it is trusted to tell it from the next change (fstime). A variable
// for tests.
var quietSettle = fstime.Default

// quietMax is the longest a quiet note is trusted.
const quietMax = 5 * time.Minute

// sight is what the detectors' verdicts depend on besides the time: the
// open clarifications (the ledger and index directories change whenever a
// ledger or an index file is replaced, since both are written by rename)
// and the detectors' settings.
type sight struct {
	ledgers, index time.Time
	rules          string
}

// look takes the sight of now, before the scan reads anything: a change
// made during the scan then shows as a different sight next time.
func (m *Monitor) look() (sight, bool) {
	s := m.Hub.Store
	l, err := os.Stat(filepath.Join(s.Dir(), ledger.ClarificationsDir))
	if err != nil {
		return sight{}, false
	}
	ix, err := os.Stat(s.IndexPath())
	if err != nil {
		return sight{}, false
	}
	return sight{ledgers: l.ModTime(), index: ix.ModTime(), rules: m.rules()}, true
}

// rules is the detectors' settings as text: what a change to the
// configuration could change in their verdicts.
func (m *Monitor) rules() string {
	c := m.Config
	names := []string{ledger.Human}
	for name := range m.Hub.Rules().Config.Agents {
		names = append(names, name)
	}
	slices.Sort(names)
	var retry []string
	for _, n := range names {
		if c.canRetry(n) {
			retry = append(retry, n)
		}
	}
	return strconv.FormatFloat(c.similarity(), 'g', -1, 64) + " " + c.Scope + " " + strings.Join(c.Priority, ",") + " " + strings.Join(retry, ",")
}

// line is the sight as QuietFile holds it, with due (zero: nothing ever
// falls due): one line of text, so that reading it costs next to nothing.
func (v sight) line(due time.Time) string {
	d := int64(0)
	if !due.IsZero() {
		d = due.UnixNano()
	}
	return "v1 " + buildid.ID() + " " + strconv.FormatInt(v.ledgers.UnixNano(), 10) + " " + strconv.FormatInt(v.index.UnixNano(), 10) + " " +
		strconv.FormatInt(d, 10) + " " + strconv.Quote(v.rules) + "\n"
}

// quiet reports whether the last scan noted as quiet saw what v sees, and
// nothing has fallen due since.
func (m *Monitor) quiet(v sight, now time.Time) bool {
	b, err := atomicfile.ReadFile(filepath.Join(m.Hub.Store.Dir(), QuietFile))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) < 5 || f[0] != "v1" || f[1] != buildid.ID() { // a note of another build: its detectors may differ
		return false
	}
	f = f[1:]
	n, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return false
	}
	var due time.Time
	if n != 0 {
		if due = time.Unix(0, n); !now.Before(due) {
			return false
		}
	}
	return string(b) == v.line(due)
}

// noteQuiet records that a scan that took sight v found nothing to do
// among entries at now (and that the issues it did not look at fall due
// at also at the earliest), unless a change was too recent to trust the
// directories' times. A failure to write it only means the next run scans.
func (m *Monitor) noteQuiet(v sight, entries []ledger.IndexEntry, now, also time.Time) {
	if t := time.Now(); !quietSettle.Settled(v.ledgers, t) || !quietSettle.Settled(v.index, t) {
		return
	}
	due := also // the earliest due of the issues not looked at (DigestFile), if any
	for _, e := range entries {
		if t := NextDue(e, now, m.Config); !t.IsZero() && (due.IsZero() || t.Before(due)) {
			due = t
		}
	}
	if !due.IsZero() && !due.After(now) {
		return
	}
	// A ledger fixed by hand in place leaves the directories' times as
	// they were: a quiet note lasts at most quietMax, so such a change is
	// seen within it.
	if due.IsZero() || due.After(now.Add(quietMax)) {
		due = now.Add(quietMax)
	}
	// never through a link a cloned repository may hold; a failure only
	// means the next run scans
	_ = atomicfile.WriteDerived(m.Hub.Store.Dir(), filepath.Join(m.Hub.Store.Dir(), QuietFile), []byte(v.line(due)))
}
