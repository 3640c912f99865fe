package share

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/offsets"
)

// States is where share-partition states are durable in cluster mode
// (share groups in cluster mode): one record per group and partition, written by the
// partition's leader under its ownership, read by the next leader. Nil
// in Config: a single node, whose states are in its offset store (the durable share-partition state).
//
// A Coordinator with States and no offset store is a node's leader side
// (NewLeader): ShareFetch and ShareAcknowledge of the partitions the node
// leads. One with both is the group coordinator: membership over its
// store, the offsets admin over States.
type States interface {
	// Serving is the leader epoch under which this node serves tp now;
	// ok is false when it does not lead tp (the leader side).
	Serving(tp offsets.TopicPartition) (epoch int32, ok bool)
	// Load reads the state of tp in group and its version (0: none yet).
	Load(group string, tp offsets.TopicPartition) (sp offsets.SharePartition, version int64, err error)
	// Put writes sp if this node still leads tp at epoch and the record is
	// still at version (leader writes before answers): a fenced leader, or a state changed since
	// it was read, writes nothing and gets an error. It returns the new
	// version.
	Put(group string, sp offsets.SharePartition, epoch int32, version int64) (int64, error)
	// Reset writes put and deletes del, whatever their versions: the
	// coordinator's offsets admin on an empty group (the admin on leaders' states).
	Reset(group string, put []offsets.SharePartition, del []offsets.TopicPartition) error
	// List returns every state of group.
	List(group string) ([]offsets.SharePartition, error)
	// DeleteGroup removes every state of group.
	DeleteGroup(group string) error
	// GroupConfigs are group's dynamic configs, as the coordinator keeps
	// them (possibly a moment old).
	GroupConfigs(group string) map[string]string
}

// revalidateEvery is how long a leader trusts its cached state of a
// partition without re-reading its version (the admin on leaders' states): an AlterShareGroupOffsets
// at the coordinator reaches a leader that has nothing to write within it.
const revalidateEvery = time.Second

// errNotServing is the leader side's answer for a partition another node
// leads.
var errNotServing = errors.New("share: partition not led here")

// NewLeader is the leader side of share groups on a cluster node (the leader side):
// share sessions, acquisition and acknowledgement of the partitions this
// node leads, their states cached in memory and durable in states.
// Membership and the offsets admin are the coordinator's (NewCoordinator
// with cfg.States set).
func NewLeader(states States, log Log, cfg Config) *Coordinator {
	cfg.States = states
	c := &Coordinator{cfg: cfg.withDefaults(), log: log}
	c.mu.groups = make(map[string]*group)
	c.mu.sessions = make(map[sessKey]*session)
	c.mu.configs = make(map[string]map[string]string)
	return c
}

// leaderSide reports whether c is a cluster node's leader side.
func (c *Coordinator) leaderSide() bool { return c.store == nil && c.cfg.States != nil }

// adminViaStates reports whether c is a cluster's group coordinator, whose
// offsets admin acts on the leaders' states (the admin on leaders' states).
func (c *Coordinator) adminViaStates() bool { return c.store != nil && c.cfg.States != nil }

// clusterPartition is partitionOf for the leader side (the leader side, re-reading after a leader change): the
// cached state while it was loaded under the current leader epoch, is not
// dead (a failed write) and was validated within revalidateEvery; else
// the durable state, read again. A state read under an earlier epoch has
// its acquired records available again, with their counts (locks released at restart): they
// were persisted so.
//
// A read older than the cached state is no news: the read runs outside
// the locks, so this node's own write of the partition (an
// acknowledgement, another fetch's acquisition) may land between the
// read and the check below. The cached state's version is then the mod
// revision of that later write, greater than the one read; as that write
// was conditional on the revision before it, nobody else wrote between
// them, and the cache is the newer truth. Replacing it with what was read
// would bring back records already acknowledged or acquired, and the
// next write, guarded by the old revision, would be refused: the
// partition would be read again and everything in flight delivered
// again, with no leader change. A read of no state (version 0) under a
// cached one is taken as a deletion by the offsets admin.
func (c *Coordinator) clusterPartition(g *group, tp offsets.TopicPartition, logStart, hwm int64) (*partition, error) {
	epoch, ok := c.cfg.States.Serving(tp)
	if !ok {
		return nil, errNotServing
	}
	now := c.cfg.Now()
	g.mu.Lock()
	p := g.mu.parts[tp]
	g.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		fresh := !p.dead && p.epoch == epoch && now.Sub(p.checked) < revalidateEvery
		p.mu.Unlock()
		if fresh && !p.beyond(hwm) {
			return p, nil
		}
	}
	sp, version, err := c.cfg.States.Load(g.id, tp)
	if err != nil {
		return nil, err
	}
	earliest := c.groupConfig(g.id, ConfigAutoOffsetReset) == "earliest" // outside g.mu: may read etcd
	g.mu.Lock()
	defer g.mu.Unlock()
	if cur := g.mu.parts[tp]; cur != nil {
		cur.mu.Lock()
		keep := !cur.dead && cur.epoch == epoch && cur.end() <= hwm &&
			(cur.version == version || version != 0 && cur.version > version)
		if keep && cur.version == version {
			cur.checked = now
		}
		cur.mu.Unlock()
		if keep {
			return cur, nil
		}
	}
	if version != 0 && stateEnd(sp) <= hwm {
		p = loadPartition(sp)
	} else {
		start := hwm
		if earliest {
			start = logStart
		}
		p = newPartition(start)
		if version, err = c.cfg.States.Put(g.id, p.persistedLocked(tp), epoch, version); err != nil {
			return nil, err
		}
	}
	p.epoch, p.version, p.checked = epoch, version, now
	g.mu.parts[tp] = p
	return p, nil
}

// stateEnd is the first offset past sp's window.
func stateEnd(sp offsets.SharePartition) int64 {
	if len(sp.Runs) == 0 {
		return sp.StartOffset
	}
	return sp.Runs[len(sp.Runs)-1].Last + 1
}

// putClusterLocked writes p's state under the epoch and version it was
// read at (leader writes before answers). A write that fails marks p dead: its next use reads the
// durable state again, so nothing it holds that was not written survives
// (a fenced leader's acquisitions and acknowledgements are lost, as its
// leadership is). Needs p.mu.
func (c *Coordinator) putClusterLocked(group string, tp offsets.TopicPartition, p *partition) error {
	v, err := c.cfg.States.Put(group, p.persistedLocked(tp), p.epoch, p.version)
	if err != nil {
		p.dead = true
		c.cfg.Logger.Info("share-state-write-refused", zap.Stringer("partition", tp), zap.Error(err))
		return err
	}
	p.version, p.checked = v, c.cfg.Now()
	return nil
}
