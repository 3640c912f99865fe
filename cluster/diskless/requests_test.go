package diskless

import "testing"

// TestRequestsCounted: a commit of 50 partitions is one PUT and two
// transactions (41 partitions fit one at the default MaxTxnOps, acknowledgement after PUT and commit); a
// merge of its ranges reads each range back (one GET each) and writes one
// object; the counts are what the cost model reads.
func TestRequestsCounted(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	var pkeys []string
	for i := range 50 {
		pkeys = append(pkeys, "t-"+string(rune('a'+i/26))+string(rune('a'+i%26)))
	}
	owns := n.acquire(t, pkeys...)
	before := n.c.Requests()
	var bs []Batch
	for _, p := range pkeys {
		bs = append(bs, batch(p, 0, 1))
	}
	allOK(t, n.c.Commit(ctxT(t), bs, owns))
	got := n.c.Requests()
	if puts, txns := got.ObjectPuts-before.ObjectPuts, got.EtcdTxns-before.EtcdTxns; puts != 1 || txns != 2 {
		t.Fatalf("a commit of 50 partitions: %d PUTs, %d transactions; want 1 and 2", puts, txns)
	}
	// A second commit to one partition, then its merge: two ranges read
	// back, one object written.
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch(pkeys[0], 1, 1)}, owns))
	before = n.c.Requests()
	if _, err := n.c.Merge(ctxT(t), owns[pkeys[0]], pkeys[0]); err != nil {
		t.Fatal(err)
	}
	got = n.c.Requests()
	if gets, puts := got.ObjectGets-before.ObjectGets, got.ObjectPuts-before.ObjectPuts; gets != 2 || puts != 1 {
		t.Fatalf("a merge of two ranges: %d GETs, %d PUTs; want 2 and 1", gets, puts)
	}
}
