//go:build unix

package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// dist summarises durations in milliseconds.
type dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func summarize(ds []time.Duration) dist {
	s := slices.Clone(ds)
	slices.Sort(s)
	return dist{N: len(s), P50: ms(percentile(s, 50)), P90: ms(percentile(s, 90)), P99: ms(percentile(s, 99)), Max: ms(percentile(s, 100))}
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// durations: the smallest one at least p% of them do not exceed. It is 0
// when there are none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)) / 1000 }

// ratio is a/b rounded to two decimals, 0 when b is.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(a/b*100) / 100
}

// failure counts the processes that ended with one exit code.
type failure struct {
	Exit    int    `json:"exit_code"` // -1: killed (timed out or interrupted) or not started
	Count   int    `json:"count"`
	Example string `json:"example"` // what the first of them said on stderr
}

// tally counts the processes that did not exit 0, by exit code, ascending,
// each with the stderr of the first process that ended so.
func tally(ps []proc) []failure {
	out := []failure{} // [] in JSON when none failed
	for _, p := range ps {
		if p.Exit == 0 {
			continue
		}
		i := slices.IndexFunc(out, func(f failure) bool { return f.Exit == p.Exit })
		if i < 0 {
			out = append(out, failure{Exit: p.Exit, Example: p.Stderr})
			i = len(out) - 1
		}
		out[i].Count++
	}
	slices.SortFunc(out, func(a, b failure) int { return a.Exit - b.Exit })
	return out
}

// errorLine is what a process said on stderr, in one line: the code and
// message of an agentx JSON error, else the first line that is not blank,
// cut to 200 characters.
func errorLine(stderr []byte) string {
	for line := range strings.Lines(string(stderr)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var e struct {
			Error *struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Error != nil {
			line = e.Error.Code + ": " + e.Error.Message
		}
		return cut(line, 200)
	}
	return ""
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// writeCheck compares what the asks acknowledged with what the ledgers hold.
type writeCheck struct {
	Acked   int `json:"acked"`   // asks that exited 0 and printed an id
	NoID    int `json:"no_id"`   // asks that exited 0 without printing an id
	Records int `json:"records"` // records in the ledgers afterwards
	Lost    int `json:"lost"`    // acked asks without a record of their own
	Doubled int `json:"doubled"` // records beyond the first with the same id
	Unacked int `json:"unacked"` // records no acked ask printed (an ask failed after writing)
}

// OK says every acked ask has its record, exactly once.
func (w writeCheck) OK() bool { return w.Lost == 0 && w.Doubled == 0 && w.NoID == 0 }

// checkWrites compares the ids printed by asks that exited 0 (one entry per
// ask, "" when it printed none) with the ids of the records in the ledgers.
// Two acked asks that printed the same id share one record: one is lost.
func checkWrites(acked, records []string) writeCheck {
	claims := map[string]int{}
	w := writeCheck{Records: len(records)}
	for _, id := range acked {
		if id == "" {
			w.NoID++
			continue
		}
		w.Acked++
		claims[id]++
	}
	present := map[string]int{}
	for _, id := range records {
		present[id]++
	}
	for id, n := range claims {
		w.Lost += max(0, n-present[id])
	}
	for id, n := range present {
		w.Doubled += n - 1
		if claims[id] == 0 {
			w.Unacked++
		}
	}
	return w
}
