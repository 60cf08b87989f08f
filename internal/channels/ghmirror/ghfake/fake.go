// Package ghfake is a stateful fake of the GitHub REST API calls GitHub
// mode makes, for tests: issue comments (list per issue and per
// repository, with since, sort, direction and pagination by Link headers;
// create; edit; get), labels, reactions and the user, with conditional
// requests (ETag, If-None-Match, 304s that cost no rate limit), the rate
// limit headers, a primary rate limit that runs out (403 with
// X-RateLimit-Remaining: 0) and secondary ones (429 or 403 with
// Retry-After). Its documents have the field names and JSON types of
// GitHub's, checked against responses of the real API recorded by
// @octokit/fixtures (shape_test.go, testdata/octokit-fixtures) where
// those record the call, and against go-github's types. It listens on
// loopback only.
package ghfake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// User is an account.
type User struct {
	Login string
	ID    int64
	Type  string // "User" or "Bot"
}

// Comment is an issue comment as the fake keeps it.
type Comment struct {
	ID          int64
	Issue       int
	Body        string
	User        User
	Association string
	Created     time.Time
	Updated     time.Time
	Reactions   []Reaction
}

// Reaction is a reaction to a comment.
type Reaction struct {
	ID      int64
	User    User
	Content string
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	Owner, Repo string

	mu       sync.Mutex
	now      func() time.Time
	nextID   int64
	tokens   map[string]User
	assoc    map[string]string // login -> author_association in this repository
	comments []*Comment
	labels   map[int][]string
	limit    int
	used     int
	reset    time.Time
	fails    []failure
	loseNext int           // create the next comments but drop the connection before answering
	hold     chan struct{} // create the next comment, then answer only once this is closed
	held     chan struct{} // closed once that comment is created

	// Requests counts every request; NotModified the 304s among them.
	Requests, NotModified int
	ops                   map[string]int // requests by operation (Op)

	markUsed, markNotModified int
}

// Mark starts a count of the calls made from now on (SinceMark).
func (s *Server) Mark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markUsed, s.markNotModified = s.used, s.NotModified
}

// SinceMark is how many calls counted against the rate limit since Mark,
// and how many were 304s (which do not count).
func (s *Server) SinceMark() (counted, notModified int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used - s.markUsed, s.NotModified - s.markNotModified
}

type failure struct {
	status     int
	retryAfter int
}

// New starts a fake for owner/repo on loopback. Token "fake-token" is the
// account agentx-bot (a member); more with AddToken.
func New(owner, repo string) *Server {
	s := &Server{Owner: owner, Repo: repo, now: time.Now, nextID: 1000, tokens: map[string]User{}, assoc: map[string]string{},
		labels: map[int][]string{}, limit: 5000, ops: map[string]int{}}
	s.reset = s.now().Add(time.Hour).Truncate(time.Second)
	s.AddToken("fake-token", "agentx-bot", "User", "MEMBER")
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// APIURL is the base URL to configure ([github] api_url).
func (s *Server) APIURL() string { return s.URL + "/" }

// AddToken makes token authenticate as login, with its type and
// association with the repository.
func (s *Server) AddToken(token, login, typ, assoc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = s.user(login, typ)
	s.assoc[login] = assoc
}

func (s *Server) user(login, typ string) User {
	id := int64(0)
	for _, r := range login {
		id = id*31 + int64(r)
	}
	if id < 0 {
		id = -id
	}
	return User{Login: login, ID: id%1_000_000 + 1, Type: typ}
}

// SetClock sets the fake's clock (comment times, since).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetRateLimit sets the limit and how many calls remain of it.
func (s *Server) SetRateLimit(limit, remaining int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit, s.used = limit, limit-remaining
}

// RateUsed is how many calls have counted against the rate limit.
func (s *Server) RateUsed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Fail makes the next n requests fail with status (429 or 403: a
// secondary rate limit with Retry-After retryAfter seconds, if > 0; 422:
// a refusal, Validation Failed; 5xx: a server error).
func (s *Server) Fail(n, status, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, failure{status, retryAfter})
	}
}

// LoseNextCreate makes the next n comment creations happen but their
// answers never arrive (the connection is dropped): what a client that
// died right after posting sees.
func (s *Server) LoseNextCreate(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseNext += n
}

// HoldNextCreate makes the next comment creation happen and its answer
// wait until release is called (or the fake closes): a client killed
// meanwhile has posted and never heard back. created is closed once the
// comment exists.
func (s *Server) HoldNextCreate() (created <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold, s.held = make(chan struct{}), make(chan struct{})
	hold := s.hold
	var once sync.Once
	return s.held, func() { once.Do(func() { close(hold) }) }
}

