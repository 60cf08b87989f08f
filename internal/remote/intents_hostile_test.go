package remote_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/remote"
)

// These tests post intents as an attacker with push access would: crafted
// with plain git in a repository of its own (mallory) and pushed to the
// intents' refs of a busy issue, while the honest hosts ask on it. Every
// acknowledged ask must land, under dense unique ids; what the attacker
// forged must never reach the shared ledger; each forged intent is removed
// (or, where agentx never reads it, left alone) and holds no honest ask
// back more than the few seconds a dead host's intent may.

// forged marks every piece of content that must never reach a shared
// ledger, nor a commit message of its chain.
const forged = "FORGED"

// askLimit bounds one honest ask, slowest the longest ask took with no
// intent about: an intent ahead of it holds it back as long as a dead
// host's would, intentStall (2 s), or eight exchanges with the remote when
// they are slow (an exchange takes at most an ask), then its own merge
// takes about an ask more. Never less than 10 s: on a machine others load
// as well, an ask may take longer than any measured before; an intent that
// held asks back would hold them a minute (intentLife), or for good.
func askLimit(slowest time.Duration) time.Duration {
	return max(10*time.Second, max(2*time.Second, 8*slowest)+2*slowest+time.Second)
}

// hostile is a world of honest hosts and mallory: a plain git repository
// whose origin is the world's bare remote.
type hostile struct {
	*world
	evil   string
	pushed time.Duration   // the time mallory's pushes took
	env    [][]string      // each host's environment beyond run's (its name)
	skew   []time.Duration // each host's clock, off the system's by this
}

func newHostile(t *testing.T, hosts int) *hostile {
	w := newWorld(t, hosts, "", "")
	evil := filepath.Join(filepath.Dir(w.bare), "mallory")
	git(t, filepath.Dir(w.bare), "init", "--quiet", evil)
	git(t, evil, "remote", "add", "origin", w.bare)
	// the remote notes every ref it creates, moves or deletes
	hook := "#!/bin/sh\necho \"$1 $3\" >> \"$GIT_DIR/updates\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(w.bare, "hooks", "update"), []byte(hook), 0o755))
	h := &hostile{world: w, evil: evil}
	for i := range hosts {
		h.env = append(h.env, []string{"AGENTX_NO_MONITOR=1", fmt.Sprintf("AGENTX_HOST=host%d", i)})
	}
	h.skew = make([]time.Duration, hosts)
	return h
}

// intentRef is the ref of the intent name on issue.
func intentRef(issue int, name string) string {
	return fmt.Sprintf("refs/agentx/clarifications-queue/issue-%d/intent/%s", issue, name)
}

// intentName is a well-formed intent name posted at at, by mallory.
func intentName(at time.Time) string { return fmt.Sprintf("%013d-4242-mallory", at.UnixMilli()) }

// ask asks topic on issue from host i and returns its id ("" when it
// failed: asserted, not required, as the hosts ask from goroutines) and
// how long it took.
func (h *hostile) ask(i, issue int, topic string) (string, time.Duration) {
	t := h.t
	t.Helper()
	start := time.Now()
	env := h.env[i]
	if h.skew[i] != 0 {
		env = append(slices.Clip(env), "AGENTX_NOW="+start.Add(h.skew[i]).UTC().Format(time.RFC3339Nano))
	}
	r := h.runEnv(i, env, "", "clarify", "ask", "--issue", fmt.Sprint(issue), "--from", "engineer", "--to", "architect",
		"--topic", topic, "--question", topic+"?", "--non-blocking", "--json")
	took := time.Since(start)
	if took > 3*time.Second {
		t.Logf("host %d asking %s took %v: %s", i, topic, took, r.stderr)
	}
	assert.NotContains(t, r.stderr, "panic")
	if !assert.Equal(t, 0, r.code, "host %d asking %s: %s", i, topic, r.stderr) {
		return "", took
	}
	assert.NotContains(t, r.stdout, "unsynced", "host %d asking %s: the remote was reachable throughout", i, topic)
	return data(t, r.stdout)["id"].(string), took
}

