package offsets

import (
	"testing"
	"time"
)

// O6: a transaction's commit keeps the most recent commit of a partition
// by write position, as Kafka keeps the most recent by log position (a
// real broker answers 20 to TxnOffsetCommit(10), OffsetCommit(20),
// EndTxn(commit), and 15 when a TxnOffsetCommit(15) follows the 20).
// Positions survive a reopen, and a commit written before positions
// existed (none in its record) is older than any.
func TestTxnCommitKeepsLaterPlainCommit(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	end := func(id string) {
		t.Helper()
		if err := s.EndTxn([]string{"g"}, Txn{ID: id, State: TxnCompleteCommit, StartTime: time.UnixMilli(0), UpdateTime: time.UnixMilli(0)}, true); err != nil {
			t.Fatal(err)
		}
	}
	pending := func(id string, off Offset) {
		t.Helper()
		if err := s.PutPending(id, "g", []Commit{commit("a", 0, off, "")}); err != nil {
			t.Fatal(err)
		}
	}
	pending("t1", 10)
	mustCommit(t, s, "g", commit("a", 0, 20, ""))
	end("t1")
	if got := offsetsOf(t, s, "g")[tp("a", 0)]; got != 20 {
		t.Fatalf("TxnOffsetCommit(10), OffsetCommit(20), commit: %d, want 20", got)
	}

	pending("t2", 10)
	mustCommit(t, s, "g", commit("a", 0, 20, ""))
	pending("t2", 15)
	end("t2")
	if got := offsetsOf(t, s, "g")[tp("a", 0)]; got != 15 {
		t.Fatalf("TxnOffsetCommit(10), OffsetCommit(20), TxnOffsetCommit(15), commit: %d, want 15", got)
	}

	// Across a reopen: a plain commit before it, a pending one after.
	mustCommit(t, s, "g", commit("a", 0, 30, ""))
	s.Close()
	s = open(t, dir, Options{})
	pending("t3", 40)
	end("t3")
	if got := offsetsOf(t, s, "g")[tp("a", 0)]; got != 40 {
		t.Fatalf("commit before a reopen, pending after: %d, want 40", got)
	}
}

// A commit record without a position (written before positions existed)
// decodes, and is older than any pending commit.
func TestCommitWithoutPosition(t *testing.T) {
	c := commit("a", 0, 7, "md")
	c.CommitTime = time.UnixMilli(99)
	old := encodeCommit(c, 0)
	old = old[:len(old)-1] // the varint 0 is one byte
	got, err := decodeCommit(c.TopicPartition, old)
	if err != nil || got != c {
		t.Fatalf("decode without position: %+v %v", got, err)
	}
	if commitPosition(old) != 0 || commitPosition(encodeCommit(c, 12345)) != 12345 {
		t.Fatal("positions")
	}
}
