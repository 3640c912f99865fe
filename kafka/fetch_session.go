package kafka

// Fetch sessions (KIP-227). A consumer fetching many partitions sends the
// whole partition list once (a full fetch, epoch 0); the server keeps it in
// a session and answers with the session's id. Later requests (epoch 1, 2,
// …) are incremental: they name only partitions that were added or whose
// fetch offset or max bytes changed, plus the partitions to forget, and
// the response carries only partitions with something new: records, an
// error, or a changed high watermark, last stable offset or log start.
//
// The fetch session rules: doc.go "Fetch sessions".
//
// Reads stay cursorless (R1): a session remembers what the client asked
// for and what it was last told, never a read position of the log.

import (
	"cmp"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionEvictionAge is how long a session must be idle before any new
// session may evict it (Kafka's min.incremental.fetch.session.eviction.ms).
const sessionEvictionAge = 2 * time.Minute

// Session size bounds (the session partition bound). A partition in a session costs about 200
// bytes, so all sessions together hold at most about 200 MB.
const (
	// maxSessionPartitions is more partitions than one consumer of one
	// broker fetches in practice.
	maxSessionPartitions = 10000
	// maxCachedPartitions bounds the partitions of all sessions together.
	maxCachedPartitions = 1000000
)

// fetchSessions is the server's session cache (the fetch session cache bound). The zero value is
// ready to use.
type fetchSessions struct {
	mu struct {
		sync.Mutex
		byID  map[int32]*fetchSession
		total int // the sessions' sizes summed (the session partition bound)
		// byOwner counts the sessions of each principal (the fetch session cache bound).
		byOwner map[string]int
		// maxParts and maxTotal are the session partition bound bounds (0: maxSessionPartitions
		// and maxCachedPartitions); tests lower them.
		maxParts, maxTotal int
	}
}

// boundsLocked returns the session partition bound bounds.
func (c *fetchSessions) boundsLocked() (perSession, total int) {
	return cmp.Or(c.mu.maxParts, maxSessionPartitions), cmp.Or(c.mu.maxTotal, maxCachedPartitions)
}

// fetchSession is one client's session. The cache's mutex guards size and
// lastUsed (for eviction); the session's own mutex guards the rest and is
// held for a whole request (one-by-one session epochs).
type fetchSession struct {
	id       int32
	topicIDs bool   // Sessions keyed by ids or names: partitions are keyed by topic id (v13+)
	owner    string // the principal that opened it ("": no tenants, the fetch session cache bound)

	// Guarded by fetchSessions.mu.
	size     int
	lastUsed time.Time
	removed  bool

	mu struct {
		sync.Mutex
		epoch int32 // the epoch the next request must carry
		parts map[sessKey]*sessPart
		// order is the response order; partitions that returned records
		// move to the end so a byte budget does not starve the rest.
		order []*sessPart
	}
}

// sessKey names a partition in a session: by topic id (v13+) or by name.
type sessKey struct {
	id        [16]byte
	topic     string
	partition int32
}

// sessPart is what a session remembers of one partition: what the client
// asked for last, and what it was told last.
type sessPart struct {
	key      sessKey
	offset   int64
	maxBytes int32
	// leaderEpoch is the client's current leader epoch (-1: none).
	leaderEpoch int32
	sent        bool // answered at least once
	hwm         int64
	lso         int64
	logStart    int64
	gotData     bool // the last response carried records for it (rotation)
}

// keyOf is the session key of a requested partition.
func keyOf(topicIDs bool, topic string, id [16]byte, partition int32) sessKey {
	if topicIDs {
		return sessKey{id: id, partition: partition}
	}
	return sessKey{topic: topic, partition: partition}
}

// changed reports whether an incremental response must carry p, and
// records what it carries.
func (sp *sessPart) changed(p *kmsg.FetchResponseTopicPartition) bool {
	must := !sp.sent || len(p.RecordBatches) > 0 || p.ErrorCode != 0 ||
		p.HighWatermark != sp.hwm || p.LastStableOffset != sp.lso || p.LogStartOffset != sp.logStart
	sp.remember(p)
	return must
}

func (sp *sessPart) remember(p *kmsg.FetchResponseTopicPartition) {
	sp.sent = true
	sp.hwm, sp.lso, sp.logStart = p.HighWatermark, p.LastStableOffset, p.LogStartOffset
}

// nextEpoch is the epoch after e; it wraps to 1, never to 0 or -1.
func nextEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}

