package share

// Share-group dead-letter queues (KIP-1191, share.version 2): a group
// whose GROUP config errors.deadletterqueue.topic.name names a topic gets
// a copy of each record it rejects or whose delivery count limit is
// reached written to that topic before the record is archived.
//
// The order is Kafka's SharePartition's (ARCHIVING, then the DLQ write,
// then ARCHIVED), made durable at each step:
//
//  1. The record becomes archiving (deadState) and that state is
//     written to the share state like any other (persistLocked); the
//     SPSO stops at it, it is never delivered again.
//  2. The DLQ writer (runDLQ, one goroutine at a time per coordinator)
//     finds the archiving records, waits until the state it saw is
//     durable (stateWriter.flush), and writes their copies through the
//     ordinary produce path (DeadLetterLog.Produce: the resolver's
//     Produce, which returns once the records are durable).
//  3. Only then are the records archived, and that state written.
//
// A crash before 3 leaves them archiving: the writer runs again after
// the restart (NewCoordinator) and writes them again, so a record may
// be in the DLQ twice, never missing (at least once).
//
// A DLQ the group cannot use is not written and the records are
// archived regardless, as Kafka logs "Failed to write to DLQ, proceeding
// to ARCHIVED regardless": checked in Kafka's order (checkDLQTopic): no
// topic configured (or share.version below 2), a name starting with
// "__", a name without the errors.deadletterqueue.topic.name.prefix
// (Kafka's default "dlq."), a topic whose errors.deadletterqueue.group.enable
// is not true, a topic that does not exist (auto-creation,
// errors.deadletterqueue.auto.create.topics.enable, is off as Kafka's
// default and not served). A produce the partition refuses for good
// (too large, invalid, unknown) is the same. Any other produce failure
// (the log unavailable, the server closing) leaves the records
// archiving and the writer tries again later (retryDLQ), so a
// transient failure never drops a DLQ record.
//
// Each record's copy goes to partition (source partition mod the DLQ
// topic's partition count), timestamped now, with Kafka's headers
// (__dlq.errors.topic, .partition, .offset, .group, .delivery.count,
// .message), and the original key and value only when the group's
// errors.deadletterqueue.copy.record.enable is true (the original
// headers are never copied). The write is the broker's own, as Kafka's
// (its inter-broker client): no ACL of the group's members is checked
// on the DLQ topic.
//
// Cluster mode: a leader side never uses archiving (dlqOn); DLQs are
// served on a single node only, and share.version 2 is advertised only
// there (kafka/).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/topicconfig"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"
)

// DeadLetterLog is what the DLQ writer needs beyond Log.
type DeadLetterLog interface {
	// TopicConfig is topic's config name as set ("" when not set); ok
	// is false when the topic does not exist.
	TopicConfig(topic, name string) (value string, ok bool)
	// Produce appends one record batch to the partition through the
	// ordinary produce path and returns once it is durable.
	Produce(topic string, partition int32, batch []byte) error
	// Decompress is a batch's records section uncompressed (codec: the
	// attributes' low bits), as the resolver decompresses.
	Decompress(codec int8, section []byte) ([]byte, error)
}

// TopicConfigDLQEnable is the topic config that lets share groups use a
// topic as their dead-letter queue (KIP-1191; default false).
const TopicConfigDLQEnable = "errors.deadletterqueue.group.enable"

// dlqTopicPrefix is Kafka's default errors.deadletterqueue.topic.name.prefix:
// a DLQ topic's name must start with it.
const dlqTopicPrefix = "dlq."

// Kafka's DLQ record headers and the causes __dlq.errors.message names.
const (
	hdrTopic         = "__dlq.errors.topic"
	hdrPartition     = "__dlq.errors.partition"
	hdrOffset        = "__dlq.errors.offset"
	hdrGroup         = "__dlq.errors.group"
	hdrDeliveryCount = "__dlq.errors.delivery.count"
	hdrMessage       = "__dlq.errors.message"
	causeRejected    = "Offset rejected by client."
	causeExceeded    = "Offset delivery count exceeded the threshold."
)

// Bounds of the DLQ writer: records per partition and round, and the
// wait before a failed round is tried again (doubling up to the max).
const (
	dlqRoundRecords = 500
	dlqRetryFirst   = 200 * time.Millisecond
	dlqRetryMax     = 30 * time.Second
)

// dlqRunner runs the DLQ writer on demand, one goroutine at a time, as
// the stateWriter runs its writes.
type dlqRunner struct {
	mu      sync.Mutex
	running bool
	again   bool // kicked while running: another round
	backoff time.Duration
}

// dlqOn reports whether group has a dead-letter queue: share.version 2
// or more, a DLQ topic configured, and not a cluster's leader side.
func (c *Coordinator) dlqOn(group string) bool {
	return !c.leaderSide() && c.cfg.DeadLetters != nil && c.cfg.DLQEnabled != nil &&
		c.cfg.DLQEnabled() && c.GroupConfig(group, ConfigDLQTopic) != ""
}

