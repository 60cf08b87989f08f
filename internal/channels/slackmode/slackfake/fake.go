// Package slackfake is a stateful fake of the Slack Web API calls Slack
// mode makes, for tests: chat.postMessage (with message metadata, in a
// thread or not), chat.postEphemeral, conversations.replies and
// conversations.history (oldest, inclusive, include_all_metadata, cursor
// pagination), auth.test, and Socket Mode (apps.connections.open and a
// WebSocket that sends hello, pings and events_api envelopes, and takes
// acknowledgements), with Slack's answers for a bad token
// (invalid_auth), a channel the bot is not in (not_in_channel), rate limits
// (429 with Retry-After) and outages. Its documents have the field names
// of Slack's (and slack-go's) types. It listens on loopback only.
package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The tokens the fake knows: the bot's, and the app-level token Socket
// Mode connects with.
const (
	BotToken = "xoxb-fake"
	AppToken = "xapp-fake"
	BotUser  = "UBOT00001"
	BotID    = "BBOT00001"
)

// Message is a message as the fake keeps it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string
	BotID    string
	Text     string
	Meta     json.RawMessage // the message's metadata, or nil
}

// Ephemeral is an ephemeral message: seen by one user only.
type Ephemeral struct {
	Channel, User, ThreadTS, Text string
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server

	mu         sync.Mutex
	now        func() time.Time
	last       string     // the latest ts given
	wmu        sync.Mutex // one writer of events at a time
	messages   []*Message
	ephemerals []Ephemeral
	channels   map[string]bool // the channels the bot is in
	fails      []failure
	loseNext   int
	reuseNext  int // posts that get the latest ts again
	conns      []*websocket.Conn
	envelope   int
	acked      []string
	connects   int

	// Requests counts every Web API request.
	Requests int
	calls    map[string]int // requests by method
	limits   map[string]limit
}

// limit is a per-method rate limit: at most n requests per window, as
// Slack's tiers are.
type limit struct {
	n      int
	window time.Duration
	times  []time.Time // the requests allowed in the window, by the fake's clock
}

type failure struct {
	status     int
	retryAfter int
	slackErr   string
}

// New starts a fake whose bot is in channel.
func New(channel string) *Server {
	s := &Server{now: time.Now, channels: map[string]bool{channel: true}, calls: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// APIURL is the base URL to configure ([slack] api_url).
func (s *Server) APIURL() string { return s.URL + "/api/" }

// SetClock sets the fake's clock (the ts of new messages).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// nextTS is a fresh ts, of the clock's time and later than any before it.
func (s *Server) nextTS() string {
	t := s.now()
	ts := fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
	if !after(ts, s.last, false) {
		sec, frac, _ := strings.Cut(s.last, ".")
		n, _ := strconv.Atoi(frac)
		if n++; n > 999999 {
			s2, _ := strconv.ParseInt(sec, 10, 64)
			sec, n = strconv.FormatInt(s2+1, 10), 0
		}
		ts = fmt.Sprintf("%s.%06d", sec, n)
	}
	s.last = ts
	return ts
}

// Reply adds user's reply text in the thread of ts in channel (a bot's if
// bot) and returns its ts; connected Socket Mode clients get the event.
func (s *Server) Reply(channel, threadTS, user, text string, bot bool) string {
	s.mu.Lock()
	m := &Message{Channel: channel, TS: s.nextTS(), ThreadTS: threadTS, User: user, Text: text}
	if bot {
		m.BotID = "BOTHER001"
	}
	s.messages = append(s.messages, m)
	conns := slices.Clone(s.conns)
	s.envelope++
	env := fmt.Sprintf("env-%d", s.envelope)
	s.mu.Unlock()
	ev := map[string]any{"type": "message", "channel": channel, "user": user, "text": text, "ts": m.TS, "thread_ts": threadTS}
	if bot {
		ev["bot_id"] = m.BotID
	}
	doc, _ := json.Marshal(map[string]any{"envelope_id": env, "type": "events_api", "accepts_response_payload": false,
		"payload": map[string]any{"type": "event_callback", "event": ev}})
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for _, c := range conns {
		_ = c.WriteMessage(websocket.TextMessage, doc)
	}
	return m.TS
}

// Messages are channel's messages in thread order: each message not in a
// thread, then its replies.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.Channel != channel || (m.ThreadTS != "" && m.ThreadTS != m.TS) {
			continue
		}
		out = append(out, *m)
		for _, r := range s.messages {
			if r.ThreadTS == m.TS && r.TS != m.TS {
				out = append(out, *r)
			}
		}
	}
	return out
}

