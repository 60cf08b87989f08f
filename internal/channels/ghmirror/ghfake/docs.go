package ghfake

import (
	"fmt"
	"strings"
	"time"
)

// The documents below have the members GitHub's REST API returns (as in
// its OpenAPI description and go-github's types: IssueComment, User,
// Label, Reaction, Issue), with GitHub's URL shapes.

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) apiURL(format string, args ...any) string {
	return s.URL + fmt.Sprintf(format, args...)
}

func (s *Server) htmlURL(format string, args ...any) string {
	return "https://github.com" + fmt.Sprintf(format, args...)
}

func (s *Server) userDoc(u User) map[string]any {
	return map[string]any{
		"login": u.Login, "id": u.ID, "node_id": fmt.Sprintf("U_kgDO%06d", u.ID),
		"avatar_url": fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", u.ID), "gravatar_id": "",
		"url": s.apiURL("/users/%s", u.Login), "html_url": s.htmlURL("/%s", u.Login),
		"followers_url":       s.apiURL("/users/%s/followers", u.Login),
		"following_url":       s.apiURL("/users/%s/following{/other_user}", u.Login),
		"gists_url":           s.apiURL("/users/%s/gists{/gist_id}", u.Login),
		"starred_url":         s.apiURL("/users/%s/starred{/owner}{/repo}", u.Login),
		"subscriptions_url":   s.apiURL("/users/%s/subscriptions", u.Login),
		"organizations_url":   s.apiURL("/users/%s/orgs", u.Login),
		"repos_url":           s.apiURL("/users/%s/repos", u.Login),
		"events_url":          s.apiURL("/users/%s/events{/privacy}", u.Login),
		"received_events_url": s.apiURL("/users/%s/received_events", u.Login),
		"type":                u.Type, "user_view_type": "public", "site_admin": false,
	}
}

// reactionsDoc is the reactions summary of a comment or an issue (at
// url) with reactions rs.
func (s *Server) reactionsDoc(url string, rs []Reaction) map[string]any {
	d := map[string]any{"url": url, "total_count": len(rs)}
	for _, k := range []string{"+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"} {
		d[k] = 0
	}
	for _, r := range rs {
		d[r.Content] = d[r.Content].(int) + 1
	}
	return d
}

func (s *Server) commentDoc(c *Comment) map[string]any {
	return map[string]any{
		"id": c.ID, "node_id": fmt.Sprintf("IC_kwDO%08d", c.ID),
		"url":       s.apiURL("/repos/%s/%s/issues/comments/%d", s.Owner, s.Repo, c.ID),
		"html_url":  s.htmlURL("/%s/%s/issues/%d#issuecomment-%d", s.Owner, s.Repo, c.Issue, c.ID),
		"issue_url": s.apiURL("/repos/%s/%s/issues/%d", s.Owner, s.Repo, c.Issue),
		"body":      c.Body, "user": s.userDoc(c.User),
		"created_at": ts(c.Created), "updated_at": ts(c.Updated),
		"author_association": c.Association, "performed_via_github_app": nil,
		"reactions": s.reactionsDoc(s.apiURL("/repos/%s/%s/issues/comments/%d/reactions", s.Owner, s.Repo, c.ID), c.Reactions),
	}
}

func (s *Server) reactionDoc(r Reaction) map[string]any {
	return map[string]any{"id": r.ID, "node_id": fmt.Sprintf("REA_lADO%08d", r.ID), "user": s.userDoc(r.User), "content": r.Content, "created_at": ts(s.now())}
}

func (s *Server) labelDoc(name string) map[string]any {
	id := int64(0)
	for _, r := range name {
		id = id*31 + int64(r)
	}
	if id < 0 {
		id = -id
	}
	color := "ededed"
	switch {
	case strings.HasSuffix(name, ":escalated"):
		color = "b60205"
	case strings.HasSuffix(name, ":stale"):
		color = "fbca04"
	}
	return map[string]any{
		"id": id%1_000_000_000 + 1, "node_id": fmt.Sprintf("LA_kwDO%08d", id%100_000_000),
		"url":  s.apiURL("/repos/%s/%s/labels/%s", s.Owner, s.Repo, strings.ReplaceAll(name, ":", "%3A")),
		"name": name, "color": color, "default": false, "description": nil,
	}
}

func (s *Server) labelsDoc(n int) []any {
	out := []any{}
	for _, l := range s.labels[n] {
		out = append(out, s.labelDoc(l))
	}
	return out
}

func (s *Server) issueDoc(n int) map[string]any {
	labels := s.labelsDoc(n)
	count := 0
	for _, c := range s.comments {
		if c.Issue == n {
			count++
		}
	}
	owner := s.user(s.Owner, "User")
	issue := s.apiURL("/repos/%s/%s/issues/%d", s.Owner, s.Repo, n)
	return map[string]any{
		"id": int64(n) * 7919, "node_id": fmt.Sprintf("I_kwDO%08d", n), "number": n,
		"url":            issue,
		"repository_url": s.apiURL("/repos/%s/%s", s.Owner, s.Repo),
		"labels_url":     issue + "/labels{/name}",
		"comments_url":   issue + "/comments",
		"events_url":     issue + "/events",
		"timeline_url":   issue + "/timeline",
		"html_url":       s.htmlURL("/%s/%s/issues/%d", s.Owner, s.Repo, n),
		"title":          fmt.Sprintf("Issue %d", n), "state": "open", "state_reason": nil, "locked": false, "active_lock_reason": nil,
		"user": s.userDoc(owner), "labels": labels, "assignee": nil, "assignees": []any{}, "milestone": nil, "comments": count,
		"author_association": "OWNER", "body": nil, "closed_by": nil, "performed_via_github_app": nil,
		"reactions":  s.reactionsDoc(issue+"/reactions", nil),
		"created_at": ts(s.reset.Add(-2 * time.Hour)), "updated_at": ts(s.now()), "closed_at": nil,
	}
}
