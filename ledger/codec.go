package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// The ledger codec. It is built on the JSON v2 engine
// (github.com/go-json-experiment/json, the module behind Go's
// encoding/json/v2) for three things encoding/json cannot give:
//
//   - Fields this version does not know (written by a newer agentx or by
//     another AgentX tool) are kept, on the ledger, on each record, on each
//     thread entry and in agentx's own additions, and written back as they
//     were: a rewrite never drops another tool's data.
//   - A write decodes only what it may change. Store.Update reads the
//     records whose status is final (resolved, abandoned) sealed: their
//     id, sender and status are read, the rest is kept as the bytes read
//     and written back unchanged unless Find opens the record. So an ask
//     costs about the same on an issue's 5,000th clarification as on its
//     10th.
//   - A record with a key twice (two "status" keys that two tools could
//     read differently) is corrupt, not last-one-wins.
//
// Every other JSON file of agentx uses encoding/json.

// unknown holds the members of a JSON object that the Go type has no
// field for, as read.
type unknown = jsontext.Value

// Types with the same fields and no codec functions, for the codec to
// decode and encode into without calling itself.
type (
	ledgerFields Ledger
	clarFields   Clarification
	entryFields  ThreadEntry
	extraFields  Extra
)

// wire is the JSON object of a *T: its fields, then the unknown members.
type wire[T any] struct {
	Fields  *T      `json:",embed"`
	Unknown unknown `json:",embed"`
}

var (
	// encodeOpts() writes what the AgentX tools write: two-space indent.
	// Members kept as read keep their escapes (\u00e9 stays \u00e9) and
	// number forms (1.50 stays 1.50). A Go string holding invalid UTF-8
	// (read from another tool's ledger) is written with U+FFFD in its
	// place, as encoding/json did; a record kept as read keeps its bytes.
	encodeOpts = sync.OnceValue(func() json.Options {
		return json.JoinOptions(
			jsontext.WithIndent("  "),
			jsontext.PreserveRawStrings(true),
			jsontext.AllowInvalidUTF8(true),
			json.WithMarshalers(json.JoinMarshalers(
				json.MarshalToFunc(func(enc *jsontext.Encoder, l *Ledger) error {
					return json.MarshalEncode(enc, &wire[ledgerFields]{(*ledgerFields)(l), l.more})
				}),
				json.MarshalToFunc(func(enc *jsontext.Encoder, c *Clarification) error {
					if c.sealed != nil {
						return enc.WriteValue(c.sealed)
					}
					if c.at != nil {
						b, err := c.at.bytes()
						if err != nil {
							return err
						}
						return enc.WriteValue(b)
					}
					var more unknown
					if c.more != nil {
						more = *c.more
					}
					return json.MarshalEncode(enc, &wire[clarFields]{(*clarFields)(c), more})
				}),
				json.MarshalToFunc(func(enc *jsontext.Encoder, e *ThreadEntry) error {
					return json.MarshalEncode(enc, &wire[entryFields]{(*entryFields)(e), e.more})
				}),
				json.MarshalToFunc(func(enc *jsontext.Encoder, x *Extra) error {
					return json.MarshalEncode(enc, &wire[extraFields]{(*extraFields)(x), x.more})
				}),
			)),
		)
	})
	// encodeOpts() and decodeOpts() are made on first use: a command that
	// never reads a ledger does not pay for them at start.
	//
	// decodeOpts() reads every record whole. Invalid UTF-8 inside a string
	// becomes U+FFFD, as encoding/json did, so a ledger another tool wrote
	// with a bad byte in a body is still read.
	decodeOpts = sync.OnceValue(func() json.Options { return decodeOptions(nil) })
)

// decodeOptions returns the options that decode a ledger, whole or, given
// the document being decoded (in), with the records whose status is final
// sealed. A sealed record's bytes are a slice of in, which the caller must
// not change.
func decodeOptions(in []byte) json.Options {
	seal := in != nil
	return json.JoinOptions(
		jsontext.AllowInvalidUTF8(true),
		json.WithUnmarshalers(json.JoinUnmarshalers(
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, l *Ledger) error {
				return decodeInto(from(dec), (*ledgerFields)(l), &l.more)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, c *Clarification) error {
				if !seal {
					return decodeClarification(from(dec), c)
				}
				raw, id, from, st, err := skim(dec, in)
				if err != nil {
					return err
				}
				if id != "" && from != "" && st.Final() {
					*c = Clarification{ID: id, From: from, Status: st, sealed: raw}
					return nil
				}
				return decodeClarification(func(w any) error { return json.Unmarshal(raw, w, dec.Options()) }, c)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, e *ThreadEntry) error {
				return decodeInto(from(dec), (*entryFields)(e), &e.more)
			}),
			json.UnmarshalFromFunc(func(dec *jsontext.Decoder, x *Extra) error {
				err := decodeInto(from(dec), (*extraFields)(x), &x.more)
				x.GitHub, x.Slack = Carried(x.GitHub), Carried(x.Slack)
				return err
			}),
		)),
	)
}

