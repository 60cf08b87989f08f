// Package buildid names the build of agentx that is running, for the
// derived files it keeps (the workflow memo, the side monitor's quiet note,
// the ledger layout memos): a file written by another build is not trusted,
// so an upgrade whose checks or formats differ never acts on what an older
// build concluded.
package buildid
