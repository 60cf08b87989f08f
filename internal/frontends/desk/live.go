package desk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/internal/frontends/todo"
)

// update is one message of the live queue: the ids in order, why those
// that left it did (answered by X on Slack), and the HTML of those that
// joined it (all of them in a client's first message).
type update struct {
	IDs     []string          `json:"ids"`
	Removed map[string]string `json:"removed,omitempty"`
	HTML    map[string]string `json:"html,omitempty"`
}

// live follows the event log and tells the pages that follow the queue
// what changed in it.
type live struct {
	s *Server

	mu      sync.Mutex
	ids     []string             // the queue as last told
	clients map[chan []byte]bool // each page's messages
	kick    chan struct{}
}

func newLive(s *Server) *live {
	return &live{s: s, clients: map[chan []byte]bool{}, kick: make(chan struct{}, 1)}
}

// poke makes the follower read the queue again now (after an action).
func (l *live) poke() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// follow reads the events appended to the log from now on, and after each
// batch (or a poke, or every Refresh) reads the queue and tells the pages
// what changed, with who settled what left it.
func (l *live) follow(ctx context.Context) {
	opt := l.s.opt
	poll, refresh := cmp(opt.Poll, 250*time.Millisecond), cmp(opt.Refresh, 10*time.Second)
	log := opt.Hub.Events
	off, err := log.Size()
	if err != nil {
		l.s.warn(fmt.Errorf("desk: event log: %w", err))
	}
	l.mu.Lock()
	l.ids, _ = l.queue()
	l.mu.Unlock()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	last := time.Now()
	for {
		kicked := false
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-l.kick:
			kicked = true
		}
		if n, err := log.Size(); err == nil && n < off {
			off = 0 // the log was replaced: read it again
		}
		why := map[string]string{}
		next, err := log.ReadFrom(off, func(line eventlog.Line) error {
			e, ok := line.Decode()
			if !ok {
				return nil
			}
			id := e.ClarificationID
			if id == "" {
				id = e.ProposalID
			}
			if s := todo.Settled(e); s != "" && id != "" {
				why[id] = s
			}
			return nil
		})
		if err != nil {
			l.s.warn(fmt.Errorf("desk: event log: %w", err))
			continue
		}
		if next == off && !kicked && time.Since(last) < refresh {
			continue
		}
		off, last = next, time.Now()
		l.changed(why)
	}
}

func cmp(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// queue is the queue's ids now, and its items.
func (l *live) queue() ([]string, []todo.Item) {
	items, skipped, err := todo.List(l.s.opt.Hub, todo.Filter{})
	if err != nil {
		l.s.warn(fmt.Errorf("desk: %w", err))
		return l.ids, nil
	}
	for _, e := range skipped {
		l.s.warn(fmt.Errorf("desk: skipped %w", e))
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids, items
}

// changed reads the queue and, if it changed, tells every page.
func (l *live) changed(why map[string]string) {
	ids, items := l.queue()
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.Equal(ids, l.ids) {
		return
	}
	u := update{IDs: ids, Removed: map[string]string{}, HTML: map[string]string{}}
	for _, id := range l.ids {
		if !slices.Contains(ids, id) {
			u.Removed[id] = why[id]
		}
	}
	var fresh []todo.Item
	for _, it := range items {
		if !slices.Contains(l.ids, it.ID) {
			fresh = append(fresh, it)
		}
	}
	l.render(&u, fresh)
	l.ids = ids
	b, err := json.Marshal(u)
	if err != nil {
		l.s.warn(err)
		return
	}
	for c := range l.clients {
		select {
		case c <- b:
		default: // a page that does not keep up gets the next message
		}
	}
}

// render adds the HTML of items to u.
func (l *live) render(u *update, items []todo.Item) {
	for _, v := range l.s.views(items) {
		html, err := l.s.fragment(v)
		if err != nil {
			l.s.warn(fmt.Errorf("desk: %s: %w", v.ID, err))
			continue
		}
		u.HTML[v.ID] = html
	}
}

// serve streams the queue to one page as server-sent events: first the
// whole queue, then each change.
func (l *live) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		refuse(w, http.StatusMethodNotAllowed, "GET only")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		refuse(w, http.StatusInternalServerError, "no streaming")
		return
	}
	c := make(chan []byte, 16)
	l.mu.Lock()
	ids, items := l.queue()
	first := update{IDs: ids, HTML: map[string]string{}}
	l.render(&first, items)
	l.clients[c] = true
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.clients, c)
		l.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	b, _ := json.Marshal(first)
	send := func(b []byte) bool {
		_, err := fmt.Fprintf(w, "event: queue\ndata: %s\n\n", b)
		fl.Flush()
		return err == nil
	}
	if !send(b) {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-c:
			if !send(b) {
				return
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
