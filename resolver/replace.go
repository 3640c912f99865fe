package resolver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// Replacing a partition's local copy (doc.go "Cluster mode", the copy of the published batches, the durable replacement and the old copy's retirement).

// ReplacePartition rebuilds partition idx of topic on a new local log that
// starts at start, from the record batches fill passes to appendBatch, and
// binds it in the old log's place (the copy of the published batches, the durable replacement and the old copy's retirement). Each batch must be one whole
// record batch, header and CRC sound, already carrying its base offset,
// which must be the offset the batch before it ended at (start for the
// first); appendBatch refuses anything else, and a refusal fails the
// whole replacement even when fill goes on. The batches are written with
// AppendOptions.NoReplicate (they come from the replicated copy) and
// ReplacePartition returns only once they are durable, the producer and
// transaction state replayed from them, the new binding durable and the
// old log deleted. On an error before the new binding is durable nothing
// changes: the old partition goes on serving and the new log is deleted.
//
// The copy runs without the catalog lock, so other topics' changes and
// other partitions' replacements go on meanwhile; if this partition was
// replaced or its topic deleted in the meantime, the copy is discarded
// and the error wraps ErrNotLeader or ErrUnknownTopic.
func (rp Replicas) ReplacePartition(topic string, idx int32, start Offset, fill func(appendBatch func(batch []byte) error) error) error {
	return rp.ReplacePartitionOver(topic, idx, start, Cache{}, fill)
}

// Cache is what a local copy caches (the local copy as a cache, exported producer state): the published log below
// it, and the partition's exported state (ExportState) to start its
// replay from; either may be nil.
type Cache struct {
	Published ledger.Published
	State     []byte
}

// ReplacePartitionOver is ReplacePartition for a local log that is a
// cache of c.Published, the partition's published log (the local copy as a cache): the new log
// starts at start, which may be above the published start. The partition
// reads the offsets below its local log from it (ledger R20), and its
// producer and transaction state is replayed from the published start,
// through that read, before it serves (the local copy as a cache) — or, with c.State, installed
// from that exported state and replayed only from the offset it covers
// (exported producer state). A zero c is ReplacePartition.
func (rp Replicas) ReplacePartitionOver(topic string, idx int32, start Offset, c Cache, fill func(appendBatch func(batch []byte) error) error) error {
	r := rp.r
	if start < 0 {
		return fmt.Errorf("%w: replace %s/%d at negative offset %d", ErrOffsetOutOfRange, topic, idx, start)
	}
	t, log, err := rp.reserveFor(topic, idx)
	if err != nil {
		return err
	}
	np, err := rp.buildPartition(t, idx, log, start, c, fill)
	if err != nil {
		rp.discardLog(log)
		return err
	}
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	cur, err := r.boundTopic(topic)
	if err == nil && (cur.id != t.id || cur.parts[idx] != t.parts[idx]) {
		err = fmt.Errorf("%w: %s/%d was replaced during the copy", ErrNotLeader, topic, idx)
	}
	if err == nil {
		_, err = r.mu.partition(topic, idx) // the resolver closed
	}
	if err == nil {
		err = np.applySettings(r.settings(cur.configs)) // altered during the copy
	}
	if err != nil {
		np.close()
		rp.discardLog(log)
		return err
	}
	return rp.rebindLocked(cur, idx, np)
}

// reserveFor resolves the partition to replace and reserves its new log.
func (rp Replicas) reserveFor(topic string, idx int32) (*topic, storage.LogID, error) {
	r := rp.r
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	t, err := r.boundTopic(topic)
	if err != nil {
		return nil, 0, err
	}
	if _, err := r.mu.partition(topic, idx); err != nil { // closed, or no such index
		return nil, 0, err
	}
	log, err := rp.reserveLogLocked()
	return t, log, err
}

// discardLog deletes a log no binding names, with its deletion mark.
func (rp Replicas) discardLog(log storage.LogID) {
	r := rp.r
	if err := r.deleteLogs([]storage.LogID{log}); err != nil {
		r.log.Error("replace-partition-rollback-failed", zap.Stringer("log", log), zap.Error(err))
	}
}

// reserveLogLocked allocates a log id and marks it for deletion in the
// same write (the durable replacement): until a binding names it, Open deletes whatever of it
// a crash left. Needs adminMu.
func (rp Replicas) reserveLogLocked() (storage.LogID, error) {
	r := rp.r
	log := r.nextLog
	mark := storage.MetaOp{Key: idKey(prefixDeleting, uint64(log)), Value: []byte{}}
	if err := r.store.ApplyMeta(putCounter(keyNextLog, uint64(log+1)), mark); err != nil {
		return 0, storageErr("reserve log", err)
	}
	r.nextLog = log + 1
	return log, nil
}

