package txn

import (
	"math"
	"testing"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// end5 sends EndTxn v5 (transaction version 2) and returns the answer.
func (h *harness) end5(id string, pid int64, epoch int16, commit bool) *kmsg.EndTxnResponse {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 5, id, pid, epoch, commit
	return h.c.EndTxn(req)
}

func wantEnd(t *testing.T, what string, r *kmsg.EndTxnResponse, want *kerr.Error, pid int64, epoch int16) {
	t.Helper()
	wantCode(t, what, r.ErrorCode, want)
	if want == nil && (r.ProducerID != pid || r.ProducerEpoch != epoch) {
		t.Fatalf("%s: producer %d/%d, want %d/%d", what, r.ProducerID, r.ProducerEpoch, pid, epoch)
	}
}

// KIP-890 implicit adds, the epoch bump at EndTxn, EndTxn retries across the bump: at transaction version 2 a partition is added by the
// produce itself, EndTxn bumps the epoch, writes the markers with the
// bumped epoch and returns it; the previous epoch is fenced, and a retry
// with it gets the same answer, also after a restart.
func TestTV2EndTxnBumpsEpoch(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "implicit add", h.c.AddPartitionImplicitly("x", pid, e, "a", 0), nil)
	wantCode(t, "implicit add again", h.c.AddPartitionImplicitly("x", pid, e, "a", 0), nil)
	wantCode(t, "implicit add unknown", h.c.AddPartitionImplicitly("x", pid, e, "a", 9), kerr.UnknownTopicOrPartition)
	if s := h.state("x"); s.State != "Ongoing" || len(s.Topics) != 1 {
		t.Fatalf("ongoing %+v", s)
	}
	// Registered by the first add, and again by the second (durable partition adds).
	if r := h.parts.takeRegistered(); len(r) != 2 || r[0].epoch != e || r[1].epoch != e {
		t.Fatalf("registered %+v", r)
	}
	wantEnd(t, "commit", h.end5("x", pid, e, true), nil, pid, e+1)
	if m := h.markers(); len(m) != 1 || m[0].epoch != e+1 || !m[0].commit {
		t.Fatalf("markers %+v, want the bumped epoch %d", m, e+1)
	}
	h.reopen()
	wantEnd(t, "commit retry", h.end5("x", pid, e, true), nil, pid, e+1)
	wantEnd(t, "abort retry", h.end5("x", pid, e, false), kerr.InvalidTxnState, 0, 0)
	if len(h.markers()) != 0 {
		t.Fatal("a retried EndTxn wrote markers")
	}
	wantCode(t, "late produce, old epoch", h.c.AddPartitionImplicitly("x", pid, e, "a", 0), kerr.ProducerFenced)
	wantEnd(t, "commit nothing", h.end5("x", pid, e+1, true), kerr.InvalidTxnState, 0, 0)
	wantCode(t, "next transaction", h.c.AddPartitionImplicitly("x", pid, e+1, "b", 1), nil)
	wantEnd(t, "abort", h.end5("x", pid, e+1, false), nil, pid, e+2)
	if m := h.markers(); len(m) != 1 || m[0].epoch != e+2 || m[0].commit || m[0].tp != tp("b", 1) {
		t.Fatalf("abort markers %+v", m)
	}
	// An abort with nothing running still bumps (franz-go sends it after
	// produces that all failed).
	wantEnd(t, "empty abort", h.end5("x", pid, e+2, false), nil, pid, e+3)
	if len(h.markers()) != 0 {
		t.Fatal("an empty abort wrote markers")
	}
}

// The epoch bump at EndTxn: when the bumped epoch is exhausted, the decision allocates a fresh
// producer id, kept durably in the Prepare state: markers carry the old id
// and bumped epoch, the client continues at the new id and epoch 0, also
// when the markers fail and a restart completes the transaction.
func TestTV2EndTxnRotatesExhaustedEpoch(t *testing.T) {
	h := newHarness(t, Config{})
	pid, _ := h.mustInit("x")
	t0 := h.c.lookup("x")
	next := t0.st
	e := int16(math.MaxInt16 - 2)
	next.Epoch = e
	if err := h.c.persist(t0, next); err != nil {
		t.Fatal(err)
	}
	t0.mu.Unlock()
	wantCode(t, "implicit add", h.c.AddPartitionImplicitly("x", pid, e, "a", 0), nil)
	h.parts.failMarkers = true
	r := h.end5("x", pid, e, true)
	wantCode(t, "commit", r.ErrorCode, nil)
	npid := r.ProducerID
	if npid == pid || npid < 0 || r.ProducerEpoch != 0 {
		t.Fatalf("rotation: %+v (old pid %d)", r, pid)
	}
	wantEnd(t, "retry while preparing", h.end5("x", pid, e, true), kerr.ConcurrentTransactions, 0, 0)
	h.parts.failMarkers = false
	h.reopen() // recovery completes the transaction
	if m := h.markers(); len(m) != 1 || m[0].pid != pid || m[0].epoch != e+1 {
		t.Fatalf("markers %+v, want %d/%d", m, pid, e+1)
	}
	if s := h.state("x"); s.State != "CompleteCommit" || s.ProducerID != npid || s.ProducerEpoch != 0 {
		t.Fatalf("after recovery %+v", s)
	}
	wantEnd(t, "retry after rotation", h.end5("x", pid, e, true), nil, npid, 0)
	wantCode(t, "old id", h.c.AddPartitionImplicitly("x", pid, e+1, "a", 0), kerr.InvalidProducerIDMapping)
	wantCode(t, "new id", h.c.AddPartitionImplicitly("x", npid, 0, "a", 0), nil)
}

