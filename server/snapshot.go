package server

import (
	"io/fs"
	"path/filepath"

	"github.com/kgateway/kgateway/metrics"
)

// snapshot is the metrics Source, computed at scrape time (nothing on the hot path).
func (s *Server) snapshot() metrics.Snapshot {
	var snap metrics.Snapshot
	if !s.open.Load() {
		return snap
	}
	for _, p := range s.res.PartitionInfos() {
		ps := metrics.PartitionStat{Topic: p.Topic, Partition: p.Partition, LogStart: int64(p.Info.Start),
			HighWatermark: int64(p.Info.End), Ledgers: len(p.Info.Ledgers)}
		for _, l := range p.Info.Ledgers {
			ps.Entries += l.Entries
			ps.Bytes += l.Bytes
		}
		snap.Partitions = append(snap.Partitions, ps)
	}
	snap.Groups = s.groupOffsets()
	snap.DiskBytes = dirBytes(s.cfg.DataDir)
	snap.Connections = s.kafka.OpenConnections()
	snap.InFlight = s.kafka.InFlightRequests()
	cs := s.res.Passes().CleanerStats()
	snap.Cleaner = metrics.CleanerStat{Passes: cs.Passes, BytesRead: cs.BytesRead, BytesWritten: cs.BytesWritten,
		Recopy: cs.Recopy, MaxDirtyRatio: cs.MaxDirtyRatio, MaxLagMs: cs.MaxLagMs,
		LastPassSeconds: cs.LastPass.Seconds(), PassSeconds: cs.PassTime.Seconds()}
	if s.tier != nil {
		ts := s.tier.Stats()
		snap.Tier = metrics.TierStat{Uploads: ts.Uploads, UploadBytes: ts.UploadBytes, UploadFailures: ts.UploadFailures,
			Offloads: ts.Offloads, Deletes: ts.Deletes, Orphans: ts.Orphans, ReadBytes: ts.ReadBytes,
			CacheHits: ts.CacheHits, CacheMisses: ts.Misses, Retries: ts.Retries, Failures: ts.Failures,
			Corrupt: ts.Corrupt, Stale: ts.Stale}
	}
	if s.cluster != nil {
		ns := s.cluster.node.Stats()
		snap.Cluster = &metrics.ClusterStat{Held: ns.Held, Serving: ns.Serving, UploadCommits: ns.UploadCommits,
			UploadBytes: ns.UploadBytes, MergeBacklog: ns.MergeBacklog, CollectBacklog: ns.CollectBacklog,
			Ready:    s.cluster.node.Ready() == nil,
			EtcdTxns: ns.Requests.EtcdTxns, EtcdReads: ns.Requests.EtcdReads,
			ObjectPuts: ns.Requests.ObjectPuts, ObjectGets: ns.Requests.ObjectGets,
			ObjectDeletes: ns.Requests.ObjectDeletes, ObjectLists: ns.Requests.ObjectLists}
	}
	return snap
}

// groupOffsets is every committed offset of every group (a group whose
// offsets cannot be read is left out of this scrape).
func (s *Server) groupOffsets() []metrics.GroupOffset {
	groups, err := s.offs.Groups()
	if err != nil {
		return nil
	}
	var out []metrics.GroupOffset
	for _, gr := range groups {
		commits, err := s.offs.GroupOffsets(gr.ID)
		if err != nil {
			continue
		}
		for _, c := range commits {
			out = append(out, metrics.GroupOffset{Group: gr.ID, Topic: c.Topic, Partition: c.Partition, Committed: int64(c.Offset)})
		}
	}
	return out
}

// dirBytes sums the sizes of the files under dir on the operating
// system's file system (files vanishing during the walk are skipped).
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
