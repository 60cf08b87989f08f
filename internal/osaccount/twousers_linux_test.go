package osaccount

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinary()
	os.Exit(code)
}

// The two OS accounts of TestTwoAccounts: uids no one else uses here.
const (
	agentUID  = 47301 // the agents run as this account
	personUID = 47302 // the person, pat, as this one
)

// TestTwoAccounts runs the real agentx as two OS accounts (root starts
// each process with the account's uid, as a team runs its agents under
// another user or in a container): the agent, with a shell and no
// AGENTX_AGENT, is refused as a person whatever it types, and cannot
// write itself into [humans] accounts; the person, from the listed
// account, answers and is recorded; a list other accounts could change
// proves nothing and is refused, even to the person.
func TestTwoAccounts(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to start processes as two other OS accounts")
	}
	if testing.Short() {
		t.Skip("builds and runs agentx")
	}
	// everything these accounts reach: open to all, as a shared checkout is to a team's group
	base := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "agentx")
	built, err := os.ReadFile(testenv.AgentxBinary(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, built, 0o755))
	home := filepath.Join(base, "home")
	require.NoError(t, os.Mkdir(home, 0o777))
	require.NoError(t, os.Chmod(home, 0o777))

	// the repository: agents write in it, and it is sticky, so only
	// .agentx's owner (pat) renames .agentx; its state is everyone's; its
	// config is pat's alone
	repo := filepath.Join(base, "repo")
	require.NoError(t, os.Mkdir(repo, 0o755))
	run := func(uid int, env []string, args ...string) (string, int) {
		t.Helper()
		c := exec.Command("sh", append([]string{"-c", `umask 000; exec "$@"`, "sh"}, args...)...)
		c.Dir = repo
		c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "AGENTX_ROOT=" + repo}, env...)
		if uid != 0 {
			c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		}
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err, "%s", out)
		}
		return string(out), code
	}
	out, code := run(0, nil, bin, "init")
	require.Equal(t, 0, code, out)
	cfg := filepath.Join(repo, ".agentx", "config.toml")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n[humans]\nconfirm = false # the terminal check is not what this shows\naccounts = [\"" + strconv.Itoa(personUID) + "\"]\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, filepath.Walk(filepath.Join(repo, ".agentx", "state"), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return os.Chmod(p, 0o777)
		}
		return os.Chmod(p, 0o666)
	}))
	require.NoError(t, os.Chown(filepath.Join(repo, ".agentx"), personUID, personUID))
	require.NoError(t, os.Chown(cfg, personUID, personUID))
	require.NoError(t, os.Chown(repo, personUID, personUID))
	require.NoError(t, os.Chmod(repo, 0o777|os.ModeSticky))

	agent := func(args ...string) (string, int) {
		return run(agentUID, []string{"AGENTX_AGENT=engineer"}, append([]string{bin}, args...)...)
	}
	agentShell := func(args ...string) (string, int) { return run(agentUID, nil, args...) }
	person := func(args ...string) (string, int) { return run(personUID, nil, append([]string{bin}, args...)...) }

	out, code = agent("clarify", "ask", "--issue", "1", "--to", "human", "--topic", "Rollout", "--question", "Behind a flag?", "--non-blocking")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "CLR-1-001")

	// the agent, with its variable unset, passing the person's name: refused, nothing written
	out, code = agentShell(bin, "clarify", "answer", "CLR-1-001", "--from", "human", "--as", "pat", "--body", "yes")
	assert.Equal(t, 4, code, out)
	assert.Contains(t, out, "runs as the OS account uid "+strconv.Itoa(agentUID)+", which [humans] accounts does not list")
	out, code = agentShell(bin, "desk", "--no-open", "--as", "pat")
	assert.Equal(t, 4, code, "the desk acts as a person: %s", out)
	// nor can it write itself into the list, or put a .agentx of its own in place
	out, code = agentShell("sh", "-c", `echo 'accounts = ["`+strconv.Itoa(agentUID)+`"]' >> .agentx/config.toml`)
	assert.NotEqual(t, 0, code, "the agent's account may not write pat's config: %s", out)
	out, code = agentShell("mv", ".agentx", "gone")
	assert.NotEqual(t, 0, code, "the sticky repository keeps .agentx where it is: %s", out)
	out, _ = person("clarify", "show", "CLR-1-001")
	assert.Contains(t, out, "pending")

	// pat, from the listed account: answered, recorded by name
	out, code = person("clarify", "answer", "CLR-1-001", "--from", "human", "--as", "pat", "--body", "Yes, behind a flag.")
	require.Equal(t, 0, code, out)
	out, _ = person("clarify", "show", "CLR-1-001", "--json")
	assert.Contains(t, out, "Yes, behind a flag.")
	assert.Contains(t, out, `"name": "pat"`)

	// a list any account may change proves nothing: refused, even to pat
	require.NoError(t, os.Chmod(cfg, 0o666))
	out, code = agent("clarify", "ask", "--issue", "2", "--to", "human", "--topic", "Copy", "--question", "Formal?", "--non-blocking")
	require.Equal(t, 0, code, out)
	out, code = person("clarify", "answer", "CLR-2-001", "--from", "human", "--as", "pat", "--body", "Formal.")
	assert.Equal(t, 4, code, out)
	assert.True(t, strings.Contains(out, "is writable by other accounts (mode 0666): chmod go-w it"), out)
}
