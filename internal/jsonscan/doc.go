// Package jsonscan reads JSON written in one known form (compact, members
// in a fixed order, strings of plain ASCII) by matching its bytes, for the
// readers of long files agentx writes itself: index files and the event
// log. A Scanner never decides that a document is invalid: it only says
// whether the document is in the expected form, and the caller hands any
// other document to a real JSON decoder.
package jsonscan
