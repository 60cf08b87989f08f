package workflow

import (
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Defaults of the [slack] table.
const (
	DefaultSlackAPI = "https://slack.com/api/"
	// DefaultSlackInterval is how often the open threads are read at most:
	// hooks, ready and waits read them no more often than this.
	DefaultSlackInterval = time.Minute
	// DefaultSlackTimeout bounds the Slack work one command does.
	DefaultSlackTimeout = 10 * time.Second
)

// SlackConfig is the [slack] table: post each question to a person and
// each escalation to a channel, one thread per clarification, and take the
// answers from the thread.
type SlackConfig struct {
	Channel   string   `json:"channel"`   // the channel's id: C0123ABCD
	Answerers []string `json:"answerers"` // the Slack user ids whose replies count
	APIURL    string   `json:"api_url"`   // Web API base URL, with a trailing slash
	Interval  Duration `json:"interval"`  // read the open threads at most this often
	Timeout   Duration `json:"timeout"`   // Slack work one command may do
}

// ValidSlackID reports whether s has the shape of a Slack id starting with
// one of the letters of kinds: an upper-case letter or digit after it, 9
// to 32 in all.
func ValidSlackID(s, kinds string) bool {
	return len(s) >= 9 && strings.ContainsRune(kinds, rune(s[0])) && name(s, 32, "", false) && strings.ToUpper(s) == s
}

// slack decodes the [slack] table.
func (d *doc) slack(prim toml.Primitive) *SlackConfig {
	p := []string{"slack"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return nil
	}
	s := &SlackConfig{APIURL: DefaultSlackAPI, Answerers: []string{},
		Interval: Duration{DefaultSlackInterval}, Timeout: Duration{DefaultSlackTimeout}}
	def := d.decodeTable(t, p, p, []field{
		{"channel", &s.Channel, "a string"},
		{"answerers", &s.Answerers, "an array of strings"},
		{"api_url", &s.APIURL, "a string"},
		{"interval", &s.Interval, "a duration string"},
		{"timeout", &s.Timeout, "a duration string"},
	})
	if _, present := t["channel"]; !present {
		d.addf(with(p, "channel"), with(p, "channel"), `the id of the channel questions are posted to, e.g. channel = "C0123ABCD" (in Slack: the channel's details, at the bottom)`, "required")
	} else if def["channel"] && !ValidSlackID(s.Channel, "CG") {
		d.addf(with(p, "channel"), with(p, "channel"), `a channel id such as "C0123ABCD", not its name (in Slack: the channel's details, at the bottom)`, "%q is not a channel id", s.Channel)
	}
	if _, present := t["answerers"]; !present {
		d.addf(with(p, "answerers"), with(p, "answerers"), `the Slack user ids of the people who may answer, e.g. answerers = ["U0123ABCD"] (in Slack: a profile's menu, Copy member ID)`, "required")
	} else if def["answerers"] {
		if len(s.Answerers) == 0 {
			d.addf(with(p, "answerers"), with(p, "answerers"), `the Slack user ids of the people who may answer, e.g. ["U0123ABCD"]`, "must name at least one person")
		}
		for i, a := range s.Answerers {
			switch {
			case !ValidSlackID(a, "UW"):
				d.addf(with(p, "answerers"), with(p, "answerers"), `Slack user ids such as "U0123ABCD", not names or @handles (in Slack: a profile's menu, Copy member ID)`, "%q is not a Slack user id", a)
			case slices.Contains(s.Answerers[:i], a):
				d.addf(with(p, "answerers"), with(p, "answerers"), "", "%q is listed twice", a)
			}
		}
	}
	d.apiURL(def["api_url"], &s.APIURL, with(p, "api_url"), `the Web API's base URL: "https://slack.com/api/"`)
	if def["interval"] && s.Interval.Duration < 0 {
		d.addf(with(p, "interval"), with(p, "interval"), `"0s" reads the threads on every command`, "must not be negative, got %q", s.Interval.String())
	}
	d.positive(def["timeout"], s.Timeout, with(p, "timeout"))
	return s
}
