package node

import (
	"sort"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
)

// The decisions of placement (rendezvous placement) and of the rebuild (the bounded rebuild), as pure
// functions of what the node knows: placement.go reads that state from
// the node (the etcd watches' view, its ownerships), calls these, and does
// the etcd and object-store I/O they call for. testdata/ holds their
// datadriven transcripts.

// placeView is what one placement round decides from: the node, the live
// (registered) nodes, the slots that exist (partitions and the coordinator
// role, in order), the ownerships this node holds and the owner records
// the watch sees.
type placeView struct {
	self  int32
	name  string // self in decimal: the node of its owner records
	live  []int32
	slots []string
	held  map[string]heldView
	// owners is the node name of each slot's owner record.
	owners map[string]string
}

// heldView is what placement knows of one ownership of this node.
type heldView struct {
	broken bool // Replication under ownership: its publication failed other than by fencing
}

// releaseWhy is why a placement round gives an ownership up.
type releaseWhy string

const (
	releaseBroken   releaseWhy = "broken"   // Replication under ownership: released to be rebuilt
	releaseHandover releaseWhy = "handover" // Rendezvous placement: another live node is preferred
	releaseGone     releaseWhy = "gone"     // its topic was deleted
)

// release is one ownership to give up.
type release struct {
	pkey string
	why  releaseWhy
}

// placement is what a round does, in this order: release (broken and
// handed-over slots, in slot order), acquire (in slot order), then release
// the slots that no longer exist (by pkey).
type placement struct {
	release []release
	acquire []string
	gone    []string
}

// place decides one placement round (rendezvous placement). A held ownership that broke is
// released. A slot this node prefers among the live nodes is acquired
// when it neither holds it nor sees an owner record for it. A held slot
// another live node is preferred for is handed over, but only while the
// owner record still names this node (a record naming another is the
// watch catching up, or an ownership already lost). Held slots that no
// longer exist are released after the acquisitions.
func place(v placeView) placement {
	var p placement
	want := make(map[string]bool, len(v.slots))
	for _, pkey := range v.slots {
		want[pkey] = true
		mine := preferred(pkey, v.live) == v.self
		h, isHeld := v.held[pkey]
		owner, owned := v.owners[pkey]
		switch {
		case isHeld && h.broken:
			p.release = append(p.release, release{pkey, releaseBroken})
		case !isHeld && mine && !owned:
			p.acquire = append(p.acquire, pkey)
		case isHeld && !mine && owner == v.name:
			p.release = append(p.release, release{pkey, releaseHandover})
		}
	}
	for pkey := range v.held {
		if !want[pkey] {
			p.gone = append(p.gone, pkey)
		}
	}
	sort.Strings(p.gone)
	return p
}

// rebuildPlan is what a rebuild (rebuild before serving, the bounded rebuild) copies and where the local copy
// starts.
type rebuildPlan struct {
	// from is the offset the local copy begins at: the first copied
	// range's base, the published start when nothing is published, or
	// the published end when no range fits the budget.
	from int64
	// copy is the ranges copied into the local cache, oldest first.
	copy []diskless.Range
	// trimTo is the published start when from is below it (the whole
	// partition was copied and its first range straddles the start):
	// the copy is then trimmed to it. -1 otherwise.
	trimTo int64
	// localStart is where the local copy starts once trimmed: what
	// upkeep publishes the local start against (the bounded rebuild).
	localStart int64
}

// planRebuild decides a rebuild of a partition published as
// [start, end) in ranges (oldest first) with budget bytes for the local
// cache (cluster.cache.rebuild.bytes; negative: the whole partition): the
// newest ranges whose bytes fit are copied (the bounded rebuild).
func planRebuild(start, end int64, ranges []diskless.Range, budget int64) rebuildPlan {
	k := tailFrom(ranges, budget)
	from := end // nothing fits: the local copy starts empty at the end
	switch {
	case len(ranges) == 0:
		from = start
	case k == 0:
		// The whole partition. The first range may begin below the
		// published start (a trim keeps a range that straddles it):
		// copy it whole, then trim to the start.
		from = min(start, ranges[0].Base)
	case k < len(ranges):
		from = ranges[k].Base
	}
	p := rebuildPlan{from: from, copy: ranges[k:], trimTo: -1, localStart: max(from, start)}
	if from < start {
		p.trimTo = start
	}
	return p
}

// tailFrom is the index of the first of the newest ranges whose bytes
// fit limit (the bounded rebuild): 0 when all do or limit is negative (the whole
// partition), len(ranges) when not even the last one does.
func tailFrom(ranges []diskless.Range, limit int64) int {
	if limit < 0 {
		return 0
	}
	k, size := len(ranges), int64(0)
	for k > 0 && size+ranges[k-1].Len <= limit {
		size += ranges[k-1].Len
		k--
	}
	return k
}

// upkeepView is what an upkeep pass knows of one served partition (not
// the coordinator role) once it has read the local copy's bounds.
type upkeepView struct {
	localStart, localEnd int64
	// published is the local start last published, or where the rebuild
	// began the local copy (the bounded rebuild).
	published int64
	// sinceExport is the time since the last export of the producer
	// state (or since the rebuild); stateCovered the offset the last
	// published export covers.
	sinceExport   time.Duration
	stateInterval time.Duration
	stateCovered  int64
}

// upkeepPlan is what an upkeep pass publishes, in this order.
type upkeepPlan struct {
	// exportState: export the producer and transaction state (periodic state export).
	exportState bool
	// publishStart is the local start to publish, -1 for none.
	publishStart int64
}

// planUpkeep decides an upkeep pass. The state is exported at most every
// StateInterval and only when the log grew past what the last export
// covers (periodic state export). The local start is published only when it passed the
// published one: retention or DeleteRecords moved it, never the cache's
// own start, where the rebuild began the copy (the bounded rebuild).
func planUpkeep(v upkeepView) upkeepPlan {
	p := upkeepPlan{publishStart: -1}
	p.exportState = v.sinceExport >= v.stateInterval && v.localEnd > v.stateCovered
	if v.localStart > v.published {
		p.publishStart = v.localStart
	}
	return p
}
