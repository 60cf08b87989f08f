package ledger

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/internal/words"
)

// EntryType is the kind of a thread entry.
type EntryType string

// The thread entry types of the AgentX ledger format.
const (
	Question   EntryType = "question"
	Answer     EntryType = "answer"
	Resolution EntryType = "resolution"
	Escalation EntryType = "escalation"
)

// Record types.
const (
	RecordClarification = "clarification"
	RecordBrainstorm    = "brainstorm"
)

// Human is the built-in agent name for a person.
const Human = "human"

// Limits on what a ledger may hold, so one bad input cannot bloat a file
// every agent reads.
const (
	MaxTopicLen = 200       // bytes
	MaxBodyLen  = 64 * 1024 // bytes: any body a ledger holds
	MaxAgentLen = 64        // bytes
	// MaxMessageLen is the longest text agentx takes in one message, in
	// bytes: a question, an answer, a follow-up, a decision, an
	// assumption, a note with an option, from every surface (the command
	// line and stdin, the MCP tools, the desk, GitHub and Slack replies)
	// and from a responder (cut there, with a note). It keeps a message
	// within an item's share of an agent's inbox (half of inbox.HookLimit,
	// with the item's other lines and the gist of its question), so an
	// answer reaches its asker whole, never cut where the asker reads it.
	// MaxBodyLen stays the file's limit: the hub's own entries (an
	// escalation quoting both positions) and other tools' records.
	MaxMessageLen = 3000
)

// ThreadEntry is one message in a clarification's thread.
type ThreadEntry struct {
	Round     int       `json:"round"`
	From      string    `json:"from"`
	Type      EntryType `json:"type"`
	Body      string    `json:"body"`
	Timestamp Time      `json:"timestamp"`

	more unknown // members this version does not know, kept as read
}

// Clarification is one question thread between two agents (or an agent and
// a human). Field names are the AgentX ledger's.
type Clarification struct {
	ID       string `json:"id"`
	From     string `json:"from"`
	To       string `json:"to"`
	Topic    string `json:"topic"`
	Blocking bool   `json:"blocking"`
	Status   Status `json:"status"`

	// Beside the id and status that every pass over a ledger's records
	// reads, in the same 128 bytes: 20,000 records read through a layout
	// memo are gone over several times by each write, and a field in a
	// cache line of its own costs each pass a miss per record. (Only the
	// exported fields are encoded, in their order.)
	at     *extent // where the record lies in its file, while it is sealed by a layout memo
	sealed []byte  // the record as read, while it is sealed (see Sealed)

	Round      int           `json:"round"`
	MaxRounds  int           `json:"maxRounds"`
	Created    Time          `json:"created"`
	StaleAfter Time          `json:"staleAfter"`
	ResolvedAt *Time         `json:"resolvedAt"`
	Thread     []ThreadEntry `json:"thread"`
	RecordType string        `json:"recordType,omitempty"`

	// X holds agentx's own additions, under the one key "agentx" so that
	// the AgentX schema's fields are untouched; nil when there are none.
	X *Extra `json:"agentx,omitempty"`

	// more is the members this version does not know, kept as read (nil:
	// none). A pointer: most records have none, and the 20,000 of a ledger
	// read through its layout memo are 16 bytes smaller each.
	more *unknown
}

// ExtraKey is the JSON key of agentx's additions to a record.
const ExtraKey = "agentx"

// Extra is what agentx records beyond the AgentX format.
type Extra struct {
	Workflow    string        `json:"workflow,omitempty"`    // whose rules applied when asked
	Step        string        `json:"step,omitempty"`        // the asker's step
	Options     []string      `json:"options,omitempty"`     // choices offered to a human
	Assumptions []Assumption  `json:"assumptions,omitempty"` // what the asker proceeded on without an answer
	Monitor     *MonitorState `json:"monitor,omitempty"`     // what the monitor has done to this record
	People      []Person      `json:"people,omitempty"`      // who the thread's human entries were
	Choices     []Choice      `json:"choices,omitempty"`     // the numbered options replies picked
	// Summary is what was decided, in a sentence or two, given when the
	// clarification was resolved (see Clarification.Decision).
	Summary string `json:"summary,omitempty"`
	// Context is what the question came with when it was asked: the files
	// and lines read into the answerer's context, with their hashes, and
	// the commit the asker was on.
	Context *Context `json:"context,omitempty"`

	// The channels' data, which the ledger carries and does not read
	// (see the package doc): GitHub mode's comments and Slack mode's
	// thread, read and written by internal/channels/chanref. Each is
	// kept as Carried makes it: compact JSON, nil when absent.
	GitHub jsontext.Value `json:"github,omitempty"`
	Slack  jsontext.Value `json:"slack,omitempty"`

	more unknown // members of a newer agentx, kept as read
}

