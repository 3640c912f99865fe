package offsets

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/zap"
)

// Sentinel errors, checked with errors.Is.
var (
	ErrClosed  = errors.New("offsets: closed")
	ErrCorrupt = errors.New("offsets: corrupt record")
	ErrInvalid = errors.New("offsets: invalid argument")
)

// Offset is a Kafka record offset as committed by a consumer: the offset of
// the next record it wants. -1 means "no committed offset".
type Offset int64

func (o Offset) String() string { return fmt.Sprintf("offset-%d", int64(o)) }

// NoOffset is what Fetch reports for a partition without a commit.
const NoOffset Offset = -1

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// Commit is one committed offset (O2).
type Commit struct {
	TopicPartition
	Offset      Offset
	LeaderEpoch int32  // -1 when the client did not send one
	Metadata    string // client-provided, returned verbatim by Fetch
	CommitTime  time.Time
}

// GroupState is the part of a group's state the store needs: whether it has
// members. A classic group's members are persisted apart (ClassicGroup).
type GroupState uint8

const (
	// GroupEmpty: no members; retention runs (KIP-211).
	GroupEmpty GroupState = iota
	// GroupActive: the group has members; its offsets never expire.
	GroupActive
)

func (s GroupState) String() string {
	if s == GroupActive {
		return "active"
	}
	return "empty"
}

// Group is the persisted metadata of a group: enough to list and describe it
// after a restart and to apply retention.
type Group struct {
	ID           string
	ProtocolType string // "" for groups that only store offsets
	Protocol     string
	Generation   int32
	State        GroupState
	StateTime    time.Time // when the group entered State
}

// Options configures a Store. The zero value is usable.
type Options struct {
	// PebbleFS is the file system under pebble; tests inject faults here.
	// Default vfs.Default.
	PebbleFS vfs.FS
	// Logger receives pebble's and the store's messages. Default nop.
	Logger *zap.Logger
	// Retention is offsets.retention.minutes. Default 7 days.
	Retention time.Duration
	// Now stamps commits and group transitions. Default time.Now.
	Now func() time.Time
	// Mirror, when set, is offered every synced batch before the store
	// applies it (O8): the cluster's group coordinator copies it to etcd.
	// Writes that wait for one another are offered together, as one
	// batch holding theirs in the order of application. An error fails
	// every write of that batch and nothing of it is applied locally. It
	// is called one batch at a time, in the order the batches are
	// applied, and must not keep b.
	Mirror func(b *pebble.Batch) error
	// MirrorGroupEntries and MirrorGroupBytes bound the batch Mirror is
	// offered for a group of writes (the entries and the size of the
	// writes' batches together); a write larger alone is offered alone.
	// Defaults DefaultMirrorGroupEntries and DefaultMirrorGroupBytes.
	MirrorGroupEntries int
	MirrorGroupBytes   int
	// MirrorDurable says the mirror is the store's only durable copy:
	// the directory is never opened again, every new store is restored
	// from the mirror (cluster mode's coordinator role), so a mirrored
	// group's local apply is not synced (O8). Only with Mirror.
	MirrorDurable bool
}

// DefaultRetention is Kafka's offsets.retention.minutes default (7 days).
const DefaultRetention = 7 * 24 * time.Hour

