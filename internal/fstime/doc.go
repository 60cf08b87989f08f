// Package fstime says when a time a file system gave a change can be
// trusted to tell that change from the next one. The derived files agentx
// keeps vouch for other files by their times (the workflow memo, the side
// monitor's quiet note and digest, remote mode's kept git settings): a
// file system's clock moves in steps, and a file changed twice within one
// step keeps the time it had, so a file is only vouched for once its
// change has settled.
package fstime
