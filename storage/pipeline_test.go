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

// I13: a prompt entry (AppendOptions.Prompt, a transaction marker) queued
// beside a group in flight waits for that group, not for the interval,
// and shares its group with what was queued meanwhile: the group commit
// that takes it starts once none is in flight.
func TestPipelinedPromptWaitsForInFlight(t *testing.T) {
	r := newRecorder()
	p := &pipeRecorder{recorder: r, begun: make(chan struct{}, 16)}
	s := openReplicated(t, t.TempDir(), r, Options{Replicator: p, ReplicateDepth: 2, CommitInterval: time.Hour})
	if err := s.CreateLogs(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.hold = true })
	first, err := s.Write(1, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase})
	if err != nil {
		t.Fatal(err)
	}
	waitBegun(t, p)
	waitEntered(t, r) // the first group is in flight, held
	prompt, err := s.Write(2, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase, Prompt: true})
	if err != nil {
		t.Fatal(err)
	}
	// A prompt group started beside the held one would begin within this
	// (the committer only had to wake); a slow machine can only hide a
	// break here, never fail the rule.
	select {
	case <-p.begun:
		t.Fatal("the prompt entry's group started beside the group in flight")
	case <-time.After(2 * time.Second):
	}
	later, err := s.Write(3, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase})
	if err != nil {
		t.Fatal(err)
	}
	r.set(func(r *recorder) { r.hold = false })
	r.release <- struct{}{}
	for _, q := range []*Pending{first, prompt, later} {
		waitPending(t, q) // an hour's interval: answered only if the prompt group started once the first ended
	}
	calls, _ := r.snapshot()
	if len(calls) != 2 || len(calls[1]) != 2 {
		sizes := []int{}
		for _, c := range calls {
			sizes = append(sizes, len(c))
		}
		t.Fatalf("Replicate calls of %v entries, want [1 2]: the prompt entry started beside the group in flight", sizes)
	}
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
