package offsets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2"
)

// Share groups (KIP-932) keep their state here, beside the classic groups'
// (the durable share state):
//
//	'S' group                                        -> share group record
//	'q' uvarint(len g) g uvarint(len t) t be32(part) -> share-partition state
//	'K' group                                        -> group configs
//
// A share-partition state is the share-partition start offset (SPSO) and
// the states of the records in flight after it, as runs of equal state and
// delivery count. It is group state, never a read position of the ledger
// (O3): nothing here is consulted by a read of the log.
const (
	shareGroupTag byte = 'S'
	sharePartTag  byte = 'q'
	groupConfTag  byte = 'K'
)

// ShareRecordState is a persisted record state, numbered as Kafka's
// RecordState. Acquired is never persisted: a record acquired when the
// state was written is written as Available with its delivery count (acquisitions persisted as available).
type ShareRecordState uint8

const (
	ShareAvailable    ShareRecordState = 0
	ShareAcknowledged ShareRecordState = 2
	// ShareArchiving: archived once its copy is in the group's
	// dead-letter queue (KIP-1191, kafka/share's DLQ writer).
	ShareArchiving ShareRecordState = 3
	ShareArchived  ShareRecordState = 4
)

// ShareRun is a run of consecutive offsets [First, Last] in one state with
// one delivery count.
type ShareRun struct {
	First, Last   int64
	State         ShareRecordState
	DeliveryCount int32
}

// SharePartition is one share-partition's durable state: the start offset
// and the runs in flight from it, contiguous and ascending.
type SharePartition struct {
	TopicPartition
	StartOffset int64
	Runs        []ShareRun
}

// ShareGroup is the membership-independent record of a share group: its
// existence (the group id is taken by a share group, the share group record) and its epoch.
type ShareGroup struct {
	ID    string
	Epoch int32
}

func shareGroupKey(group string) []byte { return append([]byte{shareGroupTag}, group...) }
func groupConfKey(group string) []byte  { return append([]byte{groupConfTag}, group...) }

func sharePartPrefix(group string) []byte {
	k := []byte{sharePartTag}
	k = binary.AppendUvarint(k, uint64(len(group)))
	return append(k, group...)
}

func sharePartKey(group string, tp TopicPartition) []byte {
	k := sharePartPrefix(group)
	k = binary.AppendUvarint(k, uint64(len(tp.Topic)))
	k = append(k, tp.Topic...)
	return binary.BigEndian.AppendUint32(k, uint32(tp.Partition))
}

// PutShareGroup records a share group (synced, the share group record).
func (s *Store) PutShareGroup(g ShareGroup) error {
	if g.ID == "" {
		return fmt.Errorf("%w: share group needs an id", ErrInvalid)
	}
	return s.write(func(b *pebble.Batch) error {
		return b.Set(shareGroupKey(g.ID), binary.AppendVarint([]byte{recordVersion}, int64(g.Epoch)), nil)
	})
}

// ShareGroups returns every persisted share group, by id.
func (s *Store) ShareGroups() ([]ShareGroup, error) {
	return read(s, func() ([]ShareGroup, error) { return scanTag(s.db, shareGroupTag, decodeShareGroup) })
}

func decodeShareGroup(id string, v []byte) (ShareGroup, error) {
	if len(v) < 2 || v[0] != recordVersion {
		return ShareGroup{}, fmt.Errorf("%w: share group %q", ErrCorrupt, id)
	}
	e, k := binary.Varint(v[1:])
	if k <= 0 || k != len(v)-1 {
		return ShareGroup{}, fmt.Errorf("%w: share group %q", ErrCorrupt, id)
	}
	return ShareGroup{ID: id, Epoch: int32(e)}, nil
}