// Calls is how many requests of Web API method (conversations.replies...)
// were made.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Ephemerals are the ephemeral messages shown so far.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemerals)
}

// Fail makes the next count Web API requests fail: status 429 with
// retryAfter seconds, any other status as such, or, with status 200, Slack's
// error slackErr (invalid_auth...).
func (s *Server) Fail(count, status, retryAfter int, slackErr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range count {
		s.fails = append(s.fails, failure{status, retryAfter, slackErr})
	}
}

// LosePost makes the next chat.postMessage post, and its answer lost (the
// connection dropped), as if the poster died right after.
func (s *Server) LosePost() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseNext++
}

// Limit rate-limits method to n requests per window of the fake's clock,
// as Slack limits a commercially distributed app outside the Marketplace
// (conversations.replies and conversations.history: 1 a minute): a
// request over the limit gets 429 with Retry-After.
func (s *Server) Limit(method string, n int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits == nil {
		s.limits = map[string]limit{}
	}
	s.limits[method] = limit{n: n, window: window}
}

// limited is how long a request of method must wait (0: it may go, and is
// counted).
func (s *Server) limited(method string) time.Duration {
	l, ok := s.limits[method]
	if !ok {
		return 0
	}
	now := s.now()
	kept := l.times[:0]
	for _, t := range l.times {
		if now.Sub(t) < l.window {
			kept = append(kept, t)
		}
	}
	l.times = kept
	if len(l.times) >= l.n {
		s.limits[method] = l
		return l.window - now.Sub(l.times[0])
	}
	l.times = append(l.times, now)
	s.limits[method] = l
	return 0
}

// ReuseTS makes the next count chat.postMessage calls get the latest ts
// given again, as a server that reuses timestamps would: a test of what
// agentx does with a ts it already bound to another thread.
func (s *Server) ReuseTS(count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reuseNext += count
}

// Drop closes every Socket Mode connection, as Slack does from time to
// time; the clients reconnect.
func (s *Server) Drop() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// Connects counts the Socket Mode connections made; Acked lists the
// envelopes acknowledged.
func (s *Server) Connects() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects, slices.Clone(s.acked)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ws" {
		s.socket(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Requests++
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.calls[method]++
	if wait := s.limited(method); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	if len(s.fails) > 0 {
		f := s.fails[0]
		s.fails = s.fails[1:]
		switch {
		case f.status == http.StatusTooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
			w.WriteHeader(f.status)
			return
		case f.status != http.StatusOK:
			http.Error(w, "fake outage", f.status)
			return
		}
		writeJSON(w, map[string]any{"ok": false, "error": f.slackErr})
		return
	}
	_ = r.ParseForm()
	header := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	token := header
	if t := r.Form.Get("token"); t != "" {
		token = t // slack-go sends the token in the form for most methods
	}
	if method == "apps.connections.open" {
		if header != AppToken && token != AppToken {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		writeJSON(w, map[string]any{"ok": true, "url": "ws" + strings.TrimPrefix(s.URL, "http") + "/ws"})
		return
	}
	if token != BotToken {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	f := r.Form
	ch := f.Get("channel")
	if method != "auth.test" && !s.channels[ch] {
		writeJSON(w, map[string]any{"ok": false, "error": "not_in_channel"})
		return
	}
	switch method {
	case "auth.test":
		writeJSON(w, map[string]any{"ok": true, "user_id": BotUser, "bot_id": BotID, "team": "fake"})
	case "chat.postMessage":
		ts := s.last
		if s.reuseNext == 0 || ts == "" {
			ts = s.nextTS()
		} else {
			s.reuseNext--
		}
		m := &Message{Channel: ch, TS: ts, ThreadTS: f.Get("thread_ts"), User: BotUser, BotID: BotID, Text: f.Get("text")}
		if md := f.Get("metadata"); md != "" {
			m.Meta = json.RawMessage(md)
		}
		s.messages = append(s.messages, m)
		if s.loseNext > 0 {
			s.loseNext--
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
		}
		writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": m.TS, "message": s.doc(m, true)})
	case "chat.postEphemeral":
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: ch, User: f.Get("user"), ThreadTS: f.Get("thread_ts"), Text: f.Get("text")})
		writeJSON(w, map[string]any{"ok": true, "message_ts": s.nextTS()})
	case "conversations.replies":
		s.replies(w, f.Get("ts"), ch, f.Get("oldest"), f.Get("inclusive") == "1", f.Get("include_all_metadata") == "1", f.Get("cursor"), atoi(f.Get("limit")))
	case "conversations.history":
		s.history(w, ch, f.Get("oldest"), f.Get("include_all_metadata") == "1", f.Get("cursor"), atoi(f.Get("limit")))
	default:
		writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1000 {
		return 100
	}
	return n
}

// after reports whether ts a is later than b (b "": always).
func after(a, b string, inclusive bool) bool {
	if b == "" {
		return true
	}
	fa, _ := strconv.ParseFloat(a, 64)
	fb, _ := strconv.ParseFloat(b, 64)
	return fa > fb || (inclusive && fa == fb)
}

func (s *Server) doc(m *Message, meta bool) map[string]any {
	d := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User}
	if m.ThreadTS != "" {
		d["thread_ts"] = m.ThreadTS
	}
	if m.BotID != "" {
		d["bot_id"] = m.BotID
	}
	if meta && m.Meta != nil {
		d["metadata"] = m.Meta
	}
	return d
}

