// Package trust decides whether this machine may run the commands a
// workspace's files name: the [agents.NAME] responders and resume commands
// and the [notify] command of .agentx/config.toml, and the
// [[steps.evaluate]] checks of .agentx/workflows/*.toml. Those files come
// with the repository, so a clone would otherwise run whatever its author
// wrote.
//
// A person trusts the set of commands a workspace names, on one machine:
// Commands lists them, Hash names the set, and a Store keeps, in the user's
// own configuration directory (never in the repository), the hash trusted
// for each workspace by its absolute path, as direnv and mise do. A set that
// changed needs trust again. AGENTX_TRUST, a list of hashes in the
// environment, trusts the sets it names without a record: CI pins the
// commands of its base branch that way.
//
// A Gate answers, for one command about to run, whether it may: it works
// out the hash only then, so commands that run nothing pay nothing, and it
// says once per command what was not run and how to trust it.
package trust