// Person names the person behind a thread entry written as human, which is
// all the AgentX format records.
type Person struct {
	Entry int    `json:"entry"` // the entry's index in the thread
	Name  string `json:"name"`  // as given with --as, or from git config or $USER
}

// Choice is a numbered option a thread entry picked: the entry's body is
// the decision it records, Option and Text the choice as it was offered.
type Choice struct {
	Entry  int    `json:"entry"`  // the entry's index in the thread
	Option int    `json:"option"` // 1-based, as offered
	Text   string `json:"text"`   // the option as offered
}

// Chose records that the thread's last entry picked ch (nil: none).
func (c *Clarification) Chose(ch *Choice) {
	if ch == nil || len(c.Thread) == 0 {
		return
	}
	ch.Entry = len(c.Thread) - 1
	x := c.Ext()
	x.Choices = append(x.Choices, *ch)
}

// ChoiceAt is the option thread entry i picked, or nil.
func (c *Clarification) ChoiceAt(i int) *Choice {
	if c.X == nil {
		return nil
	}
	for k := range c.X.Choices {
		if c.X.Choices[k].Entry == i {
			return &c.X.Choices[k]
		}
	}
	return nil
}

// MaxPersonLen is the longest name recorded for a person, in bytes.
const MaxPersonLen = 128

// ValidatePerson checks a person's name: not blank, valid UTF-8, printable
// (no control or format characters), within MaxPersonLen.
func ValidatePerson(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return &InputError{Field: "person", Value: name, Msg: "is empty"}
	case !utf8.ValidString(name):
		return &InputError{Field: "person", Value: name, Msg: "is not valid UTF-8"}
	case len(name) > MaxPersonLen:
		return &InputError{Field: "person", Value: name, Msg: fmt.Sprintf("is longer than %d bytes", MaxPersonLen)}
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return &InputError{Field: "person", Value: name, Msg: "holds control or invisible characters"}
	}
	return nil
}

// Sign records that the thread's last entry, written as human, was name's.
func (c *Clarification) Sign(name string) {
	if name == "" || len(c.Thread) == 0 {
		return
	}
	x := c.Ext()
	x.People = append(x.People, Person{Entry: len(c.Thread) - 1, Name: name})
}

// PersonAt is the name of the person behind thread entry i, or "".
func (c *Clarification) PersonAt(i int) string {
	if c.X == nil {
		return ""
	}
	for _, p := range c.X.People {
		if p.Entry == i {
			return p.Name
		}
	}
	return ""
}

// HumanAs is how an event names a person who acted: human:NAME, or human
// when the name is not known.
func HumanAs(name string) string {
	if name == "" {
		return Human
	}
	return Human + ":" + name
}

// IsHuman reports whether an actor (an entry's from, an event's by) is a
// person: human, or human:NAME.
func IsHuman(actor string) bool {
	return actor == Human || strings.HasPrefix(actor, Human+":")
}

// Assumption is what an asker proceeded on when no answer came in time.
type Assumption struct {
	Round     int    `json:"round"`
	By        string `json:"by"`
	Body      string `json:"body"`
	Timestamp Time   `json:"timestamp"`
	// Reuses is the earlier decision the asker proceeded on, when it
	// reused one (decision memory): a person may overturn it by replying.
	Reuses *Reuse `json:"reuses,omitempty"`
}

// Reuse cites the decision an assumption reuses.
type Reuse struct {
	ID      string `json:"id"`      // the resolved clarification
	Summary string `json:"summary"` // its decision when it was reused (Clarification.Decision)
}

// Reused is the assumption by which c's asker reused an earlier decision
// in the current round, while c waits for an answer (pending or stale)
// and nothing was answered since: the reuse a person may overturn. nil
// when there is none.
func (c *Clarification) Reused() *Assumption {
	if c.X == nil || len(c.X.Assumptions) == 0 || (c.Status != Pending && c.Status != Stale) {
		return nil
	}
	a := &c.X.Assumptions[len(c.X.Assumptions)-1]
	if a.Reuses == nil || a.Round != c.Round {
		return nil
	}
	return a
}

