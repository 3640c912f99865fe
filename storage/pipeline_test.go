package storage

import (
	"errors"
	"testing"
	"time"
)

// pipeRecorder is a recorder that is also a Pipeliner: BeginReplicate
// reports each group on begun and returns a wait that is the recorder's
// Replicate (held like it while hold is set).
type pipeRecorder struct {
	*recorder
	begun chan struct{}
}

func (p *pipeRecorder) BeginReplicate(es []Replicated) func() map[LogID]error {
	p.begun <- struct{}{}
	return func() map[LogID]error { return p.Replicate(es) }
}

// waitBegun waits for a group to be handed to BeginReplicate.
func waitBegun(t *testing.T, p *pipeRecorder) {
	t.Helper()
	select {
	case <-p.begun:
	case <-time.After(30 * time.Second):
		t.Fatal("BeginReplicate was not called")
	}
}

// I14: with a Pipeliner and a depth of 2, a group is handed over while
// the one before it is still in flight; when the earlier one fails a
// log, the later one's entries of that log are not acknowledged even
// though their own replication succeeded (no entry after a failed one,
// D2, D3).
func TestPipelinedGroupAfterFailureNotAcknowledged(t *testing.T) {
	r := newRecorder()
	p := &pipeRecorder{recorder: r, begun: make(chan struct{}, 16)}
	s := openReplicated(t, t.TempDir(), r, Options{Replicator: p, ReplicateDepth: 2})
	if err := s.CreateLogs(1); err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.hold = true })
	type result struct {
		id  LogID
		err error
	}
	results := make(chan result, 4)
	appendAsync := func(id LogID, off Offset) {
		go func() {
			_, err := s.Append(id, 1, payloadFor(off, 64), AppendOptions{Stamp: stampBase})
			results <- result{id, err}
		}()
	}
	appendAsync(1, 0)
	waitBegun(t, p)
	waitEntered(t, r) // the first group's outcome is held
	appendAsync(1, 1)
	waitBegun(t, p) // the second group is in flight beside the first
	refused := errors.New("refused")
	r.set(func(r *recorder) { r.fail[1] = refused })
	r.release <- struct{}{}
	waitEntered(t, r) // the second group's outcome: log 1 accepted this time
	r.set(func(r *recorder) { delete(r.fail, 1); r.hold = false })
	r.release <- struct{}{}
	got := map[LogID][]error{}
	for range 2 {
		select {
		case res := <-results:
			got[res.id] = append(got[res.id], res.err)
		case <-time.After(30 * time.Second):
			t.Fatal("appends did not return")
		}
	}
	for _, err := range got[1] {
		if !errors.Is(err, ErrFailed) || !errors.Is(err, refused) {
			t.Fatalf("log 1 entries: %v, want each failed with the first group's refusal", got[1])
		}
	}
	if end := s.publishedEnd(1); end != 0 {
		t.Fatalf("log 1 durable end %v after its first group failed", end)
	}
}

// I13, pipelined: a group commit with no group in flight before it
// starts at once, however recently the last one started; the interval
// paces only a group that would run beside another.
func TestPipelinedIdleStartsAtOnce(t *testing.T) {
	r := newRecorder()
	p := &pipeRecorder{recorder: r, begun: make(chan struct{}, 16)}
	s := openReplicated(t, t.TempDir(), r, Options{Replicator: p, ReplicateDepth: 2, CommitInterval: time.Hour})
	if err := s.CreateLogs(1); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		done := make(chan error, 1)
		go func() {
			_, err := s.Append(1, 1, payloadFor(Offset(i), 64), AppendOptions{Stamp: stampBase})
			done <- err
		}()
		waitBegun(t, p)
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("append %d, with no group in flight, waited for the commit interval", i)
		}
	}
}

// I13, pipelined: while a group is in flight the next one waits for the
// interval (or for the group to finish), so what is written meanwhile
// shares one group commit.
func TestPipelinedPacedWhileInFlight(t *testing.T) {
	r := newRecorder()
	p := &pipeRecorder{recorder: r, begun: make(chan struct{}, 16)}
	s := openReplicated(t, t.TempDir(), r, Options{Replicator: p, ReplicateDepth: 2, CommitInterval: time.Hour})
	if err := s.CreateLogs(1, 2, 3, 4); err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.hold = true })
	first, err := s.Write(1, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase})
	if err != nil {
		t.Fatal(err)
	}
	waitBegun(t, p)
	waitEntered(t, r) // the first group is in flight, held
	var later []*Pending
	for id := LogID(2); id <= 4; id++ {
		q, err := s.Write(id, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase})
		if err != nil {
			t.Fatal(err)
		}
		later = append(later, q)
	}
	r.set(func(r *recorder) { r.hold = false })
	r.release <- struct{}{}
	for _, q := range append([]*Pending{first}, later...) {
		waitPending(t, q)
	}
	calls, _ := r.snapshot()
	if len(calls) != 2 || len(calls[1]) != 3 {
		sizes := []int{}
		for _, c := range calls {
			sizes = append(sizes, len(c))
		}
		t.Fatalf("Replicate calls of %v entries, want [1 3]: the writes beside a group in flight share the next", sizes)
	}
}

// I13: a prompt entry (AppendOptions.Prompt, a transaction marker) does
// not wait out the interval, even beside a group in flight.
func TestPipelinedPromptStartsAtOnce(t *testing.T) {
	r := newRecorder()
	p := &pipeRecorder{recorder: r, begun: make(chan struct{}, 16)}
	s := openReplicated(t, t.TempDir(), r, Options{Replicator: p, ReplicateDepth: 2, CommitInterval: time.Hour})
	if err := s.CreateLogs(1, 2); err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.hold = true })
	first, err := s.Write(1, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase})
	if err != nil {
		t.Fatal(err)
	}
	waitBegun(t, p)
	waitEntered(t, r) // the first group is in flight, held
	q, err := s.Write(2, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase, Prompt: true})
	if err != nil {
		t.Fatal(err)
	}
	waitBegun(t, p) // the prompt entry's group, beside the first
	r.set(func(r *recorder) { r.hold = false })
	r.release <- struct{}{}
	waitPending(t, first)
	waitPending(t, q)
}

// waitPending waits for p's answer, which must be nil, with a deadline.
func waitPending(t *testing.T, p *Pending) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("an entry was not answered")
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
}
