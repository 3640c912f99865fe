package producerid

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/kgateway/kgateway/storage"
)

var (
	keyNext     = []byte("resolver/next-pid")
	prefixEpoch = []byte("resolver/producer-epoch/")
)

func epochKey(id int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte{}, prefixEpoch...), uint64(id))
}

// IDs is the producer-id counter of one store.
type IDs struct {
	store *storage.Store
	// shared, when set, allocates every id (cluster mode).
	shared func(ctx context.Context) (int64, error)
	// wrap reports a storage fault (the resolver's ErrStorage).
	wrap func(op string, err error) error

	mu   sync.Mutex
	next int64 // the next id to hand out
	// limit is the durable counter: every id below it may have been
	// handed out (and none at or above it), so a restart starts from it.
	// Ids from next up to it are handed out without a write.
	limit int64
}

// blockSize is how many ids one durable write of the counter reserves,
// as Kafka's ProducerIdManager takes them from the controller in blocks
// of 1,000: a producer's InitProducerID, the first request of every
// idempotent producer, then waits for a synced write only once per
// block. A restart skips what was left of the block; ids are never
// reused.
const blockSize = 1000

// Open reads the counter from store and reserves the first block (one
// synced write at start, so that no producer's first InitProducerID after
// a start waits for one). shared, when set, allocates every id instead
// (nothing is written then); wrap reports storage faults.
func Open(store *storage.Store, shared func(context.Context) (int64, error), wrap func(op string, err error) error) (*IDs, error) {
	ids := &IDs{store: store, shared: shared, wrap: wrap}
	v, err := store.GetMeta(keyNext)
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return nil, wrap(fmt.Sprintf("read %s", keyNext), err)
	case len(v) != 8:
		return nil, wrap(fmt.Sprintf("read %s", keyNext), fmt.Errorf("%d-byte counter", len(v)))
	default:
		ids.next = int64(binary.BigEndian.Uint64(v))
		ids.limit = ids.next
	}
	if shared == nil {
		if err := ids.reserveLocked(); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// InitProducerID allocates a new producer id (epoch 0), or bumps the epoch
// of an existing one when producerID >= 0 (KIP-360). Ids come from a
// durable counter and are never reused across restarts; bumped epochs are
// durable too. A repeat of a bump whose answer was lost (the caller's
// epoch is one behind) returns the current epoch again. Any other
// id/epoch (an id this gateway never issued, an epoch that is not the
// current one) gets a fresh id, as Kafka does for producers without a
// transactional id: there is no transactional state to fence, and a
// fresh id is always safe.
func (ids *IDs) InitProducerID(ctx context.Context, producerID int64, epoch int16) (int64, int16, error) {
	if err := ctx.Err(); err != nil {
		return -1, -1, err
	}
	if ids.shared != nil {
		return ids.sharedID(ctx)
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if producerID < 0 || producerID >= ids.next || epoch < 0 {
		return ids.allocLocked()
	}
	cur, err := ids.epoch(producerID)
	if err != nil {
		return -1, -1, err
	}
	switch {
	case epoch == cur-1:
		return producerID, cur, nil
	case epoch != cur || cur == math.MaxInt16:
		// Not the current epoch, or epochs exhausted: a fresh id.
		return ids.allocLocked()
	}
	op := storage.MetaOp{Key: epochKey(producerID), Value: binary.BigEndian.AppendUint16(nil, uint16(cur+1))}
	if err := ids.store.ApplyMeta(op); err != nil {
		return -1, -1, ids.wrap("bump producer epoch", err)
	}
	return producerID, cur + 1, nil
}

// AllocateProducerID hands out a fresh producer id (epoch 0), durably
// (InitProducerID(ctx, -1, -1)).
func (ids *IDs) AllocateProducerID(ctx context.Context) (int64, error) {
	id, _, err := ids.InitProducerID(ctx, -1, -1)
	return id, err
}

// sharedID is InitProducerID with a shared allocator (shared producer
// ids): a fresh id from it, epoch 0, whatever id and epoch the producer
// had. Without a transactional id there is nothing to fence, so a fresh
// id is always safe, and no node keeps an epoch another would have to
// know.
func (ids *IDs) sharedID(ctx context.Context) (int64, int16, error) {
	id, err := ids.shared(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return -1, -1, ctx.Err()
		}
		return -1, -1, ids.wrap("allocate producer id", err)
	}
	if id < 0 {
		return -1, -1, ids.wrap("allocate producer id", fmt.Errorf("allocator returned %d", id))
	}
	return id, 0, nil
}

// allocLocked hands out the next id, durably reserved before it is
// returned: from the reserved block, or from a new block, whose reservation
// (the counter moved past it) is synced first.
func (ids *IDs) allocLocked() (int64, int16, error) {
	id := ids.next
	if id >= ids.limit {
		if err := ids.reserveLocked(); err != nil {
			return -1, -1, err
		}
	}
	ids.next = id + 1
	return id, 0, nil
}

// reserveLocked reserves the block of ids from next: the counter moves
// past it, synced, before any id of it is handed out.
func (ids *IDs) reserveLocked() error {
	limit := ids.next + blockSize
	op := storage.MetaOp{Key: keyNext, Value: binary.BigEndian.AppendUint64(nil, uint64(limit))}
	if err := ids.store.ApplyMeta(op); err != nil {
		return ids.wrap("allocate producer id", err)
	}
	ids.limit = limit
	return nil
}

// epoch is the current epoch of an allocated producer id: 0 unless
// InitProducerID bumped it.
func (ids *IDs) epoch(id int64) (int16, error) {
	v, err := ids.store.GetMeta(epochKey(id))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, ids.wrap("read producer epoch", err)
	case len(v) != 2:
		return 0, ids.wrap("read producer epoch", fmt.Errorf("%d-byte epoch", len(v)))
	}
	return int16(binary.BigEndian.Uint16(v)), nil
}