// busy has every host ask on issue in turn, twice: each has then found
// another host's change on it lately, so that their next asks post
// intents. It returns the asks acknowledged (id: topic), and the longest
// one took.
func (h *hostile) busy(issue int) (acked map[string]string, slowest time.Duration) {
	acked = map[string]string{}
	for k := range 2 {
		for i := range h.hosts {
			topic := fmt.Sprintf("busy-h%d-%d", i, k)
			id, took := h.ask(i, issue, topic)
			acked[id] = topic
			slowest = max(slowest, took)
		}
	}
	return acked, slowest
}

// rush has every host ask n questions on issue, the hosts at once. It
// adds the asks acknowledged to acked and returns the longest one took.
func (h *hostile) rush(issue, n int, acked map[string]string) time.Duration {
	var mu sync.Mutex
	var longest time.Duration
	var wg sync.WaitGroup
	for i := range h.hosts {
		wg.Go(func() {
			for k := range n {
				topic := fmt.Sprintf("rush-h%d-%d", i, k)
				id, took := h.ask(i, issue, topic)
				if id == "" {
					continue
				}
				mu.Lock()
				_, dup := acked[id]
				assert.False(h.t, dup, "%s acknowledged twice", id)
				acked[id] = topic
				longest = max(longest, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return longest
}

// mgit runs git in mallory's repository.
func (h *hostile) mgit(stdin string, args ...string) string {
	h.t.Helper()
	return gitIn(h.t, h.evil, stdin, args...)
}

// head fetches issue's shared ledger into mallory's repository: its
// commit, and its ledger loosely decoded.
func (h *hostile) head(issue int) (string, map[string]any) {
	ref := h.ref(issue)
	h.mgit("", "fetch", "--quiet", "origin", "+"+ref+":"+ref)
	sha := h.mgit("", "rev-parse", ref)
	return sha, h.ledgerAt(sha, issue)
}

// ledgerAt is the ledger of issue in mallory's commit sha.
func (h *hostile) ledgerAt(sha string, issue int) map[string]any {
	var l map[string]any
	require.NoError(h.t, json.Unmarshal([]byte(h.mgit("", "cat-file", "blob", fmt.Sprintf("%s:issue-%d.json", sha, issue))), &l))
	return l
}

// blob writes content as a blob in mallory's repository.
func (h *hostile) blob(content []byte) string {
	tmp := filepath.Join(h.t.TempDir(), "blob")
	require.NoError(h.t, os.WriteFile(tmp, content, 0o644))
	return h.mgit("", "hash-object", "-w", tmp)
}

// commit makes a commit of the tree mktree makes from lines, on parents,
// its message forged.
func (h *hostile) commit(lines string, parents ...string) string {
	tree := h.mgit(lines, "mktree")
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return h.mgit("CLR-0-000 "+forged+" asked by engineer of architect\n\nhost: mallory\n", args...)
}

// ledgerCommit commits l as issue's ledger, on parents.
func (h *hostile) ledgerCommit(issue int, l map[string]any, parents ...string) string {
	enc, err := json.MarshalIndent(l, "", "  ")
	require.NoError(h.t, err)
	return h.commit(fmt.Sprintf("100644 blob %s\tissue-%d.json\n", h.blob(enc), issue), parents...)
}

// post pushes obj to the intent ref name on issue, as any clone with
// push access can, and returns the ref.
func (h *hostile) post(issue int, name, obj string) string {
	ref := intentRef(issue, name)
	start := time.Now()
	h.mgit("", "push", "--quiet", "origin", obj+":"+ref)
	h.pushed += time.Since(start)
	return ref
}

// records is l's clarifications.
func records(l map[string]any) []any { return l["clarifications"].([]any) }

// clone is a deep copy of v.
func clone[T any](t *testing.T, v T) T {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// question is a new record for l, made from its first: its id, its topic,
// its question (the topic, asked), asked now.
func question(t *testing.T, l map[string]any, id, topic string) map[string]any {
	c := clone(t, records(l)[0].(map[string]any))
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	c["id"], c["topic"], c["status"], c["round"], c["created"] = id, topic, "pending", 1, now
	c["thread"] = []any{map[string]any{"round": 1, "from": "engineer", "type": "question", "body": topic + "?", "timestamp": now}}
	return c
}

// adding is l with record c appended (l unchanged).
func adding(t *testing.T, l map[string]any, c map[string]any) map[string]any {
	n := clone(t, l)
	n["clarifications"] = append(records(n), c)
	return n
}

// next is the id after l's last record.
func next(issue int, l map[string]any) string {
	return fmt.Sprintf("CLR-%d-%03d", issue, len(records(l))+1)
}

// planted is what a case pushed: the refs agentx must remove, those it
// must leave alone (it never reads them), and the topics of the forged
// intents that are ordinary asks, to be merged once each.
type planted struct {
	gone, kept, merged []string
	// noIntents: no intent can be posted meanwhile (every ask is a
	// transaction)
	noIntents bool
}

// hostileCase is one attack: plant pushes it on issue, whose ledger the
// honest hosts have made busy.
type hostileCase struct {
	name  string
	setup func(h *hostile, issue int) map[string]string // once the issue is busy, before the attack (nil: nothing); the asks it acknowledged
	plant func(h *hostile, issue int) planted
}

// TestHostileIntents: on a busy issue, an attacker pushes crafted intents
// with git while the honest hosts keep asking. Each case's forged intents
// are removed unmerged (or, those agentx never reads, left alone), nothing
// they forged reaches the shared ledger, no honest ask is held back more
// than a few seconds, and every acknowledged ask is on the shared ledger
// once, the ids dense.
func TestHostileIntents(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHostile(t, 2)
			const issue = 3
			acked, slowest := h.busy(issue)
			if tc.setup != nil {
				maps.Copy(acked, tc.setup(h, issue))
			}
			p := tc.plant(h, issue)
			longest := h.rush(issue, 2, acked)
			t.Logf("longest ask: %v (%v with no intent about, %v to push the forged ones)", longest, slowest, h.pushed)
			// each host fetches what mallory pushed, once, all at once (a
			// huge blob costs each about what pushing it did)
			fetched := time.Duration(len(h.hosts)) * h.pushed
			assert.Less(t, longest, askLimit(slowest)+fetched, "a forged intent held an honest ask back")
			h.check(issue, acked, p)
		})
	}
}

// check holds the shared ledger of issue, its chain, the intents' refs
// and the hosts to what the attack must not change.
func (h *hostile) check(issue int, acked map[string]string, p planted) {
	h.t.Helper()
	h.checkRecords(issue, acked, p.merged)
	h.checkChain(issue, !p.noIntents)
	refs := git(h.t, h.bare, "for-each-ref", "--format=%(refname)", "refs/agentx/")
	for _, r := range p.gone {
		assert.NotContains(h.t, refs, r, "the forged intent is removed")
	}
	for _, r := range p.kept {
		assert.Contains(h.t, refs, r, "a ref agentx does not read is left alone")
	}
	h.checkHosts(issue)
}

// checkRecords: the shared ledger of issue holds every ask acknowledged,
// under its id, each of mallory's ordinary asks (merged) once, and nothing
// else.
func (h *hostile) checkRecords(issue int, acked map[string]string, merged []string) {
	t := h.t
	t.Helper()
	last := checkChain(t, h.chain(issue))
	topics := map[string]string{}
	times := map[string]int{}
	var extra []string
	for _, c := range last.Clarifications {
		topics[c.ID] = c.Topic
		times[c.Topic]++
		if _, ok := acked[c.ID]; !ok && !slices.Contains(merged, c.Topic) {
			extra = append(extra, c.ID+" "+c.Topic)
		}
	}
	for id, topic := range acked {
		assert.Equal(t, topic, topics[id], "%s is the question its ask acknowledged", id)
	}
	for _, topic := range merged {
		assert.Equal(t, 1, times[topic], "the ask %q mallory posted is merged once", topic)
	}
	assert.Empty(t, extra, "nothing else was added")
}

// checkChain: no commit of issue's chain holds forged content, nor says
// forged words, and (intents) the honest asks were merged as intents.
func (h *hostile) checkChain(issue int, intents bool) {
	t := h.t
	t.Helper()
	ref := h.ref(issue)
	log := git(t, h.bare, "log", "--format=%H%n%B", ref)
	for _, l := range strings.Split(log, "\n") {
		assert.NotContains(t, l, forged, "a forged message in the chain")
	}
	if intents {
		assert.Contains(t, log, "(posted on host", "the honest asks were merged as intents")
	}
	for _, c := range strings.Fields(git(t, h.bare, "rev-list", ref)) {
		v := git(t, h.bare, "cat-file", "blob", fmt.Sprintf("%s:issue-%d.json", c, issue))
		assert.False(t, strings.Contains(v, forged), "version %s holds forged content", c)
	}
}

// checkHosts: every host syncs, its copy of issue holds no forged
// content, and it recorded no refusal: a forged intent is removed
// silently, the shared ledger never refused for it.
func (h *hostile) checkHosts(issue int) {
	t := h.t
	t.Helper()
	for i := range h.hosts {
		r := h.runEnv(i, h.env[i], "", "sync")
		assert.Equal(t, 0, r.code, "host %d: %s", i, r.stderr)
		local, err := os.ReadFile(filepath.Join(h.hosts[i], ".agentx", "state", "clarifications", fmt.Sprintf("issue-%d.json", issue)))
		require.NoError(t, err)
		assert.False(t, strings.Contains(string(local), forged), "host %d's copy holds forged content", i)
		assert.Zero(t, refusals(h.events(i)), "host %d: a forged intent is no refusal of the shared ledger", i)
	}
}

func hostileCases() []hostileCase {
	return []hostileCase{
		{name: "rewrites records", setup: answerFirst, plant: plantRewrites},
		{name: "ids", plant: plantIDs},
		{name: "parents", plant: plantParents},
		{name: "trees", plant: plantTrees},
		{name: "huge", plant: plantHuge},
		{name: "names", plant: plantNames},
		{name: "not commits", plant: plantObjects},
		{name: "a ref where the intents are", plant: plantInTheWay},
		{name: "the intents' mark", plant: plantMark},
	}
}

// answerFirst answers on host 0 the first question on issue.
func answerFirst(h *hostile, issue int) map[string]string {
	r := h.runEnv(0, h.env[0], "architect", "clarify", "answer", fmt.Sprintf("CLR-%d-001", issue), "--body", "the answer")
	require.Equal(h.t, 0, r.code, r.stderr)
	return nil
}

// plantRewrites: intents that change an answer, delete a question,
// rewrite a question, or resolve one as a person: each alone (an intent
// may change records, as an answer does) and beside a question added.
func plantRewrites(h *hostile, issue int) planted {
	t := h.t
	head, l := h.head(issue)
	var p planted
	edits := []func(l map[string]any){
		func(l map[string]any) { // the answer changed
			c := records(l)[0].(map[string]any)
			c["thread"].([]any)[1].(map[string]any)["body"] = forged + " answer"
		},
		func(l map[string]any) { // a question deleted
			l["clarifications"] = records(l)[1:]
		},
		func(l map[string]any) { // a question rewritten
			c := records(l)[1].(map[string]any)
			c["thread"].([]any)[0].(map[string]any)["body"] = forged + " question"
		},
		func(l map[string]any) { // a pending question resolved by a person
			c := records(l)[1].(map[string]any)
			c["status"] = "resolved"
			c["thread"] = append(c["thread"].([]any), map[string]any{"round": 1, "from": "human", "type": "resolution", "body": forged, "timestamp": "2026-02-26T10:00:00Z"})
		},
	}
	for k, edit := range edits {
		after := adding(t, l, question(t, l, next(issue, l), fmt.Sprintf("%s rewrite %d", forged, k)))
		edit(after)
		p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.ledgerCommit(issue, after, head)))
		alone := clone(t, l)
		edit(alone)
		p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.ledgerCommit(issue, alone, head)))
	}
	return p
}

