package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the machine has
)

// powershellAge is the age the AgentX PowerShell tool computes for a lock
// whose created field is created, at the instant now, on a machine whose
// local zone is loc, in the given edition of PowerShell. Its lock code
// reads the file with ConvertFrom-Json, casts created with [datetime], and
// takes [datetime]::UtcNow minus that: .NET subtracts the two clock
// readings (ticks) whatever their DateTimeKind. What each step does with
// the string:
//
//   - Windows PowerShell 5.1: ConvertFrom-Json (JavaScriptSerializer) leaves
//     an ISO 8601 string a string; the [datetime] cast parses it with
//     DateTime.Parse and the invariant culture, which turns a time with a
//     zone ("Z", "+02:00") into local time (Kind Local) and keeps a time
//     without one as written (Kind Unspecified).
//   - PowerShell 7: ConvertFrom-Json (Json.NET, DateTimeZoneHandling
//     RoundtripKind) makes a DateTime of it already: "Z" stays UTC (Kind
//     Utc), an offset is turned into local time (Kind Local), no zone is
//     kept as written (Kind Unspecified); the cast changes nothing.
//
// It returns an error where the tool's try block would throw (a string
// .NET does not parse), after which the tool deletes the lock.
func powershellAge(created string, now time.Time, loc *time.Location, edition string) (time.Duration, error) {
	reading := func(t time.Time) time.Time { // the clock reading, as a naive wall time
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	}
	utcNow := reading(now.UTC())
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", created); err == nil {
		return utcNow.Sub(t), nil // no zone: taken as written by both editions
	}
	t, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		return 0, fmt.Errorf("[datetime] %q: not a date: the lock is deleted", created)
	}
	zulu := strings.HasSuffix(created, "Z")
	switch {
	case edition == "7" && zulu:
		return utcNow.Sub(reading(t.UTC())), nil
	default: // 5.1 with any zone, 7 with an offset: local time
		return utcNow.Sub(reading(t.In(loc))), nil
	}
}

// TestCreatedReadRightByPowerShell: a live agentx lock is never deleted by
// the AgentX PowerShell tool as stale, west or east of UTC, in either
// edition, and a lock older than the 30 s both use is. Before, created was
// RFC 3339 with "Z": Windows PowerShell read it as local time, so in
// California an agentx lock a second old was 8 hours old and was deleted
// under its holder (and in Tokyo a dead one was never stale).
func TestCreatedReadRightByPowerShell(t *testing.T) {
	const staleSecs = 30 // the PowerShell tool's
	dir := t.TempDir()
	data := filepath.Join(dir, "issue-1.json")
	l, err := Acquire(context.Background(), data, Options{Agent: "engineer"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	raw, err := os.ReadFile(data + Suffix)
	if err != nil {
		t.Fatal(err)
	}
	var content struct {
		Created string `json:"created"`
	}
	if err := json.Unmarshal(raw, &content); err != nil || content.Created == "" {
		t.Fatalf("lock %s has no created: %v", raw, err)
	}
	taken, ok := l.info.CreatedAt()
	if !ok {
		t.Fatalf("agentx cannot read its own created %q", content.Created)
	}
	for _, zone := range []string{"America/Los_Angeles", "America/Sao_Paulo", "UTC", "Europe/Berlin", "Asia/Tokyo", "Pacific/Kiritimati"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for _, edition := range []string{"5.1", "7"} {
			for _, tt := range []struct {
				after time.Duration
				stale bool
			}{{time.Second, false}, {29 * time.Second, false}, {31 * time.Second, true}, {time.Hour, true}} {
				age, err := powershellAge(content.Created, taken.Add(tt.after), loc, edition)
				if err != nil {
					t.Fatalf("%s, PowerShell %s: %v", zone, edition, err)
				}
				if stale := age.Seconds() > staleSecs; stale != tt.stale || age.Round(time.Millisecond) != tt.after {
					t.Errorf("%s, PowerShell %s, %s after it was taken: created %q reads as %s old (stale %v), want %s (stale %v)",
						zone, edition, tt.after, content.Created, age, stale, tt.after, tt.stale)
				}
			}
		}
	}
}

// TestPowershellAgeModel pins the model above to what PowerShell is known
// to do with the old form, so that the test above cannot pass by a model
// that ignores zones.
func TestPowershellAgeModel(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 2, 26, 10, 0, 1, 0, time.UTC)
	for _, tt := range []struct {
		created, edition string
		want             time.Duration
	}{
		{"2026-02-26T10:00:00.000Z", "5.1", 8*time.Hour + time.Second},    // the cast makes it 02:00 local
		{"2026-02-26T10:00:00.000Z", "7", time.Second},                    // Json.NET keeps it UTC
		{"2026-02-26T10:00:00.000+00:00", "7", 8*time.Hour + time.Second}, // an offset is made local
		{"2026-02-26T10:00:00.000", "5.1", time.Second},                   // as written
		{"2026-02-26T10:00:00.000", "7", time.Second},                     // as written
		{"2026-02-26T10:00:00.1234567Z", "7", time.Second - 123456700},    // what the tool itself writes
		{"2026-02-26T10:00:00.1234567Z", "5.1", 8*time.Hour + 876543300},  // its own locks are misread by 5.1 too
	} {
		got, err := powershellAge(tt.created, now, la, tt.edition)
		if err != nil || got != tt.want {
			t.Errorf("powershellAge(%q, PowerShell %s) = %v, %v; want %v", tt.created, tt.edition, got, err, tt.want)
		}
	}
	if _, err := powershellAge("/Date(x)/", now, la, "7"); err == nil {
		t.Error("powershellAge accepted what .NET cannot parse")
	}
}

// TestCreatedOldFormStillRead: a lock agentx wrote before (created in RFC
// 3339 with "Z") is read as the same instant as the new form.
func TestCreatedOldFormStillRead(t *testing.T) {
	at := time.Date(2026, 2, 26, 10, 0, 0, 123e6, time.UTC)
	for _, created := range []string{stamp(at), CreatedStamp(at)} {
		got, ok := (&Info{Created: created}).CreatedAt()
		if !ok || !got.Equal(at) {
			t.Errorf("CreatedAt(%q) = %v, %v; want %v", created, got, ok, at)
		}
	}
}

// TestTimestampReadRightByNode: the AgentX TypeScript tool judges a lock by
// timestamp ?? created through new Date(); run that rule in node, in zones
// west and east of UTC, on a lock agentx holds.
func TestTimestampReadRightByNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "issue-1.json")
	l, err := Acquire(context.Background(), data, Options{Agent: "engineer"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	script := `const fs = require('fs');
const content = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const ts = content.timestamp ?? content.created;
console.log(String(Date.now() - new Date(ts).getTime()));`
	for _, zone := range []string{"America/Los_Angeles", "UTC", "Asia/Tokyo"} {
		cmd := exec.Command(node, "-e", script, data+Suffix)
		cmd.Env = append(os.Environ(), "TZ="+zone)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("node: %v: %s", err, ee.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		ms, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("node printed %q", out)
		}
		if ms < 0 || ms > 10_000 {
			t.Errorf("TZ=%s: node computes the age of a lock just taken as %d ms", zone, ms)
		}
	}
}
