package fetchsession

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

// Cache is the server's session cache (the fetch session cache bound). The zero value is
// ready to use.
type Cache struct {
	mu struct {
		sync.Mutex
		byID  map[int32]*Session
		total int // the sessions' sizes summed (the session partition bound)
		// byOwner counts the sessions of each principal (the fetch session cache bound).
		byOwner map[string]int
		// maxParts and maxTotal are the session partition bound bounds (0: maxSessionPartitions
		// and maxCachedPartitions); tests lower them.
		maxParts, maxTotal int
		// dropped are the Watches of sessions dropped under mu, closed
		// once it is released (unlockAndClose): closing one takes the
		// locks of the partitions it watches, never under the cache's.
		dropped []Watch
		// watchIdle is how long a session's Watch outlives its last
		// request (0: sessionEvictionAge; tests lower it), and idleScan
		// when idle ones were last looked for.
		watchIdle time.Duration
		idleScan  time.Time
	}
}

// Watch is what a session keeps registered between its requests
// (kafka/fetch's long-poll waiter, the kept session waiter): closed
// once, after the session is dropped (removed, replaced by epoch, evicted
// or grown past its bound), outside the cache's lock.
type Watch interface{ Close() }

// unlockAndClose releases c.mu, then closes the Watches of the sessions
// dropped under it.
func (c *Cache) unlockAndClose() {
	dropped := c.mu.dropped
	c.mu.dropped = nil
	c.mu.Unlock()
	for _, w := range dropped {
		w.Close()
	}
}

// boundsLocked returns the session partition bound bounds.
func (c *Cache) boundsLocked() (perSession, total int) {
	return cmp.Or(c.mu.maxParts, maxSessionPartitions), cmp.Or(c.mu.maxTotal, maxCachedPartitions)
}

// Session is one client's session. The cache's mutex guards size and
// lastUsed (for eviction); the session's own mutex guards the rest and is
// held for a whole request (one-by-one session epochs).
type Session struct {
	id       int32
	topicIDs bool   // Sessions keyed by ids or names: partitions are keyed by topic id (v13+)
	owner    string // the principal that opened it ("": no tenants, the fetch session cache bound)

	// Guarded by Cache.mu.
	size     int
	lastUsed time.Time
	removed  bool
	watch    Watch // nil until the first request needs one (Cache.Watch)

	mu struct {
		sync.Mutex
		epoch int32 // the epoch the next request must carry
		parts map[Key]*Part
		// order is the response order; partitions that returned records
		// move to the end so a byte budget does not starve the rest.
		order []*Part
	}
}

// Key names a partition in a session: by topic id (v13+) or by name.
type Key struct {
	ID        [16]byte
	Topic     string
	Partition int32
}

// Part is what a session remembers of one partition: what the client
// asked for last, and what it was told last.
type Part struct {
	Key      Key
	Offset   int64
	MaxBytes int32
	// LeaderEpoch is the client's current leader epoch (-1: none).
	LeaderEpoch int32
	// GotData: the last response carried records for it (rotation).
	GotData  bool
	sent     bool // answered at least once
	hwm      int64
	lso      int64
	logStart int64
	// Quiet is the partition's last read when it found nothing new,
	// written by the request that read it, under the session's lock.
	Quiet Quiet
}

// Quiet is a read that found a partition with nothing past the fetch
// offset, with no error: while the client fetches from the same offset
// and the partition's version is the one loaded before that read, a read
// now would answer the same bounds and no records, so kafka/fetch answers
// them without reading (a session's unchanged partitions). The zero
// Quiet is no such read.
type Quiet struct {
	Set    bool
	Offset int64 // the fetch offset it read at: the high watermark then
	// Version is the partition's version before the read: kafka/fetch's
	// (resolver.Version), opaque here.
	Version       [3]uint64
	LSO, LogStart int64
	// Binding is the partition binding the read went through
	// (kafka/fetch's resolver.Partition), opaque here: reused while its
	// version is still Version.
	Binding any
}

// KeyOf is the session key of a requested partition.
func KeyOf(topicIDs bool, topic string, id [16]byte, partition int32) Key {
	if topicIDs {
		return Key{ID: id, Partition: partition}
	}
	return Key{Topic: topic, Partition: partition}
}

// Changed reports whether an incremental response must carry p, and
// records what it carries.
func (sp *Part) Changed(p *kmsg.FetchResponseTopicPartition) bool {
	must := !sp.sent || len(p.RecordBatches) > 0 || p.ErrorCode != 0 ||
		p.HighWatermark != sp.hwm || p.LastStableOffset != sp.lso || p.LogStartOffset != sp.logStart
	sp.Remember(p)
	return must
}