// AddComment is a person commenting on an issue.
func (s *Server) AddComment(issue int, login, typ, assoc, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(issue, s.user(login, typ), assoc, body).ID
}

func (s *Server) add(issue int, u User, assoc, body string) *Comment {
	s.nextID++
	now := s.now().UTC().Truncate(time.Second)
	c := &Comment{ID: s.nextID, Issue: issue, Body: body, User: u, Association: assoc, Created: now, Updated: now}
	s.comments = append(s.comments, c)
	return c
}

// Comments are issue's comments, oldest first (copies).
func (s *Server) Comments(issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Issue == issue {
			cp := *c
			cp.Reactions = slices.Clone(c.Reactions)
			out = append(out, cp)
		}
	}
	return out
}

// Labels are the labels on an issue.
func (s *Server) Labels(issue int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.labels[issue])
}

// The operations Calls counts.
const (
	OpUser         = "GET /user"
	OpListIssue    = "GET /repos/{o}/{r}/issues/{n}/comments"
	OpListRepo     = "GET /repos/{o}/{r}/issues/comments"
	OpCreate       = "POST /repos/{o}/{r}/issues/{n}/comments"
	OpEdit         = "PATCH /repos/{o}/{r}/issues/comments/{id}"
	OpReact        = "POST /repos/{o}/{r}/issues/comments/{id}/reactions"
	OpOtherRequest = "other"
)

// op names the operation of a request, as Calls counts it.
func op(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "user":
		return OpUser
	case len(parts) == 5 && parts[3] == "issues" && parts[4] == "comments":
		return OpListRepo
	case len(parts) == 6 && parts[3] == "issues" && parts[5] == "comments" && r.Method == http.MethodGet:
		return OpListIssue
	case len(parts) == 6 && parts[3] == "issues" && parts[5] == "comments" && r.Method == http.MethodPost:
		return OpCreate
	case len(parts) == 6 && parts[4] == "comments" && r.Method == http.MethodPatch:
		return OpEdit
	case len(parts) == 7 && parts[6] == "reactions":
		return OpReact
	}
	return OpOtherRequest
}

