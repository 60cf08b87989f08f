// Package lock owns the locks that guard agentx data files. Acquire first
// queues in the kernel for an exclusive flock on dataPath+".lock.queue"
// (sleeping, not polling; the kernel frees it the moment its holder exits,
// so a crashed holder is recovered at once and a live one, even paused, is
// never taken over), then creates the AgentX lock file dataPath+".lock"
// exclusively, the protocol the AgentX TypeScript and PowerShell tools
// follow. Only a lock file of such a foreign tool is polled for, and only it
// (or one left by a dead process) is ever judged stale (IsStale, a pure
// function). A caller may hand its change to the holder instead of
// waiting to make it (Options.Hand, see Handoff); a holder that lets the
// lock go before it has said what became of the changes handed to it
// holds a Mark their writers wait on (AwaitMark). Check tells a writer,
// right before it makes a write visible, whether a foreign tool took its
// lock file over; Release removes the lock file only while it is still the
// caller's, then frees the queue.
//
// Files next to the data file:
//
//	issue-42.json.lock           the lock; JSON Info (pid, host, agent, token,
//	                             timestamp, created), compatible with the
//	                             AgentX TypeScript and PowerShell tools
//	issue-42.json.lock.queue     the file agentx processes flock(2) on; never
//	                             deleted, and must not be: a deleted flock file
//	                             lets two processes hold it at once. With
//	                             Options.Fair it holds the run of agentx
//	                             holders (see Fairness)
//	issue-42.json.lock.tmp-held  a lock being prepared, by the holder of the
//	                             queue's flock; removed at once, and one a
//	                             killed process left is replaced by the next
//	                             (one removed by someone else before it is
//	                             linked is prepared again)
//
// No path here is followed through a symlink: a symlink (or a FIFO) where a
// lock file belongs is refused with a *NotRegularError naming it.
package lock
