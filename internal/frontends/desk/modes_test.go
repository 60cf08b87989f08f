package desk

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
	"github.com/agentx-cli/agentx/internal/channels/slackmode/slackfake"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// channelMode is a mode the desk works in, for TestDeskInModes: its
// config, its environment, and how a test sees and acts on its side.
type channelMode struct {
	config string
	env    []string
	// posted reports whether question is on the channel, and a handle to
	// reply to it there
	posted func(question string) (string, bool)
	// reply answers as a person of the channel on the handle posted gave
	reply func(handle, text string)
	// shows reports whether an answer text reached the channel
	shows func(text string) bool
	// person is the name the ledger records for reply's person
	person string
	// setup, if set, runs in the workspace once it is written
	setup func(dir string)
}

func slackMode(t *testing.T) channelMode {
	const channel = "C0AGENTS1"
	fake := slackfake.New(channel)
	t.Cleanup(fake.Close)
	return channelMode{
		config: fmt.Sprintf("[slack]\nchannel = %q\nanswerers = [\"U0ALICE01\"]\napi_url = %q\ninterval = \"0s\" # read at every side job\n", channel, fake.APIURL()),
		env:    []string{"SLACK_BOT_TOKEN=" + slackfake.BotToken, "SLACK_APP_TOKEN="},
		posted: func(q string) (string, bool) {
			for _, m := range fake.Messages(channel) {
				if m.ThreadTS == "" && strings.Contains(m.Text, q) {
					return m.TS, true
				}
			}
			return "", false
		},
		reply: func(ts, text string) { fake.Reply(channel, ts, "U0ALICE01", text, false) },
		shows: func(text string) bool {
			for _, m := range fake.Messages(channel) {
				if m.ThreadTS != "" && m.ThreadTS != m.TS && strings.Contains(m.Text, text) {
					return true
				}
			}
			return false
		},
		person: "slack:U0ALICE01",
	}
}

func githubMode(t *testing.T) channelMode {
	fake := ghfake.New("octo-org", "octo-repo")
	t.Cleanup(fake.Close)
	onIssue := func(text string) (int, bool) {
		for _, n := range []int{1, 2} {
			for _, c := range fake.Comments(n) {
				if strings.Contains(c.Body, text) {
					return n, true
				}
			}
		}
		return 0, false
	}
	return channelMode{
		config: fmt.Sprintf("[github]\nrepo = \"octo-org/octo-repo\"\napi_url = %q\ninterval = \"0s\" # read at every side job\nanswerers = [\"maintainer\"]\n", fake.APIURL()),
		env:    []string{"GITHUB_TOKEN=fake-token", "GH_TOKEN="},
		posted: func(q string) (string, bool) {
			n, ok := onIssue(q)
			return strconv.Itoa(n), ok
		},
		reply: func(issue, text string) {
			n, _ := strconv.Atoi(issue)
			fake.AddComment(n, "maintainer", "User", "MEMBER", fmt.Sprintf("/answer CLR-%d-001 %s", n, text))
		},
		shows:  func(text string) bool { _, ok := onIssue(text); return ok },
		person: "github:maintainer",
	}
}