func (o *Options) setDefaults() {
	if o.PebbleFS == nil {
		o.PebbleFS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MirrorGroupEntries <= 0 {
		o.MirrorGroupEntries = DefaultMirrorGroupEntries
	}
	if o.MirrorGroupBytes <= 0 {
		o.MirrorGroupBytes = DefaultMirrorGroupBytes
	}
}

// Store is the durable offset store. It is safe for concurrent use.
type Store struct {
	db   *pebble.DB
	opts Options
	// mu orders retention and deletions against writes: commits, group
	// updates and EndTxn hold it shared (pebble groups their syncs);
	// Expire, DeleteGroup and DeleteOffsets hold it exclusively, so a
	// commit can never land between retention's decision and its delete,
	// and no EndTxn can move a pending offset it read before a deletion
	// dropped it.
	mu struct {
		sync.RWMutex
		closed bool
	}
	// mirrorQ groups the writes when Options.Mirror is set: one group
	// at a time is mirrored, then applied, so the mirror sees batches in
	// the order they are applied (O8).
	mirrorQ mirrorQueue
	// lastPos is the last write position given to a commit (O6).
	lastPos atomic.Int64
}

// nextPosition is the write position of the next commit or pending
// commit (O6): above every position this process gave, and at least the
// wall clock in nanoseconds, so that it also passes the positions of
// earlier runs.
func (s *Store) nextPosition() int64 {
	for {
		last := s.lastPos.Load()
		next := max(last+1, time.Now().UnixNano())
		if s.lastPos.CompareAndSwap(last, next) {
			return next
		}
	}
}

// apply is every synced write of the store: the batch goes to
// Options.Mirror first, if set, with those of the writes waiting beside
// it, and is applied only if the mirror took it (O8, applyMirrored).
func (s *Store) apply(b *pebble.Batch) error {
	if s.opts.Mirror == nil {
		return s.db.Apply(b, pebble.Sync)
	}
	return s.applyMirrored(b)
}

// set is a synced write of one key (apply).
func (s *Store) set(key, value []byte) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(key, value, nil); err != nil {
		return err
	}
	return s.apply(b)
}

// Open opens (creating if needed) the store in dir. Groups persisted as
// active without a persisted membership (a crash in their first rebalance)
// are recorded as empty from now on, and retention counts from Open; a
// group with members keeps them (memberships kept across restarts).
func Open(dir string, opts Options) (*Store, error) {
	opts.setDefaults()
	db, err := pebble.Open(dir, &pebble.Options{
		FS:     opts.PebbleFS,
		Logger: pebbleLogger{opts.Logger.Sugar()},
	})
	if err != nil {
		return nil, fmt.Errorf("offsets: open %s: %w", dir, err)
	}
	s := &Store{db: db, opts: opts}
	if err := s.emptyActiveGroups(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) emptyActiveGroups() error {
	groups, err := s.metaGroups()
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	now := s.opts.Now()
	for _, g := range groups {
		if g.State == GroupActive {
			has, err := s.hasClassicMembers(g.ID)
			if err != nil {
				return err
			}
			hasConsumer, err := s.hasConsumerState(g.ID)
			if err != nil {
				return err
			}
			hasStreams, err := s.hasStreamsState(g.ID)
			if err != nil {
				return err
			}
			if has || hasConsumer || hasStreams {
				continue
			}
			g.State, g.StateTime = GroupEmpty, now
			if err := b.Set(metaKey(g.ID), encodeGroup(g), nil); err != nil {
				return err
			}
		}
	}
	if b.Empty() {
		return nil
	}
	return s.apply(b)
}

// Close closes the store; later calls return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil
	}
	s.mu.closed = true
	return s.db.Close()
}

// Commit stores the commits of one OffsetCommit request for group in one
// synced batch (O1): when it returns nil every one of them is durable; when
// it returns an error none is acknowledged. Zero CommitTimes are stamped
// with Options.Now.
func (s *Store) Commit(group string, commits []Commit) error {
	err := s.putCommits(commits, func(tp TopicPartition) []byte { return offsetKey(group, tp) })
	if err == ErrClosed { // unwrapped, as every other call returns it
		return err
	}
	if err != nil {
		return fmt.Errorf("offsets: commit %q: %w", group, err)
	}
	return nil
}

