package resolver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/storage"
)

// Produce validates one partition's records blob and appends it as one
// entry, durably (D1), with idempotent-producer checks (D4). It is
// ProduceAsync then Wait.
//
// The blob is exactly one batch (Produce v3+). It is validated, its records
// decompressed if need be (record validation), before anything is written
// (ErrCorruptBatch, ErrInvalidRecord, ErrUnsupportedMagic,
// ErrMessageTooLarge); a refused batch appends nothing.
// The blob is copied, so the caller's buffer is neither modified nor
// retained. The result is returned only after every entry is durable.
func (r *Resolver) Produce(topic string, partition int32, batch []byte) (ProduceResult, error) {
	pp, err := r.ProduceAsync(topic, partition, batch)
	if err != nil {
		return ProduceResult{}, err
	}
	return pp.Wait()
}

// PendingProduce is a produce whose entries are written (their offsets
// assigned, D3, and the idempotence check done, D4) but not yet known to be
// durable. Wait answers it.
type PendingProduce struct {
	r          *Resolver
	p          *partition
	pend       []*storage.Pending
	maxTimes   []int64
	appendTime int64
	w          *inflight
	dup        *seqBatch
	once       sync.Once
	res        ProduceResult
	err        error
}

// ProduceAsync is the first half of Produce: it validates and writes the
// batches under the partition's append lock and returns without waiting
// for durability. A connection can therefore write request N+1 while
// request N's group commit is still syncing, and one fsync covers both.
// Writes happen in call order, so two ProduceAsync calls made one after
// the other (not concurrently) on one partition get offsets in that order.
// The caller must not acknowledge anything before Wait returns (D1).
// batch is copied (Partition.ProduceAsync takes a batch over instead).
func (r *Resolver) ProduceAsync(topic string, partition int32, batch []byte) (*PendingProduce, error) {
	h, err := r.Resolve(topic, partition)
	if err != nil {
		return nil, err
	}
	// Its own copy, parsed once and handed over: storage keeps the
	// payload (tail cache) and the stamp rewrites it.
	return h.produceAsync(ParseBatches(append([]byte(nil), batch...)), true, nil)
}

// Batches is one partition's records of a produce request, parsed once
// (ParseBatches) and handed down as they are to the produce
// (Partition.ProduceAsync): split and checked (lengths, magic, CRC32C,
// header fields, exactly one batch, the codec check), with the first batch's header
// fields the Kafka front end decides on before the resolver writes it. A
// blob that failed the parse keeps its error, which the produce returns
// at the point it always did (after the partition is resolved, before
// anything is written); the exported fields are then read from its
// header bytes as far as there are enough of them.
type Batches struct {
	raw     []byte
	batches [][]byte
	hdrs    []batchHeader
	err     error
	// Codec is the first batch's compression codec; HasCodec is false
	// when the blob is too short to hold one (BatchCodec).
	Codec    Codec
	HasCodec bool
	// Transactional: the first batch is magic 2 with its transactional
	// bit set (BatchTransactional).
	Transactional bool
	// TxnProducer: it is a transactional data batch of the idempotent
	// producer ProducerID at ProducerEpoch (TxnBatchProducer).
	TxnProducer   bool
	ProducerID    int64
	ProducerEpoch int16
}

// ParseBatches parses records once (Batches).
func ParseBatches(records []byte) Batches {
	trace("parse")
	b := Batches{raw: records}
	b.batches, b.hdrs, b.err = splitBatches(records)
	if b.err != nil { // what the header bytes say
		b.Codec, b.HasCodec = BatchCodec(records)
		b.Transactional = BatchTransactional(records)
		b.ProducerID, b.ProducerEpoch, b.TxnProducer = TxnBatchProducer(records)
		return b
	}
	h := b.hdrs[0]
	b.Codec, b.HasCodec = Codec(h.Attributes&recordbatch.CodecMask), true
	b.Transactional = h.Transactional()
	b.ProducerID, b.ProducerEpoch = -1, -1
	if b.TxnProducer = h.Transactional() && !h.Control() && h.Idempotent(); b.TxnProducer {
		b.ProducerID, b.ProducerEpoch = h.ProducerID, h.ProducerEpoch
	}
	return b
}

