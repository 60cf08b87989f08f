package chanref

import (
	"fmt"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/ledger"
)

// GitHubRef links a thread entry to the GitHub issue comment that carries
// it (GitHub mode): the comment agentx posted for it, or, Inbound, the
// person's comment it was made from.
type GitHubRef struct {
	Entry   int    `json:"entry"`            // the entry's index in the thread
	Comment int64  `json:"comment"`          // GitHub's id of the comment
	Inbound bool   `json:"inbound,omitzero"` // the entry was made from this comment (an /answer or /resolve)
	Sum     string `json:"sum,omitempty"`    // digest of the text agentx posted, so a changed rendering is edited in place
}

// SlackThread links a clarification to the Slack thread that carries it
// (Slack mode): its first message, and the message of each thread entry
// in it.
type SlackThread struct {
	Channel string      `json:"channel"` // the channel's id
	TS      string      `json:"ts"`      // the thread's first message (Slack's ts)
	Posts   []SlackPost `json:"posts,omitempty"`
	// Assumed counts the asker's assumptions the thread has been told of.
	Assumed int `json:"assumed,omitzero"`
}

// SlackPost links a thread entry to a message of the thread: the one
// agentx posted for it, or, Inbound, the person's reply it was made from.
type SlackPost struct {
	Entry   int    `json:"entry"`            // the entry's index in the thread
	TS      string `json:"ts"`               // the message's ts
	Inbound bool   `json:"inbound,omitzero"` // the entry was made from this reply
}

// Post is the message of thread entry i, or nil.
func (s *SlackThread) Post(i int) *SlackPost {
	if s == nil {
		return nil
	}
	for k := range s.Posts {
		if s.Posts[k].Entry == i {
			return &s.Posts[k]
		}
	}
	return nil
}

// The keys of the channels' members in a record's agentx additions.
const (
	GitHubKey = "github"
	SlackKey  = "slack"
)

// GitHubRefs is the GitHub comments recorded on c (agentx.github), in the
// order recorded; nil when there are none.
func GitHubRefs(c *ledger.Clarification) ([]GitHubRef, error) {
	var refs []GitHubRef
	if c.X == nil {
		return nil, nil
	}
	return refs, decode(c, GitHubKey, c.X.GitHub, &refs)
}

// SetGitHubRefs records refs as c's GitHub comments; none removes them.
func SetGitHubRefs(c *ledger.Clarification, refs []GitHubRef) error {
	v, err := encode(c, GitHubKey, refs)
	if err == nil && (v != nil || c.X != nil) {
		c.Ext().GitHub = v
	}
	return err
}

// SlackThreadOf is c's Slack thread (agentx.slack), or nil.
func SlackThreadOf(c *ledger.Clarification) (*SlackThread, error) {
	var th *SlackThread
	if c.X == nil {
		return nil, nil
	}
	return th, decode(c, SlackKey, c.X.Slack, &th)
}

// SetSlackThread records th as c's Slack thread; nil removes it.
func SetSlackThread(c *ledger.Clarification, th *SlackThread) error {
	v, err := encode(c, SlackKey, th)
	if err == nil && (v != nil || c.X != nil) {
		c.Ext().Slack = v
	}
	return err
}

// decode reads member key of c's additions, raw, into v; nothing when it
// is absent.
func decode(c *ledger.Clarification, key string, raw jsontext.Value, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v, jsontext.AllowInvalidUTF8(true)); err != nil {
		return fmt.Errorf("%s: %s.%s: %w", c.ID, ledger.ExtraKey, key, err)
	}
	return nil
}

// encode is v as member key of c's additions: nil when v is empty (no
// refs, no thread), which the ledger does not write.
func encode(c *ledger.Clarification, key string, v any) (jsontext.Value, error) {
	b, err := json.Marshal(v, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		return nil, fmt.Errorf("%s: %s.%s: %w", c.ID, ledger.ExtraKey, key, err)
	}
	return ledger.Carried(b), nil
}
