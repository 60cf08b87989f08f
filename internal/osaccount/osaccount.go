package osaccount

import (
	"fmt"
	"os/user"
	"strconv"
)

// The kinds of Error.
const (
	// KindNotListed: this process runs as an account the list leaves out.
	KindNotListed = "not-listed"
	// KindUnguarded: a file the list depends on (the config that holds
	// it, its directory) could be changed by an account the list leaves
	// out, so the list proves nothing.
	KindUnguarded = "unguarded"
	// KindUnsupported: the system has no uids to check (Windows).
	KindUnsupported = "unsupported"
)

// Error is a process refused as a person by the accounts check.
type Error struct {
	Kind    string
	Account string // this process's account (name, else uid)
	Path    string // KindUnguarded: the file
	Why     string // KindUnguarded: what is wrong with it
}

func (e *Error) Error() string {
	switch e.Kind {
	case KindNotListed:
		return fmt.Sprintf("this process runs as the OS account %s, which [humans] accounts does not list: a person's action is taken from a listed account", e.Account)
	case KindUnguarded:
		return fmt.Sprintf("[humans] accounts proves nothing while %s %s", e.Path, e.Why)
	}
	return "[humans] accounts: this system has no OS accounts agentx can check"
}

// uids resolves accounts (user names, or numeric uids) to uids; a name
// this system does not know matches no process.
func uids(accounts []string) map[uint32]bool {
	out := map[uint32]bool{}
	for _, a := range accounts {
		if n, err := strconv.ParseUint(a, 10, 32); err == nil {
			out[uint32(n)] = true
			continue
		}
		if u, err := user.Lookup(a); err == nil {
			if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
				out[uint32(n)] = true
			}
		}
	}
	return out
}

// name is uid's user name, else the number.
func name(uid uint32) string {
	s := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(s); err == nil && u.Username != "" {
		return u.Username + " (uid " + s + ")"
	}
	return "uid " + s
}