// from unmarshals the next value of dec.
func from(dec *jsontext.Decoder) func(any) error {
	return func(w any) error { return json.UnmarshalDecode(dec, w) }
}

// decodeInto decodes an object with unmarshal into fields, keeping the
// members fields has no field for in more.
func decodeInto[F any](unmarshal func(any) error, fields *F, more *unknown) error {
	w := wire[F]{Fields: fields}
	err := unmarshal(&w)
	*more = w.Unknown
	return err
}

// decodeClarification is decodeInto for a record, whose unknown members
// are kept behind a pointer (Clarification.more).
func decodeClarification(unmarshal func(any) error, c *Clarification) error {
	var more unknown
	err := decodeInto(unmarshal, (*clarFields)(c), &more)
	c.more = nil
	if more != nil {
		c.more = &more
	}
	return err
}

// skim reads the next record from dec, which decodes in, in one pass: its
// bytes (a window on in, not a copy), and its id, from and status when
// they are strings ("" otherwise). The rest of the record is only checked
// to be well-formed JSON, keys unique.
func skim(dec *jsontext.Decoder, in []byte) (raw []byte, id, from string, st Status, err error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, "", "", "", err
	}
	start := dec.InputOffset() - 1
	if tok.Kind() != '{' || start < 0 || start >= int64(len(in)) || in[start] != '{' {
		// not an object, or not where expected: let the whole decode say why
		return nil, "", "", "", &json.SemanticError{ByteOffset: dec.InputOffset(), JSONKind: tok.Kind(), Err: errors.New("a clarification record must be an object")}
	}
	for dec.PeekKind() == '"' {
		k, err := dec.ReadToken()
		if err != nil {
			return nil, "", "", "", err
		}
		var dst *string
		switch k.String() {
		case "id":
			dst = &id
		case "from":
			dst = &from
		case "status":
			dst = (*string)(&st)
		default:
			if err := dec.SkipValue(); err != nil {
				return nil, "", "", "", err
			}
			continue
		}
		if dec.PeekKind() != '"' {
			// not a string: left "", the whole decode reports it
			if err := dec.SkipValue(); err != nil {
				return nil, "", "", "", err
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil {
			return nil, "", "", "", err
		}
		*dst = v.String()
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return nil, "", "", "", err
	}
	end := dec.InputOffset()
	return in[start:end:end], id, from, st, nil
}

// Sealed reports whether c was read sealed: only its ID, From and Status
// are set, and it is written back as it was read.
func (c *Clarification) Sealed() bool { return c.sealed != nil || c.at != nil }

// stubIntact reports whether a sealed record still holds only what was
// read of it: a change made to a sealed record without Find would not be
// written.
func (c *Clarification) stubIntact() bool {
	if c.at != nil && c.Status != c.at.status {
		return false
	}
	return c.To == "" && c.Topic == "" && !c.Blocking && c.Round == 0 && c.MaxRounds == 0 &&
		c.Created.IsZero() && c.StaleAfter.IsZero() && c.ResolvedAt == nil && len(c.Thread) == 0 &&
		c.RecordType == "" && c.X == nil && c.more == nil
}

// unseal decodes a sealed record whole.
func (c *Clarification) unseal() error {
	raw := c.sealed
	if c.at != nil {
		b, err := c.at.bytes()
		if err != nil {
			return err
		}
		raw = b
	}
	if raw == nil {
		return nil
	}
	var whole Clarification
	if err := json.Unmarshal(raw, &whole, decodeOpts()); err != nil {
		return c.at.mismatch(err)
	}
	if c.at != nil && (whole.ID != c.ID || whole.From != c.From || whole.Status != c.at.status) {
		return c.at.mismatch(fmt.Errorf("the record there is %s from %s, %s", whole.ID, whole.From, whole.Status))
	}
	*c = whole
	return nil
}

// unmarshalLedger decodes ledger JSON, sealed or whole.
func unmarshalLedger(data []byte, l *Ledger, sealed bool) error {
	if sealed {
		return json.Unmarshal(data, l, decodeOptions(data))
	}
	return json.Unmarshal(data, l, decodeOpts())
}

// writeLedger writes a ledger's JSON to e: the object with an empty
// clarifications array, the records spliced into it, each indented as if
// encoded in place. A sealed record is copied as read, not re-encoded or
// reformatted: that is what keeps a write's cost independent of the
// closed records. A ledger read through its layout memo (l.src) has its
// unchanged stretches copied from the old file, separators, head and tail
// included when they are as agentx writes them. It returns where the first
// record starts and each record's length, for the new file's memo, and
// kept: how many of the first records are those of the memo l was read
// through, untouched and as long as they were (all of its records, or
// none), whose entries the new memo copies (encodeLayout).
func writeLedger(e *emitter, l *Ledger) (first int64, lens []int64, kept int, err error) {
	head, err := json.Marshal(&wire[ledgerHead]{&ledgerHead{IssueNumber: l.IssueNumber, Clarifications: emptyArray}, l.more}, encodeOpts())
	if err != nil {
		return 0, nil, 0, err
	}
	at := bytes.Index(head, emptyMember)
	if at < 0 {
		return 0, nil, 0, errors.New("ledger encoding: no clarifications member")
	}
	at += len(emptyMember) - len(emptyArray)
	src := l.src
	e.base = src
	recs := l.Clarifications
	prefix := append(append([]byte(nil), head[:at]...), openArray...)
	if len(recs) > 0 {
		prefix = append(prefix, firstRecord...)
	}
	e.spanIf(src, 0, prefix, src != nil && len(recs) > 0 && bytes.Equal(prefix, src.head))
	first = e.pos
	lens = make([]int64, len(recs))
	keep := keeping(l) // looked at in this pass, rather than in one of its own after it
	for i, c := range recs {
		if i > 0 {
			prev := recs[i-1].at
			e.spanIf(src, end(prev), nextRecord, prev != nil && c.at != nil && end(prev)+int64(len(nextRecord)) == c.at.off)
		}
		start := e.pos
		switch {
		case c.sealed != nil:
			e.write(c.sealed)
		case c.at != nil:
			e.span(c.at.src, c.at.off, c.at.n)
		default:
			b, err := json.Marshal(c, encodeOpts(), recordIndent)
			if err != nil {
				return 0, nil, 0, err
			}
			e.write(b)
		}
		lens[i] = e.pos - start
		keep.see(i, c, lens[i])
	}
	var suffix []byte
	if len(recs) > 0 {
		suffix = append(suffix, closeRecords...)
	}
	suffix = append(append(append(suffix, closeArray...), head[at+len(emptyArray):]...), newline...)
	last := (*extent)(nil)
	if len(recs) > 0 {
		last = recs[len(recs)-1].at
	}
	e.spanIf(src, end(last), suffix, last != nil && end(last) == src.lo.tail && bytes.Equal(suffix, src.tail))
	return first, lens, keep.kept(), e.finish()
}

// end is the offset just past a record read through a layout memo.
func end(x *extent) int64 {
	if x == nil {
		return -1
	}
	return x.off + x.n
}

// emitter is where writeLedger writes: bytes, and spans of the ledger file
// being replaced, which it copies without reading them into memory when it
// writes to a file. Adjacent spans are copied in one go.
type emitter struct {
	w   io.Writer
	dst *atomicfile.Target // w, when writing to a file; nil: spans are read and written through w
	pos int64              // bytes emitted so far
	err error

	pend   *source // a span not yet copied: of pend, n bytes at off
	off, n int64

	// same is how many of the first bytes emitted are base's at the same
	// offsets, copied in place: what the new file shares with the old
	base *source
	same int64
}

// toFile is an emitter writing to the file t.
func toFile(t *atomicfile.Target) *emitter {
	return &emitter{w: t, dst: t}
}

func (e *emitter) write(b []byte) {
	e.flushSpan()
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
	e.pos += int64(len(b))
}

// spanIf emits n bytes of src at off if same (the caller found them equal
// to b), else b.
func (e *emitter) spanIf(src *source, off int64, b []byte, same bool) {
	if same {
		e.span(src, off, int64(len(b)))
		return
	}
	e.write(b)
}

func (e *emitter) span(src *source, off, n int64) {
	if src == e.base && off == e.pos && e.same == e.pos {
		e.same += n
	}
	if e.pend == src && e.off+e.n == off {
		e.n += n
	} else {
		e.flushSpan()
		e.pend, e.off, e.n = src, off, n
	}
	e.pos += n
}

// flushSpan copies the pending span.
func (e *emitter) flushSpan() {
	src := e.pend
	if src == nil {
		return
	}
	e.pend = nil
	if e.err != nil {
		return
	}
	if e.dst != nil {
		e.err = e.dst.CopyFrom(src.f, e.off, e.n)
		return
	}
	b, err := (&extent{src: src, off: e.off, n: e.n}).bytes()
	if err == nil {
		_, err = e.w.Write(b)
	}
	e.err = err
}

// finish copies what is pending.
func (e *emitter) finish() error {
	e.flushSpan()
	return e.err
}

// ledgerHead is a ledger's members but its records.
type ledgerHead struct {
	IssueNumber    int            `json:"issueNumber"`
	Clarifications jsontext.Value `json:"clarifications"`
}

var (
	emptyArray   = jsontext.Value("[]")
	emptyMember  = []byte(`"clarifications": []`)
	recordIndent = jsontext.WithIndentPrefix("    ")

	openArray, closeArray   = []byte("["), []byte("]")
	firstRecord, nextRecord = []byte("\n    "), []byte(",\n    ")
	closeRecords, newline   = []byte("\n  "), []byte("\n")
)
