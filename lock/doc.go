// Package lock owns the advisory lock files that guard agentx data files:
// Acquire creates dataPath+".lock" exclusively (a fully written temp file
// hard-linked into place, so its JSON is never seen half-written), waits for
// it with backoff under a context, decides when a holder's lock is stale
// (IsStale, a pure function), takes stale locks over safely, and Release
// removes a lock only while it is still the caller's.
//
// Files next to the data file:
//
//	issue-42.json.lock           the lock; JSON Info (pid, host, agent, token,
//	                             timestamp, created), compatible with the
//	                             AgentX TypeScript and PowerShell tools
//	issue-42.json.lock.tmp-*     a lock being prepared; removed at once, but
//	                             one can be left behind by a killed process
//	issue-42.json.lock.takeover  an empty flock(2) guard file serialising the
//	                             removal of lock files (stale takeover and
//	                             Release); it is never deleted, and must not
//	                             be: a deleted flock file lets two processes
//	                             "hold" the guard at once
package lock