// PutShareState writes share-partition states of group in one synced batch
// (the durable share-partition state): when it returns nil every one is durable.
func (s *Store) PutShareState(group string, parts []SharePartition) error {
	for _, p := range parts {
		if err := checkRuns(p); err != nil {
			return err
		}
	}
	return s.write(func(b *pebble.Batch) error {
		for _, p := range parts {
			if err := b.Set(sharePartKey(group, p.TopicPartition), encodeSharePart(p), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// ShareWrite is one share-partition state of a group to write, or to
// delete, or the group's record (PutShareStates).
type ShareWrite struct {
	Group  string
	Part   SharePartition // its TopicPartition only, for a delete
	Delete bool
	// Record: write the share group record with Epoch (as
	// PutShareGroup) instead of a partition state; Part is unused.
	Record bool
	Epoch  int32
}

// PutShareStates writes and deletes share-partition states of any groups,
// and writes share group records, in one synced batch: when it returns
// nil every one is durable, and a crash leaves all of them or none (the
// durable share-partition state). The share coordinator gathers the
// writes of concurrent requests into one call, so that they share one
// sync.
func (s *Store) PutShareStates(ws []ShareWrite) error {
	for _, w := range ws {
		if w.Group == "" {
			return fmt.Errorf("%w: share state needs a group", ErrInvalid)
		}
		if err := checkRuns(w.Part); !w.Delete && !w.Record && err != nil {
			return err
		}
	}
	return s.write(func(b *pebble.Batch) error {
		for _, w := range ws {
			k := sharePartKey(w.Group, w.Part.TopicPartition)
			var err error
			switch {
			case w.Record:
				err = b.Set(shareGroupKey(w.Group), binary.AppendVarint([]byte{recordVersion}, int64(w.Epoch)), nil)
			case w.Delete:
				err = b.Delete(k, nil)
			default:
				err = b.Set(k, encodeSharePart(w.Part), nil)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteShareState removes the states of tps in group (synced).
func (s *Store) DeleteShareState(group string, tps []TopicPartition) error {
	return s.write(func(b *pebble.Batch) error {
		for _, tp := range tps {
			if err := b.Delete(sharePartKey(group, tp), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// ShareState returns every share-partition state of group, by topic and
// partition.
func (s *Store) ShareState(group string) ([]SharePartition, error) {
	return read(s, func() ([]SharePartition, error) {
		return scanPrefix(s.db, sharePartPrefix(group), func(k, v []byte) (SharePartition, error) {
			// The key has the layout of an offset key under another tag.
			_, tp, err := decodeOffsetKey(append([]byte{offsetTag}, k[1:]...))
			if err != nil {
				return SharePartition{}, err
			}
			return decodeSharePart(tp, v)
		})
	})
}

// DeleteShareGroup removes a share group: its record, every
// share-partition state and its configs, in one synced batch.
func (s *Store) DeleteShareGroup(group string) error {
	return s.write(func(b *pebble.Batch) error {
		prefix := sharePartPrefix(group)
		if err := b.DeleteRange(prefix, prefixEnd(prefix), nil); err != nil {
			return err
		}
		if err := b.Delete(groupConfKey(group), nil); err != nil {
			return err
		}
		return b.Delete(shareGroupKey(group), nil)
	})
}

// PutGroupConfigs replaces the dynamic configs of group (the GROUP config
// resource); an empty map removes them. Synced.
func (s *Store) PutGroupConfigs(group string, configs map[string]string) error {
	return s.write(func(b *pebble.Batch) error {
		if len(configs) == 0 {
			return b.Delete(groupConfKey(group), nil)
		}
		names := make([]string, 0, len(configs))
		for n := range configs {
			names = append(names, n)
		}
		sort.Strings(names)
		v := binary.AppendUvarint([]byte{recordVersion}, uint64(len(names)))
		for _, n := range names {
			v = appendLenString(appendLenString(v, n), configs[n])
		}
		return b.Set(groupConfKey(group), v, nil)
	})
}

// GroupConfigs returns the dynamic configs of every group that has any.
func (s *Store) GroupConfigs() (map[string]map[string]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return nil, ErrClosed
	}
	type entry struct {
		id  string
		cfg map[string]string
	}
	list, err := scanTag(s.db, groupConfTag, func(id string, v []byte) (entry, error) {
		bad := fmt.Errorf("%w: configs of group %q", ErrCorrupt, id)
		if len(v) == 0 || v[0] != recordVersion {
			return entry{}, bad
		}
		r := &classicReader{b: v[1:]}
		n := r.count()
		cfg := make(map[string]string, n)
		for i := 0; i < n && !r.bad; i++ {
			name := r.str()
			cfg[name] = r.str()
		}
		if r.bad || len(r.b) != 0 {
			return entry{}, bad
		}
		return entry{id, cfg}, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(list))
	for _, e := range list {
		out[e.id] = e.cfg
	}
	return out, nil
}

// write applies one synced batch built by fill.
func (s *Store) write(fill func(*pebble.Batch) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := fill(b); err != nil {
		return err
	}
	return s.apply(b)
}

// checkRuns refuses runs that are not contiguous from the start offset.
func checkRuns(p SharePartition) error {
	next := p.StartOffset
	for _, r := range p.Runs {
		if r.First != next || r.Last < r.First {
			return fmt.Errorf("%w: share state %s: run [%d, %d] after %d", ErrInvalid, p.TopicPartition, r.First, r.Last, next)
		}
		switch r.State {
		case ShareAvailable, ShareAcknowledged, ShareArchiving, ShareArchived:
		default:
			return fmt.Errorf("%w: share state %s: state %d", ErrInvalid, p.TopicPartition, r.State)
		}
		next = r.Last + 1
	}
	return nil
}

func encodeSharePart(p SharePartition) []byte {
	b := binary.AppendVarint([]byte{recordVersion}, p.StartOffset)
	b = binary.AppendUvarint(b, uint64(len(p.Runs)))
	for _, r := range p.Runs {
		b = binary.AppendUvarint(b, uint64(r.Last-r.First))
		b = append(b, byte(r.State))
		b = binary.AppendUvarint(b, uint64(r.DeliveryCount))
	}
	return b
}

var errShareCorrupt = errors.New("share-partition state")

func decodeSharePart(tp TopicPartition, v []byte) (SharePartition, error) {
	bad := fmt.Errorf("%w: %v %s", ErrCorrupt, errShareCorrupt, tp)
	if len(v) == 0 || v[0] != recordVersion {
		return SharePartition{}, bad
	}
	r := &classicReader{b: v[1:]}
	p := SharePartition{TopicPartition: tp, StartOffset: r.varint()}
	n := r.count()
	next := p.StartOffset
	for i := 0; i < n && !r.bad; i++ {
		length := r.uvarint()
		run := ShareRun{First: next, Last: next + int64(length), State: ShareRecordState(r.byte()), DeliveryCount: int32(r.uvarint())}
		p.Runs = append(p.Runs, run)
		next = run.Last + 1
	}
	if r.bad || len(r.b) != 0 || checkRuns(p) != nil {
		return SharePartition{}, bad
	}
	return p, nil
}

// EncodeSharePartition is a share-partition state's durable encoding, the
// one PutShareState writes, for stores of share state outside this one
// (a cluster keeps leaders' states in etcd, share states outside the offsets store).
func EncodeSharePartition(p SharePartition) ([]byte, error) {
	if err := checkRuns(p); err != nil {
		return nil, err
	}
	return encodeSharePart(p), nil
}

// DecodeSharePartition reads what EncodeSharePartition wrote, as the state
// of tp.
func DecodeSharePartition(tp TopicPartition, v []byte) (SharePartition, error) {
	return decodeSharePart(tp, v)
}

// GroupConfigKey is the store key of group's dynamic configs: a cluster
// leader reads a group's configs from the coordinator's mirror under it.
func GroupConfigKey(group string) []byte { return groupConfKey(group) }

// DecodeGroupConfigs reads a value stored under GroupConfigKey.
func DecodeGroupConfigs(v []byte) (map[string]string, error) {
	bad := fmt.Errorf("%w: group configs", ErrCorrupt)
	if len(v) == 0 || v[0] != recordVersion {
		return nil, bad
	}
	r := &classicReader{b: v[1:]}
	n := r.count()
	cfg := make(map[string]string, n)
	for i := 0; i < n && !r.bad; i++ {
		name := r.str()
		cfg[name] = r.str()
	}
	if r.bad || len(r.b) != 0 {
		return nil, bad
	}
	return cfg, nil
}
