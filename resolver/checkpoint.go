package resolver

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/storage"
)

// Producer-state checkpoints (D4 across restarts, incremental producer checkpoints).
//
// A checkpoint is the producer state and max timestamp of a partition as
// of Covered: it reflects exactly the entries below Covered. It is written
// only once every entry below Covered is durable (storage End >= Covered),
// so it never names an offset a crash can take away. On Open the entries
// from Covered to the durable end are replayed from their batch headers
// (partition.recover). Writing one every checkpointEvery entries or
// checkpointBytes bytes bounds that replay; between the data becoming
// durable and the next checkpoint there is no window in which an
// acknowledged batch is forgotten, because the log itself is the record.
//
// The header key (prefixCheckpoint) holds Covered and the max timestamp;
// each producer has its own key (prefixProducer, log, id). A checkpoint
// writes the header and the producers changed or removed since the last
// one, in one atomic ApplyMeta (incremental producer checkpoints): a producer's key then holds its state
// as of the last checkpoint that changed it, which is its state as of
// Covered. Version 1 headers held the whole map; they are still read, and
// the next checkpoint rewrites them in the current form. The same ApplyMeta
// carries the changed transaction state as of Covered (package txnstate,
// the aborted-transaction index, transaction recovery).

const (
	checkpointEvery     = 64
	checkpointBytes     = 8 << 20
	checkpointVersionV1 = 1 // header with every producer inline
	checkpointVersion   = 2 // header only; producers under their own keys
)

type checkpoint struct {
	Covered   Offset
	producers map[int64]*producer
	maxTS     timestampMark
	legacy    bool // read from a version 1 header
}

// encodeCheckpoint: version u8, covered i64, maxTS i64, maxTS offset i64.
func encodeCheckpoint(covered Offset, m timestampMark) []byte {
	be := binary.BigEndian
	b := make([]byte, 0, 25)
	b = append(b, checkpointVersion)
	b = be.AppendUint64(b, uint64(covered))
	b = be.AppendUint64(b, uint64(m.TS))
	return be.AppendUint64(b, uint64(m.Offset))
}

// encodeProducer is encodeProducerBase and then the last batch's max
// timestamp i64 and the last marker's coordinator epoch i32 (values
// written before transactions end before them: -1 each).
func encodeProducer(ps *producer) []byte {
	be := binary.BigEndian
	b := be.AppendUint64(encodeProducerBase(ps), uint64(ps.lastTS))
	return be.AppendUint32(b, uint32(ps.coordEpoch))
}

// encodeProducerBase: epoch i16, lastSeen i64, batch count u8, and per
// batch: first i32, last i32, offset i64 (also a version 1 header's inline
// form).
func encodeProducerBase(ps *producer) []byte {
	be := binary.BigEndian
	b := make([]byte, 0, 23+len(ps.batches)*16)
	b = be.AppendUint16(b, uint16(ps.epoch))
	b = be.AppendUint64(b, uint64(ps.lastSeen))
	b = append(b, byte(len(ps.batches)))
	for _, sb := range ps.batches {
		b = be.AppendUint32(b, uint32(sb.first))
		b = be.AppendUint32(b, uint32(sb.last))
		b = be.AppendUint64(b, uint64(sb.offset))
	}
	return b
}

func (d *decoder) producer() *producer {
	ps := &producer{epoch: int16(d.u16()), lastSeen: int64(d.u64()), lastTS: -1, coordEpoch: -1}
	nb := d.u8()
	for j := uint8(0); j < nb && d.err == nil; j++ {
		ps.batches = append(ps.batches, seqBatch{first: int32(d.u32()), last: int32(d.u32()), offset: Offset(d.u64())})
	}
	return ps
}

func (d *decoder) end(what string) error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes in %s", len(d.b), what)
	}
	return d.err
}

func decodeProducer(b []byte) (*producer, error) {
	d := decoder{b: b}
	ps := d.producer()
	if d.err == nil && len(d.b) == 12 {
		ps.lastTS, ps.coordEpoch = int64(d.u64()), int32(d.u32())
	}
	return ps, d.end("producer state")
}

// producerKey is the key of one producer's state on one log.
func producerKey(log storage.LogID, id int64) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefixProducer, uint64(log)), uint64(id))
}

// errShortCheckpoint reports a truncated checkpoint value.
var errShortCheckpoint = errors.New("short producer-state checkpoint")

// decodeCheckpoint reads a header; a version 1 header brings its producers.
func decodeCheckpoint(b []byte) (checkpoint, error) {
	d := decoder{b: b}
	v := d.u8()
	if v != checkpointVersion && v != checkpointVersionV1 {
		return checkpoint{}, fmt.Errorf("producer-state checkpoint version %d", v)
	}
	ck := checkpoint{Covered: Offset(d.u64()), producers: map[int64]*producer{}}
	ck.maxTS = timestampMark{TS: int64(d.u64()), Offset: Offset(d.u64())}
	if v == checkpointVersionV1 {
		ck.legacy = true
		n := d.u32()
		for i := uint32(0); i < n && d.err == nil; i++ {
			id := int64(d.u64())
			ck.producers[id] = d.producer()
		}
	}
	return ck, d.end("producer-state checkpoint")
}

// decoder reads big-endian fields, remembering the first short read.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.err = errShortCheckpoint
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() uint8   { return d.take(1)[0] }
func (d *decoder) u16() uint16 { return binary.BigEndian.Uint16(d.take(2)) }
func (d *decoder) u32() uint32 { return binary.BigEndian.Uint32(d.take(4)) }
func (d *decoder) u64() uint64 { return binary.BigEndian.Uint64(d.take(8)) }

