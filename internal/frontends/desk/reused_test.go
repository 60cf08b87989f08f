package desk

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// TestReusedDecisionAtTheDesk: a question whose asker proceeds on an
// earlier decision is on the page as a reused decision, with the decision
// it reuses; the person keeps it with one button, or overturns it with an
// answer, and either way the item leaves the queue.
func TestReusedDecisionAtTheDesk(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h := f.hub
	decide := func(issue int) string {
		rec, err := h.Ask(ctx, router.AskRequest{Issue: issue, From: "engineer", To: "architect", Topic: "Queue", Question: "Kafka or SQS?", NonBlocking: true})
		require.NoError(t, err)
		return rec.ID
	}
	first := decide(10)
	_, err := h.Answer(ctx, first, "architect", "SQS, FIFO queues.")
	require.NoError(t, err)
	_, err = h.Resolve(ctx, first, "engineer", "")
	require.NoError(t, err)
	keep, overturn := decide(11), decide(12)
	for _, id := range []string{keep, overturn} {
		_, err := h.Reuse(ctx, id, "engineer", first, "")
		require.NoError(t, err)
	}

	c := client(t)
	f.enter(t, c)
	resp, body := get(t, c, f.base+"/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `<article class="item kind-reused" id="item-CLR-11-001"`)
	assert.Contains(t, body, `<span class="kind">reused decision</span>`)
	assert.Contains(t, body, `engineer proceeds on the decision of <strong>CLR-10-001</strong>: Resolved with the answer: SQS, FIFO queues.`)
	assert.Contains(t, body, `Overturn with this answer`)
	assert.Contains(t, body, `<input type="hidden" name="body" value="Keep the decision of CLR-10-001.">`)
	assert.Contains(t, body, `agentx clarify answer CLR-11-001 --from human --body &#34;...&#34;`)

	tok := f.s.Token()
	for _, form := range []url.Values{
		{"token": {tok}, "id": {keep}, "verb": {"answer"}, "body": {todo.KeepBody(first)}},
		{"token": {tok}, "id": {overturn}, "verb": {"answer"}, "body": {"Kafka here: we replay."}},
	} {
		resp, _ := f.post(t, c, form, nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	}
	_, body = get(t, c, f.base+"/")
	assert.NotContains(t, body, "kind-reused")
	for id, want := range map[string]string{keep: "Keep the decision of CLR-10-001.", overturn: "Kafka here: we replay."} {
		rec, err := h.Get(id)
		require.NoError(t, err)
		assert.Equal(t, ledger.Answered, rec.Status)
		last := rec.Thread[len(rec.Thread)-1]
		assert.Equal(t, ledger.Human, last.From)
		assert.Equal(t, want, last.Body)
		assert.Equal(t, "desk:dana", rec.PersonAt(len(rec.Thread)-1))
	}
}