// plantIDs: intents adding a question under an id its own ledger has
// taken, or past the next, and one made on an older version whose id the
// shared ledger has given since: an ordinary late ask, merged under the
// next free id.
func plantIDs(h *hostile, issue int) planted {
	t := h.t
	head, l := h.head(issue)
	var p planted
	for _, id := range []string{fmt.Sprintf("CLR-%d-001", issue), fmt.Sprintf("CLR-%d-009", issue)} {
		after := adding(t, l, question(t, l, id, forged+" "+id))
		p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.ledgerCommit(issue, after, head)))
	}
	older := h.mgit("", "rev-parse", head+"^")
	ol := h.ledgerAt(older, issue)
	after := adding(t, ol, question(t, ol, next(issue, ol), "late ask"))
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.ledgerCommit(issue, after, older)))
	p.merged = append(p.merged, "late ask")
	return p
}

// plantParents: intents whose commit has two parents, or one parent that
// is not on the ledger's history (a root commit of its own), or none (a
// ledger made from nothing: the shared one, a question in it resolved as
// a person).
func plantParents(h *hostile, issue int) planted {
	t := h.t
	head, l := h.head(issue)
	var p planted
	after := adding(t, l, question(t, l, next(issue, l), forged+" root"))
	c := records(after)[0].(map[string]any)
	c["status"] = "resolved"
	c["thread"] = append(c["thread"].([]any), map[string]any{"round": 1, "from": "human", "type": "resolution", "body": forged, "timestamp": "2026-02-26T10:00:00Z"})
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.ledgerCommit(issue, after)))
	after = adding(t, l, question(t, l, next(issue, l), forged+" merge"))
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.ledgerCommit(issue, after, head, head+"^")))

	empty := map[string]any{"issueNumber": issue, "clarifications": []any{}}
	root := h.ledgerCommit(issue, empty)
	stray := map[string]any{"issueNumber": issue, "clarifications": []any{question(t, l, fmt.Sprintf("CLR-%d-001", issue), forged+" stray")}}
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.ledgerCommit(issue, stray, root)))
	return p
}

