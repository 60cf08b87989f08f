package ghmirror

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v89/github"
)

// Comment is an issue comment as agentx reads it.
type Comment struct {
	ID          int64
	Issue       int    // the issue it is on (from its issue_url)
	Body        string // as written: untrusted
	Login       string
	Bot         bool   // the author is a bot (user type Bot, or a [bot] login)
	Association string // author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE...
	Created     time.Time
	Updated     time.Time
}

// Client is the few GitHub REST calls GitHub mode makes, over go-github.
// It remembers the rate limit GitHub last reported, and refuses to call
// while GitHub has said to wait (a *WaitError) instead of spending a
// request GitHub would refuse.
type Client struct {
	gh          *github.Client
	owner, repo string
	// Rate is the core rate limit GitHub last reported; zero before any
	// call.
	Rate github.Rate
	// Requests counts the calls made; NotModified those GitHub answered
	// 304 (which cost no rate limit).
	Requests, NotModified int

	selfMu sync.Mutex
	self   *string // the token's own login, once known ("" for none)
}

// NewClient returns a client for repo (owner/name) at apiURL (the REST
// API's base URL), authenticated with token, using hc (nil: a client
// with no timeout of its own: bound calls with their contexts).
func NewClient(apiURL, repo, token string, hc *http.Client) (*Client, error) {
	if hc == nil {
		hc = &http.Client{}
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok {
		return nil, fmt.Errorf("github: repo %q is not owner/name", repo)
	}
	opts := []github.ClientOptionsFunc{github.WithHTTPClient(hc), github.WithUserAgent("agentx")}
	if token != "" {
		opts = append(opts, github.WithAuthToken(token))
	}
	// The base URL is taken as given (WithEnterpriseURLs would add
	// /api/v3/ to a bare host), so a proxy or a loopback fake works too.
	opts = append(opts, github.WithURLs(&apiURL, &apiURL))
	gh, err := github.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	return &Client{gh: gh, owner: owner, repo: name}, nil
}

// WaitError is GitHub saying not to call before Until: a rate limit
// exhausted (403 or 429 with X-RateLimit-Remaining: 0, until its reset) or
// a secondary rate limit (Retry-After).
type WaitError struct {
	Until time.Time
	Why   string
}

// WaitUntil is when calls may be made again (relay.Waiter).
func (e *WaitError) WaitUntil() time.Time { return e.Until }

func (e *WaitError) Error() string {
	return fmt.Sprintf("GitHub %s: not before %s", e.Why, e.Until.UTC().Format(time.RFC3339))
}

// classify turns go-github's errors into the ones callers branch on.
func (c *Client) classify(resp *github.Response, err error) error {
	if resp != nil && resp.Rate.Limit > 0 {
		c.Rate = resp.Rate
	}
	if err == nil {
		return nil
	}
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	switch {
	case errors.As(err, &rl):
		c.Rate = rl.Rate
		return &WaitError{Until: rl.Rate.Reset.Time, Why: "rate limit exhausted"}
	case errors.As(err, &ab):
		wait := time.Minute
		if ab.RetryAfter != nil {
			wait = *ab.RetryAfter
		}
		return &WaitError{Until: time.Now().Add(wait), Why: "secondary rate limit"}
	}
	if resp != nil && resp.Response != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusForbidden) {
		if s := resp.Header.Get("Retry-After"); s != "" {
			if n, perr := strconv.Atoi(s); perr == nil {
				return &WaitError{Until: time.Now().Add(time.Duration(n) * time.Second), Why: "asked to retry later"}
			}
		}
	}
	return fmt.Errorf("github: %w", err)
}

// refused reports whether err is GitHub answering a call with a refusal
// (a 4xx such as 422, or a rate limit: a *WaitError, or a 429 without
// Retry-After): the call did nothing. A 408, and an error without GitHub's
// answer (a 5xx, a lost connection), may have done it.
func refused(err error) bool {
	if _, limited := relay.WaitOf(err); limited {
		return true
	}
	var er *github.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode >= 400 && er.Response.StatusCode < 500 &&
		er.Response.StatusCode != http.StatusRequestTimeout
}

func (c *Client) comment(ic *github.IssueComment) Comment {
	u := ic.GetUser()
	out := Comment{
		ID: ic.GetID(), Body: ic.GetBody(), Login: u.GetLogin(), Association: ic.GetAuthorAssociation(),
		Bot:     u.GetType() == "Bot" || strings.HasSuffix(u.GetLogin(), "[bot]"),
		Created: ic.GetCreatedAt().Time, Updated: ic.GetUpdatedAt().Time,
	}
	if s := ic.GetIssueURL(); s != "" {
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			out.Issue, _ = strconv.Atoi(s[i+1:])
		}
	}
	return out
}

// maxPages bounds one listing: 100 comments a page.
const maxPages = 20

