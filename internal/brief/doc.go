// Package brief is what a question carries to its answerer, and the one
// card every surface shows it by.
//
// Gather collects, when a question is asked, the context it travels with:
// the files and lines the asker named (clarify ask --ref PATH[:LINES], the
// MCP tools' refs), the asked agent's upstream artifact (its workflow
// step's output, when the file exists), the text
// (.agentx/issues/N.md, written by agentx issue describe) and the commit
// the asker is on. It reads within a byte budget ([context] budget in
// config.toml), as excerpts around the lines named, and never reads a file
// outside the repository (nor through a link leading out of it), one the
// asker's step scope forbids, a binary file, or more than a size cap of
// any file: each refusal and each cut is a note of what was left out. The
// ledger records what was given (ledger.Context): paths, line ranges, the
// SHA-256 of each whole file as read, the commit, the notes.
//
// Build makes a question's Card from its record, the other
// records and the repository: the summary line, the question, its options
// (the asker's proposed default marked), the excerpts as recorded (read
// again, and shown only while the file is as it was), the decisions made
// on the issue before it was asked, and what was left out. Render writes
// a card in a Style: plain text for a terminal or a responder's stdin, and
// the styles the channels build from their own escaping (GitHub markdown,
// Slack mrkdwn), within a size limit, saying what it cut.
package brief