// produceAsync is produceOnce, again on the partition's new binding when
// the one h resolved was replaced before anything was written (the old copy's retirement).
func (h Partition) produceAsync(b Batches, owned bool, frame *storage.Backing) (*PendingProduce, error) {
	if h.view != ledger.Committed {
		return nil, errReadOnly(h.name) // Read-only companions
	}
	for attempt := 0; ; attempt++ {
		pp, err := h.produceOnce(b, owned, frame)
		retry := errors.Is(err, ErrUnknownTopic) || errors.Is(err, errReplaced)
		if !retry || !h.p.isReplaced() {
			return pp, err
		}
		if attempt == maxRebinds {
			// Replaced again each time: the client retries, as after a
			// leader change; the topic itself was never gone.
			return nil, errReplaced
		}
		if h, err = h.rebind(); err != nil {
			return nil, err
		}
	}
}

func (h Partition) produceOnce(in Batches, owned bool, frame *storage.Backing) (*PendingProduce, error) {
	r, p := h.r, h.p
	if in.err != nil {
		return nil, in.err
	}
	// Owned, the batches are re-sliced below onto the very bytes they
	// are, so in stays as it was for a retry; else onto a copy, which in
	// must not see.
	batch, batches, hdrs := in.raw, in.batches, in.hdrs
	if !owned {
		batches = append([][]byte(nil), batches...)
	}
	_, s, err := p.ledgerAndSettings()
	if err != nil {
		return nil, err
	}
	for _, b := range batches {
		if len(b) > int(s.MaxMessageBytes) {
			return nil, fmt.Errorf("%w: %d bytes, max.message.bytes is %d", ErrMessageTooLarge, len(b), s.MaxMessageBytes)
		}
	}
	// The records, decompressed if need be (the codec check, the record count check and the decompression bound), outside every lock and
	// after the size check so that an oversized batch costs no decoding.
	limit, now := decompressedLimit(s.MaxMessageBytes), r.now().UnixMilli()
	for i, b := range batches {
		if err := p.checkRecords(b, limit, s.Records.Check(hdrs[i].BaseTimestamp, hdrs[i].MaxTimestamp, now, hdrs[i].Attributes)); err != nil {
			return nil, err
		}
	}
	if s.Recompress { // compression.type other than producer
		out, changed, err := recompressBatches(batches, s.Codec, s.Level, limit)
		if err != nil {
			return nil, err
		}
		if changed {
			batch, owned, frame = out, true, nil
			trace("parse") // the recompressed bytes
			if batches, hdrs, err = splitBatches(batch); err != nil {
				return nil, err
			}
		}
	}
	// Own copy unless handed over: storage keeps the payload (tail cache)
	// and the stamp rewrites it.
	buf := batch
	if !owned {
		buf = append([]byte(nil), batch...)
	}
	appendTime := int64(-1)
	if s.LogAppendTime {
		appendTime = r.now().UnixMilli()
	}
	maxTimes := make([]int64, len(batches))
	for i, b := range batches {
		batches[i] = buf[:len(b):len(b)]
		buf = buf[len(b):]
		maxTimes[i] = hdrs[i].MaxTimestamp
		switch {
		case appendTime >= 0:
			// Under the CRC: done here, outside every lock.
			setLogAppendTime(batches[i], appendTime)
			maxTimes[i] = appendTime
		case hdrs[i].Attributes&logAppendTimeBit != 0:
			// A producer's LogAppendTime bit on a CreateTime topic (Check
			// refused it on a LogAppendTime one): stored as CreateTime with
			// its max timestamp, as Kafka's in-place validation stores it.
			setCreateTime(batches[i])
		}
	}

	w := newInflight()
	p.app.Lock()
	pend, dup, err := p.appendLocked(batches, hdrs, maxTimes, w, frame, r.now, r.states.limits)
	p.app.Unlock()
	if err != nil {
		return nil, err
	}
	return &PendingProduce{r: r, p: p, pend: pend, maxTimes: maxTimes, appendTime: appendTime, w: w, dup: dup}, nil
}

