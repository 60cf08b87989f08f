package slackmode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/agentx-cli/agentx/internal/channels/relay"
)

// Message is a Slack message as agentx reads it.
type Message struct {
	TS       string
	ThreadTS string
	User     string // the author's user id ("" for some bot messages)
	Bot      bool   // a bot's or an app's message (bot_id, or subtype bot_message)
	SubType  string // "" for a plain message
	Text     string // as Slack gives it: mrkdwn, &, < and > escaped; untrusted
	Meta     *Meta  // agentx's metadata, when the message carries it
	// Proposal is agentx's metadata of a message about an enhancement
	// proposal, when it carries that instead.
	Proposal *ProposalMeta
}

// Client is the few Slack Web API calls Slack mode makes, over slack-go.
type Client struct {
	api           *slack.Client
	apiURL, token string
	hc            *http.Client
	// Requests counts the calls asked of it (one a rate limit held, and
	// so never sent, included).
	Requests int
	// Now is the clock a rate limit's Retry-After counts from (nil: the
	// real one): the store's, like every time Slack mode keeps.
	Now func() time.Time
	// Hold, when set, shares a rate limit with every process of the
	// workspace (relay.Hold): no call is made while it holds, and a 429
	// sets it. This client holds itself besides, whether or not it is set.
	Hold *relay.Hold
	// Warn receives a hold that could not be recorded in Hold (this
	// client holds all the same).
	Warn func(error)

	selfMu sync.Mutex
	self   *Self // agentx's own bot, once known

	holdMu sync.Mutex
	until  time.Time // this client's own hold: the latest 429 it got
}

// Self is who the bot token is in Slack (auth.test): agentx's own bot
// user, which is never a person. (A message with its bot id is a bot's:
// Message.Bot, which Take ignores before asking.)
type Self struct {
	UserID string
}

// Self asks Slack who the bot token is (auth.test), once per client, on
// first use; a failure is an error, and the next call asks again.
func (c *Client) Self(ctx context.Context) (Self, error) {
	c.selfMu.Lock()
	defer c.selfMu.Unlock()
	if c.self != nil {
		return *c.self, nil
	}
	c.Requests++
	r, err := c.api.AuthTestContext(ctx)
	if err != nil {
		return Self{}, c.classify("auth.test", err)
	}
	c.self = &Self{UserID: r.UserID}
	return *c.self, nil
}

// Is reports whether msg was written by agentx's own bot user.
func (s Self) Is(msg Message) bool {
	return s.UserID != "" && msg.User == s.UserID
}

// NewClient returns a client for the Web API at apiURL (with its trailing
// slash), authenticated with token, using (a copy of) hc (nil: a client
// with no timeout of its own: bound calls with their contexts). Every
// request it makes, the Socket Mode connection's included, goes through
// its hold: none is sent while a rate limit holds (a *WaitError instead),
// and a 429 holds the next ones until its Retry-After.
func NewClient(apiURL, token string, hc *http.Client) *Client {
	held := &http.Client{}
	if hc != nil {
		*held = *hc
	}
	c := &Client{apiURL: apiURL, token: token, hc: held}
	held.Transport = holdTransport{c: c, next: held.Transport}
	c.api = slack.New(token, slack.OptionAPIURL(apiURL), slack.OptionHTTPClient(held))
	return c
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// heldUntil is when calls may be made again: the later of this client's
// own hold and the workspace's (Hold); zero or past when they may now.
func (c *Client) heldUntil() time.Time {
	c.holdMu.Lock()
	until := c.until
	c.holdMu.Unlock()
	if shared := c.Hold.Until(); shared.After(until) {
		until = shared
	}
	return until
}

// hold records a 429 on call: no call until until, in this client and,
// with Hold, in every process.
func (c *Client) hold(ctx context.Context, until time.Time, call string) {
	c.holdMu.Lock()
	if until.After(c.until) {
		c.until = until
	}
	c.holdMu.Unlock()
	if err := c.Hold.Set(context.WithoutCancel(ctx), until, call); err != nil && c.Warn != nil {
		c.Warn(fmt.Errorf("slack: recording the rate limit: %w", err))
	}
}

// holdTransport sends a request only when no rate limit holds, and holds
// the client on a 429 until its Retry-After (at least a second).
type holdTransport struct {
	c    *Client
	next http.RoundTripper
}

func (t holdTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if until := t.c.heldUntil(); until.After(t.c.now()) {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &WaitError{Until: until}
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		wait := time.Second
		if s, perr := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); perr == nil && s > 1 {
			wait = time.Duration(s) * time.Second
		}
		t.c.hold(r.Context(), t.c.now().Add(wait), path.Base(r.URL.Path))
	}
	return resp, err
}

// socket is a Socket Mode client over the same API, connecting with the
// app-level token appToken.
func (c *Client) socket(appToken string) *socketmode.Client {
	api := slack.New(c.token, slack.OptionAPIURL(c.apiURL), slack.OptionHTTPClient(c.hc), slack.OptionAppLevelToken(appToken))
	return socketmode.New(api)
}

// WaitError is Slack saying not to call before Until: a rate limit, with
// its Retry-After.
type WaitError struct {
	Until time.Time
}

