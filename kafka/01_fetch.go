package kafka

// Fetch (key 1), versions 4–18.
//
//   v4  isolation level, last stable offset, aborted transactions:
//       read_committed reads below the last stable offset and gets the
//       aborted transactions overlapping what it reads (the read_committed bound).
//   v5  log start offset.        v6  nothing new.
//   v7  fetch sessions (KIP-227).  v8–v10  nothing new (v10: zstd).
//   v9  current leader epoch.    v11 rack, preferred read replica.
//   v12 flexible, last fetched epoch.   v13 topic ids instead of names.
//   v14 OFFSET_MOVED_TO_TIERED_STORAGE may be returned (KIP-405): never
//       is, kgateway reads its object tier itself.
//   v15 the replica id moves into ReplicaState (KIP-903); a consumer
//       sends -1 there.   v16 node endpoints of the leaders named
//       (KIP-951, cluster mode).
//   v17 a replica's directory id (KIP-853) and v18 a replica's high
//       watermark (KIP-1166): tagged fields only followers send, and
//       no node follows this one (a replica's fetch, ReplicaState's id
//       from v15, is NOT_LEADER_OR_FOLLOWER for every partition, as a
//       single-node Kafka answers it). The topic-id and
//       fetch-session rules of v13 (sessions keyed by ids or names: a session keeps the kind of
//       topic key it was opened with) hold for all of v13–v18.
//
// Fetch sessions (KIP-227) are kept: kafka/fetchsession has the session
// cache and its rules (the fetch session rules); a full fetch (epoch 0) opens a session, and
// incremental fetches name only changed partitions and get back only
// partitions with something new. Each partition
// carries high watermark, last stable offset and log start offset, error or
// not. The first batch of the first non-empty partition is returned whole
// even past the limits (KIP-74); later ones only within budget. Batches
// are served as stored (whole, validated by the resolver); a fetch inside a
// batch returns that whole batch. When fewer than MinBytes are ready the
// fetch waits on one resolver Waiter over all its partitions, a timer and
// the connection (it never polls), then re-reads the partitions that had
// an append.
// Limits, as Kafka's: a response carries at most min(MaxBytes,
// fetch.max.bytes) record bytes (a KIP-74 first batch whole), MinBytes is
// capped by that, and a partition listed twice is read once. Fetch below
// v10 never gets a zstd batch (UNSUPPORTED_COMPRESSION_TYPE), and v9+'s
// current leader epoch is checked as OffsetForLeaderEpoch checks it.
// In cluster mode (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check) a partition led elsewhere, or by none, is
// NOT_LEADER_OR_FOLLOWER, the current leader epoch is checked against the
// partition's ownership epoch, and v12+ names the current leader.
// Left out: diverging epochs (one leader epoch, 0), preferred replicas.

