// Command cli measures agentx commands as a user runs them: the built
// binary started as a process on a generated workspace, timed over many
// runs, reported as median and 90th percentile wall time.
//
//	go run ./bench/cli [-issues 1000] [-runs 30]
package main
