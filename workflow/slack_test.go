package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlackConfig proves the [slack] table's defaults and values: absent
// it is nil (Slack mode off); present it needs a channel and answerers.
func TestSlackConfig(t *testing.T) {
	assert.Nil(t, DefaultConfig().Slack, "Slack mode is off by default")

	c, err := parseConfig("config.toml", []byte("[slack]\nchannel = \"C0123ABCD\"\nanswerers = [\"U0123ABCD\"]\n"))
	require.NoError(t, err)
	assert.Equal(t, &SlackConfig{Channel: "C0123ABCD", Answerers: []string{"U0123ABCD"}, APIURL: "https://slack.com/api/",
		Interval: Duration{time.Minute}, Timeout: Duration{10 * time.Second}}, c.Slack)

	c, err = parseConfig("config.toml", []byte(`[slack]
channel = "G0123ABCDEF"
answerers = ["U0123ABCD", "W0123ABCDE"]
api_url = "http://127.0.0.1:8080/api"
interval = "0s"
timeout = "3s"
`))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8080/api/", c.Slack.APIURL, "a trailing slash is added")
	assert.Equal(t, time.Duration(0), c.Slack.Interval.Duration, "0s: read on every command")
	assert.Equal(t, 3*time.Second, c.Slack.Timeout.Duration)

	assert.True(t, ValidSlackID("U0123ABCD", "UW"))
	assert.False(t, ValidSlackID("U0123", "UW"), "too short")
	assert.False(t, ValidSlackID("C0123ABCD", "UW"), "a channel is not a user")
	assert.False(t, ValidSlackID("U0123abcd", "UW"), "lower case")
}