import (
	"errors"
	"time"

	"github.com/kgateway/kgateway/kafka/fetchsession"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchItem is one partition a fetch reads: from the request (full or
// sessionless fetch) or from the session (incremental fetch).
type fetchItem struct {
	name     string   // resolved topic name; "" when unknown
	reqTopic string   // the topic name as requested (v < 13)
	id       [16]byte // the topic id as requested (v13+)
	errID    bool     // requested by an id we do not know (v13+)
	refused  bool     // the principal may not READ the topic (per-API authorization)
	rp       kmsg.FetchRequestTopicPartition
	sp       *fetchsession.Part // nil without a session
	// The partition resolved once for the request (fetchItem.resolve): the
	// long poll's registration and every read of it go through h.
	resolved bool
	h        resolver.Partition
	herr     error
}

// resolve resolves it's partition once per request (resolvePartition);
// later calls return the first answer.
func (it *fetchItem) resolve(s *Server) (resolver.Partition, error) {
	if !it.resolved {
		it.h, it.herr = s.resolvePartition(nil, it.name, it.rp.Partition)
		it.resolved = true
	}
	return it.h, it.herr
}

// resolvePartition is partitionIn resolving the partition once: the
// resolver's binding, through which a fetch or produce then reads or
// writes. An internal topic has no binding (a zero Partition: its
// partitions are empty, internal_topics.go); a name that is not a
// topic's, and auto-creation (topic changes through the catalog) through cat (nil: never), the catalog
// of the request's principal, are partitionIn's.
func (s *Server) resolvePartition(cat Catalog, topic string, partition int32) (resolver.Partition, error) {
	if resolver.IsInternalTopic(topic) || !validTopicName(topic) {
		_, err := s.partitionIn(cat, topic, partition)
		return resolver.Partition{}, err
	}
	h, err := s.res.Resolve(topic, partition)
	if err == nil || cat == nil || !errors.Is(err, resolver.ErrUnknownTopic) {
		return h, err
	}
	if _, err := s.partitionIn(cat, topic, partition); err != nil {
		return resolver.Partition{}, err
	}
	return s.res.Resolve(topic, partition) // created just now
}

func handleFetch(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.FetchRequest)
	if r.Version < 7 {
		return s.fetchItems(rc, r, s.requestItems(r, false), nil, false), nil
	}
	switch {
	case r.SessionEpoch < 0: // Session open and close by epoch: close the session, fetch without one
		if r.SessionID != 0 {
			s.sessions.Remove(r.SessionID)
		}
		return s.fetchItems(rc, r, s.requestItems(r, false), nil, false), nil
	case r.SessionEpoch == 0: // Session open and close by epoch: a full fetch opens a new session
		if r.SessionID != 0 {
			s.sessions.Remove(r.SessionID)
		}
		return s.fetchItems(rc, r, s.requestItems(r, true), nil, true), nil
	}
	fs := s.sessions.Get(r.SessionID)
	if fs == nil {
		return fetchsession.Error(r, kerr.FetchSessionIDNotFound), nil // The session epoch check
	}
	items, err := s.beginIncremental(fs, r)
	if err != nil {
		return fetchsession.Error(r, err), nil
	}
	return s.fetchItems(rc, r, items, fs, false), nil
}

// beginIncremental checks an incremental fetch against its session and
// applies it (the session epoch check, sessions keyed by ids or names, the session partition bound), under the session's lock, and lists the
// session's items to read (one-by-one session epochs: the lock is not kept for the read).
func (s *Server) beginIncremental(fs *fetchsession.Session, r *kmsg.FetchRequest) ([]fetchItem, *kerr.Error) {
	var items []fetchItem
	err := s.sessions.Begin(fs, r, func(order []*fetchsession.Part) { items = s.sessionItems(fs.TopicIDs(), order) })
	if err != nil {
		return nil, err
	}
	return items, nil
}

// fetchItems reads items, long-polling while fewer than MinBytes are
// ready, and answers: every item (full or sessionless), or, for session
// fs, only the items with something new. With open, a full fetch opens a
// session over its items.
func (s *Server) fetchItems(rc *reqCtx, r *kmsg.FetchRequest, items []fetchItem, fs *fetchsession.Session, open bool) kmsg.Response {
	authorizeFetch(rc, items, fetchReplicaID(r) >= 0)
	rd := s.pollItems(rc, r, items)
	parts := rd.parts
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	switch {
	case fs != nil:
		if !s.finishIncremental(fs, r, items, resp, parts) {
			return fetchsession.Error(r, kerr.InvalidFetchSessionEpoch) // One-by-one session epochs
		}
	default:
		resp.Topics = assembleTopics(items, parts, nil)
		if open {
			resp.SessionID = s.openSession(r, tenantOf(rc), items, parts)
		}
	}
	s.fetchNodeEndpoints(resp)
	return &batchResponse{FetchResponse: resp, wire: rd.wire}
}

// finishIncremental fills an incremental response with the partitions
// that have something new, under the session's lock. It reports false,
// and changes nothing, when another request moved the session's epoch
// while this one read (a duplicate request: one-by-one session epochs).
func (s *Server) finishIncremental(fs *fetchsession.Session, r *kmsg.FetchRequest, items []fetchItem, resp *kmsg.FetchResponse, parts []kmsg.FetchResponseTopicPartition) bool {
	return fs.Finish(r.SessionEpoch, func() {
		resp.SessionID = fs.ID()
		resp.Topics = assembleTopics(items, parts, func(it *fetchItem, p *kmsg.FetchResponseTopicPartition) bool {
			return it.sp.Changed(p)
		})
	})
}

// openSession opens a session over a full fetch's items and returns its
// id, 0 when there is no room (the fetch session cache bound).
func (s *Server) openSession(r *kmsg.FetchRequest, owner string, items []fetchItem, parts []kmsg.FetchResponseTopicPartition) int32 {
	sps := make([]*fetchsession.Part, len(items))
	for i := range items {
		sps[i] = items[i].sp
		sps[i].Remember(&parts[i])
	}
	slots := fetchsession.Slots{Total: s.cfg.FetchSessionCacheSlots, PerPrincipal: s.cfg.FetchSessionCacheSlotsPerPrincipal}
	fs := s.sessions.Create(slots, owner, r.Version >= 13, sps)
	if fs == nil {
		return 0
	}
	return fs.ID()
}

// pollItems reads every item; when fewer than MinBytes are ready it waits
// on a resolver Waiter over the items' partitions, a timer and the
// connection (it never polls), and then re-reads only the partitions that
// had a durable append: the others are as they were (a long poll over a
// session of a thousand partitions re-reads one, not a thousand).
func (s *Server) pollItems(rc *reqCtx, r *kmsg.FetchRequest, items []fetchItem) *fetchRead {
	_, minBytes := s.fetchLimits(r)
	canWait := r.MaxWaitMillis > 0 && minBytes > 0
	var w *resolver.Waiter
	if canWait {
		// Register before reading so an append between the read and the
		// wait is not missed.
		w = s.fetchWaiter(items)
		defer w.Close()
	}
	rd := s.fetchOnce(r, items, nil, nil, newWire(rc.conn))
	if !canWait || rd.failed || rd.total >= minBytes {
		return rd
	}
	timer := time.NewTimer(time.Duration(r.MaxWaitMillis) * time.Millisecond)
	defer timer.Stop()
	for {
		if !s.waitAny(rc, w.C, timer.C) {
			return rd
		}
		rd = s.fetchOnce(r, items, rd, w.Fired(), nil)
		if rd.failed || rd.total >= minBytes {
			return rd
		}
	}
}

// fetchLimits is the response's byte budget, the smaller of the request's
// MaxBytes and fetch.max.bytes, and the bytes a long poll waits for,
// MinBytes capped by that budget (more could never be answered), as
// Kafka's KafkaApis computes them.
func (s *Server) fetchLimits(r *kmsg.FetchRequest) (maxBytes, minBytes int) {
	maxBytes = int(min(r.MaxBytes, s.cfg.FetchMaxBytes))
	return maxBytes, min(int(r.MinBytes), maxBytes)
}

// fetchRead is one read of a fetch's items: an answer per item (record
// batches as markers into wire, kafka/fetchwire), the record bytes of each,
// their total, and whether a partition failed.
type fetchRead struct {
	parts  []kmsg.FetchResponseTopicPartition
	sizes  []int
	wire   *fetchwire.Batches
	total  int
	failed bool
}

// fetchWaiter registers one Waiter on every known item's partition,
// resolving each for the whole request.
func (s *Server) fetchWaiter(items []fetchItem) *resolver.Waiter {
	w := s.res.NewWaiter()
	for i := range items {
		it := &items[i]
		if it.name == "" || resolver.IsInternalTopic(it.name) {
			continue
		}
		if h, err := it.resolve(s); err == nil {
			h.Watch(w)
		}
	}
	return w
}

// requestItems lists the request's partitions in request order; withSess
// gives each a session entry for the session a full fetch opens.
func (s *Server) requestItems(r *kmsg.FetchRequest, withSess bool) []fetchItem {
	var items []fetchItem
	seen := make(map[fetchsession.Key]int) // partition -> its index in items
	for i := range r.Topics {
		rt := &r.Topics[i]
		name, errID := s.topicName(r.Version, rt.Topic, rt.TopicID)
		for _, rp := range rt.Partitions {
			k := fetchsession.KeyOf(r.Version >= 13, rt.Topic, rt.TopicID, rp.Partition)
			it := fetchItem{name: name, reqTopic: rt.Topic, id: rt.TopicID, errID: errID, rp: rp}
			if withSess {
				it.sp = &fetchsession.Part{Key: k, Offset: rp.FetchOffset, MaxBytes: rp.PartitionMaxBytes,
					LeaderEpoch: rp.CurrentLeaderEpoch}
			}
			// A partition listed twice is read once: Kafka keys the
			// request's partitions in an insertion-ordered map, so the
			// last listing's fields win at the first listing's place.
			if j, dup := seen[k]; dup {
				items[j] = it
				continue
			}
			seen[k] = len(items)
			items = append(items, it)
		}
	}
	return items
}

// sessionItems lists a session's partitions (in its response order),
// with the fetch offsets and max bytes the client last asked for. Needs
// the session's lock (fetchsession.Cache.Begin).
func (s *Server) sessionItems(topicIDs bool, order []*fetchsession.Part) []fetchItem {
	items := make([]fetchItem, len(order))
	version := int16(12)
	if topicIDs {
		version = 13
	}
	for i, sp := range order {
		name, errID := s.topicName(version, sp.Key.Topic, sp.Key.ID)
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = sp.Key.Partition, sp.Offset, sp.MaxBytes
		rp.CurrentLeaderEpoch = sp.LeaderEpoch
		items[i] = fetchItem{name: name, reqTopic: sp.Key.Topic, id: sp.Key.ID, errID: errID, rp: rp, sp: sp}
	}
	return items
}

// topicName resolves a requested topic: by name before v13, by id after.
func (s *Server) topicName(version int16, topic string, id [16]byte) (name string, errID bool) {
	if version < 13 {
		return topic, false
	}
	if name, _, ok := s.topicByID(id); ok {
		return name, false
	}
	return "", true
}

// assembleTopics groups the answered partitions by topic, in item order;
// keep, when set, selects which partitions an incremental response
// carries.
func assembleTopics(items []fetchItem, parts []kmsg.FetchResponseTopicPartition, keep func(*fetchItem, *kmsg.FetchResponseTopicPartition) bool) []kmsg.FetchResponseTopic {
	var topics []kmsg.FetchResponseTopic
	for i := range items {
		it, p := &items[i], &parts[i]
		if it.sp != nil {
			it.sp.GotData = len(p.RecordBatches) > 0
		}
		if keep != nil && !keep(it, p) {
			continue
		}
		if n := len(topics); n == 0 || topics[n-1].Topic != topicLabel(it) || topics[n-1].TopicID != it.id {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = topicLabel(it), it.id
			topics = append(topics, t)
		}
		t := &topics[len(topics)-1]
		t.Partitions = append(t.Partitions, *p)
	}
	return topics
}

// topicLabel is the topic name a response carries for it.
func topicLabel(it *fetchItem) string {
	if it.name != "" {
		return it.name
	}
	return it.reqTopic
}

// waitAny waits for an append on a watched partition (true), or for the
// timer, the connection dying or the server closing (false).
func (s *Server) waitAny(rc *reqCtx, appended <-chan struct{}, timeout <-chan time.Time) bool {
	defer rc.addWait(time.Now()) // a long poll is not handling time
	select {
	case <-appended:
		return true
	case <-timeout:
	case <-rc.ctx.Done():
	case <-s.closing:
	}
	return false
}

// fetchOnce reads every item under the request's byte budget (an error
// answers at once, like Kafka's DelayedFetch). With prev (the previous
// read of the same items) only the partitions in fired are read again; the
// others keep their answer, which no durable append has changed since.
func (s *Server) fetchOnce(r *kmsg.FetchRequest, items []fetchItem, prev *fetchRead, fired map[resolver.PartitionKey]bool, wire *fetchwire.Batches) *fetchRead {
	budget, _ := s.fetchLimits(r)
	iso := resolver.ReadUncommitted
	if r.IsolationLevel == int8(resolver.ReadCommitted) {
		iso = resolver.ReadCommitted
	}
	rd := prev
	if rd == nil {
		rd = &fetchRead{parts: make([]kmsg.FetchResponseTopicPartition, len(items)), sizes: make([]int, len(items)), wire: wire}
	}
	rd.total, rd.failed = 0, false
	follower := fetchReplicaID(r) >= 0
	for i := range items {
		it, out := &items[i], &rd.parts[i]
		if prev == nil || fired[resolver.PartitionKey{Topic: it.name, Partition: it.rp.Partition}] {
			rd.sizes[i] = 0
			switch {
			case it.errID:
				*out = fetchError(it.rp.Partition, kerr.UnknownTopicID)
			case it.refused:
				*out = fetchError(it.rp.Partition, kerr.TopicAuthorizationFailed)
			case follower:
				// No node replicates from this one: Kafka answers a
				// fetch from a replica that is not one of the
				// partition's followers NOT_LEADER_OR_FOLLOWER.
				*out = fetchError(it.rp.Partition, kerr.NotLeaderForPartition)
			case s.cfg.Cluster == nil && r.Version >= 9 && it.rp.CurrentLeaderEpoch >= 0 && leaderEpochError(it.rp.CurrentLeaderEpoch) != nil:
				// Kafka checks only an epoch the client knows (>= 0). In
				// cluster mode fetchPartition checks it (the leader epoch check).
				*out = fetchError(it.rp.Partition, leaderEpochError(it.rp.CurrentLeaderEpoch))
			default:
				maxBytes := min(int(it.rp.PartitionMaxBytes), budget-rd.total)
				minOne := rd.total == 0 // KIP-74: only until some partition has data
				*out, rd.sizes[i] = s.fetchPartition(it, maxBytes, minOne, iso, r.Version, rd.wire)
			}
		}
		rd.total += rd.sizes[i]
		rd.failed = rd.failed || out.ErrorCode != 0
	}
	return rd
}

// fetchReplicaID is the replica a fetch comes from: ReplicaID before
// v15, ReplicaState's id from v15 (KIP-903); -1 for a consumer.
func fetchReplicaID(r *kmsg.FetchRequest) int32 {
	if r.Version >= 15 {
		return r.ReplicaState.ID
	}
	return r.ReplicaID
}

// fetchPartition reads one partition through its resolved binding: one
// read, or with the budget spent one snapshot, and the bounds of either
// are set on every answer.
func (s *Server) fetchPartition(it *fetchItem, maxBytes int, minOne bool, iso resolver.Isolation, version int16, wire *fetchwire.Batches) (kmsg.FetchResponseTopicPartition, int) {
	topic, rp := it.name, it.rp
	h, err := it.resolve(s)
	if err != nil {
		return fetchError(rp.Partition, err), 0
	}
	if err := s.routeError(topic, rp.Partition, fetchCurrentEpoch(version, rp)); err != nil { // NOT_LEADER_OR_FOLLOWER routing, the leader epoch check
		return s.fetchMoved(topic, rp.Partition, err), 0
	}
	internal := resolver.IsInternalTopic(topic)
	if maxBytes <= 0 && !minOne {
		// Budget spent: report the bounds only.
		out := s.fetchBoundsOnly(h, internal, rp.Partition)
		if out.ErrorCode == 0 {
			out.AbortedTransactions = abortedOf(iso, nil)
		}
		return out, 0
	}
	offset := resolver.Offset(rp.FetchOffset)
	var res resolver.FetchResult
	if internal {
		res, err = s.readPartition(topic, rp.Partition, offset, max(maxBytes, 0), minOne, iso, wire.Lease())
	} else {
		res, err = h.Fetch(offset, max(maxBytes, 0), minOne, iso, wire.Lease())
	}
	if err != nil {
		// Kafka reports no bounds with an error, not even
		// OFFSET_OUT_OF_RANGE's, so none is looked up.
		return fetchError(rp.Partition, err), 0
	}
	if version < 10 {
		var cut bool
		if res.Batches, res.Bytes, cut = cutZstd(res.Batches); cut && len(res.Batches) == 0 {
			return fetchError(rp.Partition, kerr.UnsupportedCompressionType), 0
		}
		if res.Srcs != nil {
			res.Srcs = res.Srcs[:len(res.Batches)]
		}
	}
	out := kmsg.NewFetchResponseTopicPartition()
	out.Partition = rp.Partition
	out.HighWatermark = int64(res.HighWatermark)
	out.LastStableOffset = int64(res.LastStable)
	out.LogStartOffset = int64(res.LogStart)
	// Empty, not null: librdkafka refuses a null record set (size -1).
	out.RecordBatches = []byte{}
	if len(res.Batches) > 0 {
		// The stored bytes are the wire bytes: nothing is decoded per
		// record, and nothing is copied (kafka/fetchwire).
		out.RecordBatches = wire.Mark(res.Batches, res.Srcs, res.Bytes)
	}
	out.AbortedTransactions = abortedOf(iso, res.Aborted)
	return out, res.Bytes
}

// abortedOf is a partition's AbortedTransactions (read_committed, resolver
// the read_committed bound). As Kafka sends it: null for read_uncommitted, a list (empty when
// there are none) for read_committed.
func abortedOf(iso resolver.Isolation, aborted []resolver.AbortedTxn) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	if iso != resolver.ReadCommitted {
		return nil
	}
	out := make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, len(aborted))
	for i, a := range aborted {
		out[i] = kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		out[i].ProducerID, out[i].FirstOffset = a.ProducerID, int64(a.FirstOffset)
	}
	return out
}

