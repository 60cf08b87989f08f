package desk

import (
	"context"
	"flag"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

var screenshot = flag.String("screenshot", "", "write a screenshot of the desk to this PNG file (docs/desk.png)")

// chromiumPath is Debian's chromium, which CI installs (.ci/run).
const chromiumPath = "/usr/bin/chromium"

// browser starts headless Chromium for the test, or skips when it is
// absent outside CI (in CI its absence fails the test).
func browser(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: CI installs Debian's chromium (.ci/run)", chromiumPath)
		}
		t.Skipf("%s is missing: the desk's browser tests need Debian's chromium (apt-get install chromium)", chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.WindowSize(1100, 1000),
		chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	require.NoError(t, chromedp.Do(ctx)) // start it, with no time limit: a limit here would stop the browser
	return ctx
}

// in runs steps with a time limit, failing the test on an error.
func in(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// value runs one action with a time limit and returns its value.
func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err)
	return v
}

func TestDeskInBrowser(t *testing.T) {
	start := time.Now()
	type build struct {
		path string
		err  error
	}
	built := make(chan build, 1)
	go func() { p, err := testenv.BuildAgentx(); built <- build{p, err} }() // while the browser starts
	ctx := browser(t)
	t.Logf("browser started in %s", time.Since(start).Round(time.Millisecond))
	f := newFixture(t)
	b := <-built
	require.NoError(t, b.err)
	bin := b.path
	t.Logf("agentx built in %s", time.Since(start).Round(time.Millisecond))
	run := func(t *testing.T, steps ...chromedp.Action[chromedp.Void]) { t.Helper(); in(t, ctx, steps...) }
	text := func(t *testing.T, sel string) string {
		t.Helper()
		return value(t, ctx, chromedp.Text(chromedp.CSS(sel)))
	}
	// flashSays waits for the page the action returns: the page before it
	// may still show the previous action's flash while the POST is on its way.
	flashSays := func(t *testing.T, want string) {
		t.Helper()
		var got string
		require.Eventually(t, func() bool {
			c, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			got, _ = chromedp.Run(c, chromedp.Text(chromedp.CSS("#flash")))
			return strings.Contains(got, want)
		}, 15*time.Second, 50*time.Millisecond, "the flash says %q, want %q", got, want)
	}

	t.Run("the page opens with the token, live, agent text shown as text", func(t *testing.T) {
		run(t, chromedp.Navigate(f.s.URL()), chromedp.WaitVisible(chromedp.CSS("#item-CLR-4-001")))
		url, title := value(t, ctx, chromedp.Location()), value(t, ctx, chromedp.Title())
		assert.NotContains(t, url, f.s.Token(), "the token leaves the address bar")
		assert.Equal(t, "agentx desk", title, "the hostile topic ran nothing")
		assert.Equal(t, `<script>document.title="pwned"</script>`, text(t, "#item-CLR-3-001 .topic"))
		assert.Contains(t, text(t, "#item-CLR-3-001 .text"), `<img src=x onerror="document.title='pwned'">`)
		assert.Zero(t, value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#queue img, #queue script").length`)))
		run(t, chromedp.WaitVisible(chromedp.CSS("#live.on")))
		if *screenshot != "" {
			png := value(t, ctx, chromedp.CaptureScreenshot())
			require.NoError(t, os.WriteFile(*screenshot, png, 0o644))
		}
	})

	t.Run("a question's decision card shows what it came with, as text", func(t *testing.T) {
		card := text(t, "#item-CLR-5-002 section.card pre")
		for _, s := range []string{
			"Decision card: engineer asks human on issue #5 · topic: TTL",
			"1. Per key (default) [default: engineer's proposal]",
			"2 | TTL: five minutes, per key.",
			`3 | <script>document.title="pwned"</script>`,
			"Decisions so far on issue #5 (newest first):",
			"../outside.txt: outside the repository: not read",
		} {
			assert.Contains(t, card, s)
		}
		assert.Equal(t, "Decision card", text(t, "#item-CLR-5-002 section.card h3"))
		assert.Equal(t, "agentx desk", value(t, ctx, chromedp.Title()), "the file's script ran nothing")
		assert.Zero(t, value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#item-CLR-4-001 section.card").length`)), "nothing more to show: no card")
	})

	t.Run("answer a question in the box", func(t *testing.T) {
		run(t,
			chromedp.SendKeys(chromedp.CSS("#body-CLR-4-001"), "Five minutes."),
			chromedp.Click(chromedp.CSS("#item-CLR-4-001 button.primary")))
		flashSays(t, "Answered CLR-4-001.")
		rec, err := f.hub.Get("CLR-4-001")
		require.NoError(t, err)
		last := len(rec.Thread) - 1
		assert.Equal(t, ledger.Answered, rec.Status)
		assert.Equal(t, "Five minutes.", rec.Thread[last].Body)
		assert.Equal(t, "desk:dana", rec.PersonAt(last))
		run(t, chromedp.WaitNotPresent(chromedp.CSS("#item-CLR-4-001")))
	})

	t.Run("pick an option on an escalation, with a summary", func(t *testing.T) {
		// Enter in the summary box picks no option: nothing is sent
		run(t, chromedp.SendKeys(chromedp.CSS("#summary-CLR-2-001"), "Multi-tenant from day one.\r"))
		time.Sleep(300 * time.Millisecond)
		rec, err := f.hub.Get("CLR-2-001")
		require.NoError(t, err)
		assert.Equal(t, ledger.Escalated, rec.Status, "Enter in the summary box resolved it")
		run(t, chromedp.Click(chromedp.CSS(`#item-CLR-2-001 button[name=option][value="2"]`)))
		flashSays(t, "Resolved CLR-2-001 with option 2.")
		rec, err = f.hub.Get("CLR-2-001")
		require.NoError(t, err)
		last := len(rec.Thread) - 1
		assert.Equal(t, ledger.Resolved, rec.Status)
		assert.Contains(t, rec.Thread[last].Body, "Decision: accept architect's proposal:\nEnterprise customers need isolation: schema per tenant from day one.")
		assert.Equal(t, "Accept architect's proposal.", rec.ChoiceAt(last).Text)
		require.NotNil(t, rec.X)
		assert.Equal(t, "Multi-tenant from day one.", rec.X.Summary)
	})

	t.Run("approve a proposal from the keyboard", func(t *testing.T) {
		// focus the note, Tab to Approve, Enter
		run(t,
			chromedp.Focus(chromedp.CSS("#body-PROP-001")),
			chromedp.KeyEvent("\t"),
			chromedp.KeyEvent("\r"))
		flashSays(t, "Approved PROP-001.")
		b, err := proposal.Read(f.hub.Store)
		require.NoError(t, err)
		assert.Equal(t, proposal.Approved, b.Find("PROP-001").Status)
		assert.Equal(t, "human:desk:dana", b.Find("PROP-001").ResolvedBy)
	})

	t.Run("an answer from the command line removes the item at once", func(t *testing.T) {
		run(t, chromedp.Navigate(f.base+"/"), chromedp.WaitVisible(chromedp.CSS("#item-CLR-1-001")), chromedp.WaitVisible(chromedp.CSS("#live.on")))
		cmd := exec.Command(bin, "clarify", "answer", "CLR-1-001", "--as", "erin", "--option", "1")
		cmd.Env = append(cleanEnv(), "AGENTX_ROOT="+f.root, "AGENTX_NO_MONITOR=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		start := time.Now()
		run(t, chromedp.WaitNotPresent(chromedp.CSS("#item-CLR-1-001")))
		t.Logf("the item left the page %s after the command ended", time.Since(start).Round(time.Millisecond))
		assert.Contains(t, text(t, "#notices"), "CLR-1-001 answered by erin.")
	})

	t.Run("keep a reused decision with its button", func(t *testing.T) {
		bg := context.Background()
		first, err := f.hub.Ask(bg, router.AskRequest{Issue: 20, From: "engineer", To: "architect", Topic: "Queue", Question: "Kafka or SQS?", NonBlocking: true})
		require.NoError(t, err)
		_, err = f.hub.Answer(bg, first.ID, "architect", "SQS.")
		require.NoError(t, err)
		_, err = f.hub.Resolve(bg, first.ID, "engineer", "")
		require.NoError(t, err)
		again, err := f.hub.Ask(bg, router.AskRequest{Issue: 21, From: "engineer", To: "architect", Topic: "Queue", Question: "Kafka or SQS here?", NonBlocking: true})
		require.NoError(t, err)
		require.Len(t, again.DecidedBefore, 1)
		_, err = f.hub.Reuse(bg, again.ID, "engineer", first.ID, "")
		require.NoError(t, err)

		run(t, chromedp.Navigate(f.base+"/"), chromedp.WaitVisible(chromedp.CSS("#item-CLR-21-001")))
		assert.Equal(t, "REUSED DECISION", text(t, "#item-CLR-21-001 .kind"), "the label, in the page's capitals")
		assert.Contains(t, text(t, "#item-CLR-21-001 .reuse"), "engineer proceeds on the decision of CLR-20-001: Resolved with the answer: SQS.")
		run(t, chromedp.Click(chromedp.CSS("#item-CLR-21-001 form.keep button")))
		flashSays(t, "Answered CLR-21-001.")
		rec, err := f.hub.Get("CLR-21-001")
		require.NoError(t, err)
		last := len(rec.Thread) - 1
		assert.Equal(t, "Keep the decision of CLR-20-001.", rec.Thread[last].Body)
		assert.Equal(t, "desk:dana", rec.PersonAt(last))
		run(t, chromedp.WaitNotPresent(chromedp.CSS("#item-CLR-21-001")))
	})

	t.Run("a forged cross-site post is refused", func(t *testing.T) {
		evil := evilSite(t, f)
		run(t, chromedp.Navigate(evil))
		// the evil page submits itself to the desk from its script
		var body string
		require.Eventually(t, func() bool {
			body, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			return strings.Contains(body, "refused")
		}, 10*time.Second, 100*time.Millisecond, "page: %s", body)
		assert.Contains(t, body, "this action comes from another page")
		rec, err := f.hub.Get("CLR-3-001")
		require.NoError(t, err)
		assert.Equal(t, ledger.Pending, rec.Status, "nothing recorded")
	})

	t.Run("a request without the token is refused", func(t *testing.T) {
		_, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{})
		require.NoError(t, err)
		run(t, chromedp.Navigate(f.base+"/"))
		body := value(t, ctx, chromedp.Evaluate[string](`document.body.innerText`))
		assert.Contains(t, body, "needs the address agentx desk printed")
		assert.NotContains(t, body, "CLR-3-001")
	})
}

// evilSite serves, on another port of 127.0.0.1 (the same site, another
// origin), a page whose script posts an answer to the desk, with the
// desk's token as if it had leaked: only the origin checks stop it.
func evilSite(t *testing.T, f *fixture) string {
	t.Helper()
	page := fmt.Sprintf(`<!doctype html><html><body><form id="f" method="post" action="%s/act">
<input name="token" value="%s"><input name="id" value="CLR-3-001"><input name="verb" value="answer"><input name="body" value="forged">
</form><script src="/evil.js"></script></body></html>`, f.base, html.EscapeString(f.s.Token()))
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/evil.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `document.getElementById("f").submit();`)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// cleanEnv is the test's environment without AGENTX_ variables: a
// person's shell.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTX_") {
			env = append(env, kv)
		}
	}
	return env
}