// remoteMode is remote mode through a local bare repository: another host
// (a second workspace on the same remote) sees the questions, answers as
// erin, and sees the desk's answer.
func remoteMode(t *testing.T, bin string) channelMode {
	bare, other := t.TempDir(), t.TempDir()
	run := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir, c.Env = dir, append(append(cleanEnv(), "AGENTX_ROOT="+dir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"), env...)
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s %v: %s", name, args, out)
		return string(out)
	}
	join := func(dir string) {
		run(dir, nil, "git", "init", "--quiet")
		run(dir, nil, "git", "remote", "add", "origin", bare)
		run(dir, nil, bin, "remote", "enable", "origin")
	}
	run(bare, nil, "git", "init", "--quiet", "--bare")
	run(other, nil, bin, "init")
	cfg, err := os.OpenFile(filepath.Join(other, ".agentx", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = cfg.WriteString("\n[humans]\nconfirm = false # its people are scripted\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Close())
	join(other)
	return channelMode{
		setup: join,
		posted: func(q string) (string, bool) {
			c := exec.Command(bin, "clarify", "list", "--all")
			c.Env = append(cleanEnv(), "AGENTX_ROOT="+other)
			out, _ := c.Output()
			if strings.Contains(string(out), "Rollout") && strings.Contains(string(out), "Copy") {
				return "CLR-1-001", true
			}
			return "", false
		},
		reply: func(id, text string) { run(other, nil, bin, "clarify", "answer", id, "--as", "erin", "--body", text) },
		shows: func(text string) bool {
			c := exec.Command(bin, "clarify", "show", "CLR-2-001")
			c.Env = append(cleanEnv(), "AGENTX_ROOT="+other)
			out, _ := c.Output()
			return strings.Contains(string(out), text)
		},
		person: "erin",
	}
}

// TestDeskInModes runs the real agentx desk on a workspace in Slack mode
// and in GitHub mode (their loopback fakes): the desk posts the questions
// as a command would; an answer given on the channel takes the item off
// the page within an interval; an answer given at the desk reaches the
// channel; each is recorded as its person.
func TestDeskInModes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentx binary")
	}
	bin := testenv.AgentxBinary(t)
	modes := map[string]func(*testing.T) channelMode{"slack": slackMode, "github": githubMode,
		"remote": func(t *testing.T) channelMode { return remoteMode(t, bin) }}
	for name, mk := range modes {
		t.Run(name, func(t *testing.T) {
			m := mk(t)
			dir, _ := testenv.Workspace(t, "[humans]\nconfirm = false # its people are scripted\n\n"+m.config)
			if m.setup != nil {
				m.setup(dir)
			}
			// the fakes' loopback api_url gets a token only once a person trusted it
			m.env = append(m.env, testenv.Trust(t, bin, dir))
			for _, q := range [][]string{{"1", "Rollout", "Behind a flag?"}, {"2", "Copy", "Formal or casual?"}} {
				ask := exec.Command(bin, "clarify", "ask", "--issue", q[0], "--to", "human", "--topic", q[1], "--question", q[2])
				ask.Env = append(append(cleanEnv(), "AGENTX_ROOT="+dir, "AGENTX_AGENT=engineer", "AGENTX_NO_MONITOR=1"), m.env...)
				out, err := ask.CombinedOutput()
				require.NoError(t, err, "%s", out)
			}
			rules, err := workflow.Load(filepath.Join(dir, ".agentx"))
			require.NoError(t, err)
			h := router.New(ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil), rules, dir)

			_, u, _, stderr := runDesk(t, bin, dir, m.env, "--as", "dana", "--interval", "300ms")
			base, _, _ := strings.Cut(u, "/?token=")
			parsed, err := url.Parse(u)
			require.NoError(t, err)
			c := client(t)
			resp, _ := get(t, c, u)
			require.Equal(t, 303, resp.StatusCode)

			// the questions are on the channel (the desk's side work posts them)
			var handle string
			var ok bool
			eventually(t, "the first question is posted", func() bool { handle, ok = m.posted("Behind a flag?"); return ok }, stderr)
			eventually(t, "the second question is posted", func() bool { _, ok = m.posted("Formal or casual?"); return ok }, stderr)

			// a person answers the first on the channel: it leaves the page
			m.reply(handle, "Yes, behind a flag.")
			eventually(t, "the item answered on the channel leaves the page", func() bool {
				_, body := get(t, c, base+"/")
				return !strings.Contains(body, `id="item-CLR-1-001"`) && strings.Contains(body, `id="item-CLR-2-001"`)
			}, stderr)
			assert.Equal(t, m.person, lastPerson(t, h, 1))

			// dana answers the second at the desk: the channel shows it
			form := url.Values{"token": {parsed.Query().Get("token")}, "id": {"CLR-2-001"}, "verb": {"answer"}, "body": {"Casual."}}
			resp, body := (&fixture{base: base}).post(t, c, form, map[string]string{"Origin": base})
			require.Less(t, resp.StatusCode, 400, body)
			eventually(t, "the desk's answer reaches the channel", func() bool { return m.shows("Casual.") }, stderr)
			assert.Equal(t, "desk:dana", lastPerson(t, h, 2))
		})
	}
}

// lastPerson is the person recorded for the last entry of issue's first
// clarification.
func lastPerson(t *testing.T, h *router.Hub, issue int) string {
	t.Helper()
	l, err := h.Store.Read(issue)
	require.NoError(t, err)
	c := l.Find(fmt.Sprintf("CLR-%d-001", issue))
	require.NotNil(t, c)
	return c.PersonAt(len(c.Thread) - 1)
}

// eventually polls cond every 100 ms for up to 15 s, failing with what
// and the desk's stderr.
func eventually(t *testing.T, what string, cond func() bool, stderr *strings.Builder) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15 s; desk stderr:\n%s", what, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
