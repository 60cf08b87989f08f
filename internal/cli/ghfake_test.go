package cli

import (
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
)

// ghKey finds a script's fake GitHub among its testscript values.
type ghKey struct{}

func setupGitHub(e *testscript.Env) {
	setupFake(e, ghKey{}, func(s *ghfake.Server) bool { return s != nil })
}

// cmdGHFake drives a fake GitHub repository, octo-org/octo-repo, on
// loopback:
//
//	ghfake start [KEY=VALUE...]   start it, and add a [github] table for it to .agentx/config.toml
//	                              (KEY=VALUE: more keys of the table, e.g. interval="0s")
//	ghfake comment N LOGIN ASSOC BODY...   LOGIN (a user, or a bot if it ends in [bot]) comments on issue N
//	ghfake comments N             print issue N's comments, one block each (author, reactions, body)
//	ghfake labels N               print issue N's labels
//	ghfake mark                   start counting calls
//	ghfake since-mark             print the calls counted against the rate limit since mark, and the 304s
//	ghfake fail COUNT STATUS [RETRY_AFTER]   the next COUNT requests fail so
//	ghfake lose-next-create       the next comment is created but the answer to its POST is lost
//	ghfake requests               print how many requests reached it
func cmdGHFake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: ghfake start|comment|comments|labels|mark|since-mark|fail|lose-next-create|requests ...")
	}
	h := ts.Value(ghKey{}).(*fakeHolder[*ghfake.Server])
	if args[0] != "start" && h.s == nil {
		ts.Fatalf("ghfake start first")
	}
	atoi := func(s string) int { return scriptAtoi(ts, s) }
	switch args[0] {
	case "start":
		h.s = ghfake.New("octo-org", "octo-repo")
		scriptConfig(ts, "ghfake", fmt.Sprintf("\n[github]\nrepo = \"octo-org/octo-repo\"\napi_url = %q\n", h.s.APIURL()), args[1:])
	case "comment":
		if len(args) < 5 {
			ts.Fatalf("usage: ghfake comment N LOGIN ASSOC BODY...")
		}
		typ := "User"
		if strings.HasSuffix(args[2], "[bot]") {
			typ = "Bot"
		}
		h.s.AddComment(atoi(args[1]), args[2], typ, args[3], strings.Join(args[4:], " "))
	case "comments":
		for _, c := range h.s.Comments(atoi(args[1])) {
			var reacts []string
			for _, r := range c.Reactions {
				reacts = append(reacts, r.Content+" by "+r.User.Login)
			}
			fmt.Fprintf(ts.Stdout(), "--- comment by %s (%s) reactions [%s]\n%s\n", c.User.Login, c.Association, strings.Join(reacts, ", "), c.Body)
		}
	case "labels":
		fmt.Fprintf(ts.Stdout(), "labels: [%s]\n", strings.Join(h.s.Labels(atoi(args[1])), " "))
	case "mark":
		h.s.Mark()
	case "since-mark":
		counted, nm := h.s.SinceMark()
		fmt.Fprintf(ts.Stdout(), "calls counted: %d, not modified: %d\n", counted, nm)
	case "fail":
		retry := 0
		if len(args) > 3 {
			retry = atoi(args[3])
		}
		h.s.Fail(atoi(args[1]), atoi(args[2]), retry)
	case "lose-next-create":
		h.s.LoseNextCreate(1)
	case "requests":
		fmt.Fprintf(ts.Stdout(), "requests: %d\n", h.s.RequestCount())
	default:
		ts.Fatalf("ghfake: unknown %q", args[0])
	}
}
