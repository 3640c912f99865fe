package resolver

import "testing"

// A Waiter over many partitions is woken by a durable append to any of
// them, reports which fired, stops firing once closed, and fires when a
// watched topic is deleted.
func TestWaiterManyPartitions(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("a", 3, nil)
	g.create("b", 1, nil)
	w := g.r.NewWaiter()
	for p := range int32(3) {
		if err := g.r.WatchWith(w, "a", p); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.r.WatchWith(w, "b", 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
		t.Fatal("woken before any append")
	default:
	}
	g.produce("a", 2, benchBatch(false, 0))
	<-w.C // Produce returned: the append is durable and w was fired
	if f := w.Fired(); len(f) != 1 || !f[PartitionKey{"a", 2}] {
		t.Fatalf("fired %v, want a/2", f)
	}
	if f := w.Fired(); len(f) != 0 {
		t.Fatalf("fired again: %v", f)
	}

	if err := g.r.DeleteTopic("b"); err != nil {
		t.Fatal(err)
	}
	<-w.C
	if f := w.Fired(); !f[PartitionKey{"b", 0}] {
		t.Fatalf("deletion fired %v, want b/0", f)
	}

	w.Close()
	g.produce("a", 0, benchBatch(false, 0))
	select {
	case <-w.C:
		t.Fatal("a closed waiter was woken")
	default:
	}
	if err := g.r.WatchWith(w, "a", 1); err != nil {
		t.Fatal(err)
	}
	g.produce("a", 1, benchBatch(false, 0))
	if f := w.Fired(); len(f) != 0 {
		t.Fatalf("a closed waiter registered again: %v", f)
	}
}

// A Waiter kept across waits registers a partition once (Keep reports
// only the first time), moves to a topic re-created under the same name,
// drops at Sweep the partitions not kept since the previous Sweep, and
// forgets earlier wake-ups at Reset.
func TestWaiterKept(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("k", 2, nil)
	resolve := func(p int32) Partition {
		h, err := g.r.Resolve("k", p)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	count := func(p int32) int {
		n, err := g.r.Waiters("k", p)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	w := g.r.NewWaiter()
	defer w.Close()
	if !w.Keep(resolve(0)) || !w.Keep(resolve(1)) || w.Keep(resolve(0)) {
		t.Fatal("Keep: want true for each new partition, false for one watched already")
	}
	g.produce("k", 0, benchBatch(false, 0))
	<-w.C
	w.Reset()
	if f := w.Fired(); len(f) != 0 {
		t.Fatalf("fired after Reset: %v", f)
	}

	w.Sweep() // both kept this round
	w.Keep(resolve(0))
	w.Sweep() // k/1 not kept since
	if count(0) != 1 || count(1) != 0 || w.Watching() != 1 {
		t.Fatalf("after Sweep: %d and %d waiters, watching %d, want 1, 0, 1", count(0), count(1), w.Watching())
	}

	if err := g.r.DeleteTopic("k"); err != nil {
		t.Fatal(err)
	}
	g.create("k", 2, nil)
	if !w.Keep(resolve(0)) || count(0) != 1 {
		t.Fatal("Keep of the re-created k/0: not registered again")
	}
	w.Reset()
	g.produce("k", 0, benchBatch(false, 0))
	<-w.C
	if f := w.Fired(); !f[PartitionKey{"k", 0}] {
		t.Fatalf("fired %v, want the re-created k/0", f)
	}
}