// cutZstd keeps the batches before the first zstd one and their bytes;
// cut reports that one was found. Fetch before v10 never receives a zstd
// batch (a client that old cannot decode it): the batches before it are
// served, and a partition whose next batch is zstd answers
// UNSUPPORTED_COMPRESSION_TYPE. (Kafka decides by the topic's
// compression.type; here each batch's own codec decides, which is the
// same when compression.type is zstd, every batch being stored as zstd.)
func cutZstd(batches [][]byte) (kept [][]byte, bytes int, cut bool) {
	for i, b := range batches {
		if c, ok := resolver.BatchCodec(b); ok && c == resolver.CodecZstd {
			return batches[:i], bytes, true
		}
		bytes += len(b)
	}
	return batches, bytes, false
}

// fetchBoundsOnly answers a partition without records, with its bounds
// (an internal topic's are all 0: it is empty).
func (s *Server) fetchBoundsOnly(h resolver.Partition, internal bool, partition int32) kmsg.FetchResponseTopicPartition {
	var start, hwm, lso resolver.Offset
	var err error
	if !internal {
		start, hwm, lso, err = h.Bounds()
	}
	out := fetchError(partition, err)
	if err == nil {
		out.LogStartOffset, out.HighWatermark, out.LastStableOffset = int64(start), int64(hwm), int64(lso)
	}
	return out
}

