package resolver

import (
	"errors"
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// TestStateOpsRefusesMalformed (exported producer state): an exported state is installed
// whole or not at all: a wrong version, a truncated record, an unknown
// kind or no checkpoint header is refused.
func TestStateOpsRefusesMalformed(t *testing.T) {
	good := appendStateRecord([]byte{stateVersion}, 0, nil, encodeCheckpoint(7, noTimestamp))
	good = appendStateRecord(good, 1, []byte{0, 0, 0, 0, 0, 0, 0, 9}, []byte("producer"))
	ops, err := stateOps(good, 42)
	if err != nil || len(ops) != 2 || string(ops[0].Key) != string(idKey(prefixCheckpoint, 42)) ||
		string(ops[1].Key) != string(append(idKey(prefixProducer, 42), 0, 0, 0, 0, 0, 0, 0, 9)) {
		t.Fatalf("well-formed state: %v, %v", ops, err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)-1],
		"kind":      appendStateRecord([]byte{stateVersion}, 9, nil, nil),
		"no header": appendStateRecord([]byte{stateVersion}, 1, []byte{1}, []byte("p")),
	} {
		if _, err := stateOps(b, 42); !errors.Is(err, storage.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}
