package offsets

import (
	"fmt"
	"time"
)

// A streams group's state (KIP-1071; the streams groups rule of doc.go) lives under its own key
// beside the group's metadata record, as the coordinator's encoding
// (kafka/streams: epochs, topology, members, their tasks and the
// target):
//
//	's' group -> state time (8 bytes, unix ms, big endian), then state
//
// PutStreamsGroup writes it and the metadata record in one synced batch.
const streamsTag byte = 's'

// StreamsProtocolType is the protocol type a streams group reports.
const StreamsProtocolType = "streams"

// StreamsGroup is a streams group's durable state: its metadata record
// and the coordinator's encoding of the rest.
type StreamsGroup struct {
	Group
	State []byte
}

func streamsKey(group string) []byte {
	return append([]byte{streamsTag}, group...)
}

// PutStreamsGroup records g in one synced batch with its metadata record
// (doc.go, streams groups): when it returns nil both are durable. A classic membership or
// consumer group state of the same id is removed in the same batch (a
// group has one type). maxBytes > 0 bounds the state (ErrTooLarge).
func (s *Store) PutStreamsGroup(g StreamsGroup, maxBytes int) error {
	if g.ID == "" {
		return fmt.Errorf("%w: streams group needs an id", ErrInvalid)
	}
	if maxBytes > 0 && len(g.State) > maxBytes {
		return fmt.Errorf("%w: group %q: %d bytes > %d", ErrTooLarge, g.ID, len(g.State), maxBytes)
	}
	g.ProtocolType = StreamsProtocolType
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	v := make([]byte, 0, 9+len(g.State))
	v = append(v, recordVersion)
	v = appendUint64(v, uint64(g.StateTime.UnixMilli()))
	v = append(v, g.State...)
	for _, op := range []error{
		b.Set(metaKey(g.ID), encodeGroup(g.Group), nil),
		b.Set(streamsKey(g.ID), v, nil),
		b.Delete(classicKey(g.ID), nil),
		b.Delete(consumerKey(g.ID), nil),
	} {
		if op != nil {
			return op
		}
	}
	if err := s.apply(b); err != nil {
		return fmt.Errorf("offsets: put streams group %q: %w", g.ID, err)
	}
	return nil
}

func appendUint64(b []byte, v uint64) []byte {
	for i := 7; i >= 0; i-- {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// StreamsGroups returns every persisted streams group by id (doc.go, streams groups).
func (s *Store) StreamsGroups() (map[string]StreamsGroup, error) {
	return read(s, func() (map[string]StreamsGroup, error) { return scanTagByID(s.db, streamsTag, decodeStreams) })
}

func decodeStreams(id string, v []byte) (StreamsGroup, error) {
	if len(v) < 9 || v[0] != recordVersion {
		return StreamsGroup{}, fmt.Errorf("%w: streams group %q", ErrCorrupt, id)
	}
	var ms uint64
	for _, c := range v[1:9] {
		ms = ms<<8 | uint64(c)
	}
	g := StreamsGroup{Group: Group{ID: id, ProtocolType: StreamsProtocolType, StateTime: time.UnixMilli(int64(ms))}}
	g.State = append([]byte(nil), v[9:]...)
	return g, nil
}

// hasStreamsState reports whether group has a persisted streams state.
func (s *Store) hasStreamsState(group string) (bool, error) {
	return hasKey(s.db, streamsKey(group))
}