// page writes one page of docs from cursor (an offset), limit long.
func page(w http.ResponseWriter, docs []map[string]any, cursor string, limit int) {
	from, _ := strconv.Atoi(cursor)
	from = min(max(from, 0), len(docs))
	to := min(from+limit, len(docs))
	out := map[string]any{"ok": true, "messages": docs[from:to], "has_more": to < len(docs)}
	if to < len(docs) {
		out["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(to)}
	}
	writeJSON(w, out)
}

// replies answers conversations.replies: the thread's first message, then
// the replies after oldest, oldest first.
func (s *Server) replies(w http.ResponseWriter, ts, ch, oldest string, inclusive, meta bool, cursor string, limit int) {
	var docs []map[string]any
	for _, m := range s.messages {
		if m.Channel == ch && m.TS == ts && (m.ThreadTS == "" || m.ThreadTS == m.TS) {
			docs = append(docs, s.doc(m, meta))
		}
	}
	if len(docs) == 0 {
		writeJSON(w, map[string]any{"ok": false, "error": "thread_not_found"})
		return
	}
	for _, m := range s.messages {
		if m.Channel == ch && m.ThreadTS == ts && m.TS != ts && after(m.TS, oldest, inclusive) {
			docs = append(docs, s.doc(m, meta))
		}
	}
	page(w, docs, cursor, limit)
}

// history answers conversations.history: the channel's messages not in a
// thread, after oldest, newest first.
func (s *Server) history(w http.ResponseWriter, ch, oldest string, meta bool, cursor string, limit int) {
	docs := []map[string]any{}
	for i := len(s.messages) - 1; i >= 0; i-- {
		m := s.messages[i]
		if m.Channel == ch && m.ThreadTS == "" && after(m.TS, oldest, false) {
			docs = append(docs, s.doc(m, meta))
		}
	}
	page(w, docs, cursor, limit)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// upgrader takes any origin: the fake listens on loopback only.
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socket is a Socket Mode connection: hello, a ping every 100 ms, and the
// acknowledgements the client sends.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"hello","num_connections":1,"connection_info":{"app_id":"AFAKE"}}`))
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.connects++
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if c.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second)) != nil {
					return
				}
			}
		}
	}()
	defer close(done)
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(data, &ack) == nil && ack.EnvelopeID != "" {
			s.mu.Lock()
			s.acked = append(s.acked, ack.EnvelopeID)
			s.mu.Unlock()
		}
	}
}

// RequestCount is Requests, read under the fake's lock.
func (s *Server) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Requests
}
