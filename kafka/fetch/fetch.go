package fetch

import (
	"time"

	"github.com/kgateway/kgateway/kafka/fetchsession"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Host is what a fetch needs from kafka/'s Server.
type Host interface {
	// Resolve resolves a partition once for the request (a zero
	// Partition for an internal topic's, which reads through
	// ReadInternal).
	Resolve(topic string, partition int32) (resolver.Partition, error)
	// TopicByID is a topic id's name (v13+).
	TopicByID(id [16]byte) (string, bool)
	// RouteError is the routing answer for a partition this node does
	// not serve, or whose current leader epoch is not the client's (NOT_LEADER_OR_FOLLOWER routing,
	// the leader epoch check); current is NoEpoch when the client knows none.
	RouteError(topic string, partition, current int32) error
	// MovedTo is the leader a client answered err should move to
	// (KIP-951).
	MovedTo(topic string, partition int32, err error) (node, epoch int32, ok bool)
	// EpochError checks a client's current leader epoch outside a
	// cluster, as OffsetForLeaderEpoch checks it.
	EpochError(current int32) error
	// ReadInternal is a cursorless read of an internal topic's
	// partition.
	ReadInternal(topic string, partition int32, offset resolver.Offset, maxBytes int, minOne bool, iso resolver.Isolation, lease *resolver.Lease) (resolver.FetchResult, error)
	// NewWaiter is a resolver Waiter for the long poll.
	NewWaiter() *resolver.Waiter
	// Code is the Kafka error code of err (0 for nil).
	Code(err error) int16
}

// NoEpoch is the current leader epoch of a client that knows none.
const NoEpoch = -1

// Fetcher answers fetches over Host and the fetch session cache.
type Fetcher struct {
	Host     Host
	Sessions *fetchsession.Cache
	MaxBytes int32              // fetch.max.bytes
	Slots    fetchsession.Slots // the session cache's bounds
	Cluster  bool               // cluster mode: RouteError checks the epoch
}

// Call is one request's part of kafka/: its batch holder, its
// authorization and its wait.
type Call struct {
	// Wire makes the response's batch holder (kafka/fetchwire), once,
	// when the fetch reads.
	Wire func() *fetchwire.Batches
	// Owner is the principal a session a full fetch opens is charged
	// to, asked only when one opens.
	Owner func() string
	// Authorize marks the items the principal may not read (Refused);
	// follower is a fetch from a replica.
	Authorize func(items []Item, follower bool)
	// Wait waits for an append on a watched partition (true), or for
	// the timer, the connection dying or the server closing (false).
	Wait func(appended <-chan struct{}, timeout <-chan time.Time) bool
}

// Fetch answers r: with its batches as markers into wire, or, with a nil
// wire, an answer without records (a fetch session's error).
func (f *Fetcher) Fetch(r *kmsg.FetchRequest, c Call) (resp *kmsg.FetchResponse, wire *fetchwire.Batches) {
	if r.IsolationLevel != 0 && r.IsolationLevel != 1 {
		return f.failAll(r, kerr.UnknownServerError), nil
	}
	s := getScratch()
	defer s.release()
	if r.Version < 7 {
		return f.fetchItems(c, r, f.requestItems(r, false), nil, false, s)
	}
	switch {
	case r.SessionEpoch < 0: // Session open and close by epoch: close the session, fetch without one
		if r.SessionID != 0 {
			f.Sessions.Remove(r.SessionID)
		}
		return f.fetchItems(c, r, f.requestItems(r, false), nil, false, s)
	case r.SessionEpoch == 0: // Session open and close by epoch: a full fetch opens a new session
		if r.SessionID != 0 {
			f.Sessions.Remove(r.SessionID)
		}
		return f.fetchItems(c, r, f.requestItems(r, true), nil, true, s)
	}
	fs := f.Sessions.Get(r.SessionID)
	if fs == nil {
		return fetchsession.Error(r, kerr.FetchSessionIDNotFound), nil // The session epoch check
	}
	items, err := f.beginIncremental(fs, r, s)
	if err != nil {
		return fetchsession.Error(r, err), nil
	}
	return f.fetchItems(c, r, items, fs, false, s)
}

// failAll answers a request Kafka fails whole (an unknown isolation
// level: IsolationLevel.forId throws, and FetchRequest.getErrorResponse
// answers): code at the top and in every requested partition, each
// without bounds or records, the request's session id echoed.
func (f *Fetcher) failAll(r *kmsg.FetchRequest, code *kerr.Error) *kmsg.FetchResponse {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.ErrorCode, resp.SessionID = code.Code, r.SessionID
	for _, rt := range r.Topics {
		t := kmsg.NewFetchResponseTopic()
		t.Topic, t.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			t.Partitions = append(t.Partitions, f.errorPart(rp.Partition, code))
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// beginIncremental checks an incremental fetch against its session and
// applies it (the session epoch check, sessions keyed by ids or names, the session partition bound), under the session's lock, and lists the
// session's items to read (one-by-one session epochs: the lock is not kept for the read).
func (f *Fetcher) beginIncremental(fs *fetchsession.Session, r *kmsg.FetchRequest, s *scratch) ([]Item, *kerr.Error) {
	var items []Item
	err := f.Sessions.Begin(fs, r, func(order []*fetchsession.Part) {
		items = f.sessionItems(fs.TopicIDs(), order, s.itemsFor(len(order)))
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// fetchItems reads items, long-polling while fewer than MinBytes are
// ready, and answers: every item (full or sessionless), or, for session
// fs, only the items with something new. With open, a full fetch opens a
// session over its items. The answers are read into s's memory; the
// response carries copies of those it keeps.
func (f *Fetcher) fetchItems(c Call, r *kmsg.FetchRequest, items []Item, fs *fetchsession.Session, open bool, s *scratch) (*kmsg.FetchResponse, *fetchwire.Batches) {
	c.Authorize(items, ReplicaID(r) >= 0)
	rd := f.pollItems(c, r, items, fs, s.readFor(len(items)))
	parts := rd.parts
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	switch {
	case fs != nil:
		if !finishIncremental(fs, r, items, resp, rd) {
			return fetchsession.Error(r, kerr.InvalidFetchSessionEpoch), nil // One-by-one session epochs
		}
	default:
		resp.Topics = assembleTopics(items, parts, nil)
		if open {
			resp.SessionID = f.openSession(r, c.Owner(), items, rd)
		}
	}
	return resp, rd.wire
}

// finishIncremental fills an incremental response with the partitions
// that have something new, under the session's lock. It reports false,
// and changes nothing, when another request moved the session's epoch
// while this one read (a duplicate request: one-by-one session epochs).
func finishIncremental(fs *fetchsession.Session, r *kmsg.FetchRequest, items []Item, resp *kmsg.FetchResponse, rd *read) bool {
	return fs.Finish(r.SessionEpoch, func() {
		resp.SessionID = fs.ID()
		resp.Topics = assembleTopics(items, rd.parts, func(it *Item, p *kmsg.FetchResponseTopicPartition) bool {
			return it.sp.Changed(p)
		})
		for i := range items {
			items[i].sp.Quiet = rd.items[i].quiet
		}
	})
}

// openSession opens a session over a full fetch's items and returns its
// id, 0 when there is no room (the fetch session cache bound).
func (f *Fetcher) openSession(r *kmsg.FetchRequest, owner string, items []Item, rd *read) int32 {
	sps := make([]*fetchsession.Part, len(items))
	for i := range items {
		sps[i] = items[i].sp
		sps[i].Remember(&rd.parts[i])
		sps[i].Quiet = rd.items[i].quiet
	}
	fs := f.Sessions.Create(f.Slots, owner, r.Version >= 13, sps)
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
//
// The Waiter must see every append after a partition's read. Outside a
// session, or in a cluster, it is registered before the first read. A
// session's reads on one node carry the partitions' Versions, so there it
// is registered only once the first read leaves the fetch waiting (most
// fetches of a busy session answer at once), and a partition whose
// Version moved between its read and the registration is read again, as
// if it had fired. An incremental fetch waits on its session's kept
// Waiter (keptWaiter), which earlier fetches registered on most
// partitions already: it registers only the partitions new to it.
func (f *Fetcher) pollItems(c Call, r *kmsg.FetchRequest, items []Item, fs *fetchsession.Session, rd *read) *read {
	_, minBytes := f.limits(r)
	canWait := r.MaxWaitMillis > 0 && minBytes > 0
	late := !f.Cluster && len(items) > 0 && items[0].sp != nil
	var w *resolver.Waiter
	var kept *keptWaiter
	switch {
	case canWait && !late:
		w = f.waiter(items)
		defer w.Close()
	case canWait:
		if kept = f.keptFor(fs); kept != nil {
			defer kept.release()
		}
	}
	rd.wire = c.Wire()
	f.readOnce(r, items, rd, nil)
	if !canWait || rd.failed || rd.total >= minBytes {
		return rd
	}
	var fired map[resolver.PartitionKey]bool
	if late {
		if kept != nil {
			w = kept.w
		} else {
			w = f.Host.NewWaiter()
			defer w.Close()
		}
		fired = f.registerLate(w, items, rd)
	}
	timer := time.NewTimer(time.Duration(r.MaxWaitMillis) * time.Millisecond)
	defer timer.Stop()
	for {
		if len(fired) == 0 {
			if !c.Wait(w.C, timer.C) {
				return rd
			}
			fired = w.Fired()
		}
		f.readOnce(r, items, rd, fired)
		fired = nil
		if rd.failed || rd.total >= minBytes {
			return rd
		}
	}
}

// limits is the response's byte budget, the smaller of the request's
// MaxBytes and fetch.max.bytes, and the bytes a long poll waits for,
// MinBytes capped by that budget (more could never be answered), as
// Kafka's KafkaApis computes them.
func (f *Fetcher) limits(r *kmsg.FetchRequest) (maxBytes, minBytes int) {
	maxBytes = int(min(r.MaxBytes, f.MaxBytes))
	return maxBytes, min(int(r.MinBytes), maxBytes)
}

// waiter registers one Waiter on every known item's partition,
// resolving each for the whole request.
func (f *Fetcher) waiter(items []Item) *resolver.Waiter {
	w := f.Host.NewWaiter()
	for i := range items {
		it := &items[i]
		if it.Name == "" || resolver.IsInternalTopic(it.Name) {
			continue
		}
		if h, err := it.resolve(f.Host); err == nil {
			h.Watch(w)
		}
	}
	return w
}

// ReplicaID is the replica a fetch comes from: ReplicaID before v15,
// ReplicaState's id from v15 (KIP-903); -1 for a consumer.
func ReplicaID(r *kmsg.FetchRequest) int32 {
	if r.Version >= 15 {
		return r.ReplicaState.ID
	}
	return r.ReplicaID
}

// Endpoint is a node's address as a KIP-951 answer lists it; ok false
// when the node is not live.
type Endpoint func(node int32) (host string, port int32, rack *string, ok bool)

// NodeEndpoints lists, from v16 (KIP-951), the endpoint of every node a
// partition of resp names as its current leader, once each. Older
// versions do not encode the field.
func NodeEndpoints(resp *kmsg.FetchResponse, endpoint Endpoint) {
	if resp.Version < 16 {
		return
	}
	listed := map[int32]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			node := p.CurrentLeader.LeaderID
			if node < 0 || listed[node] {
				continue
			}
			if host, port, rack, ok := endpoint(node); ok {
				fb := kmsg.NewFetchResponseBroker()
				fb.NodeID, fb.Host, fb.Port, fb.Rack = node, host, port, rack
				resp.Brokers = append(resp.Brokers, fb)
				listed[node] = true
			}
		}
	}
}
