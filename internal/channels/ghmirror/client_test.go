package ghmirror

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
)

// TestSelfRateLimited proves a rate limit on GET /user (a 403, as GitHub
// answers one) is an error and not taken as "no user behind the token":
// once GitHub answers again, agentx's own account is still recognised.
func TestSelfRateLimited(t *testing.T) {
	ctx := context.Background()
	t.Run("secondary", func(t *testing.T) {
		fake := ghfake.New("octo-org", "octo-repo")
		t.Cleanup(fake.Close)
		c, err := NewClient(fake.APIURL(), "octo-org/octo-repo", "fake-token", nil)
		require.NoError(t, err)
		fake.Fail(1, 403, 1)
		_, err = c.Self(ctx)
		var we *WaitError
		require.ErrorAs(t, err, &we)
		// go-github itself refuses to call before Retry-After has passed.
		time.Sleep(time.Until(we.Until) + 100*time.Millisecond)
		self, err := c.Self(ctx)
		require.NoError(t, err)
		assert.Equal(t, "agentx-bot", self)
		assert.Equal(t, 2, fake.Calls(ghfake.OpUser))
	})
	t.Run("primary", func(t *testing.T) {
		fake := ghfake.New("octo-org", "octo-repo")
		t.Cleanup(fake.Close)
		c, err := NewClient(fake.APIURL(), "octo-org/octo-repo", "fake-token", nil)
		require.NoError(t, err)
		fake.SetRateLimit(5000, 0)
		_, err = c.Self(ctx)
		var we *WaitError
		require.ErrorAs(t, err, &we)
		assert.Contains(t, we.Why, "rate limit exhausted")
		// A fresh client (another process) once the limit is reset.
		fake.SetRateLimit(5000, 5000)
		c, err = NewClient(fake.APIURL(), "octo-org/octo-repo", "fake-token", nil)
		require.NoError(t, err)
		self, err := c.Self(ctx)
		require.NoError(t, err)
		assert.Equal(t, "agentx-bot", self)
	})
	t.Run("no user", func(t *testing.T) {
		fake := ghfake.New("octo-org", "octo-repo")
		t.Cleanup(fake.Close)
		c, err := NewClient(fake.APIURL(), "octo-org/octo-repo", "unknown-token", nil)
		require.NoError(t, err)
		for range 2 {
			self, err := c.Self(ctx)
			require.NoError(t, err)
			assert.Equal(t, "", self)
		}
		assert.Equal(t, 1, fake.Calls(ghfake.OpUser), "a 401 is cached")
	})
}
