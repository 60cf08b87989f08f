package buildid

import (
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	id := ID()
	if id == "" || strings.ContainsAny(id, " \t\n") {
		t.Fatalf("ID() = %q: want a word", id)
	}
	if ID() != id {
		t.Fatal("ID changes within a run")
	}
}
