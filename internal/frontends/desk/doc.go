// Package desk is a local web page for a person: the todo queue, live,
// with each item's whole thread and the controls that settle it (an
// answer box, options as buttons, decisions, approvals). It serves
// 127.0.0.1 only, to a browser that holds the secret token made for the
// run; every action goes through the hub, as the command line's does.
//
// The page is server-rendered (html/template) with one small script
// (go:embed) that follows the queue through server-sent events fed by the
// event log. It fetches nothing from the network, and a strict
// Content-Security-Policy allows only its own script and style.
package desk
