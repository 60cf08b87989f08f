package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// fakeHolder is a script's fake service, started by its command's start
// and closed when the script ends.
type fakeHolder[T interface{ Close() }] struct{ s T }

// setupFake gives every script a holder for one fake service, under key.
func setupFake[T interface{ Close() }](e *testscript.Env, key any, started func(T) bool) {
	h := &fakeHolder[T]{}
	e.Values[key] = h
	e.Defer(func() {
		if started(h.s) {
			h.s.Close()
		}
	})
}

// scriptConfig adds table (its header and keys, as TOML) to the script's
// .agentx/config.toml, with the KEY=VALUE pairs of a fake's start command
// as more keys.
func scriptConfig(ts *testscript.TestScript, cmd, table string, kvs []string) {
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("%s start: %q is not KEY=VALUE", cmd, kv)
		}
		table += k + " = " + v + "\n"
	}
	f, err := os.OpenFile(ts.MkAbs(filepath.Join(".agentx", "config.toml")), os.O_APPEND|os.O_WRONLY, 0o644)
	ts.Check(err)
	_, err = f.WriteString(table)
	ts.Check(err)
	ts.Check(f.Close())
}

// scriptAtoi is a script argument as a number.
func scriptAtoi(ts *testscript.TestScript, s string) int {
	n, err := strconv.Atoi(s)
	ts.Check(err)
	return n
}
