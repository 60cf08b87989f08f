package lock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIsStale(t *testing.T) {
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	const me = "myhost"
	const deadPID = 2000
	alive := func(pid int) bool { return pid != deadPID }
	ago := func(d time.Duration) string { return stamp(now.Add(-d)) }
	parse := func(s string) (*Info, error) { return parseInfo([]byte(s)) }

	tests := []struct {
		name    string
		content string        // lock file content, parsed with parseInfo
		modAgo  time.Duration // mod time = now - modAgo
		stale   bool
		reason  string // substring of the reason
	}{
		{"own fresh lock", `{"pid":1000,"host":"myhost","agent":"agentx","token":"t","timestamp":"` + ago(time.Second) + `","created":"` + ago(time.Second) + `"}`, time.Second, false, "within the stale age"},
		{"hour old, live pid", `{"pid":1000,"host":"myhost","agent":"agentx","created":"` + ago(time.Hour) + `","timestamp":"` + ago(time.Hour) + `"}`, time.Hour, true, "older than the stale age"},
		{"just under stale age", `{"pid":1000,"host":"myhost","created":"` + ago(29*time.Second) + `"}`, 0, false, "within"},
		{"just over stale age", `{"pid":1000,"host":"myhost","created":"` + ago(31*time.Second) + `"}`, 0, true, "older"},
		{"clock skew: created in the future", `{"pid":1000,"host":"myhost","created":"` + ago(-time.Hour) + `"}`, 0, false, "clock skew"},
		{"clock skew, other host", `{"pid":1,"host":"elsewhere","created":"` + ago(-5*time.Minute) + `"}`, 0, false, "clock skew"},
		{"dead pid same host", `{"pid":2000,"host":"myhost","created":"` + ago(time.Second) + `"}`, time.Second, true, "no longer running"},
		{"dead pid same host, future", `{"pid":2000,"host":"myhost","created":"` + ago(-time.Hour) + `"}`, 0, true, "no longer running"},
		{"live pid same host fresh", `{"pid":1000,"host":"myhost","created":"` + ago(10*time.Second) + `"}`, 0, false, "within"},
		{"other host fresh, pid dead here", `{"pid":2000,"host":"elsewhere","created":"` + ago(time.Second) + `"}`, 0, false, "within"},
		{"other host old", `{"pid":1000,"host":"elsewhere","created":"` + ago(time.Minute) + `"}`, 0, true, "older"},
		{"unparseable in grace", `{"pid":10`, time.Second, false, "grace"},
		{"unparseable past grace", `{"pid":10`, 3 * time.Second, true, "grace window"},
		{"empty in grace", ``, 500 * time.Millisecond, false, "grace"},
		{"empty past grace", ` `, 5 * time.Second, true, "unparseable"},
		{"not an object, past grace", `[1,2]`, 5 * time.Second, true, "unparseable"},
		{"TS-style fresh", `{"pid":2000,"timestamp":"` + ago(5*time.Second) + `","agent":"engineer"}`, 0, false, "timestamp"},
		{"TS-style old", `{"pid":1000,"timestamp":"` + ago(31*time.Second) + `","agent":"engineer"}`, 0, true, "timestamp"},
		{"TS-style no millis", `{"pid":1,"timestamp":"` + now.Add(-2*time.Second).Format(time.RFC3339) + `","agent":"engineer"}`, 0, false, "timestamp"},
		{"PowerShell-style fresh", `{"agent":"cli","created":"` + ago(3*time.Second) + `"}`, 0, false, "created"},
		{"PowerShell-style old", `{"agent":"cli","created":"` + ago(time.Minute) + `"}`, 0, true, "created"},
		{"PowerShell 7 digits and offset", `{"agent":"cli","created":"2026-02-26T11:59:59.1234567+02:00"}`, 0, false, "created"},
		{"pid but no host: age only", `{"pid":2000,"agent":"engineer","created":"` + ago(time.Second) + `"}`, 0, false, "within"},
		{"no times: mod time fresh", `{"pid":1,"host":"elsewhere"}`, time.Second, false, "modified"},
		{"no times: mod time old", `{"agent":"x"}`, time.Hour, true, "modified"},
		{"bad created falls back to timestamp", `{"created":"yesterday","timestamp":"` + ago(time.Hour) + `"}`, 0, true, "timestamp"},
		{"pid as string, same host, dead", `{"pid":"2000","host":"myhost","created":"` + ago(time.Second) + `"}`, 0, true, "no longer running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := parse(tt.content)
			stale, reason := IsStale(StaleInput{
				Info:     info,
				ParseErr: err,
				ModTime:  now.Add(-tt.modAgo),
				Now:      now,
				Hostname: me,
				PIDAlive: alive,
				StaleAge: 30 * time.Second,
				Grace:    2 * time.Second,
			})
			if stale != tt.stale {
				t.Errorf("IsStale = %v (%s), want %v", stale, reason, tt.stale)
			}
			if !strings.Contains(reason, tt.reason) {
				t.Errorf("reason %q does not mention %q", reason, tt.reason)
			}
		})
	}
}

