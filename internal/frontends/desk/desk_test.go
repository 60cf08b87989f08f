package desk

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinary()
	os.Exit(code)
}

// fixture is a workspace with one item of each kind a person settles here,
// and a desk serving it.
type fixture struct {
	root string
	hub  *router.Hub
	s    *Server
	base string // http://127.0.0.1:PORT
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir, rules := testenv.Workspace(t, "[humans]\nconfirm = false # its people are scripted: no terminal to confirm at")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil)
	h := router.New(store, rules, dir)
	ctx := context.Background()
	ask := func(r router.AskRequest) string {
		rec, err := h.Ask(ctx, r)
		require.NoError(t, err)
		return rec.ID
	}
	// CLR-1-001: a question to human with options
	ask(router.AskRequest{Issue: 1, From: "engineer", To: ledger.Human, Topic: "Rollout", Question: "Ship how?", Options: []string{"Behind a flag", "Straight to everyone"}})
	// CLR-2-001: an escalation, the asker's follow-up its proposal
	id := ask(router.AskRequest{Issue: 2, From: "architect", To: "product-manager", Topic: "Tenancy", Question: "Single or multi tenant?"})
	_, err := h.Answer(ctx, id, "product-manager", "Single for now.")
	require.NoError(t, err)
	_, err = h.Followup(ctx, id, "architect", "Enterprise customers need isolation: schema per tenant from day one.")
	require.NoError(t, err)
	_, err = h.Answer(ctx, id, "product-manager", "Single; isolation later.")
	require.NoError(t, err)
	_, err = h.Escalate(ctx, id, "they disagree")
	require.NoError(t, err)
	// PROP-001
	_, err = proposal.Create(ctx, h, proposal.Proposal{Type: proposal.TypeToolFix, Title: "Flaky runner", Rationale: "Timed out twice", Action: "Raise its timeout", Issues: []int{2}, CreatedBy: "engineer"})
	require.NoError(t, err)
	// CLR-3-001: a hostile topic and question
	ask(router.AskRequest{Issue: 3, From: "engineer", To: ledger.Human, Topic: `<script>document.title="pwned"</script>`, Question: `<img src=x onerror="document.title='pwned'">`})
	// CLR-4-001: a plain question to human
	ask(router.AskRequest{Issue: 4, From: "engineer", To: ledger.Human, Topic: "Cache", Question: "TTL?"})
	// CLR-5-002: a question to human with lines of a file (one hostile),
	// a proposed default, and a decision made on its issue before (CLR-5-001)
	id = ask(router.AskRequest{Issue: 5, From: "engineer", To: "architect", Topic: "Store", Question: "Where do prices live?"})
	_, err = h.Answer(ctx, id, "architect", "In Redis. Postgres keeps their history.")
	require.NoError(t, err)
	_, err = h.Resolve(ctx, id, "engineer", "")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs", "adr.md"), []byte("# ADR-5\nTTL: five minutes, per key.\n<script>document.title=\"pwned\"</script>\n"), 0o644))
	refs, err := brief.ParseRefs("--ref", []string{"docs/adr.md:2", "../outside.txt"})
	require.NoError(t, err)
	ask(router.AskRequest{Issue: 5, From: "engineer", To: ledger.Human, Topic: "TTL", Question: "Per key or global?", Options: []string{"Per key (default)", "Global"}, Refs: refs})

	s, err := New(Options{Hub: h, Person: "dana", Root: dir, Poll: 50 * time.Millisecond, Warn: func(err error) { t.Logf("warning: %v", err) }})
	require.NoError(t, err)
	ln, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(sctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{root: dir, hub: h, s: s, base: "http://" + ln.Addr().String()}
}

// client is an HTTP client that does not follow redirects and keeps
// cookies.
func client(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	return do(t, c, req)
}