// putCommits writes commits under key in one synced batch, stamping zero
// CommitTimes with Options.Now. Nothing is written for no commits.
func (s *Store) putCommits(commits []Commit, key func(TopicPartition) []byte) error {
	if len(commits) == 0 {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	now := s.opts.Now()
	pos := s.nextPosition()
	for _, c := range commits {
		if c.CommitTime.IsZero() {
			c.CommitTime = now
		}
		if err := b.Set(key(c.TopicPartition), encodeCommit(c, pos), nil); err != nil {
			return err
		}
	}
	return s.apply(b)
}

// Get returns the committed offset of one partition; ok is false when there
// is none.
func (s *Store) Get(group string, tp TopicPartition) (c Commit, ok bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return Commit{}, false, ErrClosed
	}
	v, closer, err := s.db.Get(offsetKey(group, tp))
	if errors.Is(err, pebble.ErrNotFound) {
		return Commit{}, false, nil
	}
	if err != nil {
		return Commit{}, false, err
	}
	defer closer.Close()
	c, err = decodeCommit(tp, v)
	return c, err == nil, err
}

// GroupOffsets returns every committed offset of group, ordered by topic
// and partition.
func (s *Store) GroupOffsets(group string) ([]Commit, error) {
	return read(s, func() ([]Commit, error) { return s.groupOffsets(group) })
}

func (s *Store) groupOffsets(group string) ([]Commit, error) {
	return scanPrefix(s.db, groupOffsetPrefix(group), func(k, v []byte) (Commit, error) {
		_, tp, err := decodeOffsetKey(k)
		if err != nil {
			return Commit{}, err
		}
		return decodeCommit(tp, v)
	})
}

// HasGroup reports whether the store holds metadata or any offset of group.
func (s *Store) HasGroup(group string) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return false, ErrClosed
	}
	if _, closer, err := s.db.Get(metaKey(group)); err == nil {
		closer.Close()
		return true, nil
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return false, err
	}
	prefix := groupOffsetPrefix(group)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return false, err
	}
	defer it.Close()
	return it.First(), it.Error()
}

// DeleteOffsets removes the offsets of tps in group (OffsetDelete): the
// committed ones and every transaction's pending ones, in one synced
// batch, so a transaction that commits afterwards commits nothing for
// them (Kafka's tombstone for a partition drops its pending offsets too).
// Partitions without an offset are ignored.
func (s *Store) DeleteOffsets(group string, tps []TopicPartition) error {
	s.mu.Lock() // exclusive: an EndTxn must not move a pending offset deleted here
	defer s.mu.Unlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, tp := range tps {
		if err := b.Delete(offsetKey(group, tp), nil); err != nil {
			return err
		}
	}
	if err := s.deletePendingLocked(b, group, tps); err != nil {
		return err
	}
	return s.apply(b)
}

// deletePendingLocked adds to b the deletes of the pending offsets of tps
// in group, of every transaction. Pending keys start with the group, so
// the scan reads the group's pending offsets only (as PendingPartitions
// does). The caller holds s.mu exclusively, so no EndTxn reads a pending
// offset that this batch deletes and moves it after.
func (s *Store) deletePendingLocked(b *pebble.Batch, group string, tps []TopicPartition) error {
	if len(tps) == 0 {
		return nil
	}
	doomed := make(map[TopicPartition]bool, len(tps))
	for _, tp := range tps {
		doomed[tp] = true
	}
	return eachPrefix(s.db, pendingGroupPrefix(group), func(k, _ []byte) error {
		_, _, tp, err := decodePendingKey(k)
		if err != nil || !doomed[tp] {
			return err
		}
		return b.Delete(k, nil) // the batch copies k
	})
}

