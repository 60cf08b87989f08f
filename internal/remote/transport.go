package remote

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Transport is a shared copy of the ledgers, on another machine (Git: git
// refs on the repository's remote). A Replicator runs each write as an
// optimistic transaction on it: under the issue's lock it fetches the
// shared ledger, runs the change on it, publishes the result on top of the
// version fetched, and on a refusal (another host published first) fetches
// and runs the change again.
type Transport interface {
	// Fetch returns the shared ledger of issue as it is now. An error
	// wrapping ErrOffline means the remote could not be reached.
	Fetch(ctx context.Context, issue int) (Snapshot, error)
	// Push publishes commits, in order, on top of base. An error wrapping
	// ErrMoved means the shared ledger is no longer base (nothing was
	// published); ErrOffline that the remote could not be reached.
	Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error)
	// Attempts is how many times one write is tried against a remote that
	// keeps moving; then it goes to the outbox.
	Attempts() int
	// Name names the shared ledger of issue in messages (origin
	// refs/agentx/clarifications/issue-42).
	Name(issue int) string
}

// Snapshot is one version of an issue's shared ledger.
type Snapshot struct {
	Version string // its id (a commit); "" when the remote has no ledger for the issue
	Data    []byte // the ledger file's content at that version
}

// Commit is one change published: the ledger after it, and what it was.
type Commit struct {
	Data    []byte
	Message string
}

var (
	// ErrOffline is a remote that could not be reached in time.
	ErrOffline = errors.New("the remote could not be reached")
	// ErrMoved is a push refused because the remote moved on.
	ErrMoved = errors.New("the remote moved on since it was fetched")
	// errLeased is a push refused because a ref it leased other than the
	// ledger's moved (an intent being merged, the intents' mark): the
	// ledger may not have, but others are writing.
	errLeased = fmt.Errorf("a ref the push leased moved: %w", ErrMoved)
)

// OnCopy is a Transport that can push a change made on this host's local
// copy without a fetch so that it fails once another host has posted an
// intent since this host last fetched (Git: the intents' mark).
type OnCopy interface {
	PushOnCopy(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error)
}

// Origins is a Transport that can say which host made the changes between
// two versions of an issue's shared ledger: per clarification id, the host
// of the newest commit that changed it. from "" is the beginning of the
// chain.
type Origins interface {
	Hosts(ctx context.Context, issue int, from, to string) (map[string]string, error)
}

// Lineage is a Transport that can say whether version descends from base
// (is base, or was made on top of it): a snapshot read before another
// process settled a newer one is older, and must not replace the local
// copy.
type Lineage interface {
	Descends(ctx context.Context, version, base string) (bool, error)
}

// Authored is a Transport that can say when version was committed, and
// whether by another host than this one: a read that brings in another
// host's change made moments ago tells that the issue is busy (see
// Replicator.noteBusy).
type Authored interface {
	Committed(ctx context.Context, version string) (at time.Time, foreign bool, err error)
}
