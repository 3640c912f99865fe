package offsets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// A classic group's membership (the durable classic membership, memberships kept across restarts) lives under its own key beside
// the group's metadata record:
//
//	'c' group -> leader, members (ids, instance ids, clients, timeouts,
//	             protocols with their metadata, assignments)
//
// It exists only while the group has members; PutClassicGroup writes it and
// the metadata record in one synced batch.
const classicTag byte = 'c'

// ErrTooLarge is returned by PutClassicGroup when the encoded membership
// exceeds the caller's bound; nothing is written.
var ErrTooLarge = errors.New("offsets: group state too large")

// Protocol is one (name, metadata) a classic member offered in JoinGroup.
type Protocol struct {
	Name     string
	Metadata []byte
}

// ClassicMember is one member of a classic group as persisted.
type ClassicMember struct {
	ID               string
	InstanceID       *string // static membership (KIP-345); nil if dynamic
	ClientID         string
	ClientHost       string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	ProtocolType     string
	Protocols        []Protocol
	Assignment       []byte
}

// ClassicGroup is a classic group's durable state: its metadata record and,
// when it has members, its leader and members.
type ClassicGroup struct {
	Group
	Leader  string
	Members []ClassicMember
}

func classicKey(group string) []byte {
	return append([]byte{classicTag}, group...)
}

// PutClassicGroup records g's metadata and membership in one synced batch
// (the durable classic membership): when it returns nil both are durable. A group without members
// has its membership key removed. maxBytes > 0 bounds the encoded
// membership (ErrTooLarge).
func (s *Store) PutClassicGroup(g ClassicGroup, maxBytes int) error {
	if g.ID == "" {
		return fmt.Errorf("%w: classic group needs an id", ErrInvalid)
	}
	var members []byte
	if len(g.Members) > 0 {
		members = encodeClassic(g)
		if maxBytes > 0 && len(members) > maxBytes {
			return fmt.Errorf("%w: group %q: %d bytes > %d", ErrTooLarge, g.ID, len(members), maxBytes)
		}
	}
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
	var err error
	if members != nil {
		err = b.Set(classicKey(g.ID), members, nil)
	} else {
		err = b.Delete(classicKey(g.ID), nil)
	}
	if err != nil {
		return err
	}
	// A group has one type: a classic membership replaces a consumer
	// group's state (an empty consumer group becoming classic, the durable consumer group state).
	if err := b.Delete(consumerKey(g.ID), nil); err != nil {
		return err
	}
	if err := b.Delete(streamsKey(g.ID), nil); err != nil {
		return err
	}
	if err := s.apply(b); err != nil {
		return fmt.Errorf("offsets: put group %q: %w", g.ID, err)
	}
	return nil
}

// ClassicGroups returns every classic group that has persisted members, by
// id (memberships kept across restarts). The membership record carries the group's protocol type,
// protocol, generation and state time as of its write: the metadata record
// may since have moved on to a rebalance that never completed.
func (s *Store) ClassicGroups() (map[string]ClassicGroup, error) {
	return read(s, s.classicGroups)
}

func (s *Store) classicGroups() (map[string]ClassicGroup, error) {
	return scanTagByID(s.db, classicTag, decodeClassic)
}

// hasClassicMembers reports whether group has a persisted membership.
func (s *Store) hasClassicMembers(group string) (bool, error) {
	return hasKey(s.db, classicKey(group))
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func encodeClassic(g ClassicGroup) []byte {
	b := []byte{recordVersion}
	b = appendLenString(b, g.ProtocolType)
	b = appendLenString(b, g.Protocol)
	b = binary.AppendVarint(b, int64(g.Generation))
	b = binary.AppendVarint(b, g.StateTime.UnixMilli())
	b = appendLenString(b, g.Leader)
	b = binary.AppendUvarint(b, uint64(len(g.Members)))
	for _, m := range g.Members {
		b = appendLenString(b, m.ID)
		if m.InstanceID != nil {
			b = append(b, 1)
			b = appendLenString(b, *m.InstanceID)
		} else {
			b = append(b, 0)
		}
		b = appendLenString(b, m.ClientID)
		b = appendLenString(b, m.ClientHost)
		b = binary.AppendVarint(b, m.SessionTimeout.Milliseconds())
		b = binary.AppendVarint(b, m.RebalanceTimeout.Milliseconds())
		b = appendLenString(b, m.ProtocolType)
		b = binary.AppendUvarint(b, uint64(len(m.Protocols)))
		for _, p := range m.Protocols {
			b = appendLenString(b, p.Name)
			b = appendBytes(b, p.Metadata)
		}
		b = appendBytes(b, m.Assignment)
	}
	return b
}

// classicReader decodes a membership record, remembering the first error.
type classicReader struct {
	b   []byte
	bad bool
}

func (r *classicReader) str() string {
	if r.bad {
		return ""
	}
	s, rest, ok := lenString(r.b)
	if !ok {
		r.bad = true
		return ""
	}
	r.b = rest
	return s
}

func (r *classicReader) bytes() []byte {
	s := r.str()
	if r.bad {
		return nil
	}
	return []byte(s)
}

func (r *classicReader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *classicReader) varint() int64 {
	if r.bad {
		return 0
	}
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *classicReader) millis() time.Duration { return time.Duration(r.varint()) * time.Millisecond }

func (r *classicReader) byte() byte {
	if r.bad || len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// count reads a element count, refusing one the remaining bytes cannot
// hold (every element takes at least one byte), so a corrupt record
// cannot make the decoder allocate without bound.
func (r *classicReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad = true
		return 0
	}
	return int(n)
}

func decodeClassic(id string, v []byte) (ClassicGroup, error) {
	if len(v) == 0 || v[0] != recordVersion {
		return ClassicGroup{}, fmt.Errorf("%w: members of group %q", ErrCorrupt, id)
	}
	r := &classicReader{b: v[1:]}
	g := ClassicGroup{Group: Group{ID: id, State: GroupActive}}
	g.ProtocolType, g.Protocol = r.str(), r.str()
	g.Generation = int32(r.varint())
	g.StateTime = time.UnixMilli(r.varint())
	g.Leader = r.str()
	n := r.count()
	for i := 0; i < n && !r.bad; i++ {
		m := ClassicMember{ID: r.str()}
		switch r.byte() {
		case 0:
		case 1:
			inst := r.str()
			m.InstanceID = &inst
		default:
			r.bad = true
		}
		m.ClientID, m.ClientHost = r.str(), r.str()
		m.SessionTimeout, m.RebalanceTimeout = r.millis(), r.millis()
		m.ProtocolType = r.str()
		np := r.count()
		for j := 0; j < np && !r.bad; j++ {
			m.Protocols = append(m.Protocols, Protocol{Name: r.str(), Metadata: r.bytes()})
		}
		m.Assignment = r.bytes()
		g.Members = append(g.Members, m)
	}
	if r.bad || len(r.b) != 0 || len(g.Members) == 0 {
		return ClassicGroup{}, fmt.Errorf("%w: members of group %q", ErrCorrupt, id)
	}
	return g, nil
}
