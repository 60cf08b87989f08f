package ghmirror

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/gate/proposal"
)

// TestProposalMirrored: a proposal naming issues is a comment on each
// (what, why, how a person decides, @mentions), once, whatever runs; its
// decision follows when a person makes it; more evidence edits the comment
// in place; a crash between posting and recording posts nothing twice.
func TestProposalMirrored(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	e.push(e.mirror()) // the outbox starts here
	p, err := proposal.Create(ctx, e.hub, proposal.Proposal{Type: proposal.TypeToolFix, Title: "Test database not migrated",
		Rationale: "TestMigrate failed on #7 and #8 @everyone", Action: "Run migrations before the tests", Issues: []int{7, 8}, CreatedBy: "engineer"})
	require.NoError(t, err)
	_, err = proposal.Create(ctx, e.hub, proposal.Proposal{Type: proposal.TypeToolFix, Title: "No issue", Rationale: "r", Action: "a", CreatedBy: "engineer"})
	require.NoError(t, err)

	crashAfterPost = func() error { return errors.New("killed") }
	_, err = e.mirror().Push(ctx, false)
	crashAfterPost = nil
	require.Error(t, err)
	rep := e.push(e.mirror())
	e.push(e.mirror())
	var found int
	for _, ir := range rep.Issues {
		found += ir.Found
	}
	assert.Equal(t, 2, found, "the comments posted before the crashes (one per issue) are found by their metadata")
	for _, n := range []int{7, 8} {
		cs := e.fake.Comments(n)
		require.Len(t, cs, 1, "issue %d: once", n)
		body := cs[0].Body
		assert.Contains(t, body, "**[engineer] Enhancement proposal PROP-001** · tool\\_fix · impact medium, risk low")
		assert.Contains(t, body, "**Why:** TestMigrate failed on #7 and #8 @\u200beveryone")
		assert.Contains(t, body, "**What:** Run migrations before the tests")
		assert.Contains(t, body, "@alice: a person decides.")
		assert.Contains(t, body, "agentx proposals approve PROP-001\n")
		assert.True(t, strings.HasSuffix(body, `<!-- agentx: {"id":"PROP-001","entry":0} -->`), body)
	}

	// a person approves: the decision is posted on each issue, once
	_, err = proposal.Decide(ctx, e.hub, p.ID, proposal.Approved, "github:maintainer", "go ahead")
	require.NoError(t, err)
	e.push(e.mirror())
	e.push(e.mirror())
	for _, n := range []int{7, 8} {
		cs := e.fake.Comments(n)
		require.Len(t, cs, 2, "issue %d", n)
		assert.Contains(t, cs[1].Body, "**[human (github:maintainer)] Proposal PROP-001 approved** · Test database not migrated")
		assert.Contains(t, cs[1].Body, "go ahead")
	}
	_, err = proposal.Decide(ctx, e.hub, p.ID, proposal.Implemented, "alice@example.com", "")
	require.NoError(t, err)
	e.push(e.mirror())
	cs := e.fake.Comments(7)
	require.Len(t, cs, 3)
	assert.Contains(t, cs[2].Body, "**[human] Proposal PROP-001 implemented**", "a name from git config is not published")
	assert.NotContains(t, cs[2].Body, "alice@example.com")

	b, err := proposal.Read(e.hub.Store)
	require.NoError(t, err)
	assert.Len(t, b.Find("PROP-001").Mirror.GitHub, 6, "three entries on two issues, recorded")
	assert.Nil(t, b.Find("PROP-002").Mirror, "a proposal naming no issue has no place on GitHub")

	// a changed rendering (the gate's evidence) is edited in place
	require.NoError(t, proposal.RecordMirror(ctx, e.hub.Store, "PROP-001", func(p *proposal.Proposal) error {
		p.Mirror.GitHub[0].Sum = "old"
		return nil
	}))
	rep, err = e.mirror().Push(ctx, false, 7)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Issues[0].Edited)
	assert.Len(t, e.fake.Comments(7), 3)
}
