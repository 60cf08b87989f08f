// Package relay is what agentx's outside modes (GitHub mode, Slack mode)
// share: a small JSON state file written under its lock, an outbox of the
// issues whose mirror is behind, fed by the event log and retried with
// backoff (a rate limit holds every call until it lifts), an interval
// throttle for reading what people wrote, and the side effect a command
// that runs the monitor gives each mode: read before the monitor, send
// after it, within the mode's timeout, a failure a warning and never the
// command's; the notes of posts in flight (Posting), so that a mode asks
// its service what it posted only to recover a post whose result was lost;
// and how a person's reply picks a numbered option (PickReply), the same
// in every mode. Nothing runs in the background.
package relay
