package desk

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Options configure a desk.
type Options struct {
	Hub    *router.Hub
	Person string // the person's name: actions are recorded as desk:NAME
	Root   string // the workspace, shown in the page's header
	// After runs once an action is recorded, under the desk's lock: what
	// a command does at its end (agent-status.json derived, the push to
	// GitHub and Slack, waking agents), at once rather than at the next
	// interval. Nil: nothing.
	After func(ctx context.Context)
	// Poll is how often the event log is looked at (0: 250 ms); Refresh
	// how often the queue is read again without an event (0: 10 s: an
	// answer becomes overdue with time alone).
	Poll, Refresh time.Duration
	Warn          func(error)
}

// Cookie is the name of the cookie that carries the token.
const Cookie = "agentx_desk"

// TokenHeader carries the token on a request made by a script.
const TokenHeader = "X-Agentx-Desk-Token"

// onceFor is how long the one-time code of the URL handed to a browser
// is good for.
const onceFor = 2 * time.Minute

// maxForm is the largest action a page may post: a text of
// ledger.MaxBodyLen and the rest. The hub refuses a text past one
// message's limit (ledger.MaxMessageLen) with an error the page shows,
// the text kept in its box; a form past maxForm is refused whole.
const maxForm = ledger.MaxBodyLen + 16<<10

// Server is one desk: its token, its address once served, its flash
// messages and the clients following the queue.
type Server struct {
	opt   Options
	token string // the run's secret: the printed address, and a script's header
	// formKey is what the page's forms carry against forged posts (not
	// the token: the page never holds the run's secret)
	formKey string

	mu sync.Mutex // one action or side turn at a time

	smu      sync.Mutex
	addr     string               // host:port served
	onces    map[string]time.Time // one-time codes and when they expire
	sessions map[string]bool      // the browsers' session cookies, each minted when it entered
	flash    map[string]flash     // results of actions, shown once
	nflash   int

	live *live
}

// flash is the result of an action, shown at the top of the next page.
type flash struct {
	OK    bool
	Msg   string
	Hint  string
	ID    string
	Draft string // an action not done: the text the person wrote, put back in its box
}

// New makes a desk with a token of its own (32 random bytes).
func New(opt Options) (*Server, error) {
	if opt.Hub == nil {
		return nil, errors.New("desk: no hub")
	}
	if err := ledger.ValidatePerson(todo.DeskPrefix + opt.Person); err != nil {
		return nil, err
	}
	tok, err := secret()
	if err != nil {
		return nil, err
	}
	key, err := secret()
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, token: tok, formKey: key, onces: map[string]time.Time{}, sessions: map[string]bool{}, flash: map[string]flash{}}
	s.live = newLive(s)
	return s, nil
}

func secret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("desk: token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Token is the run's secret.
func (s *Server) Token() string { return s.token }

// Person is who acts: desk:NAME.
func (s *Server) Person() string { return todo.DeskPrefix + s.opt.Person }

// Listen opens the desk's address (HOST:PORT; port 0: a free one).
func (s *Server) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.smu.Lock()
	s.addr = ln.Addr().String()
	s.smu.Unlock()
	return ln, nil
}

// Serve serves the desk on ln (from Listen) until ctx is done. The queue
// is followed from the event log while it serves.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go s.live.follow(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		return nil
	case err := <-done:
		return err
	}
}

// URL is the address to open, with the token: for the person to keep in
// the terminal (it is never written to a file).
func (s *Server) URL() string { return s.base() + "/?token=" + url.QueryEscape(s.token) }

// OnceURL is an address that lets one browser in once, within two
// minutes: what the desk hands to the command that opens a browser, whose
// command line other processes can read.
func (s *Server) OnceURL() (string, error) {
	code, err := secret()
	if err != nil {
		return "", err
	}
	s.smu.Lock()
	s.onces[code] = time.Now().Add(onceFor)
	s.smu.Unlock()
	return s.base() + "/?once=" + url.QueryEscape(code), nil
}

func (s *Server) base() string {
	s.smu.Lock()
	defer s.smu.Unlock()
	return "http://" + s.addr
}

