// Package utczone keeps an agentx process from reading the machine's time
// zone, which it never uses.
//
// agentx records and prints every time in UTC (package clock). The TOML
// library asks for the local zone while packages initialise
// (time.Now().Zone()), and Go then reads /etc/localtime: an open, two
// reads and a parse in every process, a tenth of what a hello-world
// program costs to start. This package imports nothing but syscall, so it
// is initialised before package time and everything that uses it. When
// TZ is not set it sets TZ to "" (Go's UTC) for the initialisation, and
// Restore, called first thing by the command, takes it away again: the
// programs agentx starts (notify commands, responders, git) get the
// environment agentx was given. A TZ that is set is left alone.
package utczone
