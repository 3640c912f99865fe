package storage

import (
	"testing"
	"time"
)

// I13, pipelined: with no group in flight and commits far shorter than
// the interval, the next group starts twice the latest commit's time
// after the last start, not the interval after it: three appends one
// after another, each waiting for its acknowledgement, are not held for
// an hour's interval.
func TestPipelinedFastCommitsStartSoon(t *testing.T) {
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
			t.Fatalf("append %d, with no group in flight and commits of milliseconds, waited for the commit interval", i)
		}
	}
}

// I13, pipelined: while a group is in flight the next one waits for the
// interval or for that group to finish, so what is written meanwhile
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
	later := []*Pending{first}
	for id := LogID(2); id <= 4; id++ {
		q, err := s.Write(id, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase})
		if err != nil {
			t.Fatal(err)
		}
		later = append(later, q)
	}
	r.set(func(r *recorder) { r.hold = false })
	r.release <- struct{}{}
	for _, q := range later {
		waitPendingDone(t, q)
	}
	calls, _ := r.snapshot()
	if len(calls) != 2 || len(calls[1]) != 3 {
		var sizes []int
		for _, c := range calls {
			sizes = append(sizes, len(c))
		}
		t.Fatalf("Replicate calls of %v entries, want [1 3]: the writes beside a group in flight share the next", sizes)
	}
}

// I13, pipelined: once the latest commit took half the interval or more,
// the interval paces the next start even with no group in flight.
func TestPipelinedSlowCommitPaced(t *testing.T) {
	r := newRecorder()
	p := &pipeRecorder{recorder: r, begun: make(chan struct{}, 16)}
	s := openReplicated(t, t.TempDir(), r, Options{Replicator: p, ReplicateDepth: 2, CommitInterval: time.Hour})
	if err := s.CreateLogs(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(1, 1, payloadFor(0, 64), AppendOptions{Stamp: stampBase}); err != nil {
		t.Fatal(err)
	}
	// Every group begun so far finished (the finisher frees a group's
	// slot after acknowledging it), then as if the latest had taken half
	// the interval.
	deadline := time.Now().Add(30 * time.Second)
	for len(s.c.slots) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("groups still in flight after the append's acknowledgement")
		}
		time.Sleep(time.Millisecond)
	}
	for len(p.begun) > 0 {
		<-p.begun
	}
	s.c.took.Store(int64(time.Hour / 2))
	q, err := s.Write(1, 1, payloadFor(1, 64), AppendOptions{Stamp: stampBase})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.begun:
		t.Fatal("a group started before the interval after a commit of half the interval")
	case <-q.done:
		t.Fatal("an entry was acknowledged before the interval after a commit of half the interval")
	case <-time.After(time.Second):
	}
}

// waitPendingDone waits for q's acknowledgement and fails on its error.
func waitPendingDone(t *testing.T, q *Pending) {
	t.Helper()
	select {
	case <-q.done:
		if q.err != nil {
			t.Fatal(q.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("entry not acknowledged")
	}
}
