//go:build unix

package osaccount

import (
	"fmt"
	"os"
	"syscall"
)

// Check reports whether this process may act as a person when people act
// from accounts: its real uid must be one of them, and every path in
// guarded (the config file that lists them, and the directories that hold
// it) must be owned by root or one of them and writable by no one else,
// or an agent could have written itself into the list. nil when it may.
func Check(accounts []string, guarded ...string) error {
	ok := uids(accounts)
	uid := uint32(os.Getuid())
	if !ok[uid] {
		return &Error{Kind: KindNotListed, Account: name(uid)}
	}
	for _, p := range guarded {
		fi, err := os.Lstat(p)
		if err != nil {
			return &Error{Kind: KindUnguarded, Account: name(uid), Path: p, Why: fmt.Sprintf("cannot be looked at (%v)", err)}
		}
		st, isStat := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return &Error{Kind: KindUnguarded, Account: name(uid), Path: p, Why: "is a symbolic link: make it the file itself"}
		case !isStat:
			return &Error{Kind: KindUnguarded, Account: name(uid), Path: p, Why: "has no owner this system reports"}
		case st.Uid != 0 && !ok[st.Uid]:
			return &Error{Kind: KindUnguarded, Account: name(uid), Path: p, Why: fmt.Sprintf("is owned by %s, an account the list leaves out: chown it to a listed account", name(st.Uid))}
		case fi.Mode().Perm()&0o022 != 0:
			return &Error{Kind: KindUnguarded, Account: name(uid), Path: p, Why: fmt.Sprintf("is writable by other accounts (mode %04o): chmod go-w it", fi.Mode().Perm())}
		}
	}
	return nil
}

// CheckParent checks dir, the directory that holds a guarded one: an
// account that may write in it could rename the guarded directory away and
// put its own in its place. So dir, when other accounts may write in it
// (a repository agents work in), must be sticky (chmod +t: only an entry's
// owner renames it) and owned by root or a listed account.
func CheckParent(accounts []string, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return &Error{Kind: KindUnguarded, Account: name(uint32(os.Getuid())), Path: dir, Why: fmt.Sprintf("cannot be looked at (%v)", err)}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode().Perm()&0o022 == 0 || fi.Mode()&os.ModeSticky != 0 && (st.Uid == 0 || uids(accounts)[st.Uid]) {
		return nil
	}
	return &Error{Kind: KindUnguarded, Account: name(uint32(os.Getuid())), Path: dir,
		Why: fmt.Sprintf("lets other accounts rename .agentx away (mode %04o): chmod +t it, owned by a listed account, or chmod go-w it", fi.Mode().Perm())}
}
