package router

import (
	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/ledger"
)

// Source is where the hub's cards read their excerpts again: the
// repository, with the rules that bound them.
func (h *Hub) Source() brief.Source { return brief.Source{Root: h.Dir, Rules: h.Rules()} }

// Card is rec's decision card (brief.Build): the context its question
// came with, read again in the repository, and the decisions made on its
// issue before it was asked. An issue whose ledger cannot be read gives a
// card with no decisions.
func (h *Hub) Card(rec Record) *brief.Card {
	var all []*ledger.Clarification
	if l, err := h.Store.Read(rec.IssueNumber); err == nil {
		all = l.Clarifications
	}
	return brief.Build(h.Source(), rec.IssueNumber, rec.Clarification, all)
}
