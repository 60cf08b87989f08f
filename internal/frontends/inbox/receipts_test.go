package inbox

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

func TestReceipts(t *testing.T) {
	at := func(min int) ledger.Time { return ledger.T(t0.Add(time.Duration(min) * time.Minute)) }
	ptr := func(min int) *ledger.Time { t := at(min); return &t }
	q := ledger.ThreadEntry{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: at(0)}
	a := ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: "a", Timestamp: at(1)}
	clar := func(status ledger.Status, more ...ledger.ThreadEntry) *ledger.Clarification {
		return &ledger.Clarification{ID: "CLR-1-001", From: "engineer", To: "architect", Status: status, Round: 1,
			Thread: append([]ledger.ThreadEntry{q, a}, more...)}
	}
	marked := func(steps ...Step) State {
		m := Mark{At: at(5), Via: steps}
		for _, s := range steps {
			m.Entries = s.Entries
		}
		return State{Marks: map[string]Mark{"CLR-1-001": m}}
	}
	tests := []struct {
		name string
		st   State
		c    *ledger.Clarification
		now  int // minutes after t0
		want Receipt
	}{
		{"not delivered", State{}, clar(ledger.Answered), 2,
			Receipt{State: ReceiptAnswered}},
		{"not delivered for ten minutes: overdue", State{}, clar(ledger.Answered), 11,
			Receipt{State: ReceiptAnswered, Overdue: true}},
		{"question seen only", marked(Step{Entries: 1, At: at(0), Via: ViaShow}), clar(ledger.Answered), 2,
			Receipt{State: ReceiptAnswered}},
		{"delivered via wait", marked(Step{Entries: 2, At: at(2), Via: ViaWait}), clar(ledger.Answered), 30,
			Receipt{State: ReceiptDelivered, Delivered: ptr(2), Via: ViaWait}},
		{"delivered via mcp", marked(Step{Entries: 2, At: at(2), Via: ViaMCP}), clar(ledger.Answered), 3,
			Receipt{State: ReceiptDelivered, Delivered: ptr(2), Via: ViaMCP}},
		{"delivered via inbox", marked(Step{Entries: 2, At: at(2), Via: ViaInbox}), clar(ledger.Answered), 3,
			Receipt{State: ReceiptDelivered, Delivered: ptr(2), Via: ViaInbox}},
		{"delivered via hook stop", marked(Step{Entries: 2, At: at(2), Via: ViaHookStop}), clar(ledger.Answered), 3,
			Receipt{State: ReceiptDelivered, Delivered: ptr(2), Via: ViaHookStop}},
		{"delivered via resume", marked(Step{Entries: 2, At: at(2), Via: ViaResume}), clar(ledger.Answered), 3,
			Receipt{State: ReceiptDelivered, Delivered: ptr(2), Via: ViaResume}},
		{"delivered via show, the first step that covers it", marked(Step{Entries: 1, At: at(0), Via: ViaWait}, Step{Entries: 2, At: at(3), Via: ViaShow}), clar(ledger.Answered), 4,
			Receipt{State: ReceiptDelivered, Delivered: ptr(3), Via: ViaShow}},
		{"old mark without via: seen, way unknown", State{Marks: map[string]Mark{"CLR-1-001": {Entries: 2, At: at(2)}}}, clar(ledger.Answered), 3,
			Receipt{State: ReceiptDelivered}},
		{"mark pruned, the inbox's offset past the answer", State{Offset: 900, Seen: ptr(4)}, clar(ledger.Answered), 120,
			Receipt{State: ReceiptDelivered}},
		{"offset not yet past the answer", State{Offset: 900, Seen: ptr(0)}, clar(ledger.Answered), 5,
			Receipt{State: ReceiptAnswered}},
		{"delivered, then followed up", marked(Step{Entries: 2, At: at(2), Via: ViaWait}),
			clar(ledger.Pending, ledger.ThreadEntry{Round: 2, From: "engineer", Type: ledger.Question, Body: "more?", Timestamp: at(4)}), 5,
			Receipt{State: ReceiptConsumed, Delivered: ptr(2), Via: ViaWait, Consumed: ConsumedFollowup, ConsumedAt: ptr(4)}},
		{"delivered, then resolved", marked(Step{Entries: 2, At: at(2), Via: ViaHookStop}),
			clar(ledger.Resolved, ledger.ThreadEntry{Round: 1, From: "engineer", Type: ledger.Resolution, Body: "ok", Timestamp: at(4)}), 5,
			Receipt{State: ReceiptConsumed, Delivered: ptr(2), Via: ViaHookStop, Consumed: ConsumedResolved, ConsumedAt: ptr(4)}},
		{"delivered, then closed by the asker", marked(Step{Entries: 2, At: at(2), Via: ViaInbox}),
			clar(ledger.Abandoned, ledger.ThreadEntry{Round: 1, From: "engineer", Type: ledger.Resolution, Body: "Abandoned", Timestamp: at(4)}), 5,
			Receipt{State: ReceiptConsumed, Delivered: ptr(2), Via: ViaInbox, Consumed: ConsumedAbandoned, ConsumedAt: ptr(4)}},
		{"closed by someone else: not consumed", State{},
			clar(ledger.Abandoned, ledger.ThreadEntry{Round: 1, From: "monitor", Type: ledger.Resolution, Body: "Abandoned", Timestamp: at(4)}), 5,
			Receipt{State: ReceiptAnswered}},
		{"assumption recorded after the answer", marked(Step{Entries: 2, At: at(2), Via: ViaResume}),
			func() *ledger.Clarification {
				c := clar(ledger.Answered)
				c.X = &ledger.Extra{Assumptions: []ledger.Assumption{
					{Round: 1, By: "engineer", Body: "before", Timestamp: at(0)},
					{Round: 1, By: "engineer", Body: "after", Timestamp: at(3)},
				}}
				return c
			}(), 5,
			Receipt{State: ReceiptConsumed, Delivered: ptr(2), Via: ViaResume, Consumed: ConsumedAssumption, ConsumedAt: ptr(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Entry, tt.want.Round, tt.want.By, tt.want.To = 1, 1, "architect", "engineer"
			got := receipts(tt.st, tt.c, t0.Add(time.Duration(tt.now)*time.Minute))
			assert.Equal(t, []Receipt{tt.want}, got)
		})
	}
}