// get returns the session with id, marked used, or nil.
func (c *fetchSessions) get(id int32) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	fs := c.mu.byID[id]
	if fs != nil {
		fs.lastUsed = time.Now()
	}
	return fs
}

// remove drops the session with id, if any (session open and close by epoch).
func (c *fetchSessions) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fs := c.mu.byID[id]; fs != nil {
		c.dropLocked(fs)
	}
}

// dropLocked takes fs out of the cache.
func (c *fetchSessions) dropLocked(fs *fetchSession) {
	fs.removed = true
	c.mu.total -= fs.size
	delete(c.mu.byID, fs.id)
	if c.mu.byOwner[fs.owner]--; c.mu.byOwner[fs.owner] <= 0 {
		delete(c.mu.byOwner, fs.owner)
	}
}

// resize records a session's partition count for eviction decisions, or
// reports false when n partitions are beyond the bounds (the session partition bound).
func (c *fetchSessions) resize(fs *fetchSession, n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fs.removed {
		return true // no longer counted
	}
	if perSession, total := c.boundsLocked(); n > perSession || c.mu.total-fs.size+n > total {
		return false
	}
	c.mu.total += n - fs.size
	fs.size = n
	return true
}

// sessionSlots are the cache's bounds on sessions (the fetch session cache bound): slots in all,
// perPrincipal for one principal.
type sessionSlots struct{ total, perPrincipal int }

// create makes a session for owner over parts (in response order) with
// next epoch 1, or returns nil when the cache has no room for it (the fetch session cache bound).
func (c *fetchSessions) create(slots sessionSlots, owner string, topicIDs bool, parts []*sessPart) *fetchSession {
	if slots.total <= 0 {
		return nil // The fetch session cache bound
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if perSession, total := c.boundsLocked(); len(parts) > perSession || c.mu.total+len(parts) > total {
		return nil // The session partition bound
	}
	if c.mu.byID == nil {
		c.mu.byID = make(map[int32]*fetchSession)
		c.mu.byOwner = make(map[string]int)
	}
	if owner != "" && c.mu.byOwner[owner] >= slots.perPrincipal && !c.evictOwnLocked(owner, len(parts)) {
		return nil
	}
	if len(c.mu.byID) >= slots.total && !c.evictLocked(owner, len(parts)) {
		return nil
	}
	fs := &fetchSession{id: c.newIDLocked(), topicIDs: topicIDs, owner: owner, size: len(parts), lastUsed: time.Now()}
	fs.mu.epoch = 1
	fs.mu.parts = make(map[sessKey]*sessPart, len(parts))
	for _, sp := range parts {
		if _, dup := fs.mu.parts[sp.key]; !dup {
			fs.mu.parts[sp.key] = sp
			fs.mu.order = append(fs.mu.order, sp)
		}
	}
	fs.size = len(fs.mu.parts)
	c.mu.total += fs.size
	c.mu.byID[fs.id] = fs
	c.mu.byOwner[owner]++
	return fs
}

// evictLocked frees one slot for a session of owner with size
// partitions: the least recently used session if it is stale (Kafka's
// rule); else, fair share, the least recently used session of the
// principal holding the most sessions if it holds at least two more
// than owner; else, Kafka's other rule within owner's own sessions, its
// smallest if smaller than the newcomer. Without tenants (owner "" for
// all) that is Kafka's FetchSessionCache eviction exactly; with them no
// principal evicts another's session unless it holds fewer.
func (c *fetchSessions) evictLocked(owner string, size int) bool {
	var lru *fetchSession
	heaviest := owner
	for _, fs := range c.mu.byID {
		if lru == nil || fs.lastUsed.Before(lru.lastUsed) {
			lru = fs
		}
		if c.mu.byOwner[fs.owner] > c.mu.byOwner[heaviest] {
			heaviest = fs.owner
		}
	}
	switch {
	case lru != nil && time.Since(lru.lastUsed) >= sessionEvictionAge:
		c.dropLocked(lru)
		return true
	case c.mu.byOwner[heaviest] > c.mu.byOwner[owner]+1:
		return c.evictOwnLocked(heaviest, -1)
	}
	return c.evictOwnLocked(owner, size)
}

// evictOwnLocked frees a slot among owner's sessions for a newcomer of
// size partitions: the least recently used if it is stale or size is -1
// (fair share), else the smallest if smaller than the newcomer.
func (c *fetchSessions) evictOwnLocked(owner string, size int) bool {
	var lru, smallest *fetchSession
	for _, fs := range c.mu.byID {
		if fs.owner != owner {
			continue
		}
		if lru == nil || fs.lastUsed.Before(lru.lastUsed) {
			lru = fs
		}
		if smallest == nil || fs.size < smallest.size {
			smallest = fs
		}
	}
	victim := smallest
	if lru != nil && (size < 0 || time.Since(lru.lastUsed) >= sessionEvictionAge) {
		victim = lru
	} else if smallest == nil || smallest.size >= size {
		return false
	}
	c.dropLocked(victim)
	return true
}

// newIDLocked returns an unused positive session id.
func (c *fetchSessions) newIDLocked() int32 {
	for {
		id := rand.Int32N(math.MaxInt32) + 1
		if _, used := c.mu.byID[id]; !used {
			return id
		}
	}
}

// sessionCount is how many sessions the cache holds (tests).
func (c *fetchSessions) sessionCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.byID)
}

