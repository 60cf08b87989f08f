// Package gen writes what the benchmarks measure agentx on: workspaces
// holding many issue ledgers, one long ledger, and event logs, in the files
// agentx itself writes (the ledger package's types and Encode, the router's
// Event), with the open index rebuilt as agentx would rebuild it.
package gen