// ListSince lists the repository's issue comments updated at or after
// since (the zero time: all), oldest update first, every page. With etag
// (from the previous listing of the same since) the first page is asked
// conditionally: if nothing changed GitHub answers 304, which costs no
// rate limit, and notModified is true.
func (c *Client) ListSince(ctx context.Context, since time.Time, etag string) (out []Comment, newETag string, notModified bool, err error) {
	opts := &github.IssueListCommentsOptions{Sort: github.Ptr("updated"), Direction: github.Ptr("asc"), ListOptions: github.ListOptions{PerPage: 100}}
	if !since.IsZero() {
		opts.Since = &since
	}
	for page := 0; page < maxPages; page++ {
		cs, resp, err := c.list(ctx, opts, etag)
		if page == 0 && resp != nil && resp.StatusCode == http.StatusNotModified {
			c.NotModified++
			return nil, etag, true, nil
		}
		if err != nil {
			return nil, "", false, err
		}
		if page == 0 {
			newETag = resp.Header.Get("ETag")
		}
		for _, ic := range cs {
			out = append(out, c.comment(ic))
		}
		if resp.NextPage == 0 {
			return out, newETag, false, nil
		}
		opts.Page = resp.NextPage
		etag = ""
	}
	return out, newETag, false, nil
}

func (c *Client) list(ctx context.Context, opts *github.IssueListCommentsOptions, etag string) ([]*github.IssueComment, *github.Response, error) {
	u := fmt.Sprintf("repos/%v/%v/issues/comments", c.owner, c.repo)
	q := url.Values{"sort": {*opts.Sort}, "direction": {*opts.Direction}, "per_page": {strconv.Itoa(opts.PerPage)}}
	if opts.Since != nil {
		q.Set("since", opts.Since.UTC().Format(time.RFC3339))
	}
	if opts.Page > 0 {
		q.Set("page", strconv.Itoa(opts.Page))
	}
	req, err := c.gh.NewRequest(ctx, http.MethodGet, u+"?"+q.Encode(), nil)
	if err != nil {
		return nil, nil, err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	c.Requests++
	var cs []*github.IssueComment
	resp, err := c.gh.Do(req, &cs)
	if resp != nil && resp.StatusCode == http.StatusNotModified {
		return nil, resp, nil
	}
	return cs, resp, c.classify(resp, err)
}

// IssueComments lists the comments on one issue, every page (to find what
// agentx posted before it could record it).
func (c *Client) IssueComments(ctx context.Context, issue int) ([]Comment, error) {
	var out []Comment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxPages; page++ {
		c.Requests++
		cs, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, issue, opts)
		if err := c.classify(resp, err); err != nil {
			return nil, err
		}
		for _, ic := range cs {
			out = append(out, c.comment(ic))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// Create posts a comment on an issue.
func (c *Client) Create(ctx context.Context, issue int, body string) (Comment, error) {
	c.Requests++
	ic, resp, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, issue, &github.IssueComment{Body: &body})
	if err := c.classify(resp, err); err != nil {
		return Comment{}, err
	}
	return c.comment(ic), nil
}

// Edit replaces a comment's body.
func (c *Client) Edit(ctx context.Context, id int64, body string) error {
	c.Requests++
	_, resp, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, id, &github.IssueComment{Body: &body})
	return c.classify(resp, err)
}

// AddLabels adds labels to an issue (GitHub creates a label it does not
// know).
func (c *Client) AddLabels(ctx context.Context, issue int, labels []string) error {
	c.Requests++
	_, resp, err := c.gh.Issues.AddLabelsToIssue(ctx, c.owner, c.repo, issue, labels)
	return c.classify(resp, err)
}

// RemoveLabel removes a label from an issue; one it does not carry is no
// error.
func (c *Client) RemoveLabel(ctx context.Context, issue int, label string) error {
	c.Requests++
	resp, err := c.gh.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, issue, label)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil
	}
	return c.classify(resp, err)
}

// React adds a reaction to a comment: agentx's receipt.
func (c *Client) React(ctx context.Context, id int64, content string) error {
	c.Requests++
	_, resp, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, c.owner, c.repo, id, content)
	return c.classify(resp, err)
}

// Self is the login of the account the token authenticates as: agentx's
// own, which is never a person. It asks GitHub (GET /user) once per
// client, on first use; a token that has no user account (an app's
// installation token, whose comments are a bot's) is "" with no error. A
// failure to ask is an error, and the next call asks again: a rate limit
// too (GitHub answers one with a 403 as well), which says nothing about
// the token.
func (c *Client) Self(ctx context.Context) (string, error) {
	c.selfMu.Lock()
	defer c.selfMu.Unlock()
	if c.self != nil {
		return *c.self, nil
	}
	c.Requests++
	u, resp, err := c.gh.Users.Get(ctx, "")
	login := u.GetLogin()
	if err := c.classify(resp, err); err != nil {
		var we *WaitError
		if errors.As(err, &we) || resp == nil || resp.Response == nil {
			return "", err
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			login = "" // no user behind the token
		default:
			return "", err
		}
	}
	c.self = &login
	return login, nil
}
