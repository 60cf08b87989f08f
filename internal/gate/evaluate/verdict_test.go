package evaluate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name      string
		stdout    string
		exit      int
		failCodes []int
		want      Verdict
		feedback  string
		json      bool
	}{
		{"exit 0 passes", "ok  \tpkg\t0.1s\n", 0, nil, Pass, "", false},
		{"non-zero needs revision", "--- FAIL: TestX\n", 1, nil, NeedsRevision, "out", false},
		{"a configured code fails hard", "cannot build\n", 3, []int{3}, Fail, "out", false},
		{"another code still needs revision", "", 2, []int{3}, NeedsRevision, "out", false},
		{"JSON verdict wins over the exit code", `{"verdict":"needs_revision","feedback":"add a test for the empty case"}`, 0, nil, NeedsRevision, "add a test for the empty case", true},
		{"JSON on the last line", "reviewing...\nlooked at 3 files\n{\"verdict\": \"PASS\"}\n", 1, nil, Pass, "", true},
		{"upper case and dashes", `{"verdict":"Needs-Revision","feedback":"x"}`, 0, nil, NeedsRevision, "x", true},
		{"synonyms", `{"verdict":"approved"}`, 1, nil, Pass, "", true},
		{"reject is a hard fail", `{"verdict":"reject","feedback":"wrong approach"}`, 0, nil, Fail, "wrong approach", true},
		{"feedback as a list", `{"verdict":"revise","feedback":["name the error","close the file"]}`, 0, nil, NeedsRevision, "- name the error\n- close the file", true},
		{"unknown verdict word: the exit code decides", `{"verdict":"maybe"}`, 1, nil, NeedsRevision, "out", false},
		{"no verdict member: the exit code decides", `{"feedback":"x"}`, 0, nil, Pass, "", false},
		{"not JSON", "{not json", 0, nil, Pass, "", false},
		{"null verdict", `{"verdict":null}`, 4, []int{4}, Fail, "out", false},
		{"JSON in the middle only", "{\"verdict\":\"pass\"}\ntrailing text\n", 1, nil, NeedsRevision, "out", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, fb, js := Decide([]byte(tt.stdout), tt.exit, tt.failCodes, "out")
			assert.Equal(t, tt.want, v)
			assert.Equal(t, tt.feedback, fb)
			assert.Equal(t, tt.json, js)
		})
	}
}

func TestOverall(t *testing.T) {
	assert.Equal(t, Pass, Overall())
	assert.Equal(t, Pass, Overall(Pass, Pass))
	assert.Equal(t, NeedsRevision, Overall(Pass, NeedsRevision))
	assert.Equal(t, Fail, Overall(NeedsRevision, Fail, Pass))
}

func TestTailAndHeadKeepUTF8(t *testing.T) {
	s := strings.Repeat("é", 100) + "\xff"
	for _, n := range []int{1, 2, 3, 50, 101} {
		assert.True(t, utf8.ValidString(tail(s, n)), "tail %d", n)
		assert.True(t, utf8.ValidString(head(s, n)), "head %d", n)
	}
}

// FuzzDecide: whatever a check prints and however it exits, the verdict is
// one of the three, the feedback valid UTF-8 within its bound, and exit 0
// with no JSON verdict passes.
func FuzzDecide(f *testing.F) {
	f.Add([]byte(`{"verdict":"needs_revision","feedback":"x"}`), 0)
	f.Add([]byte("--- FAIL\n{\"verdict\":\"pass\"}"), 1)
	f.Add([]byte(`{"verdict":"fail","feedback":[1,{"a":2},null]}`), 3)
	f.Add([]byte("\xff\xfe"), 2)
	f.Fuzz(func(t *testing.T, stdout []byte, exit int) {
		v, fb, js := Decide(stdout, exit, []int{3}, string(stdout))
		if !v.Valid() {
			t.Fatalf("verdict %q", v)
		}
		if !utf8.ValidString(fb) {
			t.Fatalf("feedback not UTF-8: %q", fb)
		}
		if len(fb) > MaxFeedback+16 {
			t.Fatalf("feedback of %d bytes", len(fb))
		}
		if !js && exit == 0 && v != Pass {
			t.Fatalf("exit 0 without a JSON verdict gave %s", v)
		}
	})
}
