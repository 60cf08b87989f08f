package doctor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
)

// SchemaCacheFile remembers which ledger versions passed the AgentX schema
// check, so that doctor checks again only the ledgers written since: the
// check costs most of a doctor run, and most ledgers of a large workspace
// have not changed since the last one. Derived, local, safe to delete.
var SchemaCacheFile = filepath.Join("doctor", "schema-ok.json")

// schemaCache is the content of SchemaCacheFile: per issue, the stamp of
// the ledger version that passed.
type schemaCache struct {
	Version int                     `json:"version"`
	OK      map[string]ledger.Stamp `json:"ok"`
}

const schemaCacheVersion = 1

// schemaMemo is the cache during a run: read once, consulted and filled by
// the workers, written once at the end.
type schemaMemo struct {
	mu   sync.Mutex
	was  map[string]ledger.Stamp
	now  map[string]ledger.Stamp
	dirt bool
}

func loadSchemaMemo(store *ledger.Store) *schemaMemo {
	var c schemaCache
	m := &schemaMemo{now: map[string]ledger.Stamp{}}
	// an unreadable cache is as good as none: it is rebuilt
	if err := store.ReadState(SchemaCacheFile, &c); err == nil && c.Version == schemaCacheVersion {
		m.was = c.OK
		m.now = make(map[string]ledger.Stamp, len(c.OK)) // most pass again
	}
	return m
}

// passed reports whether issue's ledger at stamp st passed before.
func (m *schemaMemo) passed(issue int, st ledger.Stamp) bool {
	k := strconv.Itoa(issue)
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.was[k]; ok && prev == st {
		m.now[k] = st
		return true
	}
	return false
}

// pass records that issue's ledger at stamp st passes.
func (m *schemaMemo) pass(issue int, st ledger.Stamp) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now[strconv.Itoa(issue)] = st
	m.dirt = true
}

// save writes the cache when it changed (a ledger passed that had not, or
// one passed before is gone or no longer passes). A failure only means
// the next run checks more.
func (m *schemaMemo) save(ctx context.Context, store *ledger.Store) {
	if !m.dirt && len(m.now) == len(m.was) {
		return
	}
	// written whole, as WriteDerived writes caches: an unreadable cache is
	// replaced, not kept as UpdateState keeps a file it cannot parse
	b, err := json.Marshal(schemaCache{Version: schemaCacheVersion, OK: m.now})
	if err == nil {
		_ = atomicfile.WriteDerived(store.Dir(), filepath.Join(store.Dir(), SchemaCacheFile), append(b, '\n'))
	}
}
