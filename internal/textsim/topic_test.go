package textsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTopicWords(t *testing.T) {
	tests := []struct {
		topic string
		want  []string
	}{
		{"Database adapter", []string{"database", "adapter"}},
		{"Which DB for the adapter?", []string{"adapter"}},
		{"cache-TTL / cache size", []string{"cache", "ttl", "size"}},
		{"UI: a to z", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, TopicWords(tt.topic), tt.topic)
	}
}

func TestTopicKey(t *testing.T) {
	tests := []struct{ a, b string }{
		{"Database adapter", "database-adapter?"},
		{"Database adapter", "The  DATABASE adapter"},
		{"UI", " ui "},
		{"cache TTL", "cache, TTL!"},
	}
	for _, tt := range tests {
		assert.Equal(t, TopicKey(tt.a), TopicKey(tt.b), "%q and %q are one topic", tt.a, tt.b)
	}
	assert.NotEqual(t, TopicKey("Database adapter"), TopicKey("Database pooling"))
	assert.NotEqual(t, TopicKey("adapter database"), TopicKey("database adapter"), "word order is kept")
}
