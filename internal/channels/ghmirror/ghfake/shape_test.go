package ghfake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v89/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
)

// The fake's documents are checked against responses of the real GitHub
// API recorded by the @octokit/fixtures package (testdata/octokit-fixtures:
// where they come from and their licence are in its README.md). Nothing is
// downloaded here.
//
// The recordings cover some of what GitHub mode calls, not all of it; what
// they lack is listed in notRecorded, and its subtests are skipped saying
// so.

const fixtures = "testdata/octokit-fixtures"

// recorded is one recorded response.
type recorded struct {
	Scenario string            `json:"scenario"`
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers"`
	Body     json.RawMessage   `json:"body"`
}

func loadRecorded(t *testing.T, name string) recorded {
	t.Helper()
	var r recorded
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &r))
	return r
}

func loadPages(t *testing.T, name string) []recorded {
	t.Helper()
	var rs []recorded
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rs))
	return rs
}

// newerThanRecording are the members GitHub added after the recordings
// were made (July 2022), which the fake sends as GitHub does today and
// go-github decodes: at this path (member names joined by ".", "[]" for
// an array's elements, relative to the document compared).
var newerThanRecording = map[string]string{
	"user.user_view_type":      "added to users in 2024",
	"user_view_type":           "added to users in 2024",
	"closed_by.user_view_type": "added to users in 2024",
}

// notRecorded are the calls GitHub mode makes that @octokit/fixtures
// 23.1.2 has no recording of: the fake's answers to them are checked only
// through the pieces they share with recorded ones (a comment's user and
// reactions, the rate limit headers, Link headers), and against
// go-github's types.
var notRecorded = []struct{ call, why string }{
	{"GET /repos/{owner}/{repo}/issues/comments", "no scenario lists a repository's comments (since, sort, direction)"},
	{"GET /repos/{owner}/{repo}/issues/{n}/comments", "no scenario lists an issue's comments"},
	{"POST /repos/{owner}/{repo}/issues/{n}/comments", "no scenario creates a comment"},
	{"PATCH /repos/{owner}/{repo}/issues/comments/{id}", "no scenario edits a comment"},
	{"DELETE /repos/{owner}/{repo}/issues/{n}/labels/{name}", "the labels scenario deletes a repository's label, not an issue's"},
	{"POST /repos/{owner}/{repo}/issues/comments/{id}/reactions", "no scenario reacts"},
	{"304 Not Modified", "no scenario makes a conditional request (If-None-Match)"},
	{"403 and 429 rate limited", "no scenario runs out of rate limit (X-RateLimit-Remaining: 0, Retry-After)"},
}

// fakeCall is one request to the fake and its answer.
type fakeCall struct {
	status int
	header http.Header
	body   []byte
}

func call(t *testing.T, s *ghfake.Server, method, path string, in any) fakeCall {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		require.NoError(t, err)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer fake-token")
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return fakeCall{resp.StatusCode, resp.Header, b}
}

