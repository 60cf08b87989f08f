// Command bigledger measures what an issue's history and agentx's start
// cost, as a user runs agentx: the built binary started as a process. It
// prints, as medians of CPU (user + system, from rusage) and wall time:
//
//   - one `clarify ask --non-blocking` on an issue whose ledger already
//     holds 10 clarifications, and on one whose ledger holds -records
//     (20,000), the two taking turns, and the ratio (the goal is ×2 at
//     most: an ask's work follows the change, not the history);
//   - `agentx version` and a hello-world Go program built the same way
//     (CGO_ENABLED=0), in a shuffled order each round, and the ratio.
//
// The ledgers are bench/internal/gen's History: nine in ten resolved, the
// rest answered or pending, each with a question and an answer. -base
// runs another build (an earlier commit's) beside this one, on
// workspaces of its own, the runs taking turns. A binary given with -bin
// or -base is measured as it is: build it with CGO_ENABLED=0, as this
// tree's is, or its start includes the dynamic loader's.
//
//	go run ./bench/bigledger [-records 20000] [-asks 60] [-startup 300] [-bin PATH] [-base PATH] [-keep]
package main
