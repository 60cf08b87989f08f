// Command floor is the start-up floor of the command-line libraries agentx
// is built on: a cobra root command with one subcommand, version, which
// prints a line, and BurntSushi/toml linked in (as every agentx command
// reads its TOML settings), with nothing of agentx's own but the start
// that spares toml's time-zone read (internal/utczone). go run
// ./bench/fleet builds it beside agentx and hello world and reports its
// start-up between the two: what of agentx version's cost over hello world
// the libraries alone take.
package main