// jsonKind is a JSON value's type: object, array, string, number, bool
// or null.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// jsonFields are the member names a go-github type decodes, with the type
// of each (pointers, slices and arrays taken off), or nil for a type that
// is not decoded member by member.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct || t == reflect.TypeFor[github.Timestamp]() {
		return nil
	}
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// diffShape compares the fake's JSON value got with the recorded want as
// go-github's type typ decodes them: a member of want that typ decodes
// must be in got, with the same JSON type (null matches any: the member
// is nullable); a member of got must be in want (or be newer than the
// recording). Objects and arrays are compared member by member, each
// element of an array of got against the first of want.
func diffShape(path string, got, want any, typ reflect.Type) []string {
	if got == nil || want == nil {
		return nil
	}
	if gk, wk := jsonKind(got), jsonKind(want); gk != wk {
		return []string{fmt.Sprintf("%s: %s, recorded %s", orRoot(path), gk, wk)}
	}
	var out []string
	switch g := got.(type) {
	case []any:
		w := want.([]any)
		if len(w) == 0 {
			return nil
		}
		for _, e := range g {
			out = append(out, diffShape(path+"[]", e, w[0], typ)...)
		}
	case map[string]any:
		w := want.(map[string]any)
		fields := jsonFields(typ)
		for _, k := range sortedKeys(w) {
			if _, decoded := fields[k]; !decoded {
				continue
			}
			if _, ok := g[k]; !ok {
				out = append(out, fmt.Sprintf("%s: missing (go-github decodes it)", join(path, k)))
			}
		}
		for _, k := range sortedKeys(g) {
			wv, ok := w[k]
			if !ok {
				if _, newer := newerThanRecording[join(path, k)]; !newer {
					out = append(out, fmt.Sprintf("%s: not in the recorded response", join(path, k)))
				}
				continue
			}
			out = append(out, diffShape(join(path, k), g[k], wv, fields[k])...)
		}
	}
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "(the document)"
	}
	return path
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// decodedPaths decodes raw into a new T as go-github does and returns
// the paths of the members it set (encoding it back leaves the unset
// ones out: go-github's members are omitempty).
func decodedPaths[T any](t *testing.T, raw []byte) []string {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(raw, &v), "go-github decodes it")
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var tree any
	require.NoError(t, json.Unmarshal(b, &tree))
	set := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				p := join(path, k)
				if _, newer := newerThanRecording[p]; newer {
					continue
				}
				set[p] = true
				walk(p, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		}
	}
	walk("", tree)
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func unmarshal(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	require.NoError(t, d.Decode(&v), "%s", raw)
	return v
}

// compare checks the fake's document against the recorded one: the same
// members with the same JSON types, and go-github setting the same
// members of T from both.
func compare[T any](t *testing.T, got, want []byte) {
	t.Helper()
	assert.Empty(t, diffShape("", unmarshal(t, got), unmarshal(t, want), reflect.TypeFor[T]()), "the fake's document differs from the recorded one")
	assert.Equal(t, decodedPaths[T](t, want), decodedPaths[T](t, got), "go-github decodes the recorded document and the fake's alike")
}

// member is one member of a JSON object, encoded.
func member(t *testing.T, raw []byte, name string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	v, ok := m[name]
	require.True(t, ok, "%s in %s", name, raw)
	return v
}

var rateHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Resource", "X-RateLimit-Used"}

// compareHeaders checks the headers GitHub mode reads: the content type,
// the rate limit (each a decimal number, the reset in seconds since the
// epoch, which go-github parses alike) and the entity tag's form.
func compareHeaders(t *testing.T, got http.Header, want recorded) {
	t.Helper()
	assert.Equal(t, want.Headers["content-type"], got.Get("Content-Type"))
	for _, h := range rateHeaders {
		w, ok := want.Headers[strings.ToLower(h)]
		require.True(t, ok, "the recording has %s", h)
		g := got.Get(h)
		require.NotEmpty(t, g, "the fake sends %s", h)
		if h == "X-RateLimit-Resource" {
			assert.Equal(t, w, g)
			continue
		}
		_, werr := strconv.ParseInt(w, 10, 64)
		_, gerr := strconv.ParseInt(g, 10, 64)
		assert.NoError(t, werr)
		assert.NoError(t, gerr, "%s: %q is a decimal number", h, g)
	}
	// The reset is in seconds since the epoch, not milliseconds: in 2022
	// for the recording (made in July 2022), within a day of now for the
	// fake.
	wantReset, _ := strconv.ParseInt(want.Headers["x-ratelimit-reset"], 10, 64)
	assert.Equal(t, 2022, time.Unix(wantReset, 0).UTC().Year(), "the recorded reset is seconds since the epoch")
	gotReset, _ := strconv.ParseInt(got.Get("X-RateLimit-Reset"), 10, 64)
	assert.WithinDuration(t, time.Now(), time.Unix(gotReset, 0), 24*time.Hour, "the fake's reset is seconds since the epoch")

	// go-github reads the same rate limit members from both (it parses
	// them in a function it does not export: through a stub here).
	wh := http.Header{}
	for k, v := range want.Headers {
		wh.Set(k, v)
	}
	wr, gr := parseRate(t, wh), parseRate(t, got)
	for name, r := range map[string]github.Rate{"recorded": wr, "fake": gr} {
		assert.Positive(t, r.Limit, name)
		assert.Positive(t, r.Remaining, name)
		assert.False(t, r.Reset.IsZero(), name)
	}
	assert.Equal(t, wr.Resource, gr.Resource)
	assert.Equal(t, got.Get("X-RateLimit-Used"), strconv.Itoa(gr.Used))

	if w := want.Headers["etag"]; w != "" {
		etag := regexp.MustCompile(`^(W/)?"[^"]+"$`)
		assert.Regexp(t, etag, w)
		if g := got.Get("ETag"); g != "" {
			assert.Regexp(t, etag, g)
		}
	}
}