func TestReceiptLine(t *testing.T) {
	at := ledger.T(time.Date(2026, 2, 26, 10, 5, 0, 0, time.UTC))
	for _, tt := range []struct {
		r    Receipt
		want string
	}{
		{Receipt{To: "engineer", State: ReceiptAnswered}, "not delivered yet"},
		{Receipt{To: "engineer", State: ReceiptAnswered, Overdue: true}, "NOT DELIVERED to engineer (overdue: more than 10m0s)"},
		{Receipt{To: "engineer", State: ReceiptDelivered}, "delivered to engineer"},
		{Receipt{To: "engineer", State: ReceiptConsumed, Delivered: &at, Via: ViaHookStop, Consumed: ConsumedResolved},
			"delivered to engineer 10:05 UTC via hook stop · consumed (resolved)"},
		{Receipt{To: "engineer", State: ReceiptConsumed, Consumed: ConsumedFollowup}, "consumed (followup)"},
	} {
		assert.Equal(t, tt.want, tt.r.Line())
	}
}

// TestMarkSteps: a mark records each step forward once, with its way;
// marking again what is seen, or less, adds none.
func TestMarkSteps(t *testing.T) {
	m := mark(nil, "CLR-1-001", 1, t0, false, ViaShow)
	m = mark(m, "CLR-1-001", 2, t0.Add(time.Minute), true, ViaWait)
	m = mark(m, "CLR-1-001", 2, t0.Add(2*time.Minute), true, ViaInbox)
	m = mark(m, "CLR-1-001", 1, t0.Add(3*time.Minute), false, ViaMCP)
	assert.Equal(t, Mark{Entries: 2, At: ledger.T(t0.Add(3 * time.Minute)), Via: []Step{
		{Entries: 1, At: ledger.T(t0), Via: ViaShow},
		{Entries: 2, At: ledger.T(t0.Add(time.Minute)), Via: ViaWait},
	}}, m["CLR-1-001"])
}

// TestDue: a record settled is due to an agent when an entry its marks do
// not cover makes an item of the kinds asked for it (what hook stop's hold
// waits for the event of); an answer it has seen, a withdrawal of its
// own, an agent's resolution are not.
func TestDue(t *testing.T) {
	at := ledger.T(t0)
	q := ledger.ThreadEntry{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: at}
	entry := func(from string, typ ledger.EntryType) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: 1, From: from, Type: typ, Body: "b", Timestamp: at}
	}
	clar := func(status ledger.Status, more ...ledger.ThreadEntry) *ledger.Clarification {
		return &ledger.Clarification{ID: "CLR-1-001", From: "engineer", To: "architect", Status: status, Round: 1,
			Thread: append([]ledger.ThreadEntry{q}, more...)}
	}
	stop := []Kind{KindAnswer, KindResolved, KindEscalated, KindAbandoned}
	tests := []struct {
		name  string
		seen  int // entries the engineer's mark covers (0: no mark)
		agent string
		c     *ledger.Clarification
		want  bool
	}{
		{"an answer", 0, "engineer", clar(ledger.Answered, entry("architect", ledger.Answer)), true},
		{"an answer seen", 2, "engineer", clar(ledger.Answered, entry("architect", ledger.Answer)), false},
		{"the question seen, not the answer", 1, "engineer", clar(ledger.Answered, entry("architect", ledger.Answer)), true},
		{"an answer, to the one who gave it", 0, "architect", clar(ledger.Answered, entry("architect", ledger.Answer)), false},
		{"withdrawn by its asker", 0, "engineer", clar(ledger.Abandoned, entry("engineer", ledger.Resolution)), false},
		{"abandoned by the hub", 0, "engineer", clar(ledger.Abandoned, entry("hub", ledger.Resolution)), true},
		{"resolved by a person", 0, "engineer", clar(ledger.Resolved, entry(ledger.Human, ledger.Resolution)), true},
		{"resolved by an agent", 0, "engineer", clar(ledger.Resolved, entry("architect", ledger.Resolution)), false},
		{"escalated", 0, "engineer", clar(ledger.Escalated, entry("hub", ledger.Escalation)), true},
		{"a question, not of the kinds asked", 0, "architect", clar(ledger.Pending), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := ledger.NewStore(filepath.Join(t.TempDir(), "state"), lock.Options{}, func() time.Time { return t0 })
			if tc.seen > 0 {
				var st State
				require.NoError(t, store.UpdateState(context.Background(), StateFile(tc.agent), &st, func() error {
					st.Marks = map[string]Mark{"CLR-1-001": {Entries: tc.seen, At: at}}
					return nil
				}))
			}
			due, err := Due(store, tc.agent, tc.c, stop)
			require.NoError(t, err)
			assert.Equal(t, tc.want, due)
		})
	}
}
