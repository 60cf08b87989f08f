package textsim

import (
	"slices"
	"strings"
	"unicode"
)

// topicStop: these words are left out of a topic's words.
func topicStop(w string) bool {
	switch w {
	case "the", "and", "for", "with", "what", "which", "how", "should", "from", "into", "this", "that", "are", "not", "use":
		return true
	}
	return false
}

// TopicWords normalises a topic into the words it is counted and grouped
// by (clarify stats, decision memory): lowercase letters and digits, at
// least three long, no common words, each once, in order.
func TopicWords(topic string) []string {
	fields := strings.FieldsFunc(strings.ToLower(topic), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var out []string
	for _, f := range fields {
		if len([]rune(f)) >= 3 && !topicStop(f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// TopicKey is what topics are grouped by: their words (TopicWords) in
// order, so "Database adapter", "database-adapter" and "The database
// adapter?" are one topic; a topic with no such word is its own text,
// lowercased, its spaces collapsed. A key holds no tab or line break.
func TopicKey(topic string) string { return TopicKeyOf(topic, TopicWords(topic)) }

// TopicKeyOf is TopicKey of topic, whose TopicWords are words.
func TopicKeyOf(topic string, words []string) string {
	if len(words) > 0 {
		return strings.Join(words, " ")
	}
	return strings.ToLower(strings.Join(strings.Fields(topic), " "))
}
