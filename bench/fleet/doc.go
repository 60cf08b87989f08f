//go:build unix

// Command fleet measures agentx under a fleet of agent processes: it builds
// the agentx binary (static, CGO_ENABLED=0), starts real agentx processes
// on temporary workspaces and prints, in one run:
//
//  1. fleet asks: P processes each asking K questions in a row, all on one
//     issue and each on its own issue: throughput, failures by exit code,
//     latency and CPU per ask, and whether every acknowledged ask's record
//     is in the ledger exactly once (a fleet makes at most -max-asks asks,
//     so the largest ones ask fewer each); with -assumptions, after each
//     fleet on one issue, its processes record an assumption on each
//     question they asked, all at once (the row "one, assume": changes
//     other than asks, handed to the lock's holder as asks are);
//  2. history cost: asks on an issue holding 10 clarifications against one
//     holding 5,000;
//  3. start-up: the CPU of `agentx version` against a hello-world Go program,
//     and against the floor of the libraries agentx is built on (cobra and
//     toml, nothing of agentx: bench/internal/floor);
//  4. reads at scale: time and peak memory of `agentx events`, `clarify
//     list --all`, `clarify stats` and `doctor` on 10,000 ledgers and an
//     event log of a million lines;
//  5. the files one ask writes, traced with strace when it is installed;
//  6. a crowded workspace: asks on an issue of their own while 200 and
//     1,000 other issues hold five open questions each, with the side
//     monitor and without it (AGENTX_NO_MONITOR=1).
//
// Run it from the repository root:
//
//	go run ./bench/fleet                      # everything, about ten minutes on two cores
//	go run ./bench/fleet -quick               # a smaller pass, under a minute
//	go run ./bench/fleet -procs 1,8 -k 10 -skip-scale
//	go run ./bench/fleet -scale-only          # the reads at scale alone
//	go run ./bench/fleet -scale-only -per-ledger 12 -events 1000
//	go run ./bench/fleet -scale-only -against HEAD~1 # before and after, interleaved
//	go run ./bench/fleet -json > figures.json # the same figures as JSON
//	go run ./bench/fleet -skip-scale -procs 32 -assumptions -bin /tmp/agentx-before
//
// Every process is bounded by -timeout, Ctrl-C stops the run, and the
// temporary workspaces are removed on the way out (-keep keeps them).
// It is a measurement, not a test: CI's test pass does not run it.
package main
