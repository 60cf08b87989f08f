package ghfake_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
)

// TestRoutes checks which method and path each endpoint answers, and that
// anything else is GitHub's 404: a wrong method, an issue number that is
// not one above zero, a path under another repository.
func TestRoutes(t *testing.T) {
	s := ghfake.New("o", "r")
	defer s.Close()
	posted := call(t, s, http.MethodPost, "/repos/o/r/issues/7/comments", map[string]string{"body": "hello"})
	assert.Equal(t, http.StatusCreated, posted.status)
	for _, c := range []struct {
		method, path string
		in           any
		want         int
	}{
		{http.MethodGet, "/user", nil, http.StatusOK},
		{http.MethodGet, "/repos/o/r/issues/comments", nil, http.StatusOK},
		{http.MethodGet, "/repos/o/r/issues/7", nil, http.StatusOK},
		{http.MethodGet, "/repos/o/r/issues/7/comments", nil, http.StatusOK},
		{http.MethodGet, "/repos/o/r/issues/7/labels", nil, http.StatusOK},
		{http.MethodPost, "/repos/o/r/issues/7/labels", []string{"agentx"}, http.StatusOK},
		{http.MethodDelete, "/repos/o/r/issues/7/labels/agentx", nil, http.StatusOK},
		{http.MethodDelete, "/repos/o/r/issues/7/labels/agentx", nil, http.StatusNotFound},
		{http.MethodGet, "/repos/o/r/issues/comments/999", nil, http.StatusNotFound},
		{http.MethodPost, "/repos/o/r/issues/comments/999/reactions", map[string]string{"content": "eyes"}, http.StatusNotFound},
		{http.MethodPost, "/repos/o/r/issues/7/comments", map[string]string{}, http.StatusUnprocessableEntity},
		{http.MethodPut, "/repos/o/r/issues/7/comments", nil, http.StatusNotFound},
		{http.MethodGet, "/repos/o/r/issues/0", nil, http.StatusNotFound},
		{http.MethodGet, "/repos/o/r/issues/x/comments", nil, http.StatusNotFound},
		{http.MethodGet, "/repos/o/r/issues", nil, http.StatusNotFound},
		{http.MethodGet, "/repos/o/other/issues/7", nil, http.StatusNotFound},
		{http.MethodGet, "/repos/o/r/issues/7/comments/extra", nil, http.StatusNotFound},
	} {
		got := call(t, s, c.method, c.path, c.in)
		assert.Equal(t, c.want, got.status, "%s %s", c.method, c.path)
	}
}
