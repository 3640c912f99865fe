package offsets

import (
	"encoding/binary"
	"fmt"
	"time"
)

// A consumer group's state (KIP-848; the durable consumer group state, consumer group state kept across restarts) lives under its own key
// beside the group's metadata record:
//
//	'k' group -> group epoch, assignment epoch, assignor, subscribed
//	             topics' metadata, members (ids, epochs, subscriptions,
//	             assigned, revoking and target partitions)
//
// PutConsumerGroup writes it and the metadata record in one synced batch.
const consumerTag byte = 'k'

// ConsumerProtocolType is the protocol type a consumer group reports.
const ConsumerProtocolType = "consumer"

// TopicPartitions are partitions of one topic, by topic id.
type TopicPartitions struct {
	TopicID    [16]byte
	Partitions []int32
}

// ConsumerTopic is a subscribed topic's metadata as of the target
// assignment.
type ConsumerTopic struct {
	ID         [16]byte
	Name       string
	Partitions int32
}

// ConsumerMember is one member of a consumer group as persisted.
type ConsumerMember struct {
	ID               string
	InstanceID       *string
	RackID           *string
	ClientID         string
	ClientHost       string
	Epoch            int32
	PreviousEpoch    int32
	State            int8
	RebalanceTimeout time.Duration
	Topics           []string
	Regex            string
	Assignor         string
	Assigned         []TopicPartitions
	Revoking         []TopicPartitions
	Target           []TopicPartitions
	// Classic is set for a member that speaks the classic protocol
	// (JoinGroup, SyncGroup, Heartbeat) in a consumer group, as after
	// an online upgrade (KIP-848's migration path): its session timeout
	// and JoinGroup protocols, as Kafka's ClassicMemberMetadata.
	Classic *ClassicMemberMetadata
}

// ClassicMemberMetadata is what a consumer group keeps of a member that
// uses the classic protocol.
type ClassicMemberMetadata struct {
	SessionTimeout time.Duration
	Protocols      []Protocol
}

// consumerClassicVersion is the consumer record's version when a member
// carries ClassicMemberMetadata: each member then ends with it (a flag
// byte, then the session timeout and protocols). Records without
// classic members keep recordVersion, so they read as before.
const consumerClassicVersion byte = recordVersion + 1

// ConsumerGroup is a consumer group's durable state. Group.Generation is
// its group epoch; Group.State is GroupEmpty without members.
type ConsumerGroup struct {
	Group
	AssignmentEpoch int32
	Assignor        string
	Topics          []ConsumerTopic
	Members         []ConsumerMember
}

func consumerKey(group string) []byte {
	return append([]byte{consumerTag}, group...)
}

// PutConsumerGroup records g in one synced batch with its metadata record
// (the durable consumer group state): when it returns nil both are durable. A classic membership of the
// same id is removed in the same batch (a group has one type). maxBytes
// > 0 bounds the encoded state (ErrTooLarge).
func (s *Store) PutConsumerGroup(g ConsumerGroup, maxBytes int) error {
	if g.ID == "" {
		return fmt.Errorf("%w: consumer group needs an id", ErrInvalid)
	}
	v := EncodeConsumerGroup(g)
	if maxBytes > 0 && len(v) > maxBytes {
		return fmt.Errorf("%w: group %q: %d bytes > %d", ErrTooLarge, g.ID, len(v), maxBytes)
	}
	g.ProtocolType = ConsumerProtocolType
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(metaKey(g.ID), encodeGroup(g.Group), nil); err != nil {
		return err
	}
	if err := b.Set(consumerKey(g.ID), v, nil); err != nil {
		return err
	}
	if err := b.Delete(classicKey(g.ID), nil); err != nil {
		return err
	}
	if err := b.Delete(streamsKey(g.ID), nil); err != nil {
		return err
	}
	if err := s.apply(b); err != nil {
		return fmt.Errorf("offsets: put consumer group %q: %w", g.ID, err)
	}
	return nil
}

// ConsumerGroups returns every persisted consumer group by id (consumer group state kept across restarts).
func (s *Store) ConsumerGroups() (map[string]ConsumerGroup, error) {
	return read(s, func() (map[string]ConsumerGroup, error) { return scanTagByID(s.db, consumerTag, decodeConsumer) })
}

// hasConsumerState reports whether group has a persisted consumer group
// state.
func (s *Store) hasConsumerState(group string) (bool, error) {
	return hasKey(s.db, consumerKey(group))
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	return appendLenString(b, *s)
}

func appendTPs(b []byte, tps []TopicPartitions) []byte {
	b = binary.AppendUvarint(b, uint64(len(tps)))
	for _, t := range tps {
		b = append(b, t.TopicID[:]...)
		b = binary.AppendUvarint(b, uint64(len(t.Partitions)))
		for _, p := range t.Partitions {
			b = binary.AppendVarint(b, int64(p))
		}
	}
	return b
}