// plantHuge: an intent on the shared head whose ledger is over the size
// limit (remote.MaxShared), refused from its size alone, never read.
func plantHuge(h *hostile, issue int) planted {
	head, _ := h.head(issue)
	big := []byte(fmt.Sprintf(`{"issueNumber": %d, "clarifications": [], "pad": "%s%s"}`, issue, forged, bytes.Repeat([]byte("x"), remote.MaxShared)))
	tree := fmt.Sprintf("100644 blob %s\tissue-%d.json\n", h.blob(big), issue)
	return planted{gone: []string{h.post(issue, intentName(time.Now()), h.commit(tree, head))}}
}

// plantTrees: intents on the shared head whose tree is not a ledger: a
// blob that is not JSON, the ledger as a symbolic link, an extra file
// beside it, the ledger of another issue.
func plantTrees(h *hostile, issue int) planted {
	t := h.t
	head, l := h.head(issue)
	file := fmt.Sprintf("issue-%d.json", issue)
	good, err := json.Marshal(adding(t, l, question(t, l, next(issue, l), forged+" tree")))
	require.NoError(t, err)
	other := strings.Replace(string(good), fmt.Sprintf(`"issueNumber":%d`, issue), `"issueNumber":4`, 1)
	require.NotEqual(t, string(good), other)
	trees := []string{
		"100644 blob " + h.blob([]byte(forged+" {not json")) + "\t" + file + "\n",
		"120000 blob " + h.blob(good) + "\t" + file + "\n",
		"100644 blob " + h.blob(good) + "\t" + file + "\n100644 blob " + h.blob([]byte(forged)) + "\tz.json\n",
		"100644 blob " + h.blob([]byte(other)) + "\t" + file + "\n",
		"100644 blob " + h.blob(good) + "\tissue-4.json\n",
	}
	var p planted
	for _, tree := range trees {
		p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.commit(tree, head)))
	}
	return p
}

