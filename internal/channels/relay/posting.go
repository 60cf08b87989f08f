package relay

import (
	"context"
	"slices"
)

// PostingFile is the file, in a mode's state directory, of the posts it
// has begun and not seen recorded.
const PostingFile = "posting.json"

// Begun is one post a mode began: the message for Key (a clarification's
// thread entry, a proposal's entry...) on Issue.
type Begun struct {
	Issue int    `json:"issue"`
	Key   string `json:"key"`
}

// posting is the file's content.
type posting struct {
	Begun []Begun `json:"begun,omitempty"`
}

// Posting is what a mode knows of its posts in flight, so that it lists
// what it posted on a service only to recover a post whose result was
// lost. Before each post the mode notes it (Begin); once the post is
// recorded where the mode keeps what it posted (the ledger,
// proposals.json), or the service refused it (Poster.Post), the note
// goes (Done). A note still there for a post
// the record lacks is a post that may have been made: its process died,
// or the answer never came. Only then does the mode look for it (Lost).
// Without a note, an unrecorded post was never made, and is made without
// a listing first.
//
// The file is local, like every relay.File: it is this host's posts, and
// in remote mode each host posts the changes it made. Losing it (deleted,
// or the machine crashing before it reached the disk) between a post and
// its record can cost one message posted twice.
type Posting struct {
	File File
}

// PostingIn is the posting file of a mode (dir: .agentx/state).
func PostingIn(dir, mode string) Posting {
	return Posting{File: FileIn(dir, mode, PostingFile)}
}

// Begin notes that the post for key on issue is about to be made.
func (p Posting) Begin(ctx context.Context, issue int, key string) error {
	var f posting
	return p.File.Update(ctx, &f, true, func() error {
		b := Begun{Issue: issue, Key: key}
		if !slices.Contains(f.Begun, b) {
			f.Begun = append(f.Begun, b)
		}
		return nil
	})
}

// Done drops the notes of keys on issue (recorded, or found), with one
// write, none when there is no such note.
func (p Posting) Done(ctx context.Context, issue int, keys ...string) error {
	var cur posting
	if err := p.File.Read(&cur); err != nil || !slices.ContainsFunc(cur.Begun, func(b Begun) bool { return b.Issue == issue && slices.Contains(keys, b.Key) }) {
		return err
	}
	var f posting
	return p.File.Update(ctx, &f, true, func() error {
		f.Begun = slices.DeleteFunc(f.Begun, func(b Begun) bool { return b.Issue == issue && slices.Contains(keys, b.Key) })
		return nil
	})
}

// Lost are the keys noted on issue: posts begun whose result was not seen
// recorded. The caller looks for those its record lacks.
func (p Posting) Lost(issue int) (map[string]bool, error) {
	var f posting
	if err := p.File.Read(&f); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, b := range f.Begun {
		if b.Issue == issue {
			out[b.Key] = true
		}
	}
	return out, nil
}

// Poster is one sync's use of the notes of one issue: which posts were
// begun and not seen recorded (Lost), noting each post before it is made
// (Begin), and dropping the notes of what is recorded (Recorded) at the
// end (Finish).
type Poster struct {
	notes Posting
	issue int
	lost  map[string]bool
	done  []string
}

// For is a Poster for issue's posts.
func (p Posting) For(issue int) (*Poster, error) {
	lost, err := p.Lost(issue)
	if err != nil {
		return nil, err
	}
	return &Poster{notes: p, issue: issue, lost: lost}, nil
}

// Lost reports whether the post for key was begun and not seen recorded:
// only then is the service asked what was posted.
func (p *Poster) Lost(key string) bool { return p.lost[key] }

// Begin notes the post for key before it is made.
func (p *Poster) Begin(ctx context.Context, key string) error {
	if err := p.notes.Begin(ctx, p.issue, key); err != nil {
		return err
	}
	p.lost[key] = true
	return nil
}

// Recorded says the post for key is in the record (posted and recorded,
// found, or seen recorded): its note, if any, goes at Finish.
func (p *Poster) Recorded(key string) {
	if p.lost[key] {
		p.done = append(p.done, key)
		delete(p.lost, key)
	}
}

// Post makes the post for key (post), noted first (Begin). One the
// service refused (refused(err): the service answered, and posted
// nothing) is as good as recorded: its note goes at Finish too, and the
// next sync posts it without looking for it first.
func (p *Poster) Post(ctx context.Context, key string, post func() error, refused func(error) bool) error {
	if err := p.Begin(ctx, key); err != nil {
		return err
	}
	err := post()
	if err != nil && refused(err) {
		p.Recorded(key)
	}
	return err
}

// Finish drops the notes of what was recorded.
func (p *Poster) Finish(ctx context.Context) error {
	if len(p.done) == 0 {
		return nil
	}
	return p.notes.Done(ctx, p.issue, p.done...)
}
