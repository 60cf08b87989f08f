package router

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentx-cli/agentx/ledger"
)

// FuzzResponderAnswer: whatever a responder prints (stdout, of total bytes
// when the cap cut it), answerOf gives "" only when it printed nothing but
// blanks, else an answer the hub takes (within one message's limit): the output itself when it fits,
// else its start and a note.
func FuzzResponderAnswer(f *testing.F) {
	f.Add([]byte("  Repository pattern.\n"), uint32(0))
	f.Add([]byte("ok \xff\xfe done"), uint32(0))
	f.Add([]byte(" \n\t "), uint32(0))
	f.Add([]byte(" \n\t "), uint32(7))
	f.Add(bytes.Repeat([]byte("€"), ledger.MaxMessageLen/3+1), uint32(0))
	f.Add(append(bytes.Repeat([]byte("a"), ledger.MaxMessageLen-10), 0xe2, 0x82), uint32(1<<20))
	f.Fuzz(func(t *testing.T, stdout []byte, extra uint32) {
		total := int64(len(stdout)) + int64(extra%(1<<24))
		a := answerOf(stdout, total)
		valid := strings.TrimSpace(strings.ToValidUTF8(string(stdout), "\uFFFD"))
		if a == "" {
			if valid != "" || total > int64(len(stdout)) {
				t.Fatalf("no answer from %q (total %d)", stdout, total)
			}
			return
		}
		if err := ledger.ValidateMessage("answer", a); err != nil {
			t.Fatalf("answer from %d bytes (total %d) refused by the ledger: %v", len(stdout), total, err)
		}
		if len(valid) <= ledger.MaxMessageLen && total <= int64(len(stdout)) {
			if a != valid {
				t.Fatalf("answer %q, want the output %q", a, valid)
			}
			return
		}
		i := strings.LastIndex(a, "\n\n[answer truncated by agentx: ")
		if i < 0 || !strings.HasPrefix(valid, a[:i]) {
			t.Fatalf("truncated answer is not the start of the output and a note: %q", a[max(0, len(a)-200):])
		}
	})
}