// plantNames: intents that add an ordinary question, named long before
// intentLife (removed unmerged), in the far future (an ask from a host
// whose clock is ahead: merged), and not as agentx names them.
func plantNames(h *hostile, issue int) planted {
	t := h.t
	head, l := h.head(issue)
	var p planted
	intent := func(name, topic string) string {
		after := adding(t, l, question(t, l, next(issue, l), topic))
		return h.post(issue, name, h.ledgerCommit(issue, after, head))
	}
	p.gone = append(p.gone, intent(intentName(time.Now().Add(-10*time.Minute)), forged+" past"))
	p.gone = append(p.gone, intent(intentName(time.Now().Add(24*time.Hour)), "future ask"))
	p.merged = append(p.merged, "future ask")
	for _, name := range []string{"not-an-intent", "0000000000000-1-x", "17000000000000000-1-mallory", "1-2-3", fmt.Sprintf("%013d-1-a'b\"c$(d);e|f<g>h{i}é", time.Now().UnixMilli())} {
		p.gone = append(p.gone, intent(name, forged+" "+name))
	}
	return p
}

// plantObjects: refs under the intents' directory that are no commit: a
// blob, a tree, an annotated tag of a forged intent's commit (read as the
// commit it names, as git peels it: removed, as that commit would be) and
// one of an ordinary intent's commit (merged, as that commit would be);
// and an intent one directory deeper, which is no intent: never read,
// never removed.
func plantObjects(h *hostile, issue int) planted {
	t := h.t
	head, l := h.head(issue)
	tag := func(commit string) string {
		return h.mgit(fmt.Sprintf("object %s\ntype commit\ntag t\ntagger m <m@m> 0 +0000\n\n%s\n", commit, forged), "mktag")
	}
	asks := h.ledgerCommit(issue, adding(t, l, question(t, l, next(issue, l), "tagged ask")), head)
	rewrite := adding(t, l, question(t, l, next(issue, l), forged+" tagged"))
	records(rewrite)[0].(map[string]any)["topic"] = forged
	var p planted
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.blob([]byte(forged))))
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), h.mgit("", "rev-parse", asks+"^{tree}")))
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), tag(h.ledgerCommit(issue, rewrite, head))))
	p.gone = append(p.gone, h.post(issue, intentName(time.Now()), tag(asks)))
	p.merged = append(p.merged, "tagged ask")
	deeper := h.ledgerCommit(issue, adding(t, l, question(t, l, next(issue, l), forged+" deeper")), head)
	p.kept = append(p.kept, h.post(issue, "deeper/"+intentName(time.Now()), deeper))
	return p
}

