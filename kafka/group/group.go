package group

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"github.com/kgateway/kgateway/kafka/streams"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// state is a classic group's state; String gives Kafka's names, which
// DescribeGroups and ListGroups return.
type state int8

const (
	stateEmpty state = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

func (s state) String() string {
	switch s {
	case stateEmpty:
		return "Empty"
	case statePreparingRebalance:
		return "PreparingRebalance"
	case stateCompletingRebalance:
		return "CompletingRebalance"
	case stateStable:
		return "Stable"
	default:
		return "Dead"
	}
}

// Client is what the wire layer knows about the sender of a request.
type Client struct {
	ID   string // the request header's client id
	Host string // the client's address, reported by DescribeGroups
	// Principal and PeerHost are who sends the request and from which
	// IP address, as Config.MayDescribe is asked about them.
	Principal string
	PeerHost  string
}

// joinResult is the outcome of a JoinGroup, built under the group lock and
// turned into a response of the waiting request's version by JoinGroup.
type joinResult struct {
	code           int16
	memberID       string
	generation     int32
	protocolType   string
	protocol       string
	leader         string
	members        []kmsg.JoinGroupResponseMember
	skipAssignment bool
}

type syncResult struct {
	code         int16
	protocolType string
	protocol     string
	assignment   []byte
}

type member struct {
	id         string
	instanceID *string
	clientID   string
	clientHost string
	// principal and peerHost are who joined as the member, from where
	// (in memory only): what its subscription is authorized against if
	// the group becomes a consumer group (migrate.go).
	principal, peerHost string
	sessionTimeout      time.Duration
	rebalanceTimeout    time.Duration
	protocolType        string
	protocols           []kmsg.JoinGroupRequestProtocol
	assignment          []byte

	// joinWaiters and syncWaiters are the blocked JoinGroup / SyncGroup
	// requests of this member (no stranded member); each channel has room for its one
	// answer, so answering never blocks.
	joinWaiters []chan joinResult
	syncWaiters []chan syncResult

	// isNew: joined but not yet part of a completed generation (the session timeout).
	isNew bool
	// session is the pending expiry; sessionSeq tells a stale firing.
	session    Timer
	sessionSeq uint64
}

func (m *member) awaitingJoin() bool { return len(m.joinWaiters) > 0 }
func (m *member) awaitingSync() bool { return len(m.syncWaiters) > 0 }

// matches reports whether protocols are exactly the member's current ones.
func (m *member) matches(protocols []kmsg.JoinGroupRequestProtocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i, p := range protocols {
		if p.Name != m.protocols[i].Name || !bytes.Equal(p.Metadata, m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

func (m *member) metadataFor(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

func (m *member) answerJoinLocked(r joinResult) {
	for _, ch := range m.joinWaiters {
		ch <- r
	}
	m.joinWaiters = nil
}

func (m *member) answerSyncLocked(r syncResult) {
	for _, ch := range m.syncWaiters {
		ch <- r
	}
	m.syncWaiters = nil
}

// group is one consumer group. All fields under mu.
type group struct {
	c  *Coordinator
	id string
	// dead is set (under mu) when the group is deleted or expired, before
	// it leaves the coordinator's map; lookups skip dead groups.
	dead atomic.Bool
	// active mirrors (under mu) that the classic state is neither
	// Empty nor Dead. Retention reads it without the lock: the store may
	// still have the group as Empty (persisted empty groups), since a
	// rebalance's start is not written.
	active atomic.Bool
	// writes orders the store writes of the group's record: every writer
	// holds it through its store call, taking it under mu; the leader's
	// assignment keeps it through a write made without mu (assign_store.go).
	writes sync.Mutex
	// assigns counts the assignment writes under way (assign_store.go),
	// which Close waits for.
	assigns sync.WaitGroup
	// beats queues ConsumerGroupHeartbeats for the one that applies them
	// in a batch with one write (consumer_batch.go); not under mu.
	beats beatQueue

	mu struct {
		sync.Mutex
		state        state
		stateTime    time.Time
		protocolType string
		protocol     string
		generation   int32
		leader       string
		members      map[string]*member
		static       map[string]string // instance id -> member id
		// pending are member ids handed out with MEMBER_ID_REQUIRED that
		// have not joined yet, with their expiry (rebalance completion, the session timeout).
		pending     map[string]Timer
		pendingSync map[string]bool // members yet to SyncGroup this generation (the pending-sync timeout)
		subscribed  map[string]bool // topics of the consumer protocol; nil if unknown
		// typ is the group's protocol; a consumer group (KIP-848) keeps
		// its state in cons, and consWritten is its last durable
		// encoding (durable consumer group state).
		typ         groupType
		cons        *consumerState
		consWritten []byte
		// consDurable is that state as a record, to go back to when a
		// write fails (durable consumer group state).
		consDurable offsets.ConsumerGroup
		// strm is a streams group's state (KIP-1071, streams.go),
		// strmWritten its last durable encoding, strmTimers its
		// members' timers.
		strm        *streams.Group
		strmWritten []byte
		strmTimers  map[string]*streamsTimers
		// classicBefore is the classic group an online upgrade
		// converted, until the consumer group is first durable: a
		// failed write goes back to it (migrate.go).
		classicBefore *offsets.ClassicGroup
		// deferWrite: a batch of heartbeats is being applied and
		// persistConsumerLocked only notes the change (dirty) for the
		// batch's one write (consumer_batch.go).
		deferWrite, dirty bool
		// deferTarget: a new member's join in a batch advances the
		// group epoch without computing the target, and targetDue
		// says the target is behind the epoch until the batch's joins
		// are settled (consumer_joins.go).
		deferTarget, targetDue bool
		// applied is closed once the next batch of consumer heartbeats
		// is applied and written, waking the heartbeats waiting for
		// releases (consumer_await.go); nil when none waits.
		applied      chan struct{}
		rebalance    Timer
		rebalanceSeq uint64
		// assigning tags the leader's assignment being written, 0 when
		// none is (assign_store.go); a rebalance clears it.
		assigning uint64
		// initialDelay: the first rebalance of an Empty group is waiting
		// out group.initial.rebalance.delay.ms (rebalance completion); newMember: a member
		// joined during the current delay.
		initialDelay, newMember bool
		syncTimer               Timer
		syncSeq                 uint64
		seq                     uint64 // tags timers so stale firings do nothing
	}
}

func newGroup(c *Coordinator, id string) *group {
	g := &group{c: c, id: id}
	g.mu.members = make(map[string]*member)
	g.mu.static = make(map[string]string)
	g.mu.pending = make(map[string]Timer)
	g.mu.pendingSync = make(map[string]bool)
	return g
}

func (g *group) nextSeqLocked() uint64 {
	g.mu.seq++
	return g.mu.seq
}

func (g *group) transitionLocked(s state) {
	g.setStateLocked(s)
	g.mu.stateTime = g.c.clock.Now()
}

// setStateLocked sets the classic state and its mirror for retention.
func (g *group) setStateLocked(s state) {
	g.mu.state = s
	g.active.Store(s != stateEmpty && s != stateDead)
}

// persistLocked records the group's metadata (persisted empty groups); an Empty group's
// membership goes with it (durable classic membership). A failure is logged: it only affects
// listing after a restart and retention, never offsets.
func (g *group) persistLocked() {
	g.writes.Lock()
	defer g.writes.Unlock()
	var err error
	if g.mu.state == stateEmpty {
		err = g.c.store.PutClassicGroup(g.stateLocked(), 0)
	} else {
		err = g.c.store.PutGroup(g.stateLocked().Group)
	}
	if err != nil {
		g.c.log.Warn("group-persist-failed", zap.String("group", g.id), zap.Error(err))
	}
}

func (g *group) stopTimersLocked() {
	for _, t := range g.mu.strmTimers {
		stopStreamsTimers(t)
	}
	if g.mu.cons != nil {
		for _, m := range g.mu.cons.members {
			g.stopMemberTimersLocked(m)
		}
	}
	for _, m := range g.mu.members {
		if m.session != nil {
			m.session.Stop()
		}
	}
	for _, t := range g.mu.pending {
		t.Stop()
	}
	if g.mu.rebalance != nil {
		g.mu.rebalance.Stop()
	}
	if g.mu.syncTimer != nil {
		g.mu.syncTimer.Stop()
	}
}

func (g *group) markDeadLocked() {
	g.stopTimersLocked()
	g.setStateLocked(stateDead)
	g.dead.Store(true)
}

// fencedLocked: a static member's instance id now maps to another member
// id (KIP-345); the caller is a zombie.
func (g *group) fencedLocked(instanceID *string, memberID string) bool {
	if instanceID == nil {
		return false
	}
	cur, ok := g.mu.static[*instanceID]
	return ok && cur != memberID
}

// supportsLocked: the join's protocol type and protocols fit the group.
func (g *group) supportsLocked(protocolType string, protocols []kmsg.JoinGroupRequestProtocol) bool {
	if len(g.mu.members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if protocolType != g.mu.protocolType {
		return false
	}
	counts := g.protocolCountsLocked()
	for _, p := range protocols {
		if counts[p.Name] == len(g.mu.members) {
			return true
		}
	}
	return false
}

func (g *group) protocolCountsLocked() map[string]int {
	counts := make(map[string]int)
	for _, m := range g.mu.members {
		for _, p := range m.protocols {
			counts[p.Name]++
		}
	}
	return counts
}

// selectProtocolLocked picks the protocol every member supports that most
// members prefer (each votes for its first supported choice); ties go to
// the leader's preference order, for determinism.
func (g *group) selectProtocolLocked() string {
	counts := g.protocolCountsLocked()
	n := len(g.mu.members)
	votes := make(map[string]int)
	for _, m := range g.mu.members {
		for _, p := range m.protocols {
			if counts[p.Name] == n {
				votes[p.Name]++
				break
			}
		}
	}
	best, bestVotes := "", -1
	order := g.sortedMembersLocked()
	if l := g.mu.members[g.mu.leader]; l != nil {
		order = append([]*member{l}, order...)
	}
	for _, m := range order {
		for _, p := range m.protocols {
			if v, ok := votes[p.Name]; ok && v > bestVotes {
				best, bestVotes = p.Name, v
			}
		}
	}
	return best
}

func (g *group) sortedMembersLocked() []*member {
	out := make([]*member, 0, len(g.mu.members))
	for _, m := range g.mu.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// memberMetadataLocked is what the leader receives in JoinGroup.
func (g *group) memberMetadataLocked() []kmsg.JoinGroupResponseMember {
	var out []kmsg.JoinGroupResponseMember
	for _, m := range g.sortedMembersLocked() {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = m.id, m.instanceID, m.metadataFor(g.mu.protocol)
		out = append(out, jm)
	}
	return out
}

// currentJoinLocked answers a join with the current generation, without a
// rebalance; the leader gets the members when withMembers.
func (g *group) currentJoinLocked(memberID string, withMembers, skip bool) joinResult {
	r := joinResult{
		memberID: memberID, generation: g.mu.generation, protocolType: g.mu.protocolType,
		protocol: g.mu.protocol, leader: g.mu.leader, skipAssignment: skip,
	}
	if withMembers {
		r.members = g.memberMetadataLocked()
	}
	return r
}

// addMemberLocked adds m; the first member sets the protocol type and
// becomes leader.
func (g *group) addMemberLocked(m *member) {
	if len(g.mu.members) == 0 {
		g.mu.protocolType = m.protocolType
	}
	g.mu.members[m.id] = m
	if m.instanceID != nil {
		g.mu.static[*m.instanceID] = m.id
	}
	if g.mu.leader == "" {
		g.mu.leader = m.id
	}
}

// removeMemberLocked drops m, answering its blocked requests (no stranded member) and
// handing leadership on.
func (g *group) removeMemberLocked(m *member) {
	m.answerJoinLocked(joinResult{code: errUnknownMember, memberID: noMember})
	m.answerSyncLocked(syncResult{code: errUnknownMember})
	if m.session != nil {
		m.session.Stop()
	}
	delete(g.mu.members, m.id)
	delete(g.mu.pendingSync, m.id)
	if m.instanceID != nil && g.mu.static[*m.instanceID] == m.id {
		delete(g.mu.static, *m.instanceID)
	}
	if g.mu.leader == m.id {
		g.mu.leader = ""
		if ms := g.sortedMembersLocked(); len(ms) > 0 {
			g.mu.leader = ms[0].id
		}
	}
}

// newMemberID is Kafka's shape: client id (or instance id) dash uuid.
func newMemberID(clientID string, instanceID *string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	return prefix + "-" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