// HoldsBatches says whether the store keeps the batches' bytes until the
// produce is answered (storage Pending.HoldsPayload): when false, a
// caller may reuse the bytes it handed over as soon as ProduceAsync
// returned (a pooled request frame goes back before the fdatasync; the
// tail cache holds the frame's Backing itself). An idempotent retry (D4)
// wrote nothing.
func (pp *PendingProduce) HoldsBatches() bool {
	for _, pd := range pp.pend {
		if pd.HoldsPayload() {
			return true
		}
	}
	return false
}

// Wait blocks until the produce's entries are durable (D1) and returns its
// result; an idempotent retry (D4) gets the original batch's offset once
// that batch is durable. Wait may be called more than once.
func (pp *PendingProduce) Wait() (ProduceResult, error) {
	pp.once.Do(func() {
		if pp.dup != nil {
			pp.res, pp.err = pp.p.awaitDuplicate(*pp.dup)
			return
		}
		pp.res, pp.err = pp.awaitDurable()
	})
	return pp.res, pp.err
}

// appendLocked runs under p.app: the idempotence check and the ledger
// Writes, so sequence order and offset order agree (D3, D4). It records
// the producer state of what it wrote, as of clock's time once written,
// tagged with w until w finishes.
func (p *partition) appendLocked(batches [][]byte, hdrs []batchHeader, maxTimes []int64, w *inflight, frame *storage.Backing, clock func() time.Time, lim producerLimits) ([]*storage.Pending, *seqBatch, error) {
	if p.app.failed != nil {
		return nil, nil, appendErr("partition failed earlier; reopen required", p.app.failed)
	}
	ml, err := p.writableLedger() // The old copy's retirement: nothing more goes to the old log
	if err != nil {
		return nil, nil, err
	}
	for _, h := range hdrs {
		if err := p.app.txn.Verify(h, p.app.prod.epochOf); err != nil { // KIP-890 partition verification, epoch fencing
			return nil, nil, err
		}
	}
	dup, err := planIdempotent(p.app.prod.m, hdrs)
	if err != nil {
		return nil, nil, err
	}
	if dup != nil {
		d := *dup
		return nil, &d, nil
	}
	pend := make([]*storage.Pending, 0, len(batches))
	for i, b := range batches {
		// A batch that starts a transaction holds the LSO back from before
		// it is written, so no read can see the LSO past it (the LSO).
		starts := hdrs[i].Transactional() && p.app.txn.Starts(hdrs[i].ProducerID)
		if starts {
			p.openTxn(p.app.next, hdrs[i].ProducerID)
		}
		pd, err := ml.Write(int(hdrs[i].Records), b, storage.AppendOptions{
			MaxTime: maxTimes[i], Stamp: stamp(maxTimes[i]), Retain: true, Backing: frame,
			// The batch CRC, verified by splitBatches (or recomputed for
			// LogAppendTime), covers bytes attrsOff..end, which the stamp
			// leaves alone: storage need not read them again.
			SuffixFrom: attrsOff, SuffixCRC: binary.BigEndian.Uint32(b[crcOff:]),
		})
		if starts && (err != nil || pd.Header().Offset != p.app.next) {
			p.closeTxn(p.app.next)
			if err == nil {
				// Cannot happen: this partition is its log's only writer.
				// Keep the LSO at the batch that starts the transaction.
				p.openTxn(pd.Header().Offset, hdrs[i].ProducerID)
			}
		}
		if err != nil {
			if i > 0 {
				// Earlier batches of this call are written and may become
				// durable; the in-memory state cannot describe them, so
				// refuse appends until a reopen replays the log.
				p.app.failed = err
			}
			return nil, nil, appendErr("write", err)
		}
		pend = append(pend, pd)
	}
	now := clock().UnixMilli()
	for i, pd := range pend {
		h, hd := hdrs[i], pd.Header()
		if h.Idempotent() {
			p.app.prod.record(h, hd.Offset, now, w, lim)
		}
		if h.Transactional() {
			p.app.txn.Begin(h.ProducerID, h.ProducerEpoch, hd.Offset)
		}
		p.app.maxTS.observe(maxTimes[i], hd.Offset)
		p.app.next = hd.End()
		p.app.last = pd
		p.app.unckpt++
		p.app.unckptBytes += int64(len(batches[i]))
	}
	w.ckptDue = p.checkpointDueLocked()
	return pend, nil, nil
}

