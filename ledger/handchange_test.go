package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noter is a Changer for tests: a note is an assumption of the record's
// asker, its body the change's Args (a JSON string).
type noter struct{}

func (noter) Make(c *Clarification, ch Change) error {
	var body string
	if err := json.Unmarshal(ch.Args, &body); err != nil {
		return err
	}
	by := ch.By
	if by == "" {
		by = c.From
	}
	if by != c.From {
		return fmt.Errorf("%s did not ask %s", by, c.ID)
	}
	c.Ext().Assumptions = append(c.Ext().Assumptions, Assumption{Round: c.Round, By: by, Body: body, Timestamp: T(ch.At)})
	return nil
}

func (noter) Made(c *Clarification, ch Change) bool {
	var body string
	if json.Unmarshal(ch.Args, &body) != nil || c.X == nil {
		return false
	}
	for _, a := range c.X.Assumptions {
		if a.Body == body && a.Timestamp.Equal(ch.At) {
			return true
		}
	}
	return false
}

// breaker changes the record, then refuses: a holder must leave the
// record as it was.
type breaker struct{ noter }

func (breaker) Make(c *Clarification, _ Change) error {
	c.Topic = "changed by a change that failed"
	c.Ext().Assumptions = append(c.Ext().Assumptions, Assumption{By: c.From, Body: "half made"})
	return errors.New("refused half way")
}

// retopic sets the record's topic to the Args (a JSON string), unchecked.
type retopic struct{ noter }

func (retopic) Make(c *Clarification, ch Change) error {
	return json.Unmarshal(ch.Args, &c.Topic)
}

// note is a change of kind "note" on id by by, at t0 plus n ms (n 0:
// now).
func note(id, by, body string, n int) Change {
	at := time.Now()
	if n > 0 {
		at = t0.Add(time.Duration(n) * time.Millisecond)
	}
	return Change{Kind: "note", ID: id, By: by, At: at, What: "a note", Args: jsonString(body)}
}

// jsonString is s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// handAsync makes ch in a goroutine.
func handAsync(s *Store, ch Change) <-chan asked {
	r := make(chan asked, 1)
	go func() {
		c, err := s.Hand(context.Background(), ch)
		r <- asked{c, err}
	}()
	return r
}

// changeStore is a store whose issue 7 holds three questions, of the
// engineer, the reviewer and the engineer, with the test Changers.
func changeStore(t *testing.T) *Store {
	t.Helper()
	s := newTestStore(t)
	s.Handle("note", noter{})
	s.Handle("break", breaker{})
	s.Handle("retopic", retopic{})
	for i, from := range []string{"engineer", "reviewer", "engineer"} {
		_, err := s.Ask(context.Background(), 7, asking(from, fmt.Sprintf("question %d", i), i))
		require.NoError(t, err)
	}
	return s
}

// TestHandedChangesAreMadeInTheHoldersWrite: changes to records (and a
// question) that find the lock held are handed over; the holder makes
// them all in its one write, and each writer gets its record as written
// without writing.
func TestHandedChangesAreMadeInTheHoldersWrite(t *testing.T) {
	s := changeStore(t)
	handed := countHanded(t)
	f, err := s.Lock(context.Background(), 7)
	require.NoError(t, err)
	r1 := handAsync(s, note("CLR-7-001", "engineer", "going with the flat layout", 10))
	waitHanded(t, s, 7, 1)
	r2 := handAsync(s, note("CLR-7-002", "", "retrying three times", 11))
	waitHanded(t, s, 7, 2)
	r3 := askAsync(s, 7, asking("engineer", "a fourth question", 12))
	waitHanded(t, s, 7, 3)
	r4 := handAsync(s, note("CLR-7-001", "engineer", "and keeping the index", 13))
	waitHanded(t, s, 7, 4)

	batch := drainAsHolder(t, s, f)
	require.Len(t, batch, 4)
	require.NoError(t, f.Release())
	got := []asked{<-r1, <-r2, <-r3, <-r4}
	for i, r := range got {
		require.NoError(t, r.err, "writer %d", i)
	}
	assert.Equal(t, int32(4), handed.Load(), "every record came from the holder")
	l, err := s.Read(7)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, 4)
	first := l.Find("CLR-7-001")
	require.NotNil(t, first)
	require.Len(t, first.X.Assumptions, 2, "both notes on the first, in the order handed")
	assert.Equal(t, "going with the flat layout", first.X.Assumptions[0].Body)
	assert.Equal(t, "and keeping the index", first.X.Assumptions[1].Body)
	assert.Equal(t, "reviewer", l.Find("CLR-7-002").X.Assumptions[0].By, "By given by the Changer")
	assert.Equal(t, "CLR-7-004", got[2].c.ID)
	for i, id := range []string{"CLR-7-001", "CLR-7-002", "CLR-7-004", "CLR-7-001"} {
		want, _ := RecordJSON(l.Find(id))
		have, _ := RecordJSON(got[i].c)
		assert.JSONEq(t, string(want), string(have), "writer %d is told its record as written", i)
	}
	assert.Empty(t, spoolLeft(t, s, 7))
}

