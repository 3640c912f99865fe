package share

import (
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessKey names a share session: one per member (there is one broker).
type sessKey struct{ group, member string }

// sessPart is one partition of a share session.
type sessPart struct {
	id        [16]byte
	partition int32
}

// session is a share session (KIP-932): the partitions a member fetches,
// kept between requests like a fetch session's. It remembers no read
// position (cursorless share reads). Guarded by Coordinator.mu.
type session struct {
	epoch int32 // the epoch the next request must carry
	parts []sessPart
	// fresh are partitions added since the last response: they are
	// answered once even without records.
	fresh map[sessPart]bool
	// done is closed when the session is removed, ending the watch on its
	// connection (closeWithConn).
	done chan struct{}
	// used is when the session last served a request (releases at the leader).
	used time.Time
	// owner and conn are the principal and connection (its context's
	// Done channel) the session counts against (the share bounds).
	owner string
	conn  <-chan struct{}
}

// dropSessionLocked removes k's session, if any. Needs Coordinator.mu.
func (c *Coordinator) dropSessionLocked(k sessKey) bool {
	s, ok := c.mu.sessions[k]
	if ok {
		delete(c.mu.sessions, k)
		close(s.done)
		uncount(c.mu.byOwner, s.owner)
		uncount(c.mu.byConn, s.conn)
	}
	return ok
}

// uncount takes one from m[k], deleting it at zero so that the maps hold
// only keys with sessions.
func uncount[K comparable](m map[K]int, k K) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

func nextEpoch(e int32) int32 {
	if e == 2147483647 {
		return 1
	}
	return e + 1
}

// openSession opens a member's session from a full ShareFetch (epoch 0),
// replacing its previous one, for principal ("": no per-principal bound)
// on the connection whose context is done when conn is closed;
// SHARE_SESSION_LIMIT_REACHED when group.share.max.share.sessions are
// open, or the principal's or the connection's share of them (the share bounds).
func (c *Coordinator) openSession(k sessKey, topics []kmsg.ShareFetchRequestTopic, principal string, conn <-chan struct{}) (*session, *kerr.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropSessionLocked(k)
	if len(c.mu.sessions) >= c.cfg.MaxShareSessions ||
		principal != "" && c.mu.byOwner[principal] >= c.cfg.MaxShareSessionsPerPrincipal ||
		c.mu.byConn[conn] >= c.cfg.MaxShareSessionsPerConnection {
		return nil, kerr.ShareSessionLimitReached
	}
	s := &session{fresh: map[sessPart]bool{}, done: make(chan struct{}), owner: principal, conn: conn}
	if !s.add(topics) {
		return nil, kerr.InvalidRequest
	}
	s.epoch, s.used = 1, c.cfg.Now()
	c.mu.sessions[k] = s
	if c.mu.byOwner == nil {
		c.mu.byOwner, c.mu.byConn = map[string]int{}, map[<-chan struct{}]int{}
	}
	if principal != "" {
		c.mu.byOwner[principal]++
	}
	c.mu.byConn[conn]++
	return s, nil
}

// add adds the request's partitions; false when the session would exceed
// maxSessionPartitions (the share bounds). Needs Coordinator.mu.
func (s *session) add(topics []kmsg.ShareFetchRequestTopic) bool {
	for i := range topics {
		for _, p := range topics[i].Partitions {
			sp := sessPart{topics[i].TopicID, p.Partition}
			if s.has(sp) {
				continue
			}
			if len(s.parts) >= maxSessionPartitions {
				return false
			}
			s.parts = append(s.parts, sp)
			s.fresh[sp] = true
		}
	}
	return true
}

func (s *session) has(sp sessPart) bool {
	for _, p := range s.parts {
		if p == sp {
			return true
		}
	}
	return false
}

func (s *session) forget(forgotten []kmsg.ShareFetchRequestForgottenTopicsData) {
	for _, f := range forgotten {
		for _, p := range f.Partitions {
			sp := sessPart{f.TopicID, p}
			delete(s.fresh, sp)
			for i := range s.parts {
				if s.parts[i] == sp {
					s.parts = append(s.parts[:i], s.parts[i+1:]...)
					break
				}
			}
		}
	}
}

// useSession checks an incremental request's epoch against the member's
// session and advances it (share session epochs); with fetch, it applies the request's
// partition changes. It returns a copy of the session's partitions.
func (c *Coordinator) useSession(k sessKey, epoch int32, fetch *kmsg.ShareFetchRequest) ([]sessPart, map[sessPart]bool, *kerr.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.sessions[k]
	switch {
	case s == nil:
		return nil, nil, kerr.ShareSessionNotFound
	case epoch != s.epoch:
		return nil, nil, kerr.InvalidShareSessionEpoch
	}
	if fetch != nil {
		if !s.add(fetch.Topics) {
			c.dropSessionLocked(k)
			return nil, nil, kerr.ShareSessionNotFound
		}
		s.forget(fetch.ForgottenTopicsData)
	}
	s.epoch, s.used = nextEpoch(s.epoch), c.cfg.Now()
	fresh := s.fresh
	s.fresh = map[sessPart]bool{}
	return append([]sessPart(nil), s.parts...), fresh, nil
}

// closeSession removes the member's session; false when it had none.
func (c *Coordinator) closeSession(k sessKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropSessionLocked(k)
}

// Sessions is the number of open share sessions.
func (c *Coordinator) Sessions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.sessions)
}

// resolve turns a session partition into a topic partition; ok false for
// an unknown topic id.
func (c *Coordinator) resolve(sp sessPart) (offsets.TopicPartition, bool) {
	name, ok := c.log.TopicName(sp.id)
	return offsets.TopicPartition{Topic: name, Partition: sp.partition}, ok
}

// evictIdle closes, on a cluster's leader side, the share sessions idle
// for longer than the group's session timeout and releases what their
// members hold (releases at the leader): a member the coordinator removed sends nothing
// more, and its connection may stay open. The sweep is bounded by the
// number of sessions (the share bounds).
func (c *Coordinator) evictIdle() {
	if !c.leaderSide() {
		return
	}
	now := c.cfg.Now()
	c.mu.Lock()
	var idle []sessKey
	for k, s := range c.mu.sessions {
		if now.Sub(s.used) > c.cfg.SessionTimeout {
			idle = append(idle, k)
		}
	}
	for _, k := range idle {
		c.dropSessionLocked(k)
	}
	c.mu.Unlock()
	for _, k := range idle {
		if g := c.lookup(k.group); g != nil {
			g.mu.Lock()
			c.releaseMemberLocked(g, k.member)
			g.mu.Unlock()
		}
	}
}

// evictGroupsLocked bounds the groups a leader side keeps (the share bounds, releases at the leader): at
// group.share.max.share.sessions groups it forgets those without a share
// session. Their states are durable; a later fetch reads them again.
// Needs Coordinator.mu.
func (c *Coordinator) evictGroupsLocked() {
	if len(c.mu.groups) < c.cfg.MaxShareSessions {
		return
	}
	live := map[string]bool{}
	for k := range c.mu.sessions {
		live[k.group] = true
	}
	for id := range c.mu.groups {
		if !live[id] {
			delete(c.mu.groups, id)
		}
	}
}
