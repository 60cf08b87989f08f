package cli

import "testing"

// TestTrustQuestion: the question agentx trust asks reads right for one
// command and for many.
func TestTrustQuestion(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "agentx: run this 1 command of /w on this machine?"},
		{3, "agentx: run these 3 commands of /w on this machine?"},
	} {
		if got := trustQuestion(tc.n, "/w"); got != tc.want {
			t.Errorf("trustQuestion(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