// buildPartition creates log at start, copies fill's batches into it and
// opens a partition on it through the path Open takes (the copy of the published batches): the producer
// state and transactions come from the replay of the copied batches.
func (rp Replicas) buildPartition(t *topic, idx int32, log storage.LogID, start Offset, c Cache, fill func(func([]byte) error) error) (*partition, error) {
	r := rp.r
	if err := r.store.CreateLogAt(log, start); err != nil {
		return nil, storageErr("create log", err)
	}
	s := r.settings(t.configs)
	if err := rp.copyBatches(log, start, s, fill); err != nil {
		return nil, err
	}
	if c.State != nil { // Exported producer state: the replay starts where the state ends
		ops, err := stateOps(c.State, log)
		if err != nil {
			return nil, err
		}
		if err := r.store.ApplyMeta(ops...); err != nil {
			return nil, storageErr("install producer state", err)
		}
	}
	p, err := r.states.openPartitionOver(t.name, idx, log, s, c.Published)
	if err != nil {
		return nil, err
	}
	if p.app.failed != nil { // the replay failed: the producer state is incomplete
		err := p.app.failed
		p.close()
		return nil, err
	}
	return p, nil
}

// copyBatches writes fill's batches to log and waits until they are
// durable (the copy of the published batches).
func (rp Replicas) copyBatches(log storage.LogID, start Offset, s topicconfig.Settings, fill func(func([]byte) error) error) error {
	r := rp.r
	ml, err := ledger.Open(r.store, log, s.Ledger)
	if err != nil {
		return storageErr("open ledger", err)
	}
	defer ml.Close()
	c := copier{ml: ml, next: start}
	if err := fill(c.append); err != nil {
		return errors.Join(err, c.err)
	}
	if c.err != nil {
		return c.err
	}
	if c.last != nil {
		if err := c.last.Wait(); err != nil {
			return storageErr("copy", err)
		}
	}
	info, err := r.store.Info(log)
	if err != nil {
		return storageErr("log info", err)
	}
	if info.End != c.next {
		return storageErr("copy", fmt.Errorf("durable end %v, copied up to %v", info.End, c.next))
	}
	return nil
}

// copier is the appendBatch ReplacePartition hands to fill.
type copier struct {
	ml   *ledger.Managed
	next Offset           // the offset the next batch must start at
	last *storage.Pending // the newest write
	err  error            // the first refusal; every later call fails too
}

func (c *copier) append(b []byte) error {
	if c.err != nil {
		return c.err
	}
	c.err = c.write(b)
	return c.err
}

func (c *copier) write(b []byte) error {
	h, err := parseCopiedBatch(b)
	if err != nil {
		return err
	}
	if h.BaseOffset != c.next {
		return fmt.Errorf("%w: copied batch at %v, expected %v", ErrCorruptBatch, h.BaseOffset, c.next)
	}
	span := int(h.LastOffsetDelta) + 1
	pd, err := c.ml.Write(span, b, storage.AppendOptions{
		MaxTime:     h.MaxTimestamp,
		NoReplicate: true, // it comes from the replicated copy
		SuffixFrom:  attrsOff, SuffixCRC: binary.BigEndian.Uint32(b[crcOff:]),
	})
	if err != nil {
		return storageErr("copy", err)
	}
	if got := pd.Header().Offset; got != h.BaseOffset {
		// Cannot happen: the log is new and this is its only writer.
		return storageErr("copy", fmt.Errorf("batch at %v written at %v", h.BaseOffset, got))
	}
	c.last, c.next = pd, pd.Header().End()
	return nil
}

// parseCopiedBatch checks that b is exactly one stored record batch:
// magic 2, its length the slice's, the CRC32C over attributes..end, and a
// header a stored batch may have (a cleaned batch may hold fewer records
// than it spans, the latest-record rewrite; markers are taken, the control batch format).
func parseCopiedBatch(b []byte) (batchHeader, error) {
	if len(b) < batchHeaderLen {
		return batchHeader{}, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(b))
	}
	if b[magicOff] != 2 {
		return batchHeader{}, fmt.Errorf("%w: magic %d", ErrCorruptBatch, int8(b[magicOff]))
	}
	if n := int64(binary.BigEndian.Uint32(b[batchLengthOff:])) + batchLenPrefix; n != int64(len(b)) {
		return batchHeader{}, fmt.Errorf("%w: batch of %d bytes in %d", ErrCorruptBatch, n, len(b))
	}
	if want, got := binary.BigEndian.Uint32(b[crcOff:]), crc32.Checksum(b[attrsOff:], castagnoli); want != got {
		return batchHeader{}, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptBatch, want, got)
	}
	h := decodeHeader(b)
	if err := h.CheckStored(); err != nil {
		return batchHeader{}, err
	}
	return h, nil
}