// parseRate is the rate limit go-github reads from a response with
// header h (served to it from a stub).
func parseRate(t *testing.T, h http.Header) github.Rate {
	t.Helper()
	_, resp, err := stubClient(t, h).Issues.ListLabelsByIssue(context.Background(), "o", "r", 1, nil)
	require.NoError(t, err)
	return resp.Rate
}

// stubClient is a go-github client whose every response is a 200 with
// header h and an empty list.
func stubClient(t *testing.T, h http.Header) *github.Client {
	t.Helper()
	c, err := github.NewClient(github.WithHTTPClient(&http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: h.Clone(), Body: io.NopCloser(strings.NewReader("[]")), Request: r}, nil
	})}))
	require.NoError(t, err)
	return c
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// linkPages is what go-github reads from a response's Link header.
func linkPages(t *testing.T, h http.Header) [4]int {
	t.Helper()
	_, got, err := stubClient(t, h).Issues.ListComments(context.Background(), "o", "r", 1, nil)
	require.NoError(t, err)
	return [4]int{got.FirstPage, got.PrevPage, got.NextPage, got.LastPage}
}

// rels are a Link header's relations, in order.
func rels(link string) []string {
	var out []string
	for part := range strings.SplitSeq(link, ",") {
		m := regexp.MustCompile(`^\s*<(https?://[^>]+)>; rel="(\w+)"$`).FindStringSubmatch(part)
		if m == nil {
			return append(out, "malformed: "+part)
		}
		out = append(out, m[2])
	}
	return out
}