// kickDLQ starts the DLQ writer, or asks the running one for another
// round.
func (c *Coordinator) kickDLQ() {
	if c.cfg.DeadLetters == nil || c.leaderSide() {
		return
	}
	r := &c.dlq
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		r.again = true
		return
	}
	r.running = true
	go c.runDLQ()
}

// runDLQ writes rounds until one finds nothing new; a round that failed
// is tried again after a backoff.
func (c *Coordinator) runDLQ() {
	r := &c.dlq
	for {
		ok := c.dlqRound()
		r.mu.Lock()
		if r.again {
			r.again = false
			r.mu.Unlock()
			continue
		}
		r.running = false
		if ok {
			r.backoff = 0
		} else {
			r.backoff = min(max(2*r.backoff, dlqRetryFirst), dlqRetryMax)
			time.AfterFunc(r.backoff, c.kickDLQ)
		}
		r.mu.Unlock()
		return
	}
}

// dlqRound writes the DLQ copies of every group's archiving records and
// archives them; false when some must be tried again.
func (c *Coordinator) dlqRound() bool {
	c.mu.Lock()
	groups := make([]*group, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	ok := true
	for _, g := range groups {
		g.mu.Lock()
		parts := make(map[offsets.TopicPartition]*partition, len(g.mu.parts))
		for tp, p := range g.mu.parts {
			parts[tp] = p
		}
		g.mu.Unlock()
		for tp, p := range parts {
			for {
				n, err := c.drainDLQ(g, tp, p)
				if err != nil {
					ok = false
				}
				if err != nil || n < dlqRoundRecords {
					break
				}
			}
		}
	}
	return ok
}

// deadRec is an archiving record: its offset, delivery count and cause.
type deadRec struct {
	off      int64
	count    int32
	rejected bool
}

// archivingLocked lists up to n archiving records. One below the
// delivery count limit was rejected; one at it was rejected only if it
// says so (after a restart it no longer can, and is named by its count,
// as Kafka's maybeResumeDlqArchiving). Needs mu.
func (p *partition) archivingLocked(n int, limit int32) []deadRec {
	var out []deadRec
	for i := range p.recs {
		if r := &p.recs[i]; r.state == archiving && len(out) < n {
			out = append(out, deadRec{off: p.start + int64(i), count: r.count, rejected: r.rejected || r.count < limit})
		}
	}
	return out
}

// drainDLQ writes the copies of up to dlqRoundRecords archiving records
// of p and then archives them (the three steps above); it returns how
// many it handled.
func (c *Coordinator) drainDLQ(g *group, tp offsets.TopicPartition, p *partition) (int, error) {
	p.mu.Lock()
	todo := p.archivingLocked(dlqRoundRecords, c.deliveryLimit())
	p.mu.Unlock()
	if len(todo) == 0 {
		return 0, nil
	}
	// The archiving state seen above was submitted before it was seen:
	// once this flush is over it is durable (step 1 before step 2). A
	// lock that expired during a fetch may have made a record archiving
	// with no write of its own; a crash before step 3 then leaves it at
	// its limit, archiving again after the restart, and its copy is
	// written again: still at least once.
	if err := c.writer.flush().wait(); err != nil {
		return 0, err
	}
	if err := c.writeDeadLetters(g.id, tp, todo); err != nil {
		var never dlqRefused
		if !errors.As(err, &never) {
			c.cfg.Logger.Warn("share-dlq-write-failed-will-retry", zap.String("group", g.id), zap.Error(err))
			return 0, err
		}
		c.cfg.Logger.Warn("share-dlq-write-failed-archived-regardless", zap.String("group", g.id), zap.Error(err))
	}
	if c.lookup(g.id) != g {
		return 0, nil // the group was deleted meanwhile
	}
	g.mu.Lock()
	if g.mu.parts[tp] != p {
		g.mu.Unlock()
		return 0, nil // its state was reset meanwhile
	}
	p.mu.Lock()
	for _, d := range todo {
		if d.off >= p.start && d.off < p.end() {
			if r := &p.recs[d.off-p.start]; r.state == archiving {
				r.state, r.rejected = archived, false
			}
		}
	}
	p.advanceLocked()
	p.wakeLocked()
	wait := c.persistLocked(g.id, tp, p)
	p.mu.Unlock()
	g.mu.Unlock()
	return len(todo), wait()
}

// dlqRefused is a DLQ write that can never succeed: the records are
// archived without it, as Kafka does.
type dlqRefused struct{ error }

func refused(format string, args ...any) error {
	return dlqRefused{fmt.Errorf(format, args...)}
}

// checkDLQTopic is Kafka's validateDlqTopic, in its order.
func (c *Coordinator) checkDLQTopic(group, topic string) error {
	switch {
	case topic == "" || !c.dlqOn(group):
		return refused("DLQ topic is not configured for share group %s.", group)
	case strings.HasPrefix(topic, "__"):
		return refused("Configured DLQ topic name in share group: %s cannot start with __, topic: %s.", group, topic)
	case !strings.HasPrefix(topic, dlqTopicPrefix):
		return refused("Configured DLQ topic name does not comply with the DLQ topic prefix in share group: %s, topic: %s, prefix: %s.", group, topic, dlqTopicPrefix)
	}
	v, exists := c.cfg.DeadLetters.TopicConfig(topic, TopicConfigDLQEnable)
	if !exists {
		return refused("DLQ topic does not exist and auto create is disabled on cluster for share group: %s, topic: %s.", group, topic)
	}
	if on, _ := parseBool(v); !on {
		return refused("DLQ is not enabled on configured DLQ topic for share group: %s, topic: %s.", group, topic)
	}
	return nil
}

// writeDeadLetters writes the copies of todo (records of tp, in offset
// order) to the group's DLQ topic, in batches below the topic's
// max.message.bytes.
func (c *Coordinator) writeDeadLetters(group string, tp offsets.TopicPartition, todo []deadRec) error {
	topic := c.GroupConfig(group, ConfigDLQTopic)
	if err := c.checkDLQTopic(group, topic); err != nil {
		return err
	}
	n, ok := c.log.Partitions(topic)
	if !ok || n <= 0 {
		return refused("DLQ topic partition count could not be found for share group %s with DLQ topic %s.", group, topic)
	}
	dst := tp.Partition % n
	var src map[int64]dlqRecord
	if copyRec, _ := parseBool(c.GroupConfig(group, ConfigDLQCopyRecord)); copyRec {
		src = readRecords(c.log, c.cfg.DeadLetters, tp, todo)
	}
	limit := topicconfig.DefaultMaxMessageBytes
	if v, _ := c.cfg.DeadLetters.TopicConfig(topic, "max.message.bytes"); v != "" {
		if m, err := strconv.Atoi(v); err == nil {
			limit = m
		}
	}
	now := c.cfg.Now().UnixMilli()
	var recs []dlqRecord
	size := batchHeaderLen
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		err := c.cfg.DeadLetters.Produce(topic, dst, encodeBatch(recs, now))
		recs, size = nil, batchHeaderLen
		return classify(c.log, err)
	}
	for _, d := range todo {
		r := dlqRecord{headers: dlqHeaders(group, tp, d)}
		if s, ok := src[d.off]; ok {
			r.key, r.value = s.key, s.value
		}
		est := len(r.key) + len(r.value) + len(r.headers) + 32
		if len(recs) > 0 && size+est > limit {
			if err := flush(); err != nil {
				return err
			}
		}
		recs = append(recs, r)
		size += est
	}
	return flush()
}

