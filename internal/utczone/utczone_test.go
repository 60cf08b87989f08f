package utczone

import (
	"os"
	"testing"
)

// TestRestore: Restore takes away only the TZ that init set, and only
// once; a TZ set since (or given to the process) stays.
func TestRestore(t *testing.T) {
	old, had := os.LookupEnv("TZ")
	t.Cleanup(func() {
		if had {
			os.Setenv("TZ", old)
		} else {
			os.Unsetenv("TZ")
		}
	})

	set = true
	os.Setenv("TZ", "")
	Restore()
	if tz, ok := os.LookupEnv("TZ"); ok {
		t.Fatalf("after Restore TZ=%q, want it unset", tz)
	}

	os.Setenv("TZ", "Europe/Paris")
	Restore()
	if tz := os.Getenv("TZ"); tz != "Europe/Paris" {
		t.Fatalf("a second Restore changed TZ to %q", tz)
	}

	set = false
	Restore()
	if tz := os.Getenv("TZ"); tz != "Europe/Paris" {
		t.Fatalf("Restore without init's TZ changed TZ to %q", tz)
	}
}
