package clock

import (
	"fmt"
	"time"
)

// EnvVar names the environment variable that fixes the clock.
const EnvVar = "AGENTX_NOW"

// Clock returns the current time.
type Clock func() time.Time

// Real is the system clock, in UTC.
func Real() time.Time { return time.Now().UTC() }

// FromEnv returns a clock for the value of AGENTX_NOW: the real clock when
// value is empty, else a clock fixed at that instant. Waits and lock
// budgets are measured on the real clock, so a fixed one never stalls them.
func FromEnv(value string) (Clock, error) {
	if value == "" {
		return Real, nil
	}
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: not an RFC 3339 time (example: 2026-02-26T10:00:00Z)", EnvVar, value)
	}
	return Fixed(t.UTC()), nil
}

// Fixed returns a clock that always answers t.
func Fixed(t time.Time) Clock { return func() time.Time { return t } }