// classify makes a produce failure that retrying cannot mend a
// dlqRefused.
func classify(log Log, err error) error {
	if err == nil {
		return nil
	}
	switch log.Code(err) {
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidRecord.Code,
		kerr.CorruptMessage.Code, kerr.UnknownTopicOrPartition.Code, kerr.InvalidTopicException.Code:
		return dlqRefused{err}
	}
	return err
}

// dlqHeaders encodes a DLQ record's headers (count, then each key and
// value), Kafka's six.
func dlqHeaders(group string, tp offsets.TopicPartition, d deadRec) []byte {
	cause := causeExceeded
	if d.rejected {
		cause = causeRejected
	}
	kv := [][2]string{
		{hdrTopic, tp.Topic},
		{hdrPartition, strconv.Itoa(int(tp.Partition))},
		{hdrOffset, strconv.FormatInt(d.off, 10)},
		{hdrGroup, group},
		{hdrDeliveryCount, strconv.Itoa(int(d.count))},
		{hdrMessage, cause},
	}
	b := binary.AppendVarint(nil, int64(len(kv)))
	for _, h := range kv {
		b = binary.AppendVarint(b, int64(len(h[0])))
		b = append(b, h[0]...)
		b = binary.AppendVarint(b, int64(len(h[1])))
		b = append(b, h[1]...)
	}
	return b
}

// readRecords reads the source records of todo, by offset; a record the
// log no longer has (or cannot be read) is left out, and its DLQ copy
// carries the headers only, as Kafka's.
func readRecords(log Log, dl DeadLetterLog, tp offsets.TopicPartition, todo []deadRec) map[int64]dlqRecord {
	want := make(map[int64]bool, len(todo))
	for _, d := range todo {
		want[d.off] = true
	}
	out := make(map[int64]dlqRecord, len(todo))
	last := todo[len(todo)-1].off
	for off := todo[0].off; off <= last; {
		batches, err := log.Read(tp.Topic, tp.Partition, off, 1<<20, nil)
		if err != nil || len(batches) == 0 {
			break
		}
		next := off
		for _, b := range batches {
			sp, ok := spanOf(b)
			if !ok || len(b) < batchHeaderLen {
				continue
			}
			next = max(next, sp.last+1)
			if sp.control {
				continue
			}
			sec, err := dl.Decompress(int8(b[batchAttrsAt+1]&batchCodecMask), b[batchHeaderLen:])
			if err != nil {
				continue
			}
			recs, _ := parseRecords(sec, sp.first) // what parsed before an error
			for _, r := range recs {
				if want[r.off] {
					out[r.off] = r
				}
			}
		}
		if next <= off {
			break
		}
		off = next
	}
	return out
}