// PutGroup records a group's metadata (synced: it is written on rebalances,
// which are rare, and retention depends on it).
func (s *Store) PutGroup(g Group) error {
	if g.ID == "" && g.ProtocolType != "" {
		return fmt.Errorf("%w: group with protocol type needs an id", ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	return s.set(metaKey(g.ID), encodeGroup(g))
}

// DeleteGroup removes a group's metadata, every offset it committed and
// the pending offsets of every transaction in it, in one synced batch
// (DeleteGroups): a transaction that commits afterwards commits nothing
// for the group, as Kafka's group deletion writes a tombstone for every
// partition with a pending offset. The transactions keep their state and
// may commit new offsets to the group.
func (s *Store) DeleteGroup(group string) error {
	s.mu.Lock() // exclusive: no EndTxn moves a pending offset it read before this batch
	defer s.mu.Unlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, prefix := range [][]byte{groupOffsetPrefix(group), pendingGroupPrefix(group)} {
		if err := b.DeleteRange(prefix, prefixEnd(prefix), nil); err != nil {
			return err
		}
	}
	if err := b.Delete(metaKey(group), nil); err != nil {
		return err
	}
	if err := b.Delete(classicKey(group), nil); err != nil {
		return err
	}
	if err := b.Delete(consumerKey(group), nil); err != nil {
		return err
	}
	if err := b.Delete(streamsKey(group), nil); err != nil {
		return err
	}
	return s.apply(b)
}

// Groups returns every group the store knows: those with metadata and those
// that only have committed offsets (reported with no protocol type, Empty),
// sorted by id.
func (s *Store) Groups() ([]Group, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return nil, ErrClosed
	}
	return s.allGroups()
}

func (s *Store) allGroups() ([]Group, error) {
	meta, err := s.metaGroups()
	if err != nil {
		return nil, err
	}
	byID := make(map[string]bool, len(meta))
	for _, g := range meta {
		byID[g.ID] = true
	}
	withOffsets, err := s.offsetGroupIDs()
	if err != nil {
		return nil, err
	}
	for _, id := range withOffsets {
		if !byID[id] {
			meta = append(meta, Group{ID: id, State: GroupEmpty})
		}
	}
	sort.Slice(meta, func(i, j int) bool { return meta[i].ID < meta[j].ID })
	return meta, nil
}

func (s *Store) metaGroups() ([]Group, error) {
	return scanTag(s.db, metaTag, decodeGroup)
}

// scanTag decodes every record under one key tag whose key is the tag and
// an id, in key order.
func scanTag[T any](db *pebble.DB, tag byte, decode func(id string, v []byte) (T, error)) ([]T, error) {
	var out []T
	err := eachTag(db, tag, func(id string, v []byte) error {
		d, err := decode(id, v)
		out = append(out, d)
		return err
	})
	return out, err
}

// read runs fn under the store's shared lock, unless the store is closed
// (ErrClosed): every read of the store goes through it.
func read[T any](s *Store, fn func() (T, error)) (T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		var zero T
		return zero, ErrClosed
	}
	return fn()
}

