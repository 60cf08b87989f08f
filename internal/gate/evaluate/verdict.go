package evaluate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Verdict is what a check, or an attempt as a whole, says of the work.
type Verdict string

// The verdicts.
const (
	Pass          Verdict = "pass"
	Fail          Verdict = "fail"           // a hard failure: revising will not help; a person decides
	NeedsRevision Verdict = "needs_revision" // the worker should fix what the feedback says
)

// Valid reports whether v is one of the three verdicts.
func (v Verdict) Valid() bool { return v == Pass || v == Fail || v == NeedsRevision }

// Label is the verdict as people read it: PASS, FAIL, NEEDS_REVISION.
func (v Verdict) Label() string { return strings.ToUpper(string(v)) }

// ParseVerdict reads a verdict word as a check may print it: pass, fail,
// needs_revision (any case; '-' or ' ' for '_'), and the synonyms a
// reviewer may use: ok, approve(d), revise, changes_requested, reject(ed).
func ParseVerdict(s string) (Verdict, bool) {
	w := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
	switch w {
	case "pass", "passed", "ok", "approve", "approved":
		return Pass, true
	case "fail", "failed", "reject", "rejected":
		return Fail, true
	case "needs_revision", "revise", "revision", "changes_requested", "request_changes":
		return NeedsRevision, true
	}
	return "", false
}

// MaxFeedback bounds the feedback kept from one check, in bytes.
const MaxFeedback = 16 << 10

// jsonVerdict is the JSON a check may print on stdout.
type jsonVerdict struct {
	Verdict  *string `json:"verdict"`
	Feedback any     `json:"feedback"`
}

// Decide is a check's verdict and feedback from what it printed on stdout
// and its exit code. A JSON object with a "verdict" member, as the whole of
// stdout or its last non-empty line, decides ({"verdict": "needs_revision",
// "feedback": "..."}); feedback may be a string or a list of strings. Else
// the exit code does: 0 passes, one of failCodes is a hard FAIL, any other
// needs revision, with output (the end of what it printed) as feedback.
// fromJSON says the verdict came from JSON.
func Decide(stdout []byte, exitCode int, failCodes []int, output string) (v Verdict, feedback string, fromJSON bool) {
	if v, fb, ok := jsonOf(stdout); ok {
		return v, fb, true
	}
	switch {
	case exitCode == 0:
		return Pass, "", false
	case slices.Contains(failCodes, exitCode):
		return Fail, tail(output, MaxFeedback), false
	}
	return NeedsRevision, tail(output, MaxFeedback), false
}

// jsonOf finds a JSON verdict in stdout: the whole of it, or its last
// non-empty line.
func jsonOf(stdout []byte) (Verdict, string, bool) {
	s := bytes.TrimSpace(stdout)
	candidates := [][]byte{s}
	if i := bytes.LastIndexByte(s, '\n'); i >= 0 {
		candidates = append(candidates, bytes.TrimSpace(s[i+1:]))
	}
	for _, c := range candidates {
		if len(c) == 0 || c[0] != '{' {
			continue
		}
		var jv jsonVerdict
		if json.Unmarshal(c, &jv) != nil || jv.Verdict == nil {
			continue
		}
		v, ok := ParseVerdict(*jv.Verdict)
		if !ok {
			continue
		}
		return v, head(feedbackText(jv.Feedback), MaxFeedback), true
	}
	return "", "", false
}

func feedbackText(f any) string {
	switch f := f.(type) {
	case string:
		return strings.TrimSpace(f)
	case []any:
		var lines []string
		for _, e := range f {
			if s := feedbackText(e); s != "" {
				lines = append(lines, "- "+s)
			}
		}
		return strings.Join(lines, "\n")
	case nil:
		return ""
	}
	b, _ := json.Marshal(f) // decoded from JSON: always encodes
	return string(b)
}

// Overall is an attempt's verdict from its checks': FAIL if any failed
// hard, else NEEDS_REVISION if any needs revision, else PASS (also with
// no checks).
func Overall(vs ...Verdict) Verdict {
	switch {
	case slices.Contains(vs, Fail):
		return Fail
	case slices.Contains(vs, NeedsRevision):
		return NeedsRevision
	}
	return Pass
}

// head is s's first max bytes, valid UTF-8, cut at a rune boundary.
func head(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[...]"
}

// tail is s's last max bytes, valid UTF-8, cut at a rune boundary.
func tail(s string, max int) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= max {
		return s
	}
	i := len(s) - max
	for i < len(s) && !isRuneStart(s[i]) {
		i++
	}
	return "[...]\n" + s[i:]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