// A transaction's version: a transaction keeps the version it started with, whatever adds
// join it; a version-2 transaction is ended by EndTxn v5+ only, and
// version-1 clients are served exactly as before.
func TestTV2VersionKeptPerTransaction(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "implicit add", h.c.AddPartitionImplicitly("x", pid, e, "a", 1), nil)
	wantCode(t, "explicit add joins", h.add("x", pid, e, 3, tp("b", 0)), nil)
	wantCode(t, "explicit group add joins", h.addOffsets("x", pid, e, "g"), nil)
	wantCode(t, "v4 end of a version-2 transaction", h.end("x", pid, e, true, 4), kerr.InvalidTxnState)
	wantEnd(t, "v5 end", h.end5("x", pid, e, true), nil, pid, e+1)
	if m := h.markers(); len(m) != 2 || m[0].epoch != e+1 {
		t.Fatalf("version-2 markers %+v", m)
	}
	e++
	wantCode(t, "explicit add", h.add("x", pid, e, 3, tp("a", 0)), nil)
	wantCode(t, "v4 end of a version-1 transaction", h.end("x", pid, e, true, 4), nil)
	if m := h.markers(); len(m) != 1 || m[0].epoch != e {
		t.Fatalf("version-1 markers %+v", m)
	}
}

// A transaction's version, the epoch bump at EndTxn, EndTxn retries across the bump: the EndTxn's version picks the end rules, as Kafka 4.4's
// endTransaction does. A transaction started the version-1 way
// (AddPartitionsToTxn v3), implicit adds joining it or not, and ended by
// EndTxn v5 has its epoch bumped: the markers fence the old epoch, the
// answer carries the new one, a retry with the old epoch is answered
// again, and a commit with nothing running is INVALID_TXN_STATE.
func TestTV2EndV5OfVersion1TransactionBumps(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "explicit add", h.add("x", pid, e, 3, tp("a", 0)), nil)
	wantCode(t, "implicit add joins", h.c.AddPartitionImplicitly("x", pid, e, "a", 1), nil)
	wantEnd(t, "v5 commit of a version-1 transaction", h.end5("x", pid, e, true), nil, pid, e+1)
	if m := h.markers(); len(m) != 2 || m[0].epoch != e+1 || m[1].epoch != e+1 || !m[0].commit {
		t.Fatalf("markers %+v, want the bumped epoch %d", m, e+1)
	}
	h.reopen()
	wantEnd(t, "commit retry", h.end5("x", pid, e, true), nil, pid, e+1)
	wantEnd(t, "abort retry", h.end5("x", pid, e, false), kerr.InvalidTxnState, 0, 0)
	wantEnd(t, "commit nothing", h.end5("x", pid, e+1, true), kerr.InvalidTxnState, 0, 0)
	wantCode(t, "old epoch", h.add("x", pid, e, 3, tp("a", 0)), kerr.ProducerFenced)
	if len(h.markers()) != 0 {
		t.Fatal("a retried EndTxn wrote markers")
	}
	e++
	wantCode(t, "explicit add", h.add("x", pid, e, 3, tp("b", 0)), nil)
	wantEnd(t, "v5 abort of a version-1 transaction", h.end5("x", pid, e, false), nil, pid, e+1)
	if m := h.markers(); len(m) != 1 || m[0].epoch != e+1 || m[0].commit || m[0].tp != tp("b", 0) {
		t.Fatalf("abort markers %+v", m)
	}
	wantEnd(t, "abort retry", h.end5("x", pid, e, false), nil, pid, e+1)
}

// KIP-890 implicit adds: TxnOffsetCommit v5 adds the group itself; its offsets commit with
// the transaction.
func TestTV2TxnOffsetCommitAddsGroup(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	commit := func(epoch int16, off int64) int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = 5, "x", pid, epoch, "g"
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "a"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, off
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return h.c.TxnOffsetCommit(req, h.groups).Topics[0].Partitions[0].ErrorCode
	}
	wantCode(t, "commit offset", commit(e, 5), nil)
	if s := h.state("x"); s.State != "Ongoing" {
		t.Fatalf("not ongoing: %+v", s)
	}
	wantEnd(t, "commit", h.end5("x", pid, e, true), nil, pid, e+1)
	h.settle() // the offsets commit with the Complete state, after the answer (answer once decided)
	if c, ok, _ := h.store.Get("g", offsets.TopicPartition{Topic: "a", Partition: 0}); !ok || c.Offset != 5 {
		t.Fatalf("after commit: %+v %v", c, ok)
	}
	wantCode(t, "old epoch", commit(e, 9), kerr.InvalidProducerEpoch)
}