// MonitorState is persisted so the monitor acts once per condition.
type MonitorState struct {
	StaleAt   *Time  `json:"staleAt,omitempty"`   // when it was found stale
	Retries   int    `json:"retries,omitzero"`    // automatic responder retries or re-notifications
	RetriedAt *Time  `json:"retriedAt,omitempty"` // when the last retry ran
	Reason    string `json:"reason,omitempty"`    // why the monitor last acted

	// A responder that failed: how often in round FailedRound, when last,
	// why (one line, bounded), and, after a first failure, when its retry
	// is due. RetryUntil is set while a retry is claimed and running: until
	// then no other process makes it (a claimant that died loses it then).
	Failures    int    `json:"failures,omitzero"`
	FailedRound int    `json:"failedRound,omitzero"`
	FailedAt    *Time  `json:"failedAt,omitempty"`
	Failure     string `json:"failure,omitempty"`
	RetryAt     *Time  `json:"retryAt,omitempty"`
	RetryUntil  *Time  `json:"retryUntil,omitempty"`
}

// Context is what a question came with, as given to its answerer: enough to
// see later what the answerer saw, and whether it has changed since.
type Context struct {
	Commit string       `json:"commit,omitempty"` // the asker's HEAD when it asked
	Refs   []ContextRef `json:"refs,omitempty"`
	// Omitted says what was left out to keep within the context budget, or
	// refused (outside the repository, a link leaving it, forbidden by the
	// step's scope, binary, too large).
	Omitted []string `json:"omitted,omitempty"`
}

// ContextRef is one file (or part of one) read into a question's context.
type ContextRef struct {
	Kind   string `json:"kind"`            // "ref" (the asker named it), "artifact" (the step's output), "issue" (the issue's text)
	Path   string `json:"path"`            // relative to the repository root, with / separators
	Lines  string `json:"lines,omitempty"` // "12-40" when only those lines were given
	SHA256 string `json:"sha256"`          // of the whole file as read
}

// MaxSummary bounds a decision's summary, in bytes: a sentence or two.
const MaxSummary = 400

// Decision is what was decided, short, for whoever reads it later (the
// issue's decisions so far, a prompt, the inbox): the summary given when it
// was resolved, else the first sentence of its last answer or resolution,
// bounded by MaxSummary; "" when nothing was decided (no answer).
func (c *Clarification) Decision() string {
	if c.X != nil && c.X.Summary != "" {
		return c.X.Summary
	}
	for i := len(c.Thread) - 1; i >= 0; i-- {
		if t := c.Thread[i].Type; t == Resolution || t == Answer {
			if body := strings.TrimSpace(c.Thread[i].Body); body != "" {
				return FirstSentence(body, MaxSummary)
			}
		}
	}
	return ""
}

// FirstSentence is text's first sentence (up to a full stop, question or
// exclamation mark followed by a space, or a line break that does not
// follow a colon), on one line, cut
// at a word to at most limit bytes with "…" when longer.
func FirstSentence(text string, limit int) string {
	text = strings.TrimSpace(text)
	end := len(text)
	for i, r := range text {
		if r == '\n' {
			if strings.HasSuffix(strings.TrimSpace(text[:i]), ":") {
				continue // "Decision: accept the architect's proposal:" and the proposal below
			}
			end = i
			break
		}
		if (r == '.' || r == '?' || r == '!') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n') {
			end = i + 1
			break
		}
	}
	s := strings.Join(strings.Fields(text[:end]), " ")
	if len(s) <= limit {
		return s
	}
	cut := s[:limit-len("…")]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > limit/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// Ext returns the record's additions, creating them if absent.
func (c *Clarification) Ext() *Extra {
	if c.X == nil {
		c.X = &Extra{}
	}
	return c.X
}

// Ledger is the content of one issue-N.json file.
type Ledger struct {
	IssueNumber    int              `json:"issueNumber"`
	Clarifications []*Clarification `json:"clarifications"`

	more unknown // members this version does not know, kept as read
	bad  error   // a sealed record Find could not decode
	src  *source // the file read through its layout memo, during an Update
	size int     // the bytes it was decoded from: about what encoding it again takes
	// decided are the places of the records a change resolved, as
	// Checkpoint.Check found them: the write adds them to decision memory
	decided []int
}