// WaitUntil is when calls may be made again (relay.Waiter).
func (e *WaitError) WaitUntil() time.Time { return e.Until }

func (e *WaitError) Error() string {
	return "Slack rate limit: not before " + e.Until.UTC().Format(time.RFC3339)
}

// classify turns slack-go's errors into the ones callers branch on, and
// says what failed.
func (c *Client) classify(what string, err error) error {
	if err == nil {
		return nil
	}
	if until, held := relay.WaitOf(err); held {
		return &WaitError{Until: until} // a hold: nothing was sent
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return &WaitError{Until: c.now().Add(max(rl.RetryAfter, time.Second))}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// refused reports whether err is Slack answering a call with a refusal
// (ok: false, or a rate limit, HTTP 429: a *WaitError): the call did
// nothing. Slack's internal_error and fatal_error may have done part of
// it, and an error without Slack's answer (an outage, a lost connection)
// may have done all of it.
func refused(err error) bool {
	if _, limited := relay.WaitOf(err); limited {
		return true
	}
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && se.Err != "internal_error" && se.Err != "fatal_error"
}

func message(m slack.Message) Message {
	out := Message{TS: m.Timestamp, ThreadTS: m.ThreadTimestamp, User: m.User, SubType: m.SubType, Text: m.Text,
		Bot: m.BotID != "" || m.SubType == "bot_message"}
	out.Meta = metaOf(m.Metadata)
	out.Proposal = proposalMetaOf(m.Metadata)
	return out
}

// pageSize is the messages asked for a page of conversations.history and
// conversations.replies: 15, the most Slack gives a commercially
// distributed app outside its Marketplace (docs/slack.md), and what every
// app gets, so that agentx behaves the same under either tier. maxPages
// bounds one listing.
const (
	pageSize = 15
	maxPages = 40
)

// Replies lists a thread's messages after oldest ("": all, the first
// message included), oldest first, every page.
func (c *Client) Replies(ctx context.Context, channel, ts, oldest string) ([]Message, error) {
	p := &slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: ts, Oldest: oldest, Limit: pageSize, IncludeAllMetadata: true}
	var out []Message
	for page := 0; page < maxPages; page++ {
		c.Requests++
		ms, more, next, err := c.api.GetConversationRepliesContext(ctx, p)
		if err != nil {
			return nil, c.classify("conversations.replies", err)
		}
		for _, m := range ms {
			if oldest == "" || tsAfter(m.Timestamp, oldest) {
				out = append(out, message(m))
			}
		}
		if !more || next == "" {
			break
		}
		p.Cursor = next
	}
	return out, nil
}

// History lists the channel's messages posted since oldest, newest first,
// every page (to find what agentx posted before it could record it).
func (c *Client) History(ctx context.Context, channel string, oldest time.Time) ([]Message, error) {
	p := &slack.GetConversationHistoryParameters{ChannelID: channel, Oldest: tsOf(oldest), Limit: pageSize, IncludeAllMetadata: true}
	var out []Message
	for page := 0; page < maxPages; page++ {
		c.Requests++
		res, err := c.api.GetConversationHistoryContext(ctx, p)
		if err != nil {
			return nil, c.classify("conversations.history", err)
		}
		for _, m := range res.Messages {
			out = append(out, message(m))
		}
		if !res.HasMore || res.ResponseMetaData.NextCursor == "" {
			break
		}
		p.Cursor = res.ResponseMetaData.NextCursor
	}
	return out, nil
}

// Post posts text (mrkdwn, escaped by the caller) to channel, in the
// thread of threadTS unless it is "", carrying meta (a Meta, or a
// ProposalMeta). Links are not unfurled and names are not linked: only
// what agentx wrote as a mention mentions anyone.
func (c *Client) Post(ctx context.Context, channel, threadTS, text string, meta metadata) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionMetadata(meta.slack()),
		slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl(), slack.MsgOptionLinkNames(false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	c.Requests++
	_, ts, err := c.api.PostMessageContext(ctx, channel, opts...)
	return ts, c.classify("chat.postMessage", err)
}

// Ephemeral shows text to one user only, in a thread.
func (c *Client) Ephemeral(ctx context.Context, channel, user, threadTS, text string) error {
	c.Requests++
	_, err := c.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false), slack.MsgOptionTS(threadTS))
	return c.classify("chat.postEphemeral", err)
}

// tsOf is a time as a Slack ts.
func tsOf(t time.Time) string {
	if t.IsZero() || t.Unix() <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// tsAfter reports whether Slack ts a is later than b. A ts is seconds, a
// dot and six digits; compared as numbers, a malformed one is never after.
func tsAfter(a, b string) bool {
	as, af, ok1 := splitTS(a)
	bs, bf, ok2 := splitTS(b)
	if !ok1 || !ok2 {
		return false
	}
	return as > bs || (as == bs && af > bf)
}

func splitTS(ts string) (sec, frac int64, ok bool) {
	s, f, _ := strings.Cut(ts, ".")
	sec, err1 := strconv.ParseInt(s, 10, 64)
	frac, err2 := strconv.ParseInt(strings.TrimRight(f+"000000", " ")[:6], 10, 64)
	return sec, frac, err1 == nil && err2 == nil && len(f) <= 6
}
