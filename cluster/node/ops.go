package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Operations: what a node tells operators (metrics, /readyz, kgateway
// cluster status).

// Observer is told of a node's rebuilds (metrics); package server wires
// it. Its methods must not block.
type Observer interface {
	// ObserveRebuild: a rebuild (rebuild before serving) of a partition or of the
	// coordinator role took d; ok is false when it failed.
	ObserveRebuild(d time.Duration, ok bool)
}

// Stats is a node's view of its own cluster work, read at scrape time.
type Stats struct {
	// Held counts the partitions (and the coordinator role) this node
	// owns; Serving those of them rebuilt and served (rebuild before serving).
	Held, Serving int
	// UploadCommits and UploadBytes are the group commits handed to the
	// object store and etcd (Replicate) and not finished yet: the
	// upload backlog produces wait behind.
	UploadCommits, UploadBytes int64
	// MergeBacklog is how many range records of the held partitions
	// their last merge left in runs still to merge; CollectBacklog how
	// many unreferenced objects the last collection here left
	// (diskless).
	MergeBacklog, CollectBacklog int
	// Fenced counts group-commit partitions refused since the start
	// because their ownership was gone (replication under ownership).
	Fenced int64
	// Requests counts what the node asked of etcd and the object store
	// for the published copy since the start (the cost model's inputs).
	Requests diskless.Requests
}

// upload counts the group commits in flight (Stats).
type upload struct {
	commits, bytes atomic.Int64
	fenced         atomic.Int64
}

// Stats is the node's Stats now.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	st := Stats{Held: len(n.mu.held)}
	pkeys := make([]string, 0, len(n.mu.held))
	for k, h := range n.mu.held {
		if h.serving {
			st.Serving++
		}
		pkeys = append(pkeys, k)
	}
	p := n.p
	n.mu.Unlock()
	st.UploadCommits, st.UploadBytes = n.upload.commits.Load(), n.upload.bytes.Load()
	st.Fenced = n.upload.fenced.Load()
	if p.Diskless != nil {
		st.MergeBacklog = p.Diskless.MergeBacklog(pkeys...)
		st.CollectBacklog = p.Diskless.CollectBacklog()
		st.Requests = p.Diskless.Requests()
	}
	return st
}

// Ready is nil once the node serves everything placement gives it (rendezvous placement):
// it is registered, sees itself among the live nodes, and every slot
// (partition or coordinator role) for which it is the preferred node is
// owned and rebuilt here. Otherwise it says what is missing. A node
// that is not started, leaving, or whose session ended is not ready.
func (n *Node) Ready() error {
	n.mu.Lock()
	started, leaving, sess := n.mu.started, n.mu.leaving, n.mu.sess
	self, registered := n.mu.brokers[n.cfg.NodeID]
	live := make([]int32, 0, len(n.mu.brokers))
	for id := range n.mu.brokers {
		live = append(live, id)
	}
	n.mu.Unlock()
	switch {
	case !started:
		return fmt.Errorf("cluster node %d not started", n.cfg.NodeID)
	case leaving:
		return fmt.Errorf("cluster node %d leaving", n.cfg.NodeID)
	case sess == nil || sessionDone(sess.Done()):
		return fmt.Errorf("cluster node %d: session ended", n.cfg.NodeID)
	case !registered || self.Port == 0:
		return fmt.Errorf("cluster node %d not registered yet", n.cfg.NodeID)
	}
	var missing []string
	given := 0
	slots := n.slots()
	n.mu.Lock()
	for _, s := range slots {
		if preferred(s.pkey, live) != n.cfg.NodeID {
			continue
		}
		given++
		if h := n.mu.held[s.pkey]; h == nil || !h.serving {
			missing = append(missing, s.pkey)
		}
	}
	n.mu.Unlock()
	if len(missing) > 0 {
		return fmt.Errorf("cluster node %d serves %d of the %d partitions placement gives it (waiting for %s)",
			n.cfg.NodeID, given-len(missing), given, missing[0])
	}
	return nil
}

func sessionDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// StatsDir is where, under the cluster prefix, each node keeps its Stats
// for kgateway cluster status: P stats/<node id>, JSON, under the node's
// session lease (gone with the node).
const StatsDir = "stats/"

// PublishedStats is a node's stats record.
type PublishedStats struct {
	Stats
	At time.Time `json:"at"`
}

// A node rewrites its stats record at most every statsMin (under load
// the uploads in flight change at every tick: one etcd write per tick
// and node would be a cost for nothing), and every statsEvery when
// nothing in it changed (its time shows it is fresh).
const (
	statsMin   = 2 * time.Second
	statsEvery = 10 * time.Second
)

// publishStats writes the node's stats record when it changed since the
// last write, at most every statsMin, or statsEvery after the last.
func (n *Node) publishStats(last *PublishedStats) {
	st := n.Stats()
	if age := time.Since(last.At); age < statsMin || st == last.Stats && age < statsEvery {
		return
	}
	n.mu.Lock()
	sess := n.mu.sess
	n.mu.Unlock()
	rec := PublishedStats{Stats: st, At: time.Now().UTC()}
	val, _ := json.Marshal(rec)
	ctx, cancel := context.WithTimeout(n.bg, 5*time.Second)
	defer cancel()
	k := n.cfg.Prefix + StatsDir + strconv.Itoa(int(n.cfg.NodeID))
	if _, err := n.cli.Put(ctx, k, string(val), clientv3.WithLease(sess.Lease())); err != nil {
		n.log.Debug("cluster-stats-not-published", zap.Error(err))
		return
	}
	*last = rec
}

// ParseRegistration decodes a node key's value (P nodes/<id>).
func ParseRegistration(v []byte) (host string, port int32, rack *string, err error) {
	var r registration
	if err := json.Unmarshal(v, &r); err != nil {
		return "", 0, nil, fmt.Errorf("cluster: bad registration: %w", err)
	}
	return r.Host, r.Port, r.Rack, nil
}