// enter signs c in with the token, as the printed address does.
func (f *fixture) enter(t *testing.T, c *http.Client) {
	resp, _ := get(t, c, f.s.URL())
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

func (f *fixture) post(t *testing.T, c *http.Client, form url.Values, headers map[string]string) (*http.Response, string) {
	req, err := http.NewRequest(http.MethodPost, f.base+"/act", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(t, c, req)
}

func TestTokenIsRequired(t *testing.T) {
	f := newFixture(t)
	c := client(t)
	for _, path := range []string{"/", "/events", "/desk.js", "/desk.css", "/act", "/nothing"} {
		resp, body := get(t, c, f.base+path)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, path)
		assert.NotContains(t, body, "Rollout", path)
	}
	resp, _ := get(t, c, f.base+"/?token=wrong")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	// the printed address sets the cookie and drops the token from the address
	resp, _ = get(t, c, f.s.URL())
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/", resp.Header.Get("Location"))
	ck := resp.Cookies()
	require.Len(t, ck, 1)
	assert.True(t, ck[0].HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, ck[0].SameSite)
	resp, body := get(t, c, f.base+"/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "Rollout")
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
	assert.NotContains(t, resp.Header.Get("Content-Security-Policy"), "unsafe-inline")

	// or the header, for a script
	req, _ := http.NewRequest(http.MethodGet, f.base+"/", nil)
	req.Header.Set(TokenHeader, f.s.Token())
	resp, _ = do(t, client(t), req)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// another Host (a name rebound to 127.0.0.1) is refused, token or not
	req, _ = http.NewRequest(http.MethodGet, f.base+"/", nil)
	req.Host = "evil.example"
	req.Header.Set(TokenHeader, f.s.Token())
	resp, _ = do(t, client(t), req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestOnceURLLetsOneBrowserInOnce(t *testing.T) {
	f := newFixture(t)
	u, err := f.s.OnceURL()
	require.NoError(t, err)
	assert.NotContains(t, u, f.s.Token())
	resp, _ := get(t, client(t), u)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = get(t, client(t), u)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a one-time address works once")
}

// TestABrowserGetsASessionNotTheToken: entering (with the printed address
// or a one-time one) gives the browser a session cookie of its own; the
// run's token is in neither the cookie nor the page, so whoever used a
// one-time address holds one browser's session, not the run's secret.
func TestABrowserGetsASessionNotTheToken(t *testing.T) {
	f := newFixture(t)
	u, err := f.s.OnceURL()
	require.NoError(t, err)
	c := client(t)
	resp, _ := get(t, c, u)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	ck := resp.Cookies()
	require.Len(t, ck, 1)
	assert.NotEqual(t, f.s.Token(), ck[0].Value, "the cookie is a session, not the token")
	resp, body := get(t, c, f.base+"/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, body, f.s.Token(), "the page does not hold the token")
	// the session's cookie is no token for a script's header
	req, _ := http.NewRequest(http.MethodGet, f.base+"/", nil)
	req.Header.Set(TokenHeader, ck[0].Value)
	resp, _ = do(t, client(t), req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	// a cookie the desk did not make is refused
	req, _ = http.NewRequest(http.MethodGet, f.base+"/", nil)
	req.AddCookie(&http.Cookie{Name: Cookie, Value: "made-up"})
	resp, _ = do(t, client(t), req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestForgedPostsAreRefused(t *testing.T) {
	f := newFixture(t)
	c := client(t)
	f.enter(t, c)
	form := url.Values{"token": {f.s.Token()}, "id": {"CLR-4-001"}, "verb": {"answer"}, "body": {"forged"}}
	tests := []struct {
		name    string
		form    url.Values
		headers map[string]string
		want    string
	}{
		{"another origin", form, map[string]string{"Origin": "http://evil.example"}, "its origin is http://evil.example"},
		{"another port of 127.0.0.1", form, map[string]string{"Origin": "http://127.0.0.1:1"}, "its origin is"},
		{"a cross-site fetch", form, map[string]string{"Sec-Fetch-Site": "cross-site"}, "Sec-Fetch-Site is cross-site"},
		{"a same-site fetch", form, map[string]string{"Sec-Fetch-Site": "same-site"}, "Sec-Fetch-Site is same-site"},
		{"the cookie without the form's token", url.Values{"id": {"CLR-4-001"}, "verb": {"answer"}, "body": {"forged"}}, nil, "does not carry the desk's token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.post(t, c, tt.form, tt.headers)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode)
			assert.Contains(t, body, tt.want)
		})
	}
	resp, _ := get(t, c, f.base+"/act?verb=answer&id=CLR-4-001&body=x&token="+f.s.Token())
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "no action by GET")
	rec, err := f.hub.Get("CLR-4-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, rec.Status, "nothing was recorded")

	// the same post from the desk's own page goes through
	resp, _ = f.post(t, c, form, map[string]string{"Origin": f.base, "Sec-Fetch-Site": "same-origin"})
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	rec, err = f.hub.Get("CLR-4-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Answered, rec.Status)
	assert.Equal(t, "desk:dana", rec.PersonAt(len(rec.Thread)-1))
}

func TestActionsShowTheHubsErrors(t *testing.T) {
	f := newFixture(t)
	c := client(t)
	f.enter(t, c)
	tok := f.s.Token()
	tests := []struct {
		name string
		form url.Values
		want []string
	}{
		{"option out of range", url.Values{"id": {"CLR-1-001"}, "verb": {"answer"}, "option": {"3"}},
			[]string{"Not done:", "CLR-1-001 has no option 3: its options are 1. Behind a flag; 2. Straight to everyone", "pick an option from 1 to 2"}},
		{"a new decision without its text", url.Values{"id": {"CLR-2-001"}, "verb": {"resolve"}, "option": {"3"}},
			[]string{"needs the decision&#39;s text"}},
		{"no such clarification", url.Values{"id": {"CLR-9-001"}, "verb": {"answer"}, "body": {"x"}}, []string{"Not done:", "not found"}},
		{"a rejection without a reason", url.Values{"id": {"PROP-001"}, "verb": {"reject"}}, []string{"a rejection needs a reason"}},
		{"an empty answer", url.Values{"id": {"CLR-4-001"}, "verb": {"answer"}}, []string{"write the answer in the box"}},
		{"an unknown action", url.Values{"id": {"CLR-4-001"}, "verb": {"delete"}}, []string{"does not know the action &#34;delete&#34;"}},
		{"option not a number", url.Values{"id": {"CLR-1-001"}, "verb": {"answer"}, "option": {"two"}}, []string{"option &#34;two&#34; is not a number"}},
		{"option picked", url.Values{"id": {"CLR-1-001"}, "verb": {"answer"}, "option": {"2"}}, []string{"Answered CLR-1-001 with option 2."}},
		{"answered already by an agent's rules", url.Values{"id": {"CLR-2-001"}, "verb": {"answer"}, "body": {"x"}}, []string{"Not done:", "CLR-2-001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set("token", tok)
			resp, _ := f.post(t, c, tt.form, nil)
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			resp, body := get(t, c, f.base+resp.Header.Get("Location"))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			for _, w := range tt.want {
				assert.Contains(t, body, w)
			}
			assert.NotContains(t, body, "goroutine", "never a stack trace")
		})
	}
	rec, err := f.hub.Get("CLR-1-001")
	require.NoError(t, err)
	c1 := rec.Clarification
	assert.Equal(t, "Straight to everyone", c1.Thread[len(c1.Thread)-1].Body)
	assert.Equal(t, 2, c1.ChoiceAt(len(c1.Thread)-1).Option)
}

// TestTextOverTheLimit: an answer past one message's limit is refused
// with the size and the limit, nothing is written, and what the person
// wrote is back in its box, not lost.
func TestTextOverTheLimit(t *testing.T) {
	f := newFixture(t)
	c := client(t)
	f.enter(t, c)
	long := strings.Repeat("word ", 4000) + "end"
	form := url.Values{"id": {"CLR-4-001"}, "verb": {"answer"}, "body": {long}, "token": {f.s.Token()}}
	resp, _ := f.post(t, c, form, nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, body := get(t, c, f.base+resp.Header.Get("Location"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "Not done:")
	assert.Contains(t, body, fmt.Sprintf("is %d bytes; the limit is %d bytes", len(long), ledger.MaxMessageLen))
	assert.Contains(t, body, fmt.Sprintf("shorten it to %d bytes or fewer", ledger.MaxMessageLen))
	assert.Contains(t, body, `name="body" rows="3">`+long+"</textarea>", "the text is kept in its box")
	rec, err := f.hub.Get("CLR-4-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, rec.Status, "nothing written")
	assert.Len(t, rec.Thread, 1)
}

// TestCardOnTheItem: a question with context shows its decision card,
// the file's text escaped; one without shows none.
func TestCardOnTheItem(t *testing.T) {
	f := newFixture(t)
	c := client(t)
	f.enter(t, c)
	_, body := get(t, c, f.base+"/")
	start := strings.Index(body, `id="item-CLR-5-002"`)
	require.Positive(t, start)
	item := body[start:]
	item = item[:strings.Index(item, "</article>")]
	for _, s := range []string{
		`<section class="card" aria-label="Decision card"><h3>Decision card</h3><pre>Decision card: engineer asks human on issue #5`,
		"  1. Per key (default) [default: engineer&#39;s proposal]",
		"  - docs/adr.md (named by engineer):\n    1 | # ADR-5\n    2 | TTL: five minutes, per key.\n    3 | &lt;script&gt;",
		"Decisions so far on issue #5 (newest first):\n  - CLR-5-001 (Store): ",
		"Left out:\n  - ../outside.txt: outside the repository: not read",
	} {
		assert.Contains(t, item, s)
	}
	other := body[strings.Index(body, `id="item-CLR-4-001"`):]
	assert.NotContains(t, other[:strings.Index(other, "</article>")], `class="card"`, "a question with nothing more has no card")
	assert.Equal(t, 1, strings.Count(body, "<script"), "only the desk's own script tag")
}

func TestAgentTextIsEscaped(t *testing.T) {
	f := newFixture(t)
	c := client(t)
	f.enter(t, c)
	_, body := get(t, c, f.base+"/")
	assert.Contains(t, body, "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;")
	assert.Contains(t, body, "&lt;img src=x onerror=&#34;document.title=&#39;pwned&#39;&#34;&gt;")
	assert.NotContains(t, body, "<img")
	assert.Equal(t, 1, strings.Count(body, "<script"), "only the desk's own script tag")
}

// TestDeskCommand runs agentx desk as a person would: it prints the
// address with the token, serves the queue there, refuses the page
// without it, and stops on Ctrl-C with exit 130.
func TestDeskCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentx binary")
	}
	f := newFixture(t)
	bin := testenv.AgentxBinary(t)
	cmd, u, second, stderr := runDesk(t, bin, f.root, nil, "--as", "dana")
	assert.Equal(t, "acting as desk:dana in "+f.root+"; Ctrl-C stops", second)

	base, _, _ := strings.Cut(u, "/?token=")
	resp, _ := get(t, client(t), base+"/")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	c := client(t)
	resp, _ = get(t, c, u)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, body := get(t, c, base+"/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "Acting as <strong>desk:dana</strong>")
	assert.Contains(t, body, `id="item-CLR-2-001"`)

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
	assert.Equal(t, 130, exit.ExitCode(), "stderr: %s", stderr.String())
}

// runDesk starts the real agentx desk (--no-open, and args) on the
// workspace dir with env added, and returns it, the address it printed
// (with the token), the line after it, and its stderr so far; its stdout
// is drained from then on, and the process is killed at cleanup.
func runDesk(t *testing.T, bin, dir string, env []string, args ...string) (*exec.Cmd, string, string, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"desk", "--no-open"}, args...)...)
	cmd.Env = append(append(cleanEnv(), "AGENTX_ROOT="+dir), env...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan(), "stderr: %s", stderr.String())
	u, ok := strings.CutPrefix(lines.Text(), "agentx desk: ")
	require.True(t, ok, lines.Text())
	require.True(t, lines.Scan(), "stderr: %s", stderr.String())
	second := lines.Text()
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cmd, u, second, stderr
}

// TestResolveWithASummary: the resolve forms have an optional summary box;
// what it holds is stored as the decision's summary, checked by the hub
// as --summary is (too long: the page says so, naming the limit, and
// nothing is written); left empty, none is stored.
func TestResolveWithASummary(t *testing.T) {
	f := newFixture(t)
	c := client(t)
	f.enter(t, c)
	_, page := get(t, c, f.base+"/")
	assert.Contains(t, page, `<input type="text" id="summary-CLR-2-001" name="summary" maxlength="400">`)
	assert.NotContains(t, page, `id="summary-CLR-4-001"`, "a question's form has none")

	act := func(form url.Values) string {
		form.Set("token", f.s.Token())
		resp, _ := f.post(t, c, form, nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		_, body := get(t, c, f.base+resp.Header.Get("Location"))
		return body
	}
	body := act(url.Values{"id": {"CLR-2-001"}, "verb": {"resolve"}, "option": {"2"}, "summary": {strings.Repeat("x", ledger.MaxSummary+1)}})
	assert.Contains(t, body, "Not done:")
	assert.Contains(t, body, "is 401 bytes; the limit is 400")
	rec, err := f.hub.Get("CLR-2-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Escalated, rec.Status, "nothing written")

	body = act(url.Values{"id": {"CLR-2-001"}, "verb": {"resolve"}, "option": {"2"}, "summary": {"  Multi-tenant, schema per tenant.  "}})
	assert.Contains(t, body, "Resolved CLR-2-001 with option 2.")
	rec, err = f.hub.Get("CLR-2-001")
	require.NoError(t, err)
	require.NotNil(t, rec.X)
	assert.Equal(t, "Multi-tenant, schema per tenant.", rec.X.Summary)

	// an empty box stores none
	_, err = f.hub.Answer(context.Background(), "CLR-4-001", ledger.Human, "Five minutes.")
	require.NoError(t, err)
	body = act(url.Values{"id": {"CLR-4-001"}, "verb": {"resolve"}, "summary": {" "}})
	assert.Contains(t, body, "Resolved CLR-4-001.")
	rec, err = f.hub.Get("CLR-4-001")
	require.NoError(t, err)
	assert.True(t, rec.X == nil || rec.X.Summary == "")
}
