// Package testenv holds what the tests that start real processes share.
package testenv