// loadCheckpoint reads a log's checkpoint and its producers; an empty one
// covering nothing when there is none.
func (st *stateStore) loadCheckpoint(log storage.LogID) (checkpoint, error) {
	v, err := st.store.GetMeta(idKey(prefixCheckpoint, uint64(log)))
	if errors.Is(err, storage.ErrNotFound) {
		return checkpoint{producers: map[int64]*producer{}, maxTS: noTimestamp}, nil
	}
	if err != nil {
		return checkpoint{}, storageErr("read producer state", err)
	}
	ck, err := decodeCheckpoint(v)
	if err != nil {
		return checkpoint{}, storageErr(fmt.Sprintf("decode producer state of %s", log), err)
	}
	err = st.store.ScanMeta(idKey(prefixProducer, uint64(log)), func(k, v []byte) error {
		if len(k) < 8 {
			return fmt.Errorf("producer key %x", k)
		}
		ps, err := decodeProducer(v)
		if err != nil {
			return err
		}
		ck.producers[int64(binary.BigEndian.Uint64(k[len(k)-8:]))] = ps
		return nil
	})
	if err != nil {
		return checkpoint{}, storageErr(fmt.Sprintf("read producers of %s", log), err)
	}
	return ck, nil
}

// producerKeys lists the producer keys of log (to delete them).
func (st *stateStore) producerKeys(log storage.LogID) ([]storage.MetaOp, error) {
	var ops []storage.MetaOp
	err := st.store.ScanMeta(idKey(prefixProducer, uint64(log)), func(k, _ []byte) error {
		ops = append(ops, storage.MetaOp{Key: append([]byte(nil), k...), Delete: true})
		return nil
	})
	return ops, err
}

// maybeCheckpoint starts a background checkpoint of the partition when
// enough was appended since the last one and none is in progress. It runs
// in the background because it waits for the entries it covers to become
// durable and then for a metadata sync; a produce must not pay for that.
func (st *stateStore) maybeCheckpoint(p *partition) {
	p.app.Lock()
	due := p.checkpointDueLocked()
	p.app.Unlock()
	if !due || !p.ckptMu.TryLock() {
		return
	}
	started := st.background(func() {
		defer p.ckptMu.Unlock()
		if err := st.checkpointLocked(p); err != nil {
			// The data is durable and the log is the record: a missed
			// checkpoint only lengthens the replay on Open.
			st.log.Warn("producer-state-checkpoint-failed", zap.Stringer("log", p.log), zap.Error(err))
		}
	})
	if !started {
		p.ckptMu.Unlock()
	}
}

// checkpointDueLocked says whether enough was written since the last
// checkpoint for the next one; needs p.app.
func (p *partition) checkpointDueLocked() bool {
	return p.app.unckpt >= checkpointEvery || p.app.unckptBytes >= checkpointBytes
}

// checkpoint writes the partition's producer state now (Open after a
// replay, Close).
func (st *stateStore) checkpoint(p *partition) error {
	p.ckptMu.Lock()
	defer p.ckptMu.Unlock()
	return st.checkpointLocked(p)
}

// checkpointLocked snapshots the header and the dirty producers as of the
// last written entry, waits until that entry is durable (so the checkpoint
// never covers an offset a crash can take away), and persists them (incremental producer checkpoints).
// Needs ckptMu.
func (st *stateStore) checkpointLocked(p *partition) error {
	p.app.Lock()
	p.mu.Lock()
	deleted := p.mu.deleted
	p.mu.Unlock()
	if p.app.failed != nil || deleted {
		p.app.Unlock()
		return nil
	}
	prod := p.app.prod
	prod.bound(st.limits, st.now().UnixMilli())
	covered, last := p.app.next, p.app.last
	dirty := prod.takeDirty()
	txnOps, txnDirty := p.app.txn.TakeDirty(p.log)
	ops := make([]storage.MetaOp, 0, 1+len(dirty)+len(txnOps))
	ops = append(ops, txnOps...)
	ops = append(ops, storage.MetaOp{Key: idKey(prefixCheckpoint, uint64(p.log)), Value: encodeCheckpoint(covered, p.app.maxTS)})
	for id := range dirty {
		op := storage.MetaOp{Key: producerKey(p.log, id), Delete: true}
		if ps := prod.m[id]; ps != nil {
			op = storage.MetaOp{Key: op.Key, Value: encodeProducer(ps)}
		}
		ops = append(ops, op)
	}
	n, nb := p.app.unckpt, p.app.unckptBytes
	p.app.Unlock()
	giveBack := func() {
		p.app.Lock()
		prod.keepDirty(dirty)
		p.app.txn.KeepDirty(txnDirty)
		p.app.Unlock()
	}

	if last != nil {
		if err := last.Wait(); err != nil {
			giveBack()
			return nil // the partition is failed; its producer will say so
		}
	}
	info, err := st.store.Info(p.log)
	if err != nil {
		giveBack()
		return storageErr("log info", err)
	}
	if info.End < covered {
		giveBack()
		return nil // cannot happen once last is durable; never persist ahead of the data
	}
	if err := st.store.ApplyMeta(ops...); err != nil {
		giveBack()
		return storageErr("write producer state", err)
	}
	p.app.Lock()
	p.app.unckpt -= n
	p.app.unckptBytes -= nb
	p.app.Unlock()
	return nil
}