// Calls is how many requests of operation op (OpListIssue...) were made.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops[op]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Requests++
	s.ops[op(r)]++
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	if len(s.fails) > 0 {
		f := s.fails[0]
		s.fails = s.fails[1:]
		s.rateHeaders(h)
		if f.retryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(f.retryAfter))
		}
		doc := "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
		msg := "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
		switch {
		case f.status == http.StatusUnprocessableEntity:
			doc, msg = "https://docs.github.com/rest/issues/comments#create-an-issue-comment", "Validation Failed"
		case f.status >= 500:
			doc, msg = "https://docs.github.com/rest", "Server Error"
		}
		s.write(w, f.status, map[string]any{"message": msg, "documentation_url": doc})
		return
	}
	me, ok := s.auth(r)
	if !ok {
		s.write(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
		return
	}
	if s.used >= s.limit {
		s.rateHeaders(h)
		s.write(w, http.StatusForbidden, map[string]any{
			"message":           fmt.Sprintf("API rate limit exceeded for user ID %d.", me.ID),
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits",
		})
		return
	}
	status, doc := s.route(r, me, h)
	body, _ := json.Marshal(doc)
	if r.Method == http.MethodGet && status == http.StatusOK {
		sum := sha256.Sum256(body)
		etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
		h.Set("ETag", etag)
		if slices.Contains(strings.Split(r.Header.Get("If-None-Match"), ", "), etag) {
			// Conditional and unchanged: GitHub does not count it.
			s.NotModified++
			s.rateHeaders(h)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if status == statusLost {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		status = http.StatusCreated
	}
	s.used++
	s.rateHeaders(h)
	w.WriteHeader(status)
	if status != http.StatusNoContent {
		_, _ = w.Write(body)
	}
}

const statusLost = -1

func (s *Server) write(w http.ResponseWriter, status int, doc any) {
	b, _ := json.Marshal(doc)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (s *Server) rateHeaders(h http.Header) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(s.limit-s.used, 0)))
	h.Set("X-RateLimit-Used", strconv.Itoa(s.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

func (s *Server) auth(r *http.Request) (User, bool) {
	a := r.Header.Get("Authorization")
	for _, p := range []string{"Bearer ", "token "} {
		if t, ok := strings.CutPrefix(a, p); ok {
			u, ok := s.tokens[t]
			return u, ok
		}
	}
	return User{}, false
}

type errDoc map[string]any

func notFound() (int, any) {
	return http.StatusNotFound, errDoc{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
}

// call is one authenticated request as a route serves it: who made it,
// the response's headers, and the path's segments after
// /repos/OWNER/REPO/issues, with the issue number when one is named.
type call struct {
	r    *http.Request
	me   User
	h    http.Header
	rest []string
	n    int
}

// issueRoute is one endpoint under /repos/OWNER/REPO/issues: its method,
// its segments ("{id}" a comment's id, "{n}" an issue number above zero,
// "{name}" a label's name: any segment) and what serves it.
type issueRoute struct {
	method string
	path   []string
	serve  func(s *Server, c call) (int, any)
}

// issueRoutes are the endpoints the fake serves, as GitHub's REST API.
var issueRoutes = []issueRoute{
	{http.MethodGet, []string{"comments"}, func(s *Server, c call) (int, any) { return s.list(c.r, c.r.URL.Query(), 0, c.h) }},
	{http.MethodGet, []string{"comments", "{id}"}, (*Server).getComment},
	{http.MethodPatch, []string{"comments", "{id}"}, (*Server).editComment},
	{http.MethodPost, []string{"comments", "{id}", "reactions"}, (*Server).react},
	{http.MethodGet, []string{"{n}"}, func(s *Server, c call) (int, any) { return http.StatusOK, s.issueDoc(c.n) }},
	{http.MethodGet, []string{"{n}", "comments"}, func(s *Server, c call) (int, any) { return s.list(c.r, c.r.URL.Query(), c.n, c.h) }},
	{http.MethodPost, []string{"{n}", "comments"}, (*Server).postComment},
	{http.MethodGet, []string{"{n}", "labels"}, func(s *Server, c call) (int, any) { return http.StatusOK, s.labelsDoc(c.n) }},
	{http.MethodPost, []string{"{n}", "labels"}, (*Server).addLabels},
	{http.MethodDelete, []string{"{n}", "labels", "{name}"}, (*Server).removeLabel},
}

// match reports whether the route serves method on rest, and the issue
// number it names (0: none).
func (rt issueRoute) match(method string, rest []string) (int, bool) {
	if method != rt.method || len(rest) != len(rt.path) {
		return 0, false
	}
	n := 0
	for i, seg := range rt.path {
		switch seg {
		case "{id}", "{name}":
		case "{n}":
			v, err := strconv.Atoi(rest[i])
			if err != nil || v <= 0 {
				return 0, false
			}
			n = v
		default:
			if rest[i] != seg {
				return 0, false
			}
		}
	}
	return n, true
}

// route serves one authenticated request.
func (s *Server) route(r *http.Request, me User, h http.Header) (int, any) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) == 1 && parts[0] == "user" && r.Method == http.MethodGet {
		return http.StatusOK, s.userDoc(me)
	}
	if len(parts) < 4 || parts[0] != "repos" || parts[1] != s.Owner || parts[2] != s.Repo || parts[3] != "issues" {
		return notFound()
	}
	rest := parts[4:]
	for _, rt := range issueRoutes {
		if n, ok := rt.match(r.Method, rest); ok {
			return rt.serve(s, call{r: r, me: me, h: h, rest: rest, n: n})
		}
	}
	return notFound()
}

func (s *Server) getComment(c call) (int, any) {
	if cm := s.find(c.rest[1]); cm != nil {
		return http.StatusOK, s.commentDoc(cm)
	}
	return notFound()
}

func (s *Server) editComment(c call) (int, any) {
	cm := s.find(c.rest[1])
	if cm == nil {
		return notFound()
	}
	var in struct{ Body *string }
	if err := json.NewDecoder(c.r.Body).Decode(&in); err != nil || in.Body == nil {
		return http.StatusUnprocessableEntity, errDoc{"message": "Invalid request.", "documentation_url": "https://docs.github.com/rest"}
	}
	if cm.User.Login != c.me.Login && s.assoc[c.me.Login] != "OWNER" && s.assoc[c.me.Login] != "MEMBER" {
		return http.StatusForbidden, errDoc{"message": "Must have admin rights to Repository.", "documentation_url": "https://docs.github.com/rest"}
	}
	cm.Body, cm.Updated = *in.Body, s.now().UTC().Truncate(time.Second)
	return http.StatusOK, s.commentDoc(cm)
}

func (s *Server) react(c call) (int, any) {
	cm := s.find(c.rest[1])
	if cm == nil {
		return notFound()
	}
	var in struct{ Content string }
	_ = json.NewDecoder(c.r.Body).Decode(&in)
	if !slices.Contains([]string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}, in.Content) {
		return http.StatusUnprocessableEntity, errDoc{"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest"}
	}
	for _, re := range cm.Reactions {
		if re.User.Login == c.me.Login && re.Content == in.Content {
			return http.StatusOK, s.reactionDoc(re)
		}
	}
	s.nextID++
	re := Reaction{ID: s.nextID, User: c.me, Content: in.Content}
	cm.Reactions = append(cm.Reactions, re)
	return http.StatusCreated, s.reactionDoc(re)
}

func (s *Server) postComment(c call) (int, any) {
	var in struct{ Body *string }
	if err := json.NewDecoder(c.r.Body).Decode(&in); err != nil || in.Body == nil || *in.Body == "" {
		return http.StatusUnprocessableEntity, errDoc{"message": "Validation Failed", "errors": []errDoc{{"resource": "IssueComment", "code": "missing_field", "field": "body"}}, "documentation_url": "https://docs.github.com/rest"}
	}
	if len([]rune(*in.Body)) > 65536 {
		return http.StatusUnprocessableEntity, errDoc{"message": "Validation Failed", "errors": []errDoc{{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}}, "documentation_url": "https://docs.github.com/rest"}
	}
	cm := s.add(c.n, c.me, s.assoc[c.me.Login], *in.Body)
	if s.hold != nil {
		hold, held := s.hold, s.held
		s.hold, s.held = nil, nil
		close(held)
		s.mu.Unlock()
		<-hold
		s.mu.Lock()
	}
	if s.loseNext > 0 {
		s.loseNext--
		return statusLost, nil
	}
	return http.StatusCreated, s.commentDoc(cm)
}

func (s *Server) addLabels(c call) (int, any) {
	var names []string
	var raw json.RawMessage
	_ = json.NewDecoder(c.r.Body).Decode(&raw)
	if json.Unmarshal(raw, &names) != nil {
		var in struct{ Labels []string }
		_ = json.Unmarshal(raw, &in)
		names = in.Labels
	}
	for _, l := range names {
		if !slices.Contains(s.labels[c.n], l) {
			s.labels[c.n] = append(s.labels[c.n], l)
		}
	}
	return http.StatusOK, s.labelsDoc(c.n)
}

func (s *Server) removeLabel(c call) (int, any) {
	name, _ := url.PathUnescape(c.rest[2])
	i := slices.Index(s.labels[c.n], name)
	if i < 0 {
		return http.StatusNotFound, errDoc{"message": "Label does not exist", "documentation_url": "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue", "status": "404"}
	}
	s.labels[c.n] = slices.Delete(s.labels[c.n], i, i+1)
	return http.StatusOK, s.labelsDoc(c.n)
}

func (s *Server) find(id string) *Comment {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	for _, c := range s.comments {
		if c.ID == n {
			return c
		}
	}
	return nil
}

// list serves a listing of comments: of issue n, or (n == 0) of the whole
// repository, with since, sort, direction, per_page and page, and Link
// headers to the other pages.
func (s *Server) list(r *http.Request, q url.Values, n int, h http.Header) (int, any) {
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return http.StatusUnprocessableEntity, errDoc{"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest"}
		}
		since = t
	}
	var cs []*Comment
	for _, c := range s.comments {
		if (n == 0 || c.Issue == n) && !c.Updated.Before(since) {
			cs = append(cs, c)
		}
	}
	byUpdated := q.Get("sort") == "updated"
	slices.SortStableFunc(cs, func(a, b *Comment) int {
		ta, tb := a.Created, b.Created
		if byUpdated {
			ta, tb = a.Updated, b.Updated
		}
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	if q.Get("direction") == "desc" {
		slices.Reverse(cs)
	}
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(cs)+per-1)/per, 1)
	var links []string
	link := func(p int, rel string) {
		u := *r.URL
		qq := u.Query()
		qq.Set("page", strconv.Itoa(p))
		u.RawQuery = qq.Encode()
		links = append(links, fmt.Sprintf(`<%s%s>; rel="%s"`, s.URL, u.RequestURI(), rel))
	}
	// In GitHub's order: prev, next, last, first.
	if page > 1 {
		link(page-1, "prev")
	}
	if page < last {
		link(page+1, "next")
		link(last, "last")
	}
	if page > 1 {
		link(1, "first")
	}
	if len(links) > 0 {
		h.Set("Link", strings.Join(links, ", "))
	}
	lo, hi := min((page-1)*per, len(cs)), min(page*per, len(cs))
	out := make([]any, 0, hi-lo)
	for _, c := range cs[lo:hi] {
		out = append(out, s.commentDoc(c))
	}
	return http.StatusOK, out
}

// RequestCount is Requests, read under the fake's lock.
func (s *Server) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Requests
}
