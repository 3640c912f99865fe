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
