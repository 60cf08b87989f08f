// Package osaccount checks, with the kernel's word rather than a claim,
// which OS account runs this process: the boundary between people and
// agents for teams that run their agents as other accounts ([humans]
// accounts). A name an agent can pass (--as, git config, $USER, an
// environment variable) proves nothing; the real uid of a process can be
// changed only by a process that already has the rights of that account
// (or root's).
package osaccount
