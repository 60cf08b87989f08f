package ledger

import "github.com/go-json-experiment/json/jsontext"

// Carried is v as the ledger keeps the data it carries for a channel
// (Extra.GitHub, Extra.Slack): compact, its strings and numbers as they
// were, and nil when v is empty (null, "", [] or {}), which is not
// written. The ledger checks only that it is JSON, when it reads it.
func Carried(v jsontext.Value) jsontext.Value {
	if len(v) == 0 {
		return nil
	}
	c := v.Clone()
	if err := c.Compact(); err != nil {
		return v // not JSON: left for the writer to refuse
	}
	switch string(c) {
	case "null", `""`, "[]", "{}":
		return nil
	}
	return c
}