// eachPrefix calls fn with the key and value of every record whose key
// starts with prefix, in key order, until fn fails.
func eachPrefix(db *pebble.DB, prefix []byte, fn func(k, v []byte) error) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// scanPrefix decodes every record under prefix, in key order; the first
// record that does not decode fails the scan.
func scanPrefix[T any](db *pebble.DB, prefix []byte, decode func(k, v []byte) (T, error)) ([]T, error) {
	var out []T
	err := eachPrefix(db, prefix, func(k, v []byte) error {
		d, err := decode(k, v)
		if err != nil {
			return err
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanTagByID is scanTag by id.
func scanTagByID[T any](db *pebble.DB, tag byte, decode func(id string, v []byte) (T, error)) (map[string]T, error) {
	out := make(map[string]T)
	err := eachTag(db, tag, func(id string, v []byte) error {
		d, err := decode(id, v)
		out[id] = d
		return err
	})
	return out, err
}

// eachTag calls fn with the id and value of every record under tag, in
// key order, until fn fails.
func eachTag(db *pebble.DB, tag byte, fn func(id string, v []byte) error) error {
	return eachPrefix(db, []byte{tag}, func(k, v []byte) error { return fn(string(k[1:]), v) })
}

// hasKey reports whether key holds a record.
func hasKey(db *pebble.DB, key []byte) (bool, error) {
	_, closer, err := db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	closer.Close()
	return true, nil
}

// offsetGroupIDs lists the groups that have offsets with a skip scan: one
// seek per group, not one step per offset.
func (s *Store) offsetGroupIDs() ([]string, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{offsetTag}, UpperBound: []byte{offsetTag + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []string
	for valid := it.First(); valid; {
		group, _, err := decodeOffsetKey(it.Key())
		if err != nil {
			return nil, err
		}
		out = append(out, group)
		valid = it.SeekGE(prefixEnd(groupOffsetPrefix(group)))
	}
	return out, it.Error()
}

// Expire applies offset retention at now (see the package doc) and returns
// the groups it removed entirely: empty groups left without offsets. The
// group coordinator calls it periodically (Kafka's
// offsets.retention.check.interval.ms).
func (s *Store) Expire(now time.Time) ([]string, error) {
	return s.ExpireUnless(now, nil)
}

// ExpireUnless is Expire passing over the groups stored as empty for
// which active, when not nil, reports true: the coordinator's groups that
// have members or are rebalancing, whose start is not written. It is
// called under the store's lock and must not call into the store.
func (s *Store) ExpireUnless(now time.Time, active func(group string) bool) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, ErrClosed
	}
	groups, err := s.allGroups()
	if err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	var removed []string
	for _, g := range groups {
		if g.State == GroupEmpty && active != nil && active(g.ID) {
			continue
		}
		gone, err := s.expireGroup(b, g, now)
		if err != nil {
			return nil, err
		}
		if gone {
			removed = append(removed, g.ID)
		}
	}
	if b.Empty() {
		return removed, nil
	}
	if err := s.apply(b); err != nil {
		return nil, fmt.Errorf("offsets: expire: %w", err)
	}
	if len(removed) > 0 {
		s.opts.Logger.Info("offsets-groups-expired", zap.Strings("groups", removed))
	}
	return removed, nil
}

// expireGroup adds the deletes for g's expired offsets to b and reports
// whether the whole group goes. A consumer group's offsets count from when
// the group became empty, or from their commit if that came later (a
// simple consumer committing into an empty group must not lose the commit
// at once); a group without protocol type counts each offset from its
// commit. As in Kafka, an offset a transaction has pending stays, expired
// or not, and so does a group with any pending offset, until the
// transaction ends. Needs the store's lock.
func (s *Store) expireGroup(b *pebble.Batch, g Group, now time.Time) (bool, error) {
	if g.State != GroupEmpty {
		return false, nil
	}
	commits, err := s.groupOffsets(g.ID)
	if err != nil {
		return false, err
	}
	pending := map[TopicPartition]bool{}
	err = eachPrefix(s.db, pendingGroupPrefix(g.ID), func(k, _ []byte) error {
		_, _, tp, err := decodePendingKey(k)
		pending[tp] = true
		return err
	})
	if err != nil {
		return false, err
	}
	kept := len(pending)
	for _, c := range commits {
		base := c.CommitTime
		if g.ProtocolType != "" && g.StateTime.After(base) {
			base = g.StateTime
		}
		if now.Sub(base) < s.opts.Retention || pending[c.TopicPartition] {
			kept++
			continue
		}
		if err := b.Delete(offsetKey(g.ID, c.TopicPartition), nil); err != nil {
			return false, err
		}
	}
	if kept > 0 {
		return false, nil
	}
	if err := b.Delete(consumerKey(g.ID), nil); err != nil {
		return false, err
	}
	if err := b.Delete(streamsKey(g.ID), nil); err != nil {
		return false, err
	}
	return true, b.Delete(metaKey(g.ID), nil)
}

// pebbleLogger routes pebble's chatter to zap: its routine Infof messages
// (flushes, compactions) at debug level. Fatalf exits, as pebble's default
// logger does: pebble calls it when a WAL write or sync fails, so a commit
// whose bytes are in doubt is never acknowledged (O1) — the process stops
// instead, and on restart only synced commits exist.
type pebbleLogger struct{ l *zap.SugaredLogger }

func (p pebbleLogger) Infof(format string, args ...any)  { p.l.Debugf(format, args...) }
func (p pebbleLogger) Errorf(format string, args ...any) { p.l.Errorf(format, args...) }
func (p pebbleLogger) Fatalf(format string, args ...any) { p.l.Fatalf(format, args...) }