// TestHandedChangeTakenBack: a change the holder cannot make (its Changer
// refuses, half way or not; the record would not be valid; no such
// record) leaves the record as it was in the holder's write, which
// carries the others; its writer makes it again and gets its own error.
func TestHandedChangeTakenBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		ch   Change
		want string
	}{
		{"refused", note("CLR-7-002", "engineer", "not mine to note", 10), "engineer did not ask CLR-7-002"},
		{"refused half way", Change{Kind: "break", ID: "CLR-7-002", At: t0}, "refused half way"},
		{"not valid", Change{Kind: "retopic", ID: "CLR-7-002", At: t0, Args: jsonString(strings.Repeat("x", MaxTopicLen+1))}, "topic"},
		{"no such record", note("CLR-7-009", "engineer", "a note", 10), "CLR-7-009: not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := changeStore(t)
			before, err := s.Read(7)
			require.NoError(t, err)
			wasJSON, _ := RecordJSON(before.Find("CLR-7-002"))
			f, err := s.Lock(context.Background(), 7)
			require.NoError(t, err)
			bad := handAsync(s, tc.ch)
			waitHanded(t, s, 7, 1)
			good := handAsync(s, note("CLR-7-003", "engineer", "a good note", 11))
			waitHanded(t, s, 7, 2)
			batch := drainAsHolder(t, s, f)
			require.Len(t, batch, 2)
			assert.Nil(t, batch[0].record, "the holder did not make it")
			assert.NotNil(t, batch[1].record, "but made the other")
			after, err := s.Read(7)
			require.NoError(t, err)
			isJSON, _ := RecordJSON(after.Find("CLR-7-002"))
			assert.JSONEq(t, string(wasJSON), string(isJSON), "the record as it was")
			require.NoError(t, f.Release())
			r := <-bad
			require.Error(t, r.err)
			assert.Contains(t, r.err.Error(), tc.want, "the writer made it again and words the refusal")
			require.NoError(t, (<-good).err)
			assert.Empty(t, spoolLeft(t, s, 7))
		})
	}
}

// TestHandedChangeWhoseHolderDied: a holder that took a change and died
// before telling its writer leaves the writer to look in the ledger: made
// there, it is not made twice; not there, it is made.
func TestHandedChangeWhoseHolderDied(t *testing.T) {
	for _, made := range []bool{false, true} {
		t.Run(fmt.Sprint("made ", made), func(t *testing.T) {
			s := changeStore(t)
			handed := countHanded(t)
			ch := note("CLR-7-001", "engineer", "going with the flat layout", 10)
			f, err := s.Lock(context.Background(), 7)
			require.NoError(t, err)
			r := handAsync(s, ch)
			name := waitHanded(t, s, 7, 1)[0]
			require.True(t, strings.HasSuffix(name, changeEnd))
			require.NoError(t, os.Remove(name), "the holder takes it")
			if made {
				_, err := s.change(f, func(l *Ledger) error {
					return noter{}.Make(l.Find("CLR-7-001"), ch)
				}, nil)
				require.NoError(t, err)
			}
			require.NoError(t, f.Release()) // and dies without a word
			got := <-r
			require.NoError(t, got.err)
			if made {
				assert.Equal(t, int32(1), handed.Load(), "found made by the holder")
			} else {
				assert.Zero(t, handed.Load(), "made by its writer")
			}
			l, err := s.Read(7)
			require.NoError(t, err)
			assert.Len(t, l.Find("CLR-7-001").X.Assumptions, 1, "made once")
			assert.True(t, noter{}.Made(got.c, ch))
		})
	}
}