// Locked runs fn while no action runs: the command line's side turns
// (the remote, GitHub, Slack, the monitor) go through it.
func (s *Server) Locked(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// ServeHTTP checks every request (the host, the token, for an action its
// origin) and serves the page, its script and style, the live queue and
// actions.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			s.warn(fmt.Errorf("desk: %s %s: %v", r.Method, r.URL.Path, v))
			http.Error(w, "internal error: the desk's terminal says more", http.StatusInternalServerError)
		}
	}()
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // "no-referrer" makes a form post's Origin "null"
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if !s.hostOK(r.Host) {
		refuse(w, http.StatusForbidden, "this desk answers only at its own address")
		return
	}
	if r.URL.Path == "/" && r.Method == http.MethodGet && (r.URL.Query().Has("token") || r.URL.Query().Has("once")) {
		s.enter(w, r)
		return
	}
	if !s.authed(r) {
		refuse(w, http.StatusForbidden, "this desk needs the address agentx desk printed, with its token")
		return
	}
	switch r.URL.Path {
	case "/":
		if r.Method != http.MethodGet {
			refuse(w, http.StatusMethodNotAllowed, "GET only")
			return
		}
		s.page(w, r)
	case "/events":
		s.live.serve(w, r)
	case "/desk.js", "/desk.css":
		asset(w, r)
	case "/act":
		s.act(w, r)
	default:
		refuse(w, http.StatusNotFound, "no such page")
	}
}

// hostOK refuses a request whose Host is not the desk's own address (a
// page of another site resolved to 127.0.0.1: DNS rebinding).
func (s *Server) hostOK(host string) bool {
	s.smu.Lock()
	addr := s.addr
	s.smu.Unlock()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return host == addr || host == net.JoinHostPort("localhost", port)
}

// enter takes the token (or a one-time code) from the address, sets the
// cookie and sends the browser to the page without it in the address.
func (s *Server) enter(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ok := same(q.Get("token"), s.token)
	if code := q.Get("once"); code != "" && !ok {
		s.smu.Lock()
		exp, found := s.onces[code]
		delete(s.onces, code)
		s.smu.Unlock()
		ok = found && time.Now().Before(exp)
	}
	if !ok {
		refuse(w, http.StatusForbidden, "this token is not the desk's (or the one-time address was used already): use the address agentx desk printed")
		return
	}
	// the browser gets a session of its own, never the run's token: a
	// one-time address lets one browser in, not whoever used it first
	// into every other way in
	sid, err := secret()
	if err != nil {
		refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.smu.Lock()
	s.sessions[sid] = true
	s.smu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: Cookie, Value: sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// authed reports whether r carries the token in its header, or the cookie
// of a session the desk made.
func (s *Server) authed(r *http.Request) bool {
	if same(r.Header.Get(TokenHeader), s.token) {
		return true
	}
	c, err := r.Cookie(Cookie)
	if err != nil || c.Value == "" {
		return false
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.sessions[c.Value]
}

func same(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// crossSite reports why a state-changing request is refused as coming
// from another page than the desk's: its Origin or its Sec-Fetch-Site.
func (s *Server) crossSite(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "Sec-Fetch-Site is " + site
	}
	if o := r.Header.Get("Origin"); o != "" && o != s.base() && o != "http://localhost:"+s.port() {
		return "its origin is " + o
	}
	return ""
}

func (s *Server) port() string {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(s.base(), "http://"))
	return p
}

// refuse answers with a short plain-text refusal.
func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "agentx desk: %s\n", msg)
}

