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
// capped by that, and a partition listed twice is read once. Every
// version gets batches as stored, zstd too (Kafka 4 converts none,
// KIP-896); v9+'s current leader epoch is checked as OffsetForLeaderEpoch.
// In cluster mode (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check) a partition led elsewhere, or by none, is
// NOT_LEADER_OR_FOLLOWER, the current leader epoch is checked against the
// partition's ownership epoch, and v12+ names the current leader.
// Left out: diverging epochs (one leader epoch, 0), preferred replicas.

import (
	"time"

	"github.com/kgateway/kgateway/kafka/fetch"
	"github.com/kgateway/kgateway/kafka/fetchsession"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleFetch answers a fetch through kafka/fetch: the items, the budget,
// the long poll and every partition's read and error answer are there;
// this node's batch holder, authorization, wait and (v16+) the leaders'
// endpoints are here.
func handleFetch(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.FetchRequest)
	resp, wire := s.fetcher().Fetch(r, fetch.Call{
		Wire:      func() *fetchwire.Batches { return newWire(rc.conn) },
		Owner:     func() string { return tenantOf(rc) },
		Authorize: func(items []fetch.Item, follower bool) { authorizeFetch(rc, items, follower) },
		Wait: func(appended <-chan struct{}, timeout <-chan time.Time) bool {
			return s.waitAny(rc, appended, timeout)
		},
	})
	if wire == nil {
		return resp, nil // a fetch session's error
	}
	s.fetchNodeEndpoints(resp)
	return &batchResponse{FetchResponse: resp, wire: wire}, nil
}

// fetcher is the server's kafka/fetch.Fetcher, its limits as configured.
func (s *Server) fetcher() *fetch.Fetcher {
	return &fetch.Fetcher{
		Host:     fetchHost{s},
		Sessions: &s.sessions,
		MaxBytes: s.cfg.FetchMaxBytes,
		Slots:    fetchsession.Slots{Total: s.cfg.FetchSessionCacheSlots, PerPrincipal: s.cfg.FetchSessionCacheSlotsPerPrincipal},
		Cluster:  s.cfg.Cluster != nil,
	}
}

// fetchHost is the Server as kafka/fetch sees it (fetch.Host).
type fetchHost struct{ s *Server }

func (h fetchHost) Resolve(topic string, partition int32) (resolver.Partition, error) {
	return h.s.resolvePartition(topic, partition, false)
}

func (h fetchHost) TopicByID(id [16]byte) (string, bool) {
	name, _, ok := h.s.topicByID(id)
	return name, ok
}

func (h fetchHost) RouteError(topic string, partition, current int32) error {
	return h.s.routeError(topic, partition, current)
}

func (h fetchHost) MovedTo(topic string, partition int32, err error) (node, epoch int32, ok bool) {
	return h.s.movedTo(topic, partition, err)
}

func (h fetchHost) EpochError(current int32) error { return leaderEpochError(current) }

func (h fetchHost) ReadInternal(topic string, partition int32, offset resolver.Offset, maxBytes int, minOne bool, iso resolver.Isolation, lease *resolver.Lease) (resolver.FetchResult, error) {
	return h.s.readPartition(topic, partition, offset, maxBytes, minOne, iso, lease)
}

func (h fetchHost) NewWaiter() *resolver.Waiter { return h.s.res.NewWaiter() }

func (h fetchHost) Code(err error) int16 { return errCode(err) }

// fetchReplicaID is fetch.ReplicaID (quotas exempt a replica's fetch).
func fetchReplicaID(r *kmsg.FetchRequest) int32 { return fetch.ReplicaID(r) }

// resolvePartition is partitionOf resolving the partition once: the
// resolver's binding, through which a fetch or produce then reads or
// writes. It never creates a topic (only Metadata auto-creates, as in
// Kafka 4). An internal topic has no binding (a zero Partition: its
// partitions are empty, internal_topics.go); partitionOf answers for it,
// write saying whether it is to be written.
func (s *Server) resolvePartition(topic string, partition int32, write bool) (resolver.Partition, error) {
	if resolver.IsInternalTopic(topic) {
		_, err := s.partitionOf(topic, partition, write)
		return resolver.Partition{}, err
	}
	return s.res.Resolve(topic, partition)
}

// waitAny waits for an append on a watched partition (true), or for the
// timer, the connection dying or the server closing (false).
func (s *Server) waitAny(rc *reqCtx, appended <-chan struct{}, timeout <-chan time.Time) bool {
	// A Fetch runs on its connection's reader (connection.Request.Prompt):
	// the reading goes on elsewhere, and sees the peer leave, while it waits.
	rc.req.HandOff()
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

// fetchNodeEndpoints lists the current leaders' endpoints
// (fetch.NodeEndpoints, KIP-951); only in cluster mode is a partition
// ever led elsewhere.
func (s *Server) fetchNodeEndpoints(resp *kmsg.FetchResponse) {
	if resp.Version < 16 || s.cfg.Cluster == nil {
		return
	}
	fetch.NodeEndpoints(resp, fetch.Endpoint(s.endpoints()))
}