// plantInTheWay: a ref where the intents' directory is, so that no intent
// can be created under it: the hosts' asks, their intents refused, are
// transactions, as on a remote whose rules refuse intents. Nothing agentx
// reads, so it is left alone.
func plantInTheWay(h *hostile, issue int) planted {
	head, _ := h.head(issue)
	ref := strings.TrimSuffix(intentRef(issue, "x"), "/x")
	h.mgit("", "push", "--quiet", "origin", head+":"+ref)
	return planted{kept: []string{ref}, noIntents: true}
}

// plantMark: the intents' mark (which a push on a host's copy leases)
// moved to a blob and a directory planted beside it: a push leasing it
// fails and its host looks, or leases the blob it fetched; every ask
// lands. The ref under the mark's name is not agentx's: left alone.
func plantMark(h *hostile, issue int) planted {
	mark := strings.TrimSuffix(intentRef(issue, "x"), "intent/x") + "mark"
	h.mgit("", "push", "--quiet", "--force", "origin", h.blob([]byte(forged))+":"+mark)
	beside := mark + "er/x"
	head, _ := h.head(issue)
	h.mgit("", "push", "--quiet", "origin", head+":"+beside)
	return planted{kept: []string{beside}}
}

// TestIntentsClockBehind: a host whose clock is 5 minutes behind asks on a
// busy issue with two others. Its intents are named for its clock, so to
// the others they look older than intentLife: they remove them unmerged,
// and it makes its change again as a transaction. Every ask lands, under
// dense ids; no other host merges an intent of it.
func TestIntentsClockBehind(t *testing.T) {
	t.Parallel()
	h := newHostile(t, 3)
	h.skew[2] = -5 * time.Minute
	const issue = 8
	acked, slowest := h.busy(issue)
	longest := h.rush(issue, 3, acked)
	t.Logf("longest ask: %v (%v with no intent about)", longest, slowest)
	assert.Less(t, longest, askLimit(slowest))
	h.check(issue, acked, planted{})
	for _, c := range strings.Split(git(t, h.bare, "log", "--format=%s%x00%b%x01", h.ref(issue)), "\x01") {
		subject, body, _ := strings.Cut(strings.TrimSpace(c), "\x00")
		if strings.Contains(subject, "(posted on host2)") {
			assert.Contains(t, body, "host: host2", "%s: merged by another host", subject)
		}
	}
	assert.Empty(t, queueLeft(t, h.bare), "no intent or waiter left")
	posted := 0
	for _, u := range h.updates() {
		if strings.Contains(u, "/intent/") && strings.HasSuffix(strings.Fields(u)[0], "-host2") && strings.Trim(strings.Fields(u)[1], "0") != "" {
			posted++
		}
	}
	assert.Positive(t, posted, "the host behind posted intents")
}