// updateLocked applies an incremental request to the session: requested
// partitions are added or get their new fetch offset and max bytes, and
// forgotten ones are dropped. Needs fs.mu.
func (fs *fetchSession) updateLocked(r *kmsg.FetchRequest) {
	for i := range r.Topics {
		rt := &r.Topics[i]
		for _, rp := range rt.Partitions {
			k := keyOf(fs.topicIDs, rt.Topic, rt.TopicID, rp.Partition)
			sp := fs.mu.parts[k]
			if sp == nil {
				sp = &sessPart{key: k}
				fs.mu.parts[k] = sp
				fs.mu.order = append(fs.mu.order, sp)
			}
			sp.offset, sp.maxBytes, sp.leaderEpoch = rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch
		}
	}
	forgot := false
	for _, ft := range r.ForgottenTopics {
		for _, p := range ft.Partitions {
			k := keyOf(fs.topicIDs, ft.Topic, ft.TopicID, p)
			if _, ok := fs.mu.parts[k]; ok {
				delete(fs.mu.parts, k)
				forgot = true
			}
		}
	}
	if forgot {
		kept := fs.mu.order[:0]
		for _, sp := range fs.mu.order {
			if fs.mu.parts[sp.key] == sp {
				kept = append(kept, sp)
			}
		}
		clear(fs.mu.order[len(kept):])
		fs.mu.order = kept
	}
}

// rotateLocked moves the partitions that returned records to the end of
// the response order, keeping the relative order of both groups.
func (fs *fetchSession) rotateLocked(gotData func(*sessPart) bool) {
	var quiet, busy []*sessPart
	for _, sp := range fs.mu.order {
		if gotData(sp) {
			busy = append(busy, sp)
		} else {
			quiet = append(quiet, sp)
		}
	}
	if len(busy) == 0 || len(quiet) == 0 {
		return
	}
	fs.mu.order = append(append(fs.mu.order[:0], quiet...), busy...)
}

// sessionError answers a fetch with a top-level session error (the session epoch check, one-by-one session epochs,
// sessions keyed by ids or names, the session partition bound).
func sessionError(r *kmsg.FetchRequest, err *kerr.Error) *kmsg.FetchResponse {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.ErrorCode = err.Code
	return resp
}
