package lock

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/workflow"
)

// TestWorkflowDefaultsAreTheLocks: workflow cannot import lock (lock's
// tests use workflow), so it writes the fair hand-off's defaults again;
// they must stay the lock's.
func TestWorkflowDefaultsAreTheLocks(t *testing.T) {
	assert.Equal(t, DefaultFairBound, workflow.DefaultLockFairBound)
	assert.Equal(t, DefaultFairWindow, workflow.DefaultLockFairWindow)
	assert.Equal(t, MinStaleAge, workflow.MinLockStaleAge)
	assert.Equal(t, FairChains, workflow.LockFairChains) // "a quarter of wait" in its check's message
}
