// Package mcpserver serves the hub to AI coding agents over the Model
// Context Protocol: clarify_ask, clarify_wait, clarify_answer and the rest,
// each a tool with a JSON input schema, a structured result and a short text
// rendering. Asking returns at once (ask-and-suspend) or waits a bounded
// time, so no tool call outlives a client's timeout; refusals come back as
// tool errors with the CLI's exit-code name, number and hint.
package mcpserver