// fetchCurrentEpoch is the client's current leader epoch to check: from
// v9, and only one it knows (>= 0), as Kafka reads a negative one as none.
func fetchCurrentEpoch(version int16, rp kmsg.FetchRequestTopicPartition) int32 {
	if version < 9 || rp.CurrentLeaderEpoch < 0 {
		return noLeaderEpoch
	}
	return rp.CurrentLeaderEpoch
}

// fetchMoved answers a partition this node does not serve (NOT_LEADER_OR_FOLLOWER routing) with the
// current leader (KIP-951), so the client moves without asking Metadata
// first. The field is tagged: only v12+ (flexible) carries it; from v16
// the response also lists the endpoints of the leaders it names
// (fetchNodeEndpoints).
func (s *Server) fetchMoved(topic string, partition int32, err error) kmsg.FetchResponseTopicPartition {
	out := fetchError(partition, err)
	if node, epoch, ok := s.movedTo(topic, partition, err); ok {
		out.CurrentLeader.LeaderID, out.CurrentLeader.LeaderEpoch = node, epoch
	}
	return out
}

// fetchNodeEndpoints lists, from v16 (KIP-951), the endpoint of every
// node a partition of resp names as its current leader, once each; only
// in cluster mode is a partition ever led elsewhere. Older versions do
// not encode the field.
func (s *Server) fetchNodeEndpoints(resp *kmsg.FetchResponse) {
	if resp.Version < 16 || s.cfg.Cluster == nil {
		return
	}
	var brokers []Broker
	listed := map[int32]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			node := p.CurrentLeader.LeaderID
			if node < 0 || listed[node] {
				continue
			}
			if brokers == nil {
				brokers = s.cfg.Cluster.Brokers()
			}
			if b, ok := brokerByID(brokers, node); ok {
				fb := kmsg.NewFetchResponseBroker()
				fb.NodeID, fb.Host, fb.Port, fb.Rack = b.NodeID, b.Host, b.Port, b.Rack
				resp.Brokers = append(resp.Brokers, fb)
				listed[node] = true
			}
		}
	}
}

// fetchError answers a partition with err's code as Kafka does
// (FetchResponse.partitionResponse): no bounds (-1) and empty, never null,
// records. librdkafka refuses a whole response holding a null record set
// ("invalid MessageSetSize -1"), so a consumer would never see the error,
// OFFSET_OUT_OF_RANGE above all, and never reset its offset.
func fetchError(partition int32, err error) kmsg.FetchResponseTopicPartition {
	out := kmsg.NewFetchResponseTopicPartition()
	out.Partition = partition
	out.ErrorCode = errCode(err)
	out.HighWatermark, out.LastStableOffset, out.LogStartOffset = -1, -1, -1
	out.RecordBatches = []byte{}
	return out
}
