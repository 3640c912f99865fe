package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Cluster mode's instruments: registered by EnableCluster, so a single
// node exports none of them.

// ClusterStat is a cluster node's state at scrape time (cluster/node
// Stats), in a Snapshot; nil on a single node.
type ClusterStat struct {
	Held, Serving              int
	UploadCommits, UploadBytes int64
	MergeBacklog               int
	CollectBacklog             int
	Ready                      bool
	// Requests to etcd and the object store since the node started, by
	// kind (cluster/diskless Requests).
	EtcdTxns, EtcdReads                                int64
	ObjectPuts, ObjectGets, ObjectDeletes, ObjectLists int64
}

// clusterInstruments are the cluster path's histograms and counters.
type clusterInstruments struct {
	put, txn     prometheus.Histogram
	fenced       prometheus.Counter
	rebuilds     *prometheus.CounterVec
	rebuildTime  prometheus.Histogram
	commitsBytes prometheus.Histogram
}

// EnableCluster registers the cluster path's instruments (a cluster
// node's server calls it once, before serving).
func (m *Metrics) EnableCluster() {
	c := &clusterInstruments{
		put: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "cluster_commit_put_seconds",
			Help: "Time a cluster group commit spends writing its object to the object store (the first half of an acknowledgement's wait).",
			// 1ms .. ~65s
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
		}),
		txn: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "cluster_commit_etcd_seconds",
			Help:    "Time a cluster group commit spends in the fenced etcd transactions publishing its ranges (the second half).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 17),
		}),
		commitsBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "cluster_commit_object_bytes",
			Help:    "Bytes of one cluster group commit's object.",
			Buckets: prometheus.ExponentialBuckets(1024, 4, 8),
		}),
		fenced: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "cluster_fenced_writes_total",
			Help: "Partitions of group commits refused because this node's ownership was gone (never acknowledged; the client retries on the new owner).",
		}),
		rebuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "cluster_rebuilds_total",
			Help: "Rebuilds of a partition's (or the coordinator role's) local copy from the published one after acquiring it, by result (ok or failed).",
		}, []string{"result"}),
		rebuildTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "cluster_rebuild_seconds",
			Help:    "Time from acquiring a partition to serving it (or failing to).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}),
	}
	m.Registry.MustRegister(c.put, c.txn, c.commitsBytes, c.fenced, c.rebuilds, c.rebuildTime)
	m.cluster = c
}

// ObserveCommit records one cluster group commit (cluster/diskless
// Observer).
func (m *Metrics) ObserveCommit(put, txn time.Duration, bytes, fenced int) {
	c := m.cluster
	if c == nil {
		return
	}
	c.put.Observe(put.Seconds())
	c.txn.Observe(txn.Seconds())
	c.commitsBytes.Observe(float64(bytes))
	c.fenced.Add(float64(fenced))
}

// ObserveRebuild records one rebuild (cluster/node Observer).
func (m *Metrics) ObserveRebuild(d time.Duration, ok bool) {
	c := m.cluster
	if c == nil {
		return
	}
	result := "failed"
	if ok {
		result = "ok"
	}
	c.rebuilds.WithLabelValues(result).Inc()
	c.rebuildTime.Observe(d.Seconds())
}

var (
	descClusterHeld    = desc("cluster_partitions_held", "Partitions (and the coordinator role) this node owns.")
	descClusterServing = desc("cluster_partitions_serving", "Owned partitions rebuilt and served.")
	descUploadCommits  = desc("cluster_upload_backlog_commits", "Group commits handed to the object store and etcd and not finished.")
	descUploadBytes    = desc("cluster_upload_backlog_bytes", "Bytes of the group commits in flight to the object store.")
	descMergeBacklog   = desc("cluster_merge_backlog_ranges", "Range records of owned partitions in runs still to merge, as their last merge saw them.")
	descCollectBacklog = desc("cluster_collect_backlog_objects", "Unreferenced objects the last collection on this node had to leave (pinned or held back by a reader floor, or tombstones not yet old enough).")
	descClusterReady   = desc("cluster_ready", "1 when this node serves every partition placement gives it (/readyz), else 0.")
	descEtcdRequests   = prometheus.NewDesc(Namespace+"_cluster_etcd_requests_total", "Requests this node made to etcd for the published copy (commits, merges, trims, pins, collection), by kind: txn or read.", []string{"kind"}, nil)
	descObjectRequests = prometheus.NewDesc(Namespace+"_cluster_object_requests_total", "Requests this node made to the object store for the published copy, by kind: put, get, delete or list (a list page).", []string{"kind"}, nil)
	clusterGaugeDescs  = []*prometheus.Desc{descClusterHeld, descClusterServing, descUploadCommits, descUploadBytes, descMergeBacklog, descCollectBacklog, descClusterReady, descEtcdRequests, descObjectRequests}
)

func collectCluster(ch chan<- prometheus.Metric, s *ClusterStat) {
	if s == nil {
		return
	}
	g := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	ready := 0.0
	if s.Ready {
		ready = 1
	}
	g(descClusterHeld, float64(s.Held))
	g(descClusterServing, float64(s.Serving))
	g(descUploadCommits, float64(s.UploadCommits))
	g(descUploadBytes, float64(s.UploadBytes))
	g(descMergeBacklog, float64(s.MergeBacklog))
	g(descCollectBacklog, float64(s.CollectBacklog))
	g(descClusterReady, ready)
	c := func(d *prometheus.Desc, kind string, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), kind)
	}
	c(descEtcdRequests, "txn", s.EtcdTxns)
	c(descEtcdRequests, "read", s.EtcdReads)
	c(descObjectRequests, "put", s.ObjectPuts)
	c(descObjectRequests, "get", s.ObjectGets)
	c(descObjectRequests, "delete", s.ObjectDeletes)
	c(descObjectRequests, "list", s.ObjectLists)
}
