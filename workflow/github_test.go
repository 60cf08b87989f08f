package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGitHubConfig proves the [github] table's defaults and values: absent
// it is nil (GitHub mode off); present it needs only repo.
func TestGitHubConfig(t *testing.T) {
	assert.Nil(t, DefaultConfig().GitHub, "GitHub mode is off by default")

	c, err := parseConfig("config.toml", []byte("[github]\nrepo = \"octo-org/octo-repo\"\n"))
	require.NoError(t, err)
	require.NotNil(t, c.GitHub)
	assert.Equal(t, &GitHubConfig{Repo: "octo-org/octo-repo", APIURL: "https://api.github.com/", Mention: []string{}, Answerers: []string{},
		Interval: Duration{time.Minute}, Timeout: Duration{10 * time.Second}}, c.GitHub)
	assert.Equal(t, "octo-org", c.GitHub.Owner())
	assert.Equal(t, "octo-repo", c.GitHub.Name())

	c, err = parseConfig("config.toml", []byte(`[github]
repo = "octo-org/octo.repo_2"
api_url = "https://ghe.example.com/api/v3"
mention = ["@alice", "@octo-org/leads"]
answerers = ["alice", "bob-2"]
interval = "0s"
timeout = "3s"
`))
	require.NoError(t, err)
	assert.Equal(t, "https://ghe.example.com/api/v3/", c.GitHub.APIURL, "a trailing slash is added")
	assert.Equal(t, []string{"@alice", "@octo-org/leads"}, c.GitHub.Mention)
	assert.Equal(t, []string{"alice", "bob-2"}, c.GitHub.Answerers)
	assert.Equal(t, time.Duration(0), c.GitHub.Interval.Duration, "0s: read on every command")
	assert.Equal(t, 3*time.Second, c.GitHub.Timeout.Duration)

	assert.True(t, ValidGitHubLogin("a-b"))
	assert.False(t, ValidGitHubLogin("-ab"))
	assert.False(t, ValidGitHubLogin("ab[bot]"))
}
