package cli

import (
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentx-cli/agentx/internal/channels/slackmode/slackfake"
)

// slackKey finds a script's fake Slack among its testscript values.
type slackKey struct{}

// slackChannel is the fake's channel; alice (U0ALICE01) is an answerer.
const slackChannel = "C0AGENTS1"

func setupSlack(e *testscript.Env) {
	setupFake(e, slackKey{}, func(s *slackfake.Server) bool { return s != nil })
}

// cmdSlackFake drives a fake Slack workspace on loopback, its bot in
// channel C0AGENTS1:
//
//	slackfake start [KEY=VALUE...]   start it, add a [slack] table for it to .agentx/config.toml
//	                                 (answerers = ["U0ALICE01"]; KEY=VALUE: more keys, e.g. interval="0s"),
//	                                 and set SLACK_BOT_TOKEN to the fake's bot token
//	slackfake reply N USER TEXT...   USER replies TEXT in the thread of the channel's Nth message (from 1)
//	slackfake bot-reply N TEXT...    another app's bot replies in that thread
//	slackfake messages               print the channel's messages, threads in order (author, thread, text), or (no messages)
//	slackfake ephemerals             print the ephemeral notices (to whom, text)
//	slackfake fail COUNT STATUS [RETRY_AFTER|ERROR]   the next COUNT requests fail so (200 ERROR: Slack's error)
//	slackfake requests               print how many requests reached it
func cmdSlackFake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: slackfake start|reply|bot-reply|messages|ephemerals|fail|requests ...")
	}
	h := ts.Value(slackKey{}).(*fakeHolder[*slackfake.Server])
	if args[0] != "start" && h.s == nil {
		ts.Fatalf("slackfake start first")
	}
	atoi := func(s string) int { return scriptAtoi(ts, s) }
	root := func(n string) string {
		var tops []slackfake.Message
		for _, m := range h.s.Messages(slackChannel) {
			if m.ThreadTS == "" || m.ThreadTS == m.TS {
				tops = append(tops, m)
			}
		}
		i := atoi(n)
		if i < 1 || i > len(tops) {
			ts.Fatalf("slackfake: the channel has %d messages", len(tops))
		}
		return tops[i-1].TS
	}
	switch args[0] {
	case "start":
		h.s = slackfake.New(slackChannel)
		scriptConfig(ts, "slackfake", fmt.Sprintf("\n[slack]\nchannel = %q\nanswerers = [\"U0ALICE01\"]\napi_url = %q\n", slackChannel, h.s.APIURL()), args[1:])
		ts.Setenv("SLACK_BOT_TOKEN", slackfake.BotToken)
	case "reply", "bot-reply":
		n := 3
		if args[0] == "bot-reply" {
			n = 2
		}
		if len(args) < n+1 {
			ts.Fatalf("usage: slackfake reply N USER TEXT... | bot-reply N TEXT...")
		}
		if args[0] == "bot-reply" {
			h.s.Reply(slackChannel, root(args[1]), "U0OTHERBOT", strings.Join(args[2:], " "), true)
		} else {
			h.s.Reply(slackChannel, root(args[1]), args[2], strings.Join(args[3:], " "), false)
		}
	case "messages":
		ms := h.s.Messages(slackChannel)
		if len(ms) == 0 {
			fmt.Fprintf(ts.Stdout(), "(no messages)\n")
		}
		for _, m := range ms {
			where := "channel"
			if m.ThreadTS != "" && m.ThreadTS != m.TS {
				where = "thread"
			}
			who := m.User
			if m.BotID != "" {
				who += " (bot)"
			}
			fmt.Fprintf(ts.Stdout(), "--- %s by %s\n%s\n", where, who, m.Text)
		}
	case "ephemerals":
		for _, e := range h.s.Ephemerals() {
			fmt.Fprintf(ts.Stdout(), "--- to %s: %s\n", e.User, e.Text)
		}
	case "fail":
		if len(args) < 3 {
			ts.Fatalf("usage: slackfake fail COUNT STATUS [RETRY_AFTER|ERROR]")
		}
		status, retry, slackErr := atoi(args[2]), 0, ""
		if len(args) > 3 {
			if status == 200 {
				slackErr = args[3]
			} else {
				retry = atoi(args[3])
			}
		}
		h.s.Fail(atoi(args[1]), status, retry, slackErr)
	case "requests":
		fmt.Fprintf(ts.Stdout(), "requests: %d\n", h.s.RequestCount())
	default:
		ts.Fatalf("slackfake: unknown %q", args[0])
	}
}