// Remember records what a response told the client of the partition.
func (sp *Part) Remember(p *kmsg.FetchResponseTopicPartition) {
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

// Get returns the session with id, marked used, or nil.
func (c *Cache) Get(id int32) *Session {
	c.mu.Lock()
	defer c.unlockAndClose()
	now := time.Now()
	c.closeIdleWatchesLocked(now)
	fs := c.mu.byID[id]
	if fs != nil {
		fs.lastUsed = now
	}
	return fs
}

// closeIdleWatchesLocked takes the Watch from every session idle for
// the watch idle age (closed by unlockAndClose), looking at most four
// times an age. A session a client left without closing it stays cached
// until evicted; its Watch would fire on every append to its partitions
// meanwhile. A later request of the session makes a new one (Watch).
func (c *Cache) closeIdleWatchesLocked(now time.Time) {
	age := cmp.Or(c.mu.watchIdle, sessionEvictionAge)
	if now.Sub(c.mu.idleScan) < age/4 {
		return
	}
	c.mu.idleScan = now
	for _, fs := range c.mu.byID {
		if fs.watch != nil && now.Sub(fs.lastUsed) >= age {
			c.mu.dropped = append(c.mu.dropped, fs.watch)
			fs.watch = nil
		}
	}
}

// SetWatchIdle sets how long a session's Watch outlives its last request
// (0: the default). For tests.
func (c *Cache) SetWatchIdle(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.watchIdle, c.mu.idleScan = d, time.Time{}
}

// Remove drops the session with id, if any (session open and close by epoch).
func (c *Cache) Remove(id int32) {
	c.mu.Lock()
	defer c.unlockAndClose()
	if fs := c.mu.byID[id]; fs != nil {
		c.dropLocked(fs)
	}
}

// dropLocked takes fs out of the cache.
func (c *Cache) dropLocked(fs *Session) {
	fs.removed = true
	if fs.watch != nil {
		c.mu.dropped = append(c.mu.dropped, fs.watch)
		fs.watch = nil
	}
	c.mu.total -= fs.size
	delete(c.mu.byID, fs.id)
	if c.mu.byOwner[fs.owner]--; c.mu.byOwner[fs.owner] <= 0 {
		delete(c.mu.byOwner, fs.owner)
	}
}

// resize records a session's partition count for eviction decisions, or
// reports false when n partitions are beyond the bounds (the session partition bound).
func (c *Cache) resize(fs *Session, n int) bool {
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

// Slots are the cache's bounds on sessions (the fetch session cache bound): Total slots in all,
// PerPrincipal for one principal.
type Slots struct{ Total, PerPrincipal int }

// Create makes a session for owner over parts (in response order) with
// next epoch 1, or returns nil when the cache has no room for it (the fetch session cache bound).
func (c *Cache) Create(slots Slots, owner string, topicIDs bool, parts []*Part) *Session {
	if slots.Total <= 0 {
		return nil // The fetch session cache bound
	}
	c.mu.Lock()
	defer c.unlockAndClose() // evicted sessions' Watches
	if perSession, total := c.boundsLocked(); len(parts) > perSession || c.mu.total+len(parts) > total {
		return nil // The session partition bound
	}
	if c.mu.byID == nil {
		c.mu.byID = make(map[int32]*Session)
		c.mu.byOwner = make(map[string]int)
	}
	if owner != "" && c.mu.byOwner[owner] >= slots.PerPrincipal && !c.evictOwnLocked(owner, len(parts)) {
		return nil
	}
	if len(c.mu.byID) >= slots.Total && !c.evictLocked(owner, len(parts)) {
		return nil
	}
	fs := &Session{id: c.newIDLocked(), topicIDs: topicIDs, owner: owner, size: len(parts), lastUsed: time.Now()}
	fs.mu.epoch = 1
	fs.mu.parts = make(map[Key]*Part, len(parts))
	for _, sp := range parts {
		if _, dup := fs.mu.parts[sp.Key]; !dup {
			fs.mu.parts[sp.Key] = sp
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
func (c *Cache) evictLocked(owner string, size int) bool {
	var lru *Session
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
func (c *Cache) evictOwnLocked(owner string, size int) bool {
	var lru, smallest *Session
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
func (c *Cache) newIDLocked() int32 {
	for {
		id := rand.Int32N(math.MaxInt32) + 1
		if _, used := c.mu.byID[id]; !used {
			return id
		}
	}
}

// Watch returns fs's Watch, made by newWatch on the first call; nil once fs
// was dropped (a Watch made then would never be closed).
func (c *Cache) Watch(fs *Session, newWatch func() Watch) Watch {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fs.removed {
		return nil
	}
	if fs.watch == nil {
		fs.watch = newWatch()
	}
	return fs.watch
}

// Count is how many sessions the cache holds.
func (c *Cache) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.byID)
}

// updateLocked applies an incremental request to the session: requested
// partitions are added or get their new fetch offset and max bytes, and
// forgotten ones are dropped. Needs fs.mu.
func (fs *Session) updateLocked(r *kmsg.FetchRequest) {
	for i := range r.Topics {
		rt := &r.Topics[i]
		for _, rp := range rt.Partitions {
			k := KeyOf(fs.topicIDs, rt.Topic, rt.TopicID, rp.Partition)
			sp := fs.mu.parts[k]
			if sp == nil {
				sp = &Part{Key: k}
				fs.mu.parts[k] = sp
				fs.mu.order = append(fs.mu.order, sp)
			}
			sp.Offset, sp.MaxBytes, sp.LeaderEpoch = rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch
		}
	}
	forgot := false
	for _, ft := range r.ForgottenTopics {
		for _, p := range ft.Partitions {
			k := KeyOf(fs.topicIDs, ft.Topic, ft.TopicID, p)
			if _, ok := fs.mu.parts[k]; ok {
				delete(fs.mu.parts, k)
				forgot = true
			}
		}
	}
	if forgot {
		kept := fs.mu.order[:0]
		for _, sp := range fs.mu.order {
			if fs.mu.parts[sp.Key] == sp {
				kept = append(kept, sp)
			}
		}
		clear(fs.mu.order[len(kept):])
		fs.mu.order = kept
	}
}

// rotateLocked moves the partitions that returned records to the end of
// the response order, keeping the relative order of both groups.
func (fs *Session) rotateLocked(gotData func(*Part) bool) {
	var quiet, busy []*Part
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

// Error answers a fetch with a top-level session error (the session epoch check, one-by-one session epochs,
// sessions keyed by ids or names, the session partition bound).
func Error(r *kmsg.FetchRequest, err *kerr.Error) *kmsg.FetchResponse {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.ErrorCode = err.Code
	return resp
}

// ID is the session's id, which responses carry.
func (fs *Session) ID() int32 { return fs.id }

// TopicIDs says whether the session keys partitions by topic id (sessions keyed by ids or names:
// opened at v13+).
func (fs *Session) TopicIDs() bool { return fs.topicIDs }

// Begin checks an incremental fetch against fs and applies it (the session epoch check, sessions keyed by ids or names,
// the session partition bound), under the session's lock, and calls list with the session's
// partitions in response order, still under the lock, for the caller to
// note what to read; the read itself runs without it (one-by-one session epochs). On an error
// list is not called and the session is as it was, or gone (the session partition bound: it
// outgrew its bound).
func (c *Cache) Begin(fs *Session, r *kmsg.FetchRequest, list func(order []*Part)) *kerr.Error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	switch {
	case fs.topicIDs != (r.Version >= 13):
		return kerr.FetchSessionTopicIDError // Sessions keyed by ids or names
	case r.SessionEpoch != fs.mu.epoch:
		return kerr.InvalidFetchSessionEpoch // The session epoch check
	}
	fs.updateLocked(r)
	if !c.resize(fs, len(fs.mu.parts)) {
		c.Remove(fs.id) // The session partition bound: the session outgrew its bound
		return kerr.FetchSessionIDNotFound
	}
	fs.mu.epoch = nextEpoch(fs.mu.epoch)
	list(fs.mu.order)
	return nil
}

// Finish runs fill, which makes the incremental response to the request
// of epoch (Part.Changed selects its partitions), under the session's
// lock, then moves the partitions that returned records to the end of
// the response order. It reports false, and runs nothing, when another
// request moved the session's epoch while this one read (a duplicate
// request: one-by-one session epochs).
func (fs *Session) Finish(epoch int32, fill func()) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.mu.epoch != nextEpoch(epoch) {
		return false
	}
	fill()
	fs.rotateLocked(func(sp *Part) bool { return sp.GotData })
	return true
}

// EpochIfFree is the epoch the next request must carry, if the session's
// lock is free now (one-by-one session epochs: no request holds it while it reads or waits);
// ok false while a request holds it. For tests.
func (fs *Session) EpochIfFree() (epoch int32, ok bool) {
	if !fs.mu.TryLock() {
		return 0, false
	}
	defer fs.mu.Unlock()
	return fs.mu.epoch, true
}

// SetBounds lowers the session partition bound bounds: perSession partitions in one session,
// total in all (0: the defaults). For tests.
func (c *Cache) SetBounds(perSession, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.maxParts, c.mu.maxTotal = perSession, total
}
