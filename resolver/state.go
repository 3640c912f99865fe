package resolver

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/resolver/txnstate"
	"github.com/kgateway/kgateway/storage"
)

// A partition's exported state (exported producer state): its producer-state checkpoint and
// transaction state (checkpoint.go, package txnstate) as of Covered,
// without its log id, so another node can install it under a log of its
// own and replay only from Covered.
//
// Encoding: version u8, then records of kind u8 (one of stateKinds'
// indexes), key suffix (after the log id) u16-length-prefixed, value
// u32-length-prefixed.

const stateVersion = 1

// stateKinds are the key prefixes of a partition's checkpoint, each
// followed by the log id; the header first.
var stateKinds = [][]byte{prefixCheckpoint, prefixProducer, txnstate.PrefixOpen, txnstate.PrefixAborted}

// ExportState writes a checkpoint of partition idx of topic now and
// returns it, read back under the checkpoint lock so no other checkpoint
// mixes in: the producers, open transactions and aborted index as of
// covered (transaction recovery, incremental producer checkpoints). ok is false when the partition has no checkpoint
// (its producer state failed to replay).
func (rp Replicas) ExportState(topic string, idx int32) (covered Offset, state []byte, ok bool, err error) {
	r := rp.r
	p, err := r.mu.partition(topic, idx)
	if err != nil {
		return 0, nil, false, err
	}
	p.ckptMu.Lock()
	defer p.ckptMu.Unlock()
	if err := r.states.checkpointLocked(p); err != nil {
		return 0, nil, false, err
	}
	hdr, err := r.store.GetMeta(idKey(prefixCheckpoint, uint64(p.log)))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, storageErr("read producer state", err)
	}
	ck, err := decodeCheckpoint(hdr)
	if err != nil {
		return 0, nil, false, storageErr("decode producer state", err)
	}
	out := []byte{stateVersion}
	for kind, prefix := range stateKinds {
		pre := idKey(prefix, uint64(p.log))
		err := r.store.ScanMeta(pre, func(k, v []byte) error {
			out = appendStateRecord(out, byte(kind), k[len(pre):], v)
			return nil
		})
		if err != nil {
			return 0, nil, false, storageErr("export producer state", err)
		}
	}
	return ck.Covered, out, true, nil
}

func appendStateRecord(b []byte, kind byte, suffix, v []byte) []byte {
	be := binary.BigEndian
	b = append(b, kind)
	b = be.AppendUint16(b, uint16(len(suffix)))
	b = append(b, suffix...)
	b = be.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// stateOps turns an exported state into the writes that install it
// under log; anything malformed is storage.ErrCorrupt, refused whole.
func stateOps(state []byte, log storage.LogID) ([]storage.MetaOp, error) {
	bad := func(what string) error {
		return fmt.Errorf("%w: exported producer state: %s", storage.ErrCorrupt, what)
	}
	if len(state) == 0 || state[0] != stateVersion {
		return nil, bad("version")
	}
	be := binary.BigEndian
	var ops []storage.MetaOp
	header := false
	for b := state[1:]; len(b) > 0; {
		if len(b) < 3 || int(b[0]) >= len(stateKinds) {
			return nil, bad("record header")
		}
		kind, n := b[0], int(be.Uint16(b[1:]))
		b = b[3:]
		if len(b) < n+4 {
			return nil, bad("key")
		}
		key := append(idKey(stateKinds[kind], uint64(log)), b[:n]...)
		b = b[n:]
		m := int(be.Uint32(b))
		b = b[4:]
		if len(b) < m {
			return nil, bad("value")
		}
		ops = append(ops, storage.MetaOp{Key: key, Value: append([]byte{}, b[:m]...)})
		b = b[m:]
		header = header || kind == 0
	}
	if !header {
		return nil, bad("no checkpoint header")
	}
	return ops, nil
}

// ReplayedFrom is the offset the producer-state replay of partition idx
// of topic began at when its copy was opened: the checkpoint's covered
// offset, or the log start (the local copy as a cache, exported producer state). For diagnostics and tests.
func (rp Replicas) ReplayedFrom(topic string, idx int32) (Offset, error) {
	r := rp.r
	p, err := r.mu.partition(topic, idx)
	if err != nil {
		return 0, err
	}
	p.app.Lock()
	defer p.app.Unlock()
	return p.app.replayedFrom, nil
}
