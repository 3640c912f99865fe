// Package cleaner is the log cleaner of compacted topics
// (the compaction rules, "Compaction" below, and the view log of resolver/doc.go's "Compacted
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
//
// # Compaction
//
// A topic whose cleanup.policy has compact keeps the latest record per
// key (package cleaner, which sees the resolver through the narrow
// interfaces cleaner_host.go implements). The cleaner runs in the
// background, on log.cleaner.threads goroutines, and RunCleaner runs it
// on demand.
// Each partition's log is a cleaned prefix (one ledger of a generation
// above 0, deduplicated) followed by dirty ledgers and the open one.
//
//	**Key requirement.** A compacted topic refuses a batch holding a record without a key:
//	    INVALID_RECORD, and nothing of the batch is appended (Kafka's
//	    LogValidator). Tombstones (null values) have keys and are taken.
//	**Cleanable range.** Only sealed ledgers are cleaned, and only those before the first
//	    ledger holding an entry newer than now - min.compaction.lag.ms
//	    (one seek in the time index). A partition is due when its dirty
//	    bytes reach min.cleanable.dirty.ratio of the cleanable bytes
//	    (dirty ones included), when its first dirty entry is older than
//	    max.compaction.lag.ms, or when a tombstone's delete horizon (the tombstone horizon)
//	    has passed; a pass takes the partitions past max.compaction.lag.ms
//	    first, then the dirtiest.
//	**Dedupe budget.** A pass maps key -> latest offset in a fixed budget: the dedupe
//	    buffer divided by the threads, 24 bytes a key (a 16-byte digest
//	    and an offset, as Kafka's SkimpyOffsetMap), at most 90% full. It
//	    maps the dirty ledgers in order and, when the map fills, cleans
//	    up to the start of the ledger it filled in; the next pass goes
//	    on from there. Every record it removes is superseded by a record
//	    at a higher offset that is kept, so each pass is correct alone,
//	    and a partition with more keys than fit takes several. A dirty
//	    ledger with more keys than the whole map is not cleaned (an error
//	    is logged), as Kafka refuses a segment its map cannot hold.
//	**Latest-record rewrite.** The rewrite keeps the latest record of each key (a record whose
//	    key maps to a higher offset goes; keyless records go). Offsets
//	    never change: a kept batch keeps its base offset and its
//	    lastOffsetDelta, its records their offsets, so offset deltas may
//	    skip and a batch may hold fewer records than it spans. A batch
//	    left without records goes, leaving a gap, unless it is the last
//	    batch of its producer id in the cleaned range: that one is kept
//	    empty, for the producer's sequence. Producer id, epoch, base
//	    sequence, partition leader epoch, codec and timestamp type are
//	    kept; a changed batch is recompressed with its own codec, an
//	    unchanged one is copied as it is.
//	**Cleanup policy.** cleanup.policy=compact: the cleaner runs and keyless records are refused; retention
//	    by time and size does not (DeleteRecords still moves the log
//	    start). delete: retention (the retention rules) only. compact,delete: both.
//	    Changing it on a live topic takes effect at the next produce and
//	    pass.
//	**Compaction roll.** A compacted topic's open ledger rolls at min(segment.ms,
//	    max.compaction.lag.ms) (Kafka's LogConfig.maxSegmentMs), so its
//	    records become cleanable within max.compaction.lag.ms of appends.
//	**Cleaner throttle.** The cleaner's reads and writes together are throttled to
//	    log.cleaner.io.max.bytes.per.second over all threads.
//	**Tombstone horizon.** A tombstone is kept for delete.retention.ms after the pass that
//	    first cleaned it: that pass sets its batch's delete horizon (the
//	    attribute bit 0x40, and the base timestamp holds now +
//	    delete.retention.ms, as Kafka's KIP-534); a pass after the
//	    horizon removes it. Record timestamps stay as produced.
//	**Compacted generations.** A cleaned range of sealed ledgers is a new generation of that
//	    part of the log: one new ledger, its generation one above the
//	    highest it replaces. Its file is written and synced, and its
//	    directory entry made durable, beside the old ones; then one
//	    synced index commit removes the old ledgers' records and entries
//	    and adds the new ones (storage Rewrite.Commit). A crash leaves
//	    the old generation or the new one, never a mix; the other's
//	    files are orphans that Open removes. If retention or
//	    DeleteRecords changed the range meanwhile, the commit changes
//	    nothing and the pass is dropped.
//	**Generation swap.** The index names one generation per offset, the highest committed,
//	    which every read planned after the commit uses. A read that
//	    pinned a ledger of the old generation completes from it; its file
//	    is removed when the last pin is released (storage I6). A read
//	    that planned on the old generation but had not pinned it yet
//	    starts again from a fresh snapshot.
//	**Reads across gaps.** An offset inside a gap reads from the next entry (R3), or
//	    nothing when no entry follows it below the end. ListOffsets by
//	    timestamp walks to the next kept batch; a time-index key naming
//	    a removed entry resolves to the next entry (the running max only
//	    grows, so it is still the first kept entry reaching the
//	    timestamp); retention and DeleteRecords trim whole ledgers of
//	    any generation, and the log start never moves for a gap.
//	**LSO bound on cleaning.** A pass cleans nothing at or past the last stable offset (the LSO): the
//	    cleanable ledgers end at or before it (Kafka's
//	    firstUncleanableOffset), so every transaction with a batch in the
//	    range has ended and the aborted-transaction index (the aborted-transaction index) says how.
//	**Aborted batches dropped.** The batches of aborted transactions go whole: a transactional
//	    batch of a producer between the first offset and the ABORT marker
//	    of one of its index entries. Their keys are not mapped, so they
//	    supersede nothing. The producer's last batch in the range is kept
//	    empty instead (the latest-record rewrite). Committed transactional batches are cleaned
//	    as any other, and their keys mapped.
//	**Markers kept while needed.** A marker is kept while the pass reads a batch of its transaction
//	    (a batch of its producer after that producer's previous marker),
//	    and when it is its producer's last batch in the range (its epoch
//	    fences, as Kafka keeps it). So a replay of the cleaned log (transaction recovery)
//	    ends every transaction it opens.
//	**Marker removal.** The first pass that finds a marker unneeded gives it a delete
//	    horizon, now + delete.retention.ms (the tombstone horizon's encoding); a pass after
//	    the horizon removes it. An ABORT marker's index entry is removed,
//	    from the read view and durably (a synced checkpoint), before the
//	    swap that removes the marker: no batch of its transaction is left
//	    in either generation then, and a listed entry without its marker
//	    would make a read_committed client drop its producer's later
//	    batches. An entry whose records are all gone but whose marker
//	    stays may still be listed; clients then drop nothing.
package cleaner
