package slackmode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// ListenEvent is what the listener did, as it tells its caller.
type ListenEvent struct {
	What string      // "connected", "read", "pushed", "error"
	Read *PollReport // for "read"
	Push *PushReport // for "pushed"
	Err  error       // for "error": a failure it goes on after
}

// Listen runs Slack mode over Socket Mode until ctx ends or Slack refuses
// the app token: every time it connects it re-reads every open thread
// (Socket Mode drops the events sent while nobody was connected); a reply
// in a thread of the channel reads that thread alone, at once; and every
// tick (the interval, at least 10 s) it posts what changed and tells the
// threads of new assumptions, reading none. While it runs (it says so in
// inbound.json every tick, and unsays it when it returns), commands leave
// the threads to it. Every event is acknowledged. tell hears what it did.
func (m *Mode) Listen(ctx context.Context, appToken string, tell func(ListenEvent)) (err error) {
	defer func() { err = errors.Join(err, m.stopListening(context.WithoutCancel(ctx))) }()
	sm := m.Client.socket(appToken)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- sm.RunContext(ctx) }()
	read := func(which func(thread) bool) {
		rep, err := m.poll(ctx, pollHow{force: true, read: which, listener: true})
		if err != nil {
			tell(ListenEvent{What: "error", Err: err})
			return
		}
		tell(ListenEvent{What: "read", Read: &rep})
	}
	all := func(thread) bool { return true }
	none := func(thread) bool { return false }
	push := func() {
		rep, err := m.Push(ctx, false)
		if err != nil && !errors.Is(err, context.Canceled) {
			tell(ListenEvent{What: "error", Err: err})
		} else if slices.ContainsFunc(rep.Issues, func(ir IssueReport) bool { return ir.Posted+ir.Found > 0 }) {
			tell(ListenEvent{What: "pushed", Push: &rep})
		}
	}
	tick := time.NewTicker(m.listenTick())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-runErr:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case <-tick.C:
			push()
			read(none)
		case ev := <-sm.Events:
			switch ev.Type {
			case socketmode.EventTypeConnected:
				tell(ListenEvent{What: "connected"})
				push()
				read(all)
			case socketmode.EventTypeConnectionError:
				if ce, ok := ev.Data.(*slack.ConnectionErrorEvent); ok {
					tell(ListenEvent{What: "error", Err: fmt.Errorf("slack: Socket Mode: %w (retried)", ce.ErrorObj)})
				}
			case socketmode.EventTypeInvalidAuth:
				return errors.New("slack: Socket Mode refused the app token (SLACK_APP_TOKEN)")
			case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
				if ev.Request != nil {
					sm.Ack(*ev.Request)
				}
				if ts := m.replyEvent(ev); ts != "" {
					read(func(t thread) bool { return t.th.TS == ts })
				}
			}
		}
	}
}

// stopListening clears inbound.json's listener, so that commands read the
// threads again at once rather than three ticks later; not if another
// listener said it runs since this one last did.
func (m *Mode) stopListening(ctx context.Context) error {
	said := m.said.Load()
	ours := func(in Inbound) bool { return in.Listener != nil && in.Listener.UnixMilli() == said }
	f := m.file(InboundFile)
	var in Inbound
	if err := f.Read(&in); err != nil || !ours(in) {
		return err
	}
	var cur Inbound
	return f.Update(ctx, &cur, true, func() error {
		if ours(cur) {
			cur.Listener = nil
		}
		return nil
	})
}

// replyEvent is the thread's ts of a Socket Mode event that is a message
// in a thread of the configured channel that Take could act on, or "": a
// bot's message (agentx's own posts among them), an edit or another
// subtype reads no thread.
func (m *Mode) replyEvent(ev socketmode.Event) string {
	api, ok := ev.Data.(slackevents.EventsAPIEvent)
	if !ok {
		return ""
	}
	msg, ok := api.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || msg.Channel != m.Config.Channel {
		return ""
	}
	if !personal(msg.BotID != "", msg.SubType) {
		return ""
	}
	return msg.ThreadTimeStamp
}

// personal reports whether a message may be a person's reply Take acts
// on: not a bot's, and a plain message or a reply also sent to the
// channel (no edit, join or other subtype). The listener reads a thread
// for the replies Take could act on alone.
func personal(bot bool, subType string) bool {
	return !bot && (subType == "" || subType == "thread_broadcast")
}
