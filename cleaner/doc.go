// Package cleaner is the log cleaner of compacted topics
// (resolver/doc.go "Compaction", the compaction rules, and the view log of its "Compacted
// view"): it picks the partition most in need, maps the dirty ledgers'
// keys to their latest offsets, and rewrites the range as a new
// generation of the partition's log, keeping the latest record per key,
// tombstones and transaction markers until their delete horizon, and no
// batch of an aborted transaction.
//
// It owns: the choice of a partition (pass.go), the offset map
// (offsetmap.go), what a pass keeps of a batch (rewrite.go, txn.go), the
// copy into a compacted view (view.go), the I/O throttle and the counters
// (cleaner.go).
//
// It may not touch: partitions' producer and transaction state, the
// catalog or configs, except through the narrow Partition and Host
// interfaces (host.go) the resolver implements; it writes only through
// storage's Rewrite (a generation swap, compacted generations) and a view log's appends. It
// imports neither resolver nor kafka/; the batch format is recordbatch's.
package cleaner
