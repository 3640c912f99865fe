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
