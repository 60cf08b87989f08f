package workflow

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigDefaults proves the defaults of every config key, for an absent file
// (DefaultConfig), an empty file, and partial tables.
func TestConfigDefaults(t *testing.T) {
	def := DefaultConfig()
	assert.Equal(t, "feature", def.DefaultWorkflow)
	assert.Equal(t, []string{"product-manager", "architect", "ux-designer", "engineer", "reviewer",
		"devops", "data-scientist", "tester", "customer-coach"}, def.Priority)
	assert.Equal(t, 3, def.MaxQuestions, "3 questions per run, as the minion design")
	assert.Equal(t, 1440, def.HumanSLAMinutes)
	assert.Equal(t, 24*time.Hour, def.HumanSLA())
	assert.Equal(t, "issue", def.DeadlockScope)
	assert.Equal(t, 0.8, def.StuckSimilarity)
	assert.Equal(t, MemoryConfig{Reuse: "suggest", Similarity: 0.6}, def.Memory)
	assert.True(t, def.Memory.Suggests())
	assert.Equal(t, 5*time.Second, def.Lock.Wait.Duration)
	assert.Equal(t, 30*time.Second, def.Lock.StaleAge.Duration)
	assert.Equal(t, 400*time.Millisecond, def.Lock.FairBound.Duration)
	assert.Equal(t, 400*time.Millisecond, def.Lock.FairWindow.Duration)
	assert.NotNil(t, def.Agents)
	assert.Empty(t, def.Agents)
	assert.Nil(t, def.Notify)
	assert.Empty(t, def.Humans.Allow, "anyone may act as a person")
	def.Priority[0] = "changed"
	assert.Equal(t, "product-manager", DefaultConfig().Priority[0], "DefaultConfig returns a fresh copy")

	tests := []struct {
		name  string
		text  string
		check func(t *testing.T, c *Config)
	}{
		{"empty file", "", func(t *testing.T, c *Config) {
			want := DefaultConfig()
			want.File = "config.toml"
			assert.Equal(t, want, c)
		}},
		{"partial lock", "[lock]\nwait = \"1s\"\n", func(t *testing.T, c *Config) {
			assert.Equal(t, time.Second, c.Lock.Wait.Duration)
			assert.Equal(t, DefaultLockStaleAge, c.Lock.StaleAge.Duration)
		}},
		{"agent timeout defaults to 10m, retry delay to 30s", "[agents.architect]\ncommand = [\"claude\", \"-p\"]\n", func(t *testing.T, c *Config) {
			assert.Equal(t, map[string]AgentConfig{
				"architect": {Command: []string{"claude", "-p"}, Timeout: Duration{10 * time.Minute}, RetryDelay: Duration{30 * time.Second}},
			}, c.Agents)
			assert.Nil(t, c.Notify)
		}},
		{"monitor keys", "human_sla_minutes = 90\ndeadlock_scope = \"global\"\nstuck_similarity = 1\n", func(t *testing.T, c *Config) {
			assert.Equal(t, 90*time.Minute, c.HumanSLA())
			assert.Equal(t, ScopeGlobal, c.DeadlockScope)
			assert.Equal(t, 1.0, c.StuckSimilarity, "an integer is accepted as a float")
		}},
		{"everything set", `default_workflow = "bug"
priority = ["architect", "engineer"]
max_questions = 3
human_sla_minutes = 60
deadlock_scope = "issue"
stuck_similarity = 0.75

[lock]
wait = "250ms"
stale_age = "1m"
fair_bound = "0"
fair_window = "50ms"

[agents.architect]
command = ["claude", "-p"]
timeout = "2m30s"
retry_delay = "1m"

[agents.product-manager]
command = ["./ask-pm.sh"]

[notify]
command = ["./notify.sh", "--channel", "agents"]
timeout = "2s"

[humans]
allow = ["alice@example.com", "bob", "Renée Dupont"]
`, func(t *testing.T, c *Config) {
			assert.Equal(t, "bug", c.DefaultWorkflow)
			assert.Equal(t, []string{"architect", "engineer"}, c.Priority)
			assert.Equal(t, 3, c.MaxQuestions)
			assert.Equal(t, 60, c.HumanSLAMinutes)
			assert.Equal(t, ScopeIssue, c.DeadlockScope)
			assert.Equal(t, 0.75, c.StuckSimilarity)
			assert.Equal(t, 250*time.Millisecond, c.Lock.Wait.Duration)
			assert.Equal(t, time.Minute, c.Lock.StaleAge.Duration)
			assert.Equal(t, time.Duration(0), c.Lock.FairBound.Duration)
			assert.Equal(t, 50*time.Millisecond, c.Lock.FairWindow.Duration)
			assert.Equal(t, 150*time.Second, c.Agents["architect"].Timeout.Duration)
			assert.Equal(t, DefaultAgentTimeout, c.Agents["product-manager"].Timeout.Duration)
			assert.Equal(t, time.Minute, c.Agents["architect"].RetryDelay.Duration)
			assert.Equal(t, DefaultRetryDelay, c.Agents["product-manager"].RetryDelay.Duration)
			require.NotNil(t, c.Notify)
			assert.Equal(t, []string{"./notify.sh", "--channel", "agents"}, c.Notify.Command)
			assert.Equal(t, 2*time.Second, c.Notify.Timeout.Duration)
			assert.Equal(t, []string{"alice@example.com", "bob", "Renée Dupont"}, c.Humans.Allow)
		}},
		{"notify timeout defaults to a few seconds", "[notify]\ncommand = [\"./n.sh\"]\n", func(t *testing.T, c *Config) {
			assert.Equal(t, DefaultNotifyTimeout, c.Notify.Timeout.Duration)
		}},
		{"an asker's table: resume and hold, no responder command", "[agents.engineer]\nresume = [\"claude\", \"-p\", \"--resume\", \"{session}\"]\nhold = \"10m\"\n", func(t *testing.T, c *Config) {
			e := c.Agents["engineer"]
			assert.Empty(t, e.Command, "no responder")
			assert.Equal(t, []string{"claude", "-p", "--resume", "{session}"}, e.Resume)
			assert.Equal(t, 10*time.Minute, e.Hold.Duration)
		}},
		{"memory off", "[memory]\nreuse = \"off\"\n", func(t *testing.T, c *Config) {
			assert.False(t, c.Memory.Suggests())
			assert.Equal(t, DefaultMemorySimilarity, c.Memory.Similarity)
		}},
		{"memory similarity", "[memory]\nsimilarity = 1\n", func(t *testing.T, c *Config) {
			assert.Equal(t, MemoryConfig{Reuse: MemorySuggest, Similarity: 1}, c.Memory, "an integer is accepted as a float")
		}},
		{"empty humans table", "[humans]\n", func(t *testing.T, c *Config) {
			assert.Empty(t, c.Humans.Allow)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig("config.toml", []byte(tt.text))
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

// TestLoadConfigFileMissing proves a missing file is an I/O error (fs.ErrNotExist),
// not invalid data.
func TestLoadConfigFileMissing(t *testing.T) {
	_, err := LoadConfigFile(filepath.Join(t.TempDir(), "config.toml"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	var es Errors
	assert.False(t, errors.As(err, &es))
}

// TestDuration proves Duration reads and writes Go duration strings.
func TestDuration(t *testing.T) {
	var d Duration
	require.NoError(t, d.UnmarshalText([]byte("1h2m")))
	assert.Equal(t, time.Hour+2*time.Minute, d.Duration)
	text, err := d.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "1h2m0s", string(text))

	for _, bad := range []string{"", "5", "5 seconds", "soon"} {
		assert.Error(t, d.UnmarshalText([]byte(bad)), bad)
	}

	data, err := json.Marshal(DefaultConfig().Lock)
	require.NoError(t, err)
	assert.JSONEq(t, `{"wait":"5s","stale_age":"30s","fair_bound":"400ms","fair_window":"400ms"}`, string(data))
}

// TestConfigTypeErrors proves wrong TOML types are reported per key, all of them.
func TestConfigTypeErrors(t *testing.T) {
	_, err := parseConfig("config.toml", []byte(`default_workflow = 1
priority = "engineer"
lock = 5
notify = { command = "./n.sh" }

[agents]
architect = "claude"
`))
	require.EqualError(t, err, `config.toml:1: default_workflow: want a string, got an integer
config.toml:2: priority: want an array of strings, got a string
config.toml:3: lock: want a table, got an integer
config.toml:4: notify.command: want an array of strings, got a string
config.toml:7: agents.architect: want a table, got a string`)

	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(path, []byte("max_questions = 1.5\n"), 0o644))
	_, err = LoadConfigFile(path)
	require.EqualError(t, err, path+":1: max_questions: want an integer, got a float")
}

// TestAgentTableErrors: an [agents.NAME] table needs a responder command
// unless it only says how to reach the agent as an asker, and a resume
// template names only the placeholders agentx fills in.
func TestAgentTableErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"no command, nothing else", "[agents.architect]\ntimeout = \"1m\"\n", "agents.architect.command: required"},
		{"empty resume", "[agents.engineer]\nresume = []\n", "agents.engineer.resume: must not be empty"},
		{"unknown placeholder", "[agents.engineer]\nresume = [\"claude\", \"--resume\", \"{sesion}\"]\n", `agents.engineer.resume: "{sesion}": an unknown placeholder`},
		{"hold not positive", "[agents.engineer]\nhold = \"0s\"\n", "agents.engineer.hold: must be greater than 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig("config.toml", []byte(tt.text))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
