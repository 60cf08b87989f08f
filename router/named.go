package router

import "github.com/agentx-cli/agentx/ledger"

// named is what every hub call that acts on a clarification a caller
// names by id does first (the CLI, the MCP tools and the desk alike): the
// store's Replicator may refuse such an id (ledger.IDChecker; remote mode:
// an id this host printed while the remote was out of reach, for a
// question since delivered under another id, which another host's question
// has now). The hub's own work (the monitor, a responder's answer) acts on
// the ids the ledger holds, and is never refused.
func (h *Hub) named(ids ...string) error {
	c, ok := h.Store.Replicator().(ledger.IDChecker)
	if !ok {
		return nil
	}
	for _, id := range ids {
		if err := c.CheckID(id); err != nil {
			return err
		}
	}
	return nil
}
