package resolver

import (
	"context"
	"errors"
	"testing"
)

// The resolver owns error translation: kafka/ maps resolver sentinels
// only, so an error of the layers below (here: the store closed under a
// running resolver) must come out of every call kafka/ makes wrapped in
// ErrStorage, never as a bare storage or ledger error.
func TestLowerErrorsComeBackAsErrStorage(t *testing.T) {
	g := newGateway(t, Config{NumPartitions: 1, RetentionCheckInterval: -1})
	g.create("t", 1, nil)
	g.produce("t", 0, plain(2, 1000).encode())
	pid, _, err := g.r.InitProducerID(context.Background(), -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.store.Close(); err != nil {
		t.Fatal(err)
	}
	_, produceErr := g.r.Produce("t", 0, plain(1, 2000).encode())
	_, fetchErr := g.r.Fetch("t", 0, 0, 1<<20, true, ReadUncommitted)
	_, _, _, boundsErr := g.r.Bounds("t", 0)
	_, _, listErr := g.r.ListOffset("t", 0, -2)
	_, deleteRecordsErr := g.r.DeleteRecords("t", 0, 1)
	_, createErr := g.r.CreateTopic("u", 1, 1, nil, false)
	alterErr := g.r.AlterTopicConfigs("t", map[string]string{"retention.ms": "1000"}, false)
	partitionsErr := g.r.CreatePartitions("t", 2, false)
	// A bump reads the id's epoch from the store (a fresh id comes from
	// the block reserved before, without it: producer id blocks).
	_, _, initPIDErr := g.r.InitProducerID(context.Background(), pid, 0)
	for name, err := range map[string]error{
		"Produce": produceErr, "Fetch": fetchErr, "Bounds": boundsErr, "ListOffset": listErr,
		"DeleteRecords": deleteRecordsErr, "CreateTopic": createErr, "AlterTopicConfigs": alterErr,
		"CreatePartitions": partitionsErr, "InitProducerID": initPIDErr,
	} {
		if !errors.Is(err, ErrStorage) {
			t.Errorf("%s with the store closed: %v, want an error wrapping ErrStorage", name, err)
		}
	}
}
