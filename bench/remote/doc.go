// Command remote measures the remote mode beside git's own floor, in the
// same run, on a local bare repository as the remote and clones of it as
// hosts, one process at a time on each:
//
//   - the floor: each host, all at once, a bare git fetch of a ref of its
//     own and a git push of a trivial commit onto it, k times in a row: the
//     least a write through the remote costs at that concurrency;
//   - agentx: each host, all at once, k asks in a row (clarify ask), all on
//     issue 1 (HOSTS/1 in -runs), or each on an issue of its own
//     (HOSTS/HOSTS); with -base, an earlier build too, in a world of its
//     own; with one host, also the ask in a workspace without [remote],
//     what the ask itself costs on one machine.
//
// The floor and each build take turns, -block rounds at a time, so that
// all see the same load. Per row it prints the asks acknowledged, refused
// as remote_busy (nothing written) and failed otherwise; the
// fetch-apply-push rounds per ask (pushes that reached the remote, counted
// by a receive-pack wrapper; the floor's pushes go through the same
// wrapper, counted apart, so that both pay its shell); latency p50/p99 of both and their ratios; and checks
// the remote's ledgers afterwards (one record per acknowledged ask, ids
// dense), and every git command the asks ran (a git wrapper first on their
// PATH: git/ask, and per subcommand below the table). -latency D adds D to
// every exchange with the remote (upload-pack and receive-pack, the
// floor's too), as a remote across a network does; -slowest N lists each
// row's N slowest asks (host, round, latency) and the git commands each
// ran, with their start, end and exit code; -sequences N the N most common runs of git commands one ask made;
// -answers, once each row's asks are made, times every host answering its
// questions at once on the same issues (changes other than asks: answers
// acknowledged, refused, git commands an answer, latency, answers a second);
// -assumptions, before them, every host recording an assumption on its
// questions (a change to agentx's own key alone), timed alike; with
// -together both at the same moment, the next host answering each
// question as its asker records an assumption on it; -resolutions, with
// -answers, then every host resolving its answered questions at once (a
// change that closes the record), timed alike; -procs P runs P agentx
// processes on each host at once, in its one workspace (several agents in
// one clone), each making the row's rounds (the floor stays one process a
// host): rounds/ask below 1 is their asks sharing a push (a holder of the
// issue's lock makes the questions handed to it). Beside the floor it measures a ledger floor: the same fetch and
// push of commits holding the ledger agentx writes at that ask (made
// beforehand by the same asks in a workspace without [remote]), so that git
// carries the same bytes as agentx's push. The load average is printed: on a shared machine the figures are
// only as good as it.
//
// With -ledger-mb N it measures memory instead: the peak resident set of
// ready --issue N and of ready on a host with no local copy when an issue's
// shared ledger is a body of N MiB.
//
//	go run ./bench/remote                       # 1/1, 4/1, 8/1, 8/8; k = 15
//	go run ./bench/remote -runs 1/1,8/1 -k 10 -base /tmp/agentx-old
//	go run ./bench/remote -runs 8/1,8/8 -latency 300ms -slowest 8
//	go run ./bench/remote -runs 8/1,8/8 -k 10 -assumptions -answers
//	go run ./bench/remote -ledger-mb 300
package main
