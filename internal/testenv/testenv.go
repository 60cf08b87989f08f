package testenv

import "os"

// QuickRaceExit makes child processes built with -race exit at once: by
// default the race runtime sleeps a second at exit (TSan's
// atexit_sleep_ms), which multiplies across tests that start hundreds of
// processes. Call it from TestMain; children inherit the environment.
func QuickRaceExit() {
	if os.Getenv("GORACE") == "" {
		_ = os.Setenv("GORACE", RaceEnv)
	}
}

// RaceEnv is the GORACE value for child processes.
const RaceEnv = "atexit_sleep_ms=0"