func TestShapesAgainstRecordedGitHub(t *testing.T) {
	fake := ghfake.New("octo-org", "octo-repo")
	t.Cleanup(fake.Close)
	fake.AddToken("alice-token", "alice", "User", "COLLABORATOR")
	id := fake.AddComment(1, "alice", "User", "COLLABORATOR", "hello")
	require.Equal(t, http.StatusCreated, call(t, fake, "POST", fmt.Sprintf("/repos/octo-org/octo-repo/issues/comments/%d/reactions", id), map[string]string{"content": "+1"}).status)

	t.Run("add labels to an issue", func(t *testing.T) {
		want := loadRecorded(t, "add-labels.json")
		got := call(t, fake, "POST", "/repos/octo-org/octo-repo/issues/1/labels", map[string][]string{"labels": {"clarification:active", "clarification:stale"}})
		assert.Equal(t, want.Status, got.status)
		compare[[]*github.Label](t, got.body, want.Body)
		compareHeaders(t, got.header, want)
	})

	t.Run("an issue", func(t *testing.T) {
		// The recording is of the issue a POST created (201); a GET of an
		// issue answers the same document with 200.
		want := loadRecorded(t, "create-issue.json")
		got := call(t, fake, "GET", "/repos/octo-org/octo-repo/issues/2", nil)
		assert.Equal(t, http.StatusOK, got.status)
		compare[github.Issue](t, got.body, want.Body)
		compareHeaders(t, got.header, want)
	})

	t.Run("a comment's author and reactions", func(t *testing.T) {
		// No recording has a comment, but an issue has the same user and
		// reactions members a comment has.
		want := loadRecorded(t, "create-issue.json")
		got := call(t, fake, "GET", fmt.Sprintf("/repos/octo-org/octo-repo/issues/comments/%d", id), nil)
		require.Equal(t, http.StatusOK, got.status)
		compare[github.User](t, member(t, got.body, "user"), member(t, want.Body, "user"))
		compare[github.Reactions](t, member(t, got.body, "reactions"), member(t, want.Body, "reactions"))
		// Its other members are the ones go-github's IssueComment decodes
		// (and performed_via_github_app, which an issue has too).
		var doc map[string]any
		require.NoError(t, json.Unmarshal(got.body, &doc))
		fields := jsonFields(reflect.TypeFor[github.IssueComment]())
		for k := range doc {
			_, known := fields[k]
			assert.True(t, known || k == "performed_via_github_app", "%s: go-github's IssueComment has no such member", k)
		}
		for _, k := range []string{"id", "body", "user", "author_association", "created_at", "updated_at", "issue_url"} {
			assert.Contains(t, doc, k, "ghmirror reads it")
		}
	})

	t.Run("pagination", func(t *testing.T) {
		// The recording pages an issue list 3 a page over 5 pages; the fake
		// pages a comment list 1 a page over 5.
		pages := loadPages(t, "paginate-issues.json")
		require.Len(t, pages, 5)
		for n := 2; n <= 5; n++ {
			fake.AddComment(1, "alice", "User", "COLLABORATOR", fmt.Sprintf("comment %d", n))
		}
		first := call(t, fake, "GET", "/repos/octo-org/octo-repo/issues/1/comments?per_page=1", nil)
		require.Equal(t, http.StatusOK, first.status)
		compareHeaders(t, first.header, pages[0])
		for i, want := range pages {
			got := first
			if i > 0 {
				got = call(t, fake, "GET", fmt.Sprintf("/repos/octo-org/octo-repo/issues/1/comments?per_page=1&page=%d", i+1), nil)
			}
			wh := http.Header{}
			wh.Set("Link", want.Headers["link"])
			assert.Equal(t, rels(want.Headers["link"]), rels(got.header.Get("Link")), "page %d: the same relations, in GitHub's order", i+1)
			assert.Equal(t, linkPages(t, wh), linkPages(t, got.header), "page %d: go-github reads the same pages", i+1)
		}
		var issues []json.RawMessage
		require.NoError(t, json.Unmarshal(pages[0].Body, &issues))
		require.NotEmpty(t, issues)
		var comments []json.RawMessage
		require.NoError(t, json.Unmarshal(first.body, &comments))
		require.Len(t, comments, 1)
		compare[github.User](t, member(t, comments[0], "user"), member(t, issues[0], "user"))
	})

	t.Run("validation failed", func(t *testing.T) {
		want := loadRecorded(t, "validation-failed.json")
		got := call(t, fake, "POST", "/repos/octo-org/octo-repo/issues/1/comments", map[string]string{"body": ""})
		assert.Equal(t, want.Status, got.status)
		compare[github.ErrorResponse](t, got.body, want.Body)
		compareHeaders(t, got.header, want)
		for name, body := range map[string][]byte{"recorded": want.Body, "fake": got.body} {
			err := github.CheckResponse(&http.Response{StatusCode: want.Status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), Request: &http.Request{Method: "POST"}})
			var er *github.ErrorResponse
			require.ErrorAs(t, err, &er, name)
			assert.Equal(t, "Validation Failed", er.Message, name)
			require.Len(t, er.Errors, 1, name)
			assert.NotEmpty(t, er.Errors[0].Code, name)
			assert.NotEmpty(t, er.Errors[0].Field, name)
		}
	})

	for _, nr := range notRecorded {
		t.Run("not recorded: "+nr.call, func(t *testing.T) {
			t.Skipf("@octokit/fixtures 23.1.2 has no recording of %s: %s", nr.call, nr.why)
		})
	}
}