// act settles one item through the hub, as the command line does, and
// sends the browser back to the page with the result.
func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		refuse(w, http.StatusMethodNotAllowed, "actions are POSTs")
		return
	}
	if why := s.crossSite(r); why != "" {
		refuse(w, http.StatusForbidden, "refused: this action comes from another page ("+why+")")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		refuse(w, http.StatusBadRequest, "the form could not be read: "+err.Error())
		return
	}
	if f := r.PostForm.Get("token"); !same(f, s.formKey) && !same(f, s.token) && !same(r.Header.Get(TokenHeader), s.token) {
		refuse(w, http.StatusForbidden, "refused: the action does not carry the desk's token")
		return
	}
	a := Action{
		Verb: r.PostForm.Get("verb"), ID: r.PostForm.Get("id"),
		Body:    strings.TrimSpace(strings.ReplaceAll(r.PostForm.Get("body"), "\r\n", "\n")),
		Summary: strings.TrimSpace(r.PostForm.Get("summary")),
	}
	if o := r.PostForm.Get("option"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil {
			s.redirect(w, r, flash{Msg: fmt.Sprintf("option %q is not a number", o), ID: a.ID})
			return
		}
		a.Option = n
	}
	var f flash
	s.Locked(func() {
		done, err := s.Do(r.Context(), a)
		if err != nil {
			f = flash{ID: a.ID, Draft: a.Body}
			f.Msg, f.Hint = err.Error(), Hint(err) // the desk's words (wording.go)
			return
		}
		f = flash{OK: true, Msg: done, ID: a.ID}
		if s.opt.After != nil {
			s.opt.After(r.Context())
		}
	})
	s.live.poke()
	s.redirect(w, r, f)
}

// redirect keeps f for the next page and sends the browser there.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, f flash) {
	s.smu.Lock()
	s.nflash++
	key := strconv.Itoa(s.nflash)
	s.flash[key] = f
	s.smu.Unlock()
	to := "/?flash=" + key
	if !f.OK && f.ID != "" {
		to += "#item-" + url.PathEscape(f.ID)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// takeFlash returns the flash key names, once.
func (s *Server) takeFlash(key string) (flash, bool) {
	s.smu.Lock()
	defer s.smu.Unlock()
	f, ok := s.flash[key]
	delete(s.flash, key)
	return f, ok
}

func (s *Server) warn(err error) {
	if s.opt.Warn != nil {
		s.opt.Warn(err)
	}
}

// Action is one thing a person does at the desk.
type Action struct {
	Verb   string // answer, resolve, approve, reject
	ID     string // CLR-N-SEQ or PROP-SEQ
	Body   string // the answer, decision or reason; with an option, a note
	Option int    // 1-based; 0: none
	// Summary is, for resolve, what was decided in a sentence or two
	// (router.Reply.Summary); "" gives none.
	Summary string
}

// ActionError is an action the desk does not know how to do, or one
// missing what it needs: the page says so.
type ActionError struct{ Msg string }

func (e *ActionError) Error() string { return e.Msg }

// Do records a through the hub, as the person (desk:NAME), with the
// command line's calls and checks, and says what was done.
func (s *Server) Do(ctx context.Context, a Action) (string, error) {
	h := s.opt.Hub
	person := s.Person()
	ctx = router.WithCaller(ctx, &router.Caller{Via: "the desk", Person: func() (string, error) { return person, nil }})
	reply := router.Reply{Body: a.Body, Option: a.Option}
	switch a.Verb {
	case "answer":
		if a.Option == 0 && a.Body == "" {
			return "", &ActionError{Msg: "write the answer in the box (or pick an option)"}
		}
		rec, err := h.AnswerReply(ctx, a.ID, ledger.Human, reply)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Answered %s%s.", rec.ID, picked(a.Option)), nil
	case "resolve":
		reply.Summary = a.Summary
		rec, err := h.ResolveReply(ctx, a.ID, ledger.Human, reply)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Resolved %s%s.", rec.ID, picked(a.Option)), nil
	case "approve", "reject":
		to := proposal.Approved
		if a.Verb == "reject" {
			to = proposal.Rejected
			if a.Body == "" {
				return "", &ActionError{Msg: "a rejection needs a reason: say why, for whoever proposed it"}
			}
		}
		p, err := proposal.Decide(ctx, h, a.ID, to, person, a.Body)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s.", map[proposal.Status]string{proposal.Approved: "Approved", proposal.Rejected: "Rejected"}[to], p.ID), nil
	}
	return "", &ActionError{Msg: fmt.Sprintf("the desk does not know the action %q", a.Verb)}
}

func picked(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" with option %d", n)
}
