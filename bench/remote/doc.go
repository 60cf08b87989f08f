// Command remote measures the remote mode beside git's own floor, in the
// same run, on a local bare repository as the remote and clones of it as
// hosts, one agentx process at a time on each:
//
//   - the floor: each host, all at once, k times a bare git fetch of a ref
//     of its own and a git push of a trivial commit onto it, the least
//     any write through the remote costs;
//   - agentx: each host, all at once, k asks in a row (clarify ask), all on
//     issue 1 (one issue), or each host on an issue of its own (-spread).
//
// It prints, per row, the asks acknowledged and refused as remote_busy,
// the fetch-apply-push rounds per ask (pushes that reached the remote,
// counted by a receive-pack wrapper: that adds a shell per push to
// agentx's times, not the floor's), latency p50/p99 of both and their
// ratio, and checks the remote's ledgers afterwards (one record per
// acknowledged ask, ids dense). The load average is printed: on a shared
// machine the figures are only as good as it.
//
//	go run ./bench/remote                 # 1 host; 4 and 8 on one issue; 8 on 8 issues; k = 15
//	go run ./bench/remote -runs 1/1,8/1,8/8 -k 10
package main