// TestHandWithoutChanger: a kind the Store was not given is an error, and
// a change of it left by another process is left alone.
func TestHandWithoutChanger(t *testing.T) {
	s := changeStore(t)
	_, err := s.Hand(context.Background(), Change{Kind: "unknown", ID: "CLR-7-001"})
	require.ErrorContains(t, err, `no Changer for changes of kind "unknown"`)
	_, err = s.Hand(context.Background(), Change{Kind: "note", ID: "CLR-x"})
	require.Error(t, err)
}

// madeTwice is a Replicator whose Apply makes the change on the ledger as
// read, then again on that ledger as written (as a remote's write does
// when its change was merged but it could not tell: it makes it again on
// the shared ledger fetched, which holds it), and writes the second.
type madeTwice struct{ calls int }

func (*madeTwice) Prefetch(context.Context, int) (any, error) { return nil, nil }

func (r *madeTwice) Apply(_ context.Context, f *Locked, fn func(*Ledger) error, _ any) (*Ledger, error) {
	l, err := f.Read()
	if err != nil {
		return nil, err
	}
	for range 2 {
		r.calls++
		if err := fn(l); err != nil {
			return nil, err
		}
		data, err := Encode(l)
		if err != nil {
			return nil, err
		}
		if l, err = DecodeIssue(f.Path, f.Issue, data); err != nil {
			return nil, err
		}
	}
	data, err := Encode(l)
	if err != nil {
		return nil, err
	}
	return l, f.Write(l, data)
}

// TestHandedMadeAgainOnALedgerHoldingThem: a holder whose change is made
// again on a ledger that already holds it and the changes handed to it
// finds them there: each made once, each writer told its record. Before,
// it made them again: its own change refused (a resolution of a record
// resolved), each writer was told "not made" and made its own again (a
// question twice; an answer refused as answered already).
func TestHandedMadeAgainOnALedgerHoldingThem(t *testing.T) {
	s := changeStore(t)
	rep := &madeTwice{}
	s.SetReplicator(rep)
	f, err := s.Lock(context.Background(), 7)
	require.NoError(t, err)
	r1 := handAsync(s, note("CLR-7-002", "", "retrying three times", 11))
	waitHanded(t, s, 7, 1)
	r2 := askAsync(s, 7, asking("engineer", "a fourth question", 12))
	waitHanded(t, s, 7, 2)

	own := note("CLR-7-001", "engineer", "the holder's", 13)
	own.At = own.At.UTC()
	h := &handing{spool: f.Path + HandoffSuffix, issue: 7, x: &changing{ch: own, mk: noter{}}, changers: s.changers}
	c, err := s.handShared(context.Background(), f, h, nil)
	require.NoError(t, err)
	require.NoError(t, f.Release())
	assert.Equal(t, 2, rep.calls, "made, then made again")
	require.Len(t, c.X.Assumptions, 1, "the holder's change once")
	got := []asked{<-r1, <-r2}
	for i, r := range got {
		require.NoError(t, r.err, "writer %d", i)
	}
	l, err := s.Read(7)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, 4, "the handed question once")
	require.Len(t, l.Find("CLR-7-002").X.Assumptions, 1, "the handed change once")
	assert.Equal(t, "CLR-7-004", got[1].c.ID)
	assert.Len(t, got[0].c.X.Assumptions, 1)
	assert.Empty(t, spoolLeft(t, s, 7))
}
