package producerid

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/kgateway/kgateway/storage"
)

func openIDs(t *testing.T, dir string) (*IDs, *storage.Store) {
	t.Helper()
	s, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := Open(s, nil, func(op string, err error) error { return fmt.Errorf("%s: %w", op, err) })
	if err != nil {
		t.Fatal(err)
	}
	return ids, s
}

// counter is the durable counter as stored.
func counter(t *testing.T, s *storage.Store) int64 {
	t.Helper()
	v, err := s.GetMeta(keyNext)
	if err != nil {
		t.Fatal(err)
	}
	return int64(binary.BigEndian.Uint64(v))
}

// Producer id blocks: Open moves the durable counter past a whole block
// before any id is handed out, the block's ids leave it as it is, the id
// past the block moves it again, and a reopened store reserves a new
// block and hands out ids past every reserved one.
func TestProducerIDBlocks(t *testing.T) {
	dir := t.TempDir()
	ids, s := openIDs(t, dir)
	if got := counter(t, s); got != blockSize {
		t.Fatalf("counter %d after Open, want the first block reserved: %d", got, blockSize)
	}
	ctx := context.Background()
	first, err := ids.AllocateProducerID(ctx)
	if err != nil || first != 0 {
		t.Fatalf("first id %d: %v", first, err)
	}
	if got := counter(t, s); got != first+blockSize {
		t.Fatalf("counter %d after id %d, want %d", got, first, first+blockSize)
	}
	last := first
	for i := 1; i <= blockSize; i++ {
		id, err := ids.AllocateProducerID(ctx)
		if err != nil || id != last+1 {
			t.Fatalf("id %d after %d: %v", id, last, err)
		}
		last = id
		want := first + blockSize
		if i == blockSize { // the next block's first id
			want += blockSize
		}
		if got := counter(t, s); got != want {
			t.Fatalf("counter %d after id %d, want %d", got, id, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ids, s = openIDs(t, dir)
	defer s.Close()
	if got, want := counter(t, s), first+3*blockSize; got != want {
		t.Fatalf("counter %d after reopening, want a new block reserved: %d", got, want)
	}
	id, err := ids.AllocateProducerID(ctx)
	if err != nil || id <= last {
		t.Fatalf("id %d after reopening, last handed out %d: %v", id, last, err)
	}
}