// EncodeConsumerGroup is the persisted form of g (its metadata record
// aside); equal states encode equally, so the coordinator compares
// encodings to skip writes that change nothing.
func EncodeConsumerGroup(g ConsumerGroup) []byte {
	version := recordVersion
	for _, m := range g.Members {
		if m.Classic != nil {
			version = consumerClassicVersion
		}
	}
	b := []byte{version}
	b = binary.AppendVarint(b, int64(g.Generation))
	b = binary.AppendVarint(b, int64(g.AssignmentEpoch))
	b = binary.AppendVarint(b, g.StateTime.UnixMilli())
	b = appendLenString(b, g.Assignor)
	b = binary.AppendUvarint(b, uint64(len(g.Topics)))
	for _, t := range g.Topics {
		b = append(b, t.ID[:]...)
		b = appendLenString(b, t.Name)
		b = binary.AppendVarint(b, int64(t.Partitions))
	}
	b = binary.AppendUvarint(b, uint64(len(g.Members)))
	for _, m := range g.Members {
		b = appendLenString(b, m.ID)
		b = appendOptString(b, m.InstanceID)
		b = appendOptString(b, m.RackID)
		b = appendLenString(b, m.ClientID)
		b = appendLenString(b, m.ClientHost)
		b = binary.AppendVarint(b, int64(m.Epoch))
		b = binary.AppendVarint(b, int64(m.PreviousEpoch))
		b = append(b, byte(m.State))
		b = binary.AppendVarint(b, m.RebalanceTimeout.Milliseconds())
		b = binary.AppendUvarint(b, uint64(len(m.Topics)))
		for _, t := range m.Topics {
			b = appendLenString(b, t)
		}
		b = appendLenString(b, m.Regex)
		b = appendLenString(b, m.Assignor)
		b = appendTPs(b, m.Assigned)
		b = appendTPs(b, m.Revoking)
		b = appendTPs(b, m.Target)
		if version == consumerClassicVersion {
			b = appendClassicMeta(b, m.Classic)
		}
	}
	return b
}

func appendClassicMeta(b []byte, c *ClassicMemberMetadata) []byte {
	if c == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, c.SessionTimeout.Milliseconds())
	b = binary.AppendUvarint(b, uint64(len(c.Protocols)))
	for _, p := range c.Protocols {
		b = appendLenString(b, p.Name)
		b = appendBytes(b, p.Metadata)
	}
	return b
}

func (r *classicReader) classicMeta() *ClassicMemberMetadata {
	switch r.byte() {
	case 0:
		return nil
	case 1:
	default:
		r.bad = true
		return nil
	}
	c := &ClassicMemberMetadata{SessionTimeout: r.millis()}
	n := r.count()
	for i := 0; i < n && !r.bad; i++ {
		c.Protocols = append(c.Protocols, Protocol{Name: r.str(), Metadata: r.bytes()})
	}
	return c
}

func (r *classicReader) optString() *string {
	switch r.byte() {
	case 0:
		return nil
	case 1:
		s := r.str()
		return &s
	}
	r.bad = true
	return nil
}

func (r *classicReader) id() [16]byte {
	var id [16]byte
	if r.bad || len(r.b) < 16 {
		r.bad = true
		return id
	}
	copy(id[:], r.b)
	r.b = r.b[16:]
	return id
}

func (r *classicReader) tps() []TopicPartitions {
	n := r.count()
	var out []TopicPartitions
	for i := 0; i < n && !r.bad; i++ {
		t := TopicPartitions{TopicID: r.id()}
		np := r.count()
		for j := 0; j < np && !r.bad; j++ {
			t.Partitions = append(t.Partitions, int32(r.varint()))
		}
		out = append(out, t)
	}
	return out
}

func decodeConsumer(id string, v []byte) (ConsumerGroup, error) {
	bad := fmt.Errorf("%w: consumer group %q", ErrCorrupt, id)
	if len(v) == 0 || (v[0] != recordVersion && v[0] != consumerClassicVersion) {
		return ConsumerGroup{}, bad
	}
	withClassic := v[0] == consumerClassicVersion
	r := &classicReader{b: v[1:]}
	g := ConsumerGroup{Group: Group{ID: id, ProtocolType: ConsumerProtocolType}}
	g.Generation = int32(r.varint())
	g.AssignmentEpoch = int32(r.varint())
	g.StateTime = time.UnixMilli(r.varint())
	g.Assignor = r.str()
	nt := r.count()
	for i := 0; i < nt && !r.bad; i++ {
		g.Topics = append(g.Topics, ConsumerTopic{ID: r.id(), Name: r.str(), Partitions: int32(r.varint())})
	}
	nm := r.count()
	for i := 0; i < nm && !r.bad; i++ {
		m := ConsumerMember{ID: r.str(), InstanceID: r.optString(), RackID: r.optString()}
		m.ClientID, m.ClientHost = r.str(), r.str()
		m.Epoch, m.PreviousEpoch = int32(r.varint()), int32(r.varint())
		m.State = int8(r.byte())
		m.RebalanceTimeout = r.millis()
		ntop := r.count()
		for j := 0; j < ntop && !r.bad; j++ {
			m.Topics = append(m.Topics, r.str())
		}
		m.Regex, m.Assignor = r.str(), r.str()
		m.Assigned, m.Revoking, m.Target = r.tps(), r.tps(), r.tps()
		if withClassic {
			m.Classic = r.classicMeta()
		}
		g.Members = append(g.Members, m)
	}
	if r.bad || len(r.b) != 0 {
		return ConsumerGroup{}, bad
	}
	g.State = GroupActive
	if len(g.Members) == 0 {
		g.State = GroupEmpty
	}
	return g, nil
}