func TestIsStaleDefaults(t *testing.T) {
	now := time.Now()
	info := &Info{Host: "elsewhere", Created: stamp(now.Add(-29 * time.Second))}
	if stale, reason := IsStale(StaleInput{Info: info, Now: now}); stale {
		t.Errorf("29s old with default stale age: stale (%s)", reason)
	}
	info.Created = stamp(now.Add(-31 * time.Second))
	if stale, _ := IsStale(StaleInput{Info: info, Now: now}); !stale {
		t.Error("31s old with default stale age: not stale")
	}
	// nil PIDAlive: a same-host PID is never judged dead.
	info = &Info{PID: 1 << 30, Host: "h", Created: stamp(now)}
	if stale, _ := IsStale(StaleInput{Info: info, Now: now, Hostname: "h"}); stale {
		t.Error("nil PIDAlive: stale")
	}
	// Unparseable with default grace (2s).
	if stale, _ := IsStale(StaleInput{ParseErr: ErrUnparseable, ModTime: now.Add(-time.Second), Now: now}); stale {
		t.Error("unparseable 1s old with default grace: stale")
	}
}

func TestParseInfo(t *testing.T) {
	info, err := parseInfo([]byte(`{"pid":123,"timestamp":"2026-02-26T10:00:00.123Z","agent":"engineer","extra":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != 123 || info.Agent != "engineer" || info.Timestamp != "2026-02-26T10:00:00.123Z" || info.Host != "" {
		t.Errorf("TS lock parsed as %+v", info)
	}
	at, ok := info.CreatedAt()
	if !ok || !at.Equal(time.Date(2026, 2, 26, 10, 0, 0, 123e6, time.UTC)) {
		t.Errorf("CreatedAt = %v, %v", at, ok)
	}
	info, err = parseInfo([]byte(`{"agent":"cli","created":"2026-02-26T10:00:00Z","pid":12.5,"host":7}`))
	if err != nil {
		t.Fatal(err)
	}
	if info.Agent != "cli" || info.PID != 0 || info.Host != "" {
		t.Errorf("PowerShell lock parsed as %+v", info)
	}
	for _, bad := range []string{"", "  \n", "null", "[]", `{"pid":`, "garbage"} {
		if _, err := parseInfo([]byte(bad)); !errors.Is(err, ErrUnparseable) {
			t.Errorf("parseInfo(%q) error = %v, want ErrUnparseable", bad, err)
		}
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json.lock")

	if _, _, err := Inspect(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: err = %v, want fs.ErrNotExist", err)
	}

	writeFile(t, path, `{"pid":5,"host":"h","agent":"a","token":"tok","timestamp":"2026-02-26T10:00:00.000Z","created":"2026-02-26T10:00:00.000Z"}`)
	mt := time.Date(2026, 2, 26, 10, 0, 1, 0, time.UTC)
	if err := os.Chtimes(path, mt, mt); err != nil {
		t.Fatal(err)
	}
	info, mod, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Token != "tok" || info.PID != 5 || !mod.Equal(mt) {
		t.Errorf("Inspect = %+v, %v", info, mod)
	}

	writeFile(t, path, `{"pid":`)
	info, mod, err = Inspect(path)
	if info != nil || mod.IsZero() || !errors.Is(err, ErrUnparseable) || !strings.Contains(err.Error(), path) {
		t.Errorf("unparseable: Inspect = %v, %v, %v", info, mod, err)
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
