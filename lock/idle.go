package lock

// IfIdle runs fn while holding the kernel lock that agentx writers of
// lockPath queue on, provided no live agentx process holds it now; held
// reports that one did, and fn was not run. A doctor removes what a
// killed writer left (a lock's prepared file, a data file's temp file)
// this way, so that it never removes the file of a writer still at work,
// whatever the files' times say.
func IfIdle(lockPath string, fn func() error) (held bool, err error) {
	fl, ok, err := tryQueue(lockPath)
	if err != nil {
		return false, err
	}
	if !ok {
		return true, nil
	}
	defer func() { _ = fl.Unlock() }()
	return false, fn()
}
