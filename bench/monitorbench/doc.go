// Command monitorbench measures what the monitor costs on every hook: it
// generates workspaces (10,000 issue ledgers holding 100,000 clarifications
// of which 500 are open, and 100-ledger ones to compare with), builds the
// agentx binary, runs `agentx hook start` and `agentx ready` as processes
// many times each and prints the median, p90 and minimum wall times.
//
//	go run ./bench/monitorbench            # from the repository root
//	go run ./bench/monitorbench -runs 50 -keep
//
// It is a measurement, not a test: CI's test pass does not run it.
package main
