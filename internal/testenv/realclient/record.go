package realclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// recorder keeps the requests a stand-in API received, in order, and
// wakes those waiting for one (WaitFor) without polling. Its methods are
// safe for concurrent use.
type recorder[T any] struct {
	mu      sync.Mutex
	reqs    []T
	arrived chan struct{} // closed (and replaced) when a request is recorded
}

// add records r, after setSeq has been given its number (its index), and
// wakes the waiters.
func (rc *recorder[T]) add(r T, setSeq func(int)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	setSeq(len(rc.reqs))
	rc.reqs = append(rc.reqs, r)
	if rc.arrived != nil {
		close(rc.arrived)
	}
	rc.arrived = make(chan struct{})
}

// all is the requests received so far, in order.
func (rc *recorder[T]) all() []T {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]T(nil), rc.reqs...)
}

// waitFor returns the first request, received so far or to come, that
// pred accepts; or ctx's error, with how many requests came, when ctx
// ends first (api names the stand-in in the error).
func (rc *recorder[T]) waitFor(ctx context.Context, api string, pred func(T) bool) (T, error) {
	next := 0
	for {
		rc.mu.Lock()
		if rc.arrived == nil {
			rc.arrived = make(chan struct{})
		}
		reqs, arrived := rc.reqs[next:], rc.arrived
		next = len(rc.reqs)
		rc.mu.Unlock()
		for _, r := range reqs {
			if pred(r) {
				return r, nil
			}
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("%s: no matching request among %d: %w", api, next, ctx.Err())
		}
	}
}

// What follows is the HTTP plumbing both stand-ins answer with; each
// gives its own error shape (errorAnswer) and its name for messages.

// errorAnswer answers an HTTP status code with msg, in an API's error
// shape.
type errorAnswer func(w http.ResponseWriter, code int, msg string)

// readBody is hr's body; when it cannot be read, it answers 400 with fail
// and returns false.
func readBody(w http.ResponseWriter, hr *http.Request, fail errorAnswer) ([]byte, bool) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		fail(w, http.StatusBadRequest, fmt.Sprintf("read body: %v", err))
		return nil, false
	}
	return body, true
}

// decodeBody decodes body, JSON, into r; when it cannot, it fails the
// test (api names the stand-in), answers 400 with fail and returns false.
func decodeBody(t testing.TB, api string, w http.ResponseWriter, body []byte, r any, fail errorAnswer) bool {
	if err := json.Unmarshal(body, r); err != nil {
		t.Errorf("%s: decode a request: %v", api, err)
		fail(w, http.StatusBadRequest, fmt.Sprintf("decode body: %v", err))
		return false
	}
	return true
}

// answerOther answers a request the stand-in has no route for with 200
// and {}, and logs it (api names the stand-in).
func answerOther(t testing.TB, api string, w http.ResponseWriter, hr *http.Request) {
	t.Logf("%s: %s %s answered 200 {}", api, hr.Method, hr.URL)
	writeJSON(w, map[string]any{})
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

// writeJSONStatus answers code with v.
func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes an answer of server-sent events, each flushed as written.
type sse struct {
	w       http.ResponseWriter
	flusher http.Flusher // nil when w cannot flush
}

// newSSE answers 200 with an event stream, which the events follow.
func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	return &sse{w: w, flusher: flusher}
}

// event writes the event name, its data the JSON of data, which it gives
// name as "type". data must encode: the stand-ins give plain values, and
// inputs checked to encode.
func (s *sse) event(name string, data map[string]any) {
	data["type"] = name
	js, _ := json.Marshal(data)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, js)
	if s.flusher != nil {
		s.flusher.Flush()
	}
}