// Whole returns every clarification decoded whole: inside Store.Update,
// where the records whose status is final are read sealed (only ID, From
// and Status set), a function that reads more of every record calls it
// first. A sealed record that cannot be decoded is left out, and Update
// then fails with a *CorruptError.
func (l *Ledger) Whole() []*Clarification {
	out := make([]*Clarification, 0, len(l.Clarifications))
	for _, c := range l.Clarifications {
		if !l.open(c) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Open decodes c, one of l's records, whole if it is sealed, and reports
// whether it could be (if not, Update fails with a *CorruptError): Find
// for a record in hand, without searching for it.
func (l *Ledger) Open(c *Clarification) bool { return l.open(c) }

// open decodes c whole if it is sealed, and reports whether it could be
// (if not, l.bad says why and Update fails).
func (l *Ledger) open(c *Clarification) bool {
	id := c.ID
	if err := c.unseal(); err != nil {
		if l.bad == nil {
			l.bad = fmt.Errorf("%s: %w", id, err)
		}
		return false
	}
	return true
}

// Find returns the clarification with id, or nil.
// A sealed record is decoded whole first; if it cannot be, Find returns
// nil and Store.Update fails with a *CorruptError.
func (l *Ledger) Find(id string) *Clarification {
	for _, c := range l.Clarifications {
		if c.ID == id {
			if !l.open(c) {
				return nil
			}
			return c
		}
	}
	return nil
}

// NextID is the id for a new clarification: CLR-{issue}-{seq:03d} with seq
// one past the highest in the ledger, so an id is never reused after a gap.
func (l *Ledger) NextID() string {
	max, from := l.memoSeq()
	for _, c := range l.Clarifications[from:] {
		if _, seq, err := c.idParts(); err == nil && seq > max {
			max = seq
		}
	}
	return FormatID(l.IssueNumber, max+1)
}

// idParts is ParseID(c.ID), without the parse for a record whose id the
// layout memo gave (knownID).
func (c *Clarification) idParts() (issue, seq int, err error) {
	if issue, seq, ok := c.knownID(); ok {
		return issue, seq, nil
	}
	return ParseID(c.ID)
}

// FormatID builds a clarification id.
func FormatID(issue, seq int) string {
	var b [32]byte
	return string(appendID(b[:0], issue, seq))
}

// appendID appends FormatID(issue, seq) to b.
func appendID(b []byte, issue, seq int) []byte {
	if issue < 0 || seq < 0 {
		return fmt.Appendf(b, "CLR-%d-%03d", issue, seq)
	}
	b = append(b, "CLR-"...)
	b = strconv.AppendInt(b, int64(issue), 10)
	b = append(b, '-')
	return appendSeq(b, seq)
}

// appendSeq appends a sequence number as an id spells it: three digits at
// least (seq not negative).
func appendSeq(b []byte, seq int) []byte {
	switch {
	case seq < 10:
		b = append(b, "00"...)
	case seq < 100:
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(seq), 10)
}

// ParseID splits a clarification id, CLR-<1 to 9 digits>-<3 to 9 digits>,
// into its issue and sequence numbers. It is called for every record of a
// ledger on every write (NextID, the integrity check), so it is plain code,
// not a regular expression.
func ParseID(id string) (issue, seq int, err error) {
	rest, ok := strings.CutPrefix(id, "CLR-")
	dash := strings.IndexByte(rest, '-')
	if ok && dash >= 0 {
		a, b := rest[:dash], rest[dash+1:]
		var ok3, ok4 bool
		issue, ok3 = digits(a, 1)
		seq, ok4 = digits(b, 3)
		if ok3 && ok4 {
			return issue, seq, nil
		}
	}
	return 0, 0, &InputError{Field: "id", Value: id, Msg: "is not a clarification id (example: CLR-42-001)"}
}

// digits reads min to 9 ASCII digits.
func digits(s string, min int) (int, bool) {
	if len(s) < min || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// EscalationPrefix begins the body of the escalation entries agentx
// writes; the reason follows it on the first line.
const EscalationPrefix = "ESCALATED: "

// EscalationReason is the reason of c's latest escalation, or "" if it
// has none.
func (c *Clarification) EscalationReason() string {
	e := c.Current(Escalation)
	if e == nil {
		return ""
	}
	first, _, _ := strings.Cut(e.Body, "\n")
	return strings.TrimPrefix(first, EscalationPrefix)
}

// Current is the latest entry of type t in the thread, or nil.
func (c *Clarification) Current(t EntryType) *ThreadEntry {
	for i := len(c.Thread) - 1; i >= 0; i-- {
		if c.Thread[i].Type == t {
			return &c.Thread[i]
		}
	}
	return nil
}

// RoundAnswer is the answer to the current round: the bodies of its answer
// entries, in order, a blank line apart (a person may reply more than
// once), or "" when it has none.
func (c *Clarification) RoundAnswer() string {
	var parts []string
	for _, e := range c.Thread {
		if e.Type == Answer && e.Round == c.Round {
			parts = append(parts, e.Body)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Move changes c's status through the transition table.
func (c *Clarification) Move(to Status) error {
	if !CanMove(c.Status, to) {
		return &TransitionError{ID: c.ID, From: c.Status, To: to}
	}
	c.Status = to
	return nil
}

// InputError is user-supplied text that agentx will not store. Field
// names the input as the data does (from, topic, question); each front end
// words it its own way (the command line as its flag, --from).
type InputError struct {
	Field  string
	Value  string
	Msg    string
	Advice string // what to do, when more is known than the message says ("did you mean architect?")
	Limit  int    // text over its limit: the limit, in bytes (0: another fault)
}

// Hint is what to do about it: Advice ("" when the message says it all).
func (e *InputError) Hint() string { return e.Advice }

func (e *InputError) Error() string {
	v := e.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return fmt.Sprintf("%s %q %s", e.Field, v, e.Msg)
}

// ValidateAgent checks an agent name: lowercase letters, digits and dashes,
// starting with a letter or digit.
func ValidateAgent(field, name string) error {
	switch {
	case name == "":
		return &InputError{Field: field, Value: name, Msg: "is empty: give an agent name such as engineer"}
	case len(name) > MaxAgentLen:
		return &InputError{Field: field, Value: name, Msg: fmt.Sprintf("is longer than %d bytes", MaxAgentLen)}
	case !words.Slug(name, "-"):
		return &InputError{Field: field, Value: name, Msg: "is not an agent name: use lowercase letters, digits and dashes (example: product-manager)"}
	}
	return nil
}

// ValidateText checks a topic or body: non-blank, valid UTF-8, within max bytes.
func ValidateText(field, s string, max int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return &InputError{Field: field, Value: s, Msg: "is empty"}
	case !utf8.ValidString(s):
		return &InputError{Field: field, Value: s, Msg: "is not valid UTF-8"}
	case len(s) > max:
		return &InputError{Field: field, Value: s, Msg: fmt.Sprintf("is %d bytes; the limit is %d bytes", len(s), max), Limit: max,
			Advice: fmt.Sprintf("shorten it to %d bytes or fewer; nothing was written", max)}
	}
	return nil
}

// ValidateMessage checks the text of one message (a question, answer,
// follow-up, decision, assumption or note): ValidateText within
// MaxMessageLen. Over it, nothing is taken: the hint says to shorten it
// and where the rest can go.
func ValidateMessage(field, s string) error {
	err := ValidateText(field, s, MaxMessageLen)
	if in, ok := err.(*InputError); ok && len(s) > MaxMessageLen {
		in.Advice = fmt.Sprintf("shorten it to %d bytes or fewer (one message's limit, so that it reaches its reader whole); "+
			"put the detail in a file or the issue and name it in the message; nothing was written", MaxMessageLen)
	}
	return err
}

// ValidateIssue checks an issue number.
func ValidateIssue(n int) error {
	if n < 0 || n > 999_999_999 {
		return &InputError{Field: "issue", Value: strconv.Itoa(n), Msg: "must be a non-negative integer (0 = no issue)"}
	}
	return nil
}

// ParseIssue parses an issue number given as text ("42" or "#42").
func ParseIssue(s string) (int, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "#")
	n, err := strconv.Atoi(t)
	if err != nil || t == "" || t[0] == '+' || t[0] == '-' {
		return 0, &InputError{Field: "issue", Value: s, Msg: "must be a non-negative integer (0 = no issue)"}
	}
	return n, ValidateIssue(n)
}

// Validate checks the whole ledger before it is written: ids well formed,
// unique and of this issue; known statuses; valid agent names; text within
// limits. Records written by other AgentX tools (round 0, empty thread) pass.
func (l *Ledger) Validate() error {
	if err := ValidateIssue(l.IssueNumber); err != nil {
		return err
	}
	return l.validateRecords()
}

// validateRecords is Validate's checks of the records.
func (l *Ledger) validateRecords() error {
	v := recordCheck{l: l, last: -1}
	for i, c := range l.Clarifications {
		if err := v.check(i, c); err != nil {
			return err
		}
	}
	return nil
}

// recordCheck is Validate's pass over the records, one record at a time
// (a write checks them in its pass over its changes: Checkpoint.Check).
type recordCheck struct {
	l *Ledger
	// Ids in increasing sequence (as agentx numbers them) cannot repeat:
	// only records out of that order need a map to find a duplicate.
	seen map[string]bool
	last int
}

// check checks c, the i-th record, the ones before it checked.
func (v *recordCheck) check(i int, c *Clarification) error {
	l := v.l
	if c == nil {
		return fmt.Errorf("ledger issue %d: null clarification record", l.IssueNumber)
	}
	issue, seq, err := c.idParts()
	if err != nil {
		return err
	}
	if issue != l.IssueNumber {
		return fmt.Errorf("%s: belongs to issue %d, not %d", c.ID, issue, l.IssueNumber)
	}
	if v.seen == nil && seq <= v.last {
		v.seen = make(map[string]bool, len(l.Clarifications))
		for _, p := range l.Clarifications[:i] {
			v.seen[p.ID] = true
		}
	}
	v.last = seq
	if v.seen != nil {
		if v.seen[c.ID] {
			return fmt.Errorf("%s: duplicate id in issue %d", c.ID, l.IssueNumber)
		}
		v.seen[c.ID] = true
	}
	if c.Sealed() {
		if !c.stubIntact() {
			return fmt.Errorf("%s: a sealed record was changed without Ledger.Find: the change would be lost", c.ID)
		}
		return nil // written back as it was read
	}
	if err := c.validate(); err != nil {
		return fmt.Errorf("%s: %w", c.ID, err)
	}
	return nil
}

func (c *Clarification) validate() error {
	if err := ValidateAgent("from", c.From); err != nil {
		return err
	}
	if err := ValidateAgent("to", c.To); err != nil {
		return err
	}
	if c.From == c.To {
		return &InputError{Field: "to", Value: c.To, Msg: "is the asker: an agent cannot ask itself"}
	}
	if err := ValidateText("topic", c.Topic, MaxTopicLen); err != nil {
		return err
	}
	if !c.Status.Valid() {
		return &InputError{Field: "status", Value: string(c.Status), Msg: "is not a status"}
	}
	if c.Round < 0 || c.MaxRounds < 0 {
		return fmt.Errorf("round %d of maxRounds %d is out of range", c.Round, c.MaxRounds)
	}
	switch c.RecordType {
	case "", RecordClarification, RecordBrainstorm:
	default:
		return &InputError{Field: "recordType", Value: c.RecordType, Msg: "must be clarification or brainstorm"}
	}
	for i, e := range c.Thread {
		if err := ValidateAgent(fmt.Sprintf("thread[%d].from", i), e.From); err != nil {
			return err
		}
		switch e.Type {
		case Question, Answer, Resolution, Escalation:
		default:
			return &InputError{Field: fmt.Sprintf("thread[%d].type", i), Value: string(e.Type), Msg: "must be question, answer, resolution or escalation"}
		}
		if err := ValidateText(fmt.Sprintf("thread[%d].body", i), e.Body, MaxBodyLen); err != nil {
			return err
		}
	}
	if c.X != nil {
		for i, p := range c.X.People {
			if p.Entry < 0 || p.Entry >= len(c.Thread) || c.Thread[p.Entry].From != Human {
				return &InputError{Field: fmt.Sprintf("agentx.people[%d].entry", i), Value: strconv.Itoa(p.Entry), Msg: "is not a human entry of the thread"}
			}
			if err := ValidatePerson(p.Name); err != nil {
				return err
			}
		}
		for i, ch := range c.X.Choices {
			if ch.Entry < 0 || ch.Entry >= len(c.Thread) || ch.Option < 1 {
				return &InputError{Field: fmt.Sprintf("agentx.choices[%d]", i), Value: strconv.Itoa(ch.Entry), Msg: "is not an entry of the thread with an option from 1"}
			}
			if err := ValidateText(fmt.Sprintf("agentx.choices[%d].text", i), ch.Text, MaxBodyLen); err != nil {
				return err
			}
		}
	}
	return nil
}