// updates are the ref updates the remote has taken, in order: the ref and
// its new object id (zeros: deleted).
func (h *hostile) updates() []string {
	data, err := os.ReadFile(filepath.Join(h.bare, "updates"))
	require.NoError(h.t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// TestIntentsDeleted: while the hosts ask on a busy issue, an attacker
// deletes every intent a moment (up to 300 ms) after it sees it, as a
// merge of it may be under way. A host whose intent is gone unmerged asks
// again as a transaction, and the merge under way fails on the intent's
// lease: every ask lands, once.
func TestIntentsDeleted(t *testing.T) {
	t.Parallel()
	h := newHostile(t, 3)
	const issue = 6
	acked, _ := h.busy(issue)
	stop := make(chan struct{})
	var deleted int
	var wg sync.WaitGroup
	wg.Go(func() { deleted = h.deleteIntents(issue, stop) })
	h.rush(issue, 3, acked)
	close(stop)
	wg.Wait()
	t.Logf("%d intents deleted", deleted)
	last := checkChain(t, h.chain(issue))
	seen := map[string]string{}
	for _, c := range last.Clarifications {
		if was, ok := seen[c.Topic]; ok {
			t.Errorf("%s asked twice: %s and %s", c.Topic, was, c.ID)
		}
		seen[c.Topic] = c.ID
	}
	h.checkRecords(issue, acked, nil)
	if t.Failed() {
		t.Log(git(t, h.bare, "log", "--format=%s / %b", h.ref(issue)))
		t.Log(strings.Join(h.updates(), "\n"))
	}
}

// deleteIntents deletes, on the remote, each intent on issue a moment
// after it first sees it, until stop; it returns how many it deleted.
func (h *hostile) deleteIntents(issue int, stop <-chan struct{}) int {
	deleted := 0
	due := map[string]time.Time{}
	for {
		select {
		case <-stop:
			return deleted
		case <-time.After(10 * time.Millisecond):
		}
		out, err := exec.Command("git", "-C", h.bare, "for-each-ref", "--format=%(refname)", fmt.Sprintf("refs/agentx/clarifications-queue/issue-%d/intent/", issue)).Output()
		if err != nil {
			continue
		}
		for _, ref := range strings.Fields(string(out)) {
			if _, ok := due[ref]; !ok {
				due[ref] = time.Now().Add(time.Duration(rand.IntN(300)) * time.Millisecond)
			}
			if time.Now().After(due[ref]) && exec.Command("git", "-C", h.bare, "update-ref", "-d", ref).Run() == nil {
				deleted++
			}
		}
	}
}
