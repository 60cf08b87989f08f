//go:build !unix

package osaccount

// Check refuses: this system has no uids for agentx to check.
func Check(accounts []string, guarded ...string) error {
	return &Error{Kind: KindUnsupported}
}

// CheckParent refuses: this system has no uids for agentx to check.
func CheckParent(accounts []string, dir string) error {
	return &Error{Kind: KindUnsupported}
}
