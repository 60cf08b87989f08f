package lock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTimeoutSaysQueuePosition: with a holder and two agentx processes
// already queued, a third that gives up is told how many wait and how many
// queued before it, and why that makes it wait.
func TestTimeoutSaysQueuePosition(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "p.json")
	ready := filepath.Join(dir, "ready")
	_, out := helper(t, "hold", "AGENTX_LOCK_DATA="+data, "AGENTX_LOCK_READY="+ready)
	waitFor(t, 20*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
	for range 2 {
		helper(t, "hold", "AGENTX_LOCK_DATA="+data, "AGENTX_LOCK_READY="+ready+"-late")
	}
	qpath := data + Suffix + QueueSuffix
	waitFor(t, 20*time.Second, func() bool { n, _ := queueOf(qpath); return n == 2 })

	_, err := Acquire(t.Context(), data, Options{Wait: 300 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want a TimeoutError\n%s", err, out)
	}
	if te.Queued != 2 || te.Ahead != 2 {
		t.Errorf("Queued %d, Ahead %d; want 2 and 2", te.Queued, te.Ahead)
	}
	if want := "2 other agentx processes were waiting for it, 2 of them queued before this one"; !strings.Contains(err.Error(), want) {
		t.Errorf("message %q does not say %q", err, want)
	}
}