// rebindLocked makes np the partition's binding (the durable replacement, the old copy's retirement): durably, with
// the old log marked for deletion in the same write; then in memory; then
// the old partition is closed and its log deleted. Needs adminMu.
func (rp Replicas) rebindLocked(t *topic, idx int32, np *partition) error {
	r := rp.r
	old := t.parts[idx]
	// No checkpoint of the old log may land after its keys go (as
	// DeleteTopic).
	old.ckptMu.Lock()
	defer old.ckptMu.Unlock()
	if err := rp.persistRebind(t, idx, np.log); err != nil {
		np.close()
		rp.discardLog(np.log)
		return storageErr("rebind partition", err)
	}
	// From here the new binding is the durable one. A produce through the
	// old partition that has not answered yet fails before the swap
	// publishes the new one, so none is acknowledged from a log that is
	// no longer bound.
	old.markReplaced()
	parts := append([]*partition(nil), t.parts...)
	parts[idx] = np
	nt := &topic{name: t.name, id: t.id, configs: t.configs, parts: parts, creator: t.creator}
	r.mu.Lock()
	closed := r.mu.closed
	r.mu.unpublishLocked(t)
	r.mu.publishLocked(nt)
	r.mu.Unlock()
	errs := []error{old.close()} // wakes its long polls (the old copy's retirement)
	if closed {
		// Close ran meanwhile and did not see np; Open binds it again.
		errs = append(errs, np.close())
	}
	errs = append(errs, r.deleteLogs([]storage.LogID{old.log}))
	if topicconfig.ViewOn(t.configs) {
		errs = append(errs, syncViews(r.store, &r.mu)) // the old log's view goes (view removal)
	}
	return errors.Join(errs...)
}

// persistRebind is the one write of the durable replacement: the binding names log for partition
// idx, log is no longer marked for deletion, the old log is.
func (rp Replicas) persistRebind(t *topic, idx int32, log storage.LogID) error {
	r := rp.r
	logs := make([]storage.LogID, len(t.parts))
	for i, p := range t.parts {
		logs[i] = p.log
	}
	logs[idx] = log
	return r.store.ApplyMeta(encodeTopic(t.name, t.id, logs, t.configs, t.creator),
		storage.MetaOp{Key: idKey(prefixDeleting, uint64(log)), Delete: true},
		storage.MetaOp{Key: idKey(prefixDeleting, uint64(t.parts[idx].log)), Value: []byte{}})
}

// LogOf is the storage log partition idx of topic is bound to now.
func (rp Replicas) LogOf(topic string, idx int32) (storage.LogID, error) {
	r := rp.r
	p, err := r.mu.partition(topic, idx)
	if err != nil {
		return 0, err
	}
	return p.log, nil
}

// PartitionOfLog is the partition bound to log now: its topic's name and
// id and its index; false when no partition is bound to it.
func (rp Replicas) PartitionOfLog(log storage.LogID) (topic string, id TopicID, idx int32, ok bool) {
	r := rp.r
	r.mu.RLock()
	defer r.mu.RUnlock()
	p := r.mu.byLog[log]
	if p == nil {
		return "", TopicID{}, 0, false
	}
	t := r.mu.topics[p.topic]
	if t == nil {
		return "", TopicID{}, 0, false
	}
	return p.topic, t.id, p.index, true
}

// LocalBounds is the start and end of partition idx's local log, which
// in cluster mode may start above the partition's (the local copy as a cache): retention and
// DeleteRecords move it.
func (rp Replicas) LocalBounds(topic string, idx int32) (start, end Offset, err error) {
	r := rp.r
	p, err := r.mu.partition(topic, idx)
	if err != nil {
		return 0, 0, err
	}
	b, err := r.store.Bounds(p.log)
	if err != nil {
		return 0, 0, storageErr("log bounds", err)
	}
	return b.Start, b.End, nil
}

// Replicas is the cluster side of a partition's local copy (the local copy rules):
// replacing the log a partition is bound to (ReplacePartition), the log
// behind a binding and back, its local bounds, and the producer and
// transaction state exported for another node. It owns the rebinding of
// one partition at a time under the catalog's admin lock; it may not
// create, delete or alter topics, write a produce, or change another
// partition's binding.
type Replicas struct{ r *Resolver }

// Replicas is the cluster side of r's partitions.
func (r *Resolver) Replicas() Replicas { return Replicas{r} }