// stamp returns the Stamp hook run under the log's append lock: it
// rewrites the base offset (not under the CRC) and sets the partition
// leader epoch to 0, this broker's only leader epoch (not under the CRC
// either).
func stamp(maxTime int64) func([]byte, Offset) int64 {
	return func(b []byte, base Offset) int64 {
		setBaseOffset(b, base)
		binary.BigEndian.PutUint32(b[batchLenPrefix:], 0)
		return maxTime
	}
}

// awaitDurable waits, outside every lock, until the call's entries are
// durable (D1), then wakes the partition's waiters.
func (pp *PendingProduce) awaitDurable() (ProduceResult, error) {
	p, pend, maxTimes, w := pp.p, pp.pend, pp.maxTimes, pp.w
	var werr error
	for _, pd := range pend {
		if err := pd.Wait(); err != nil && werr == nil {
			werr = err
		}
	}
	w.finish(werr)
	if werr != nil {
		p.app.Lock()
		if p.app.failed == nil {
			p.app.failed = werr
		}
		p.app.Unlock()
		return ProduceResult{}, appendErr("append", werr)
	}
	var replaced error
	for i, pd := range pend {
		if err := p.durableAppended(maxTimes[i], pd.Header().Offset); err != nil {
			replaced = err
		}
	}
	if replaced != nil {
		return ProduceResult{}, replaced
	}
	if w.ckptDue {
		// Counted under the append lock as this produce was written:
		// until a checkpoint takes them, every later append finds the
		// count due too, so no append lock again here.
		pp.r.states.maybeCheckpoint(p)
	}
	return ProduceResult{BaseOffset: pend[0].Header().Offset, LogAppendTime: pp.appendTime, LogStart: p.logStart()}, nil
}

// awaitDuplicate answers an idempotent retry (D4) with the original
// batch's offset, once that batch is durable (D1).
func (p *partition) awaitDuplicate(d seqBatch) (ProduceResult, error) {
	if d.w != nil {
		<-d.w.done
		if d.w.err != nil {
			return ProduceResult{}, appendErr("original append", d.w.err)
		}
	}
	if p.isReplaced() {
		return ProduceResult{}, errReplaced // The old copy's retirement: d.offset names the old log
	}
	return ProduceResult{BaseOffset: d.offset, LogAppendTime: -1, LogStart: p.logStart(), Duplicate: true}, nil
}

// maxRebinds bounds how often one call resolves a partition again after
// finding the one it resolved replaced (the old copy's retirement).
const maxRebinds = 3

// errReplaced is what a produce through a partition that ReplacePartition
// replaced gets when its answer would name the old log (the old copy's retirement): the client
// retries, as after a leader change.
var errReplaced = fmt.Errorf("%w: the partition's local copy was replaced", ErrNotLeader)

// appendErr wraps a failed write or wait: ErrNotLeader when the store's
// Replicator refused it because this node no longer owns the log (NOT_LEADER_OR_FOLLOWER after a refused write),
// ErrStorage otherwise.
func appendErr(op string, err error) error {
	if errors.Is(err, storage.ErrNotLeader) {
		return fmt.Errorf("%w: %s: %w", ErrNotLeader, op, err)
	}
	return storageErr(op, err)
}

// logStart is the log start offset for a produce response, -1 if the
// store cannot say.
func (p *partition) logStart() Offset {
	ml, _, err := p.ledgerAndSettings()
	if err != nil {
		return -1
	}
	sn, err := ml.Snapshot() // The local copy as a cache: in cluster mode, the published start
	if err != nil {
		return -1
	}
	return sn.Start
}
