package resolver

import "testing"

// BatchTransactional reads the transactional bit of a magic-2 batch only:
// a short buffer or another magic (whose attributes sit elsewhere) is
// never transactional.
func TestBatchTransactional(t *testing.T) {
	txn := txnBatch(7, 0, 0, 2)
	old := txn
	old.magic = 1
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"transactional", txn.encode(), true},
		{"idempotent", idem(7, 0, 0, 2).encode(), false},
		{"plain", plain(2, 1000).encode(), false},
		{"magic 1", old.encode(), false},
		{"short", txn.encode()[:attrsOff+1], false},
		{"empty", nil, false},
	} {
		if got := BatchTransactional(c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
