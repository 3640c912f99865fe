package group

import (
	"regexp"
	"slices"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"go.uber.org/zap"
)

// groupType is which protocol a group speaks. Classic and consumer groups
// share one id namespace (a group id is one group, one group type per id); another type
// (share groups) would be another value here.
type groupType int8

const (
	typeClassic groupType = iota
	typeConsumer
	typeStreams
)

// String is the name ListGroups v5 reports.
func (t groupType) String() string {
	switch t {
	case typeConsumer:
		return "consumer"
	case typeStreams:
		return "streams"
	}
	return "classic"
}

// Special member epochs of ConsumerGroupHeartbeat.
const (
	epochJoin        int32 = 0
	epochLeave       int32 = -1
	epochStaticLeave int32 = -2
)

// memberState is a consumer member's reconciliation state, as Kafka's
// MemberState.
type memberState int8

const (
	memberStable memberState = iota
	memberUnrevoked
	memberUnreleased
)

func (s memberState) String() string {
	switch s {
	case memberUnrevoked:
		return "unrevoked_partitions"
	case memberUnreleased:
		return "unreleased_partitions"
	}
	return "stable"
}

// cmember is one member of a consumer group (KIP-848).
type cmember struct {
	id         string
	instanceID *string
	rackID     *string
	clientID   string
	clientHost string
	// principal and peerHost are who last heartbeated as the member,
	// from where: what its subscription is authorized against (server-side regex subscriptions).
	// Kept in memory only: a member loaded from the store has none
	// until it heartbeats, and is subscribed to nothing meanwhile when
	// authorization is on.
	principal string
	peerHost  string

	epoch     int32 // member epoch; epochStaticLeave while a static member is away
	prevEpoch int32
	state     memberState

	rebalanceTimeout time.Duration
	topics           []string // subscribed topic names, sorted
	regex            string   // SubscribedTopicRegex, "" if none
	assignor         string   // ServerAssignor, "" if none

	// assigned are the partitions the member owns at its epoch; revoking
	// those it still owns and must give up (revocation before reassignment). Together they are what
	// the group's owners map holds for this member.
	assigned assignment
	revoking assignment

	session    Timer
	sessionSeq uint64
	revoke     Timer
	revokeSeq  uint64
	// answered is when the member's last heartbeat was answered: its
	// next one is due a heartbeat interval later (consumer_await.go).
	answered time.Time
	// ackDue: the last answer changed the member's partitions. Clients
	// acknowledge a changed assignment with a heartbeat at once
	// (franz-go's and Kafka's consumers do), at which the member is told
	// of any revocation since (consumer_await.go).
	ackDue bool

	// classic is set for a member that speaks the classic protocol
	// (migrate.go); nil for a consumer-protocol member.
	classic *classicMeta
}

// consumerState is the consumer-protocol part of a group (typeConsumer).
type consumerState struct {
	epoch           int32 // group epoch
	assignmentEpoch int32 // epoch of target
	assignor        string
	members         map[string]*cmember
	static          map[string]string // instance id -> member id
	target          map[string]assignment
	// owners maps every partition held (assigned or being revoked) to its
	// member: a partition is given to a member only when it has no owner
	// (revocation before reassignment).
	owners map[tp]string
	// topics is the metadata of the subscribed topics the target was
	// computed from (id -> name, partitions); checked is when it was last
	// compared with the topics now (server-side regex subscriptions).
	topics  map[topicID]topicMeta
	subs    map[string]map[topicID]bool // each member's subscribed topics, as topics
	checked time.Time
	regexes map[string]*regexp.Regexp
}

type topicMeta struct {
	name       string
	partitions int32
}

func newConsumerState() *consumerState {
	return &consumerState{
		members: make(map[string]*cmember),
		static:  make(map[string]string),
		target:  make(map[string]assignment),
		owners:  make(map[tp]string),
		topics:  make(map[topicID]topicMeta),
		regexes: make(map[string]*regexp.Regexp),
	}
}

// state is Kafka's consumer group state: Empty, Assigning (the target is
// behind the group epoch; never here, the target is computed at once),
// Reconciling (a member is not yet at the target) or Stable.
func (cs *consumerState) stateName() string {
	if len(cs.members) == 0 {
		return "Empty"
	}
	if cs.assignmentEpoch != cs.epoch {
		return "Assigning"
	}
	for _, m := range cs.members {
		if m.epoch != epochStaticLeave && (m.epoch != cs.assignmentEpoch || m.state != memberStable) {
			return "Reconciling"
		}
	}
	return "Stable"
}

func (cs *consumerState) sortedMembers() []*cmember {
	out := make([]*cmember, 0, len(cs.members))
	for _, m := range cs.members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *cmember) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return out
}

// release drops every partition m holds from the owners map.
func (cs *consumerState) release(m *cmember) {
	for _, x := range m.assigned.tps() {
		if cs.owners[x] == m.id {
			delete(cs.owners, x)
		}
	}
	for _, x := range m.revoking.tps() {
		if cs.owners[x] == m.id {
			delete(cs.owners, x)
		}
	}
}

// hold records m as the owner of what it is assigned and revoking.
func (cs *consumerState) hold(m *cmember) {
	for _, x := range m.assigned.tps() {
		cs.owners[x] = m.id
	}
	for _, x := range m.revoking.tps() {
		cs.owners[x] = m.id
	}
}

// hasConsumerMembersLocked: a consumer group with members is never Empty,
// whatever its classic state field says (retention and DeleteGroups).
func (g *group) hasConsumerMembersLocked() bool {
	return g.mu.typ == typeConsumer && len(g.mu.cons.members) > 0 ||
		g.mu.typ == typeStreams && len(g.mu.strm.Members) > 0
}

// becomeClassicLocked turns a consumer group without members into an
// empty classic group (Kafka's offline downgrade), durably: the consumer
// state goes from the store with the same write (one group type per id). A consumer group
// with members takes no classic member: INCONSISTENT_GROUP_PROTOCOL, as
// Kafka answers a classic join its consumer group cannot serve.
func (g *group) becomeClassicLocked() int16 {
	if g.hasConsumerMembersLocked() || g.mu.typ == typeStreams {
		return errInconsistentProto // a streams group takes no classic member (streams.go)
	}
	g.mu.typ, g.mu.cons, g.mu.consWritten, g.mu.consDurable = typeClassic, nil, nil, offsets.ConsumerGroup{}
	g.mu.generation, g.mu.protocolType, g.mu.protocol = 0, "", ""
	g.mu.stateTime = g.c.clock.Now()
	g.writes.Lock() // in order with a classic assignment being written (assign_store.go)
	err := g.c.store.PutClassicGroup(g.stateLocked(), 0)
	g.writes.Unlock()
	if err != nil {
		g.c.log.Warn("group-persist-failed", zap.String("group", g.id), zap.Error(err))
		return errCoordinatorNA
	}
	return errNone
}
