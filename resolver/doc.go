// Package resolver holds every Kafka semantic that is not wire encoding:
// the topic catalog and partition bindings, record batch validation,
// produce with idempotent-producer checks, and the read flow around the
// ledger's cursorless read (judging the offset, validation, limits). It sits
// between kafka/ (which never sees a ledger) and ledger/ (which never sees
// a Kafka batch field), and it never imports kmsg: package recordbatch
// reads the few header fields it needs.
//
// It is the facade kafka/ calls. The parts that need no partition
// internals live in packages of their own, below it, each behind a
// narrow interface the resolver implements on small adapters
// (cleaner_host.go, trim.go), never on *Resolver:
//
//	recordbatch/  the batch format: header, checks, codecs, record walk
//	cleaner/      the log cleaner of compacted topics and views (the compaction rules, the view log)
//	retention/    the retention pass (the retention rules) and the object tier's pass
//	topicconfig/  the topic configs' names, defaults, checks and settings
//
// What stays here: the catalog and its metadata, each topic's configs, the
// partition (produce, fetch, producer state), the partition side of
// transactions, compacted views' bindings, ReplacePartition and explain.
// *Resolver itself keeps the catalog and the by-name entry points; the
// rest is grouped on types that own one part each and may touch nothing
// else:
//
//	Partition   (handle.go) one partition resolved once for one request
//	            (Resolve): its reads, snapshots, ListOffsets lookups,
//	            long-poll registration and produce. It holds the binding
//	            it found and re-resolves only after a ReplacePartition
//	            (the old copy's retirement); it may not change the catalog or another partition.
//	Batches     (produce.go) one partition's produce records, parsed once
//	            (ParseBatches) and handed down; immutable once parsed.
//	stateStore  (state_store.go) the producer and transaction state kept
//	            beside each log: checkpoints, their recovery and replay.
//	            It writes only its own metadata prefixes and a partition's
//	            producer and transaction state; never the catalog, the
//	            producer-id counter or a log's entries.
//	Replicas    (replace.go, state.go) the cluster side of a partition's
//	            local copy (the local copy rules): rebinding one partition to another log
//	            under the admin lock, the log behind a binding, exported
//	            producer state. It may not create, delete or alter topics
//	            or write a produce.
//
// # Read flow
//
// A Fetch is docs/DESIGN.md "Read flow", whose steps this package's
// comments cite by number: the binding names the log (step 1); the
// ledger's ReadEntries takes one fresh snapshot and reads the view's entries
// under it (steps 2–4, ledger/doc.go "Read by offset"); the resolver
// judges the offset against the snapshot it returns, validates each entry
// (step 5) and applies the limits and the read_committed bound (step 6,
// "Transactions" below). The offset is judged so:
//
//   - **Log start check.** offset < trim offset -> ErrOffsetOutOfRange
//     (trimmed).
//   - **Empty read at the end.** offset == committed end -> empty
//     result (a long poll waits on a Waiter, which the next durable
//     append wakes).
//   - **Fresh end check.** offset > committed end ->
//     ErrOffsetOutOfRange, but only from a snapshot taken after the
//     request arrived, never a cached one.
//   - **No cached EOF.** EOF is never cached: the next append moves the
//     end, so every call reads the end again.
//
// Validation (step 5) checks magic 2, lengths, the record count, the base
// offset and count against the index and that no bytes trail; the CRC32C
// is the storage frame's, checked on every disk read and covering every
// payload byte (the batch's own CRC and records were checked by Produce;
// a tail-cache read serves those very bytes). A failing entry fails
// closed with ErrStorage and is never served. A partition deleted during
// the read is ErrUnknownTopic.
//
// # Write flow
//
// A Produce is docs/DESIGN.md "Write flow" (its step 2 is this
// package's): Produce validates a partition's one record batch, header and
// records (below), then, under the partition's append lock, checks the
// idempotent sequence (D4) and writes the batch as one entry (D3); it
// waits outside the lock and answers once the entry is durable (D1).
// ProduceAsync returns after
// the Write with a PendingProduce to Wait on, so a connection writes its
// next request while this one's group commit syncs (one fsync covers
// both). The Kafka front end resolves the partition once (Resolve),
// parses the request's records once (ParseBatches: split, checked, the
// header fields it decides on) and hands both down (Partition.ProduceAsync),
// which takes the caller's buffer instead of copying it. Produced payloads are kept by storage's tail cache
// (AppendOptions.Retain), so fetches near the end are served from memory.
// A long poll over many partitions waits on one Waiter (waiter.go) rather
// than one channel per partition.
//
// Producer state is checkpointed in the metadata keyspace every few
// appends with the offset it covers and rebuilt on Open by replaying the
// batch headers after that offset (checkpoint.go). It is bounded
// (producer_set.go):
//
//   - **Producer expiry.** A producer that has not appended to a
//     partition for producer.id.expiration.ms (default 1 day) is
//     dropped from it, at the partition's next append or checkpoint.
//   - **Producer cap.** A partition keeps at most MaxProducers
//     producers (default 1000); beyond it the least recently appended
//     is dropped. A dropped producer is unknown: its next batch may
//     start at any sequence, and a retry of one of its old batches is
//     not recognized.
//   - **Incremental producer checkpoints.** A checkpoint writes a
//     fixed-size header and only the producers changed or dropped since
//     the previous checkpoint, one metadata key each, in one atomic
//     ApplyMeta: its cost follows the appends since the last
//     checkpoint, not the number of producers.
//   - **Shared producer ids.** With Config.ProducerIDs set (cluster
//     mode), InitProducerID without a transactional id always answers a
//     fresh id from it with epoch 0, whatever id and epoch the producer
//     passed: no local counter, no local epoch bump. A fresh id is
//     always safe for such a producer, and no node keeps state another
//     node would need.
//
// # Record validation and compression
//
// A produce carries exactly one batch per partition (Produce v3+). Before
// anything is written, outside every lock, its records are walked
// (recordbatch/recordwalk.go), decompressed first when the batch is compressed
// (recordbatch/compression.go):
//
//   - **Codec check.** The records section is what the codec says: it
//     decodes as gzip, snappy (raw or xerial-framed), lz4 frames or
//     zstd frames, to its end, with no bytes after the compressed data;
//     otherwise ErrCorruptBatch (CORRUPT_MESSAGE).
//   - **Record count check.** The records agree with the header:
//     exactly recordCount well-formed records (each exactly its
//     declared length), the i-th with offset delta i, nothing after the
//     last; otherwise ErrInvalidRecord (INVALID_RECORD). The same holds
//     for uncompressed batches.
//   - **Decompression bound.** A section decompresses to at most 64 x
//     max.message.bytes (decompressedLimit); past it the batch is
//     ErrInvalidRecord. Raw snappy's declared length is checked before
//     it is decoded.
//   - **Streamed decompression.** Decompression streams through a
//     pooled window (a raw snappy block into a pooled buffer) and keeps
//     nothing: only the stored, compressed bytes outlive the check. At
//     most max(4, 2 x GOMAXPROCS) batches decompress at once.
//
// A refused batch appends nothing. scanRecords is also the way to read
// records' offset and timestamp deltas (RecordMeta) elsewhere.
//
// # Configs and retention
//
// Topic configs live in the binding under Kafka's names (configs.go);
// each unset one defaults to the broker config Kafka names for it
// (broker.go: log.retention.ms, log.segment.bytes, log.roll.ms,
// message.max.bytes, log.message.timestamp.type, log.cleanup.policy),
// else to Kafka's default, and DescribeConfigs reports which (source and
// synonyms). segment.bytes/segment.ms become the partition's ledger.Config
// (an alter reopens the ledger); max.message.bytes and
// message.timestamp.type apply to the next Produce; cleanup.policy picks
// retention, the cleaner or both (the cleanup policy); min.insync.replicas other than 1 is
// refused. Retention (package retention, below) is a pass, every
// log.retention.check.interval.ms and on RunRetention, that turns retention.ms and retention.bytes into a
// boundary at a sealed ledger's end and feeds it to storage SoftTrim then
// HardTrim; DeleteRecords moves the log start the same way.
//
// # Retention
//
// A retention pass over one partition (retention/retention.go):
//
//   - **Whole sealed ledgers only.** Only whole sealed ledgers are
//     removed, as Kafka removes whole segments: the boundary is always
//     the first offset of a ledger that follows a sealed one (or the
//     current log start).
//   - **Time retention.** With retention.ms >= 0 a ledger goes when
//     every entry in it and before it has a max timestamp below now -
//     retention.ms. One SeekTime through the time index (it holds the
//     running max timestamp) finds the first entry that is not expired;
//     no payload is read.
//   - **Size retention.** With retention.bytes >= 0 the oldest sealed
//     ledgers go while the size left (LedgerInfo.Bytes, file bytes)
//     would still be at least retention.bytes (Kafka's rule).
//   - **Expired open ledger.** An open ledger whose entries are all
//     expired is rolled first and then removed (Kafka rolls an expired
//     active segment). Data within retention is never removed: an entry
//     appended during the pass lands at or past the boundary, which was
//     computed before it.
//   - **Ledgers below the log start.** Whole ledgers below the log
//     start (after DeleteRecords) are removed too.
//   - **Log start before the files.** SoftTrim(boundary) first, so the
//     log start moves and reads below it are OFFSET_OUT_OF_RANGE (the
//     log start check) before any file goes; then HardTrim removes the
//     ledgers below it (a file a read has pinned goes when the read
//     releases it, storage I6).
//
// # Transactions
//
// The partition side of Kafka transactions (txn.go, txn_state.go,
// txn_marker.go, txn_checkpoint.go); the coordinator is kafka/txn's. A
// partition keeps, per producer, a registration or an open transaction
// (its epoch and first offset), the last stable offset (LSO) and an index
// of aborted transactions, in two views: the append side under the append
// lock, which produce and markers check and change, and the read side
// under the partition's short lock, which reads see.
//
//   - **read_committed bound (KIP-98).** Fetch under ReadCommitted
//     returns only whole batches ending at or below the LSO, and
//     Aborted lists every aborted transaction whose ABORT marker is at
//     or after the first returned batch and whose first offset is
//     before the end of the last one, by first offset (Kafka's
//     collectAbortedTxns). A client that drops each listed producer's
//     batches from its first offset to its marker gets exactly the
//     committed data. Markers are served at both levels; clients skip
//     them.
//   - **LSO (KIP-98).** The LSO (last stable offset) is the first
//     offset of the earliest open transaction, else the high watermark,
//     never below the log start; Fetch at both levels, Bounds and
//     ListOffsets "latest" under read_committed report it. It never
//     moves backwards, across crashes too: a transaction's first offset
//     enters the read side before its first batch is written (so before
//     the high watermark can pass it) and leaves only once its marker
//     is durable, and a restart reopens exactly the transactions whose
//     marker is not durable (transaction recovery).
//   - **Control batch format.** A marker is Kafka's control batch:
//     magic 2, attributes transactional|control, one record whose key
//     is version int16 0 and type int16 (0 ABORT, 1 COMMIT) and whose
//     value is version int16 0 and the coordinator epoch int32;
//     producer id and epoch set, base sequence -1. WriteTxnMarker
//     writes it as one entry and returns once it is durable (D1). It is
//     idempotent: for a producer with neither a registration nor an
//     open transaction on the partition nothing is written, and nil is
//     returned once every earlier write is durable.
//   - **KIP-890 partition verification.** (KIP-890 part 1.) A
//     transactional batch is appended only when its producer is
//     registered on the partition (AddTxnPartition) or has an open
//     transaction there, at that epoch; otherwise ErrInvalidTxnState
//     (INVALID_TXN_STATE) and nothing is written. A marker ends the
//     registration.
//   - **Epoch fencing.** A registration or a marker with a newer epoch
//     (an abort that fences) makes it the producer's epoch on the
//     partition; batches, registrations and markers of older epochs get
//     ErrInvalidProducerEpoch. The marker is in the log, so the fence
//     survives a restart.
//   - **Aborted-transaction index.** The aborted-transaction index has
//     one entry per ABORT marker of a transaction that wrote data:
//     producer, first offset, marker offset. The log is its record: the
//     producer-state checkpoint covering a marker writes its entry
//     (resolver/aborted/<log><offset>) in the same atomic ApplyMeta,
//     and Open re-derives the later ones by replay. An entry goes, from
//     memory at once and from disk at the next checkpoint, when the log
//     start (retention, DeleteRecords) passes its marker; one whose
//     transaction straddles the log start stays.
//   - **Transaction recovery.** A checkpoint holds, as of its Covered
//     offset, the open transactions (producer, epoch, first offset)
//     beside the producer state (incremental producer checkpoints);
//     Open replays the batch headers after Covered: transactional
//     batches open transactions, markers end them (an ABORT into the
//     index) and set the producer's epoch. The rebuilt open
//     transactions, LSO and index are those of the durable log exactly.
//     A trim (retention, DeleteRecords) checkpoints before it moves the
//     log start, so no marker is trimmed away before a checkpoint
//     covers it. Registrations without a batch are not persisted: the
//     coordinator registers its Ongoing transactions' partitions again.
//   - **Control batches by WriteTxnMarker only.** Only WriteTxnMarker
//     writes control batches: a produced control batch is
//     ErrInvalidRecord, as is a transactional batch without a producer
//     id.
//   - **read_committed at no extra cost.** read_committed without
//     transactions costs what read_uncommitted costs: the LSO comes
//     from a kept first-open offset under the partition's short lock,
//     and with no aborted transaction in the returned range nothing is
//     allocated (Aborted is nil).
//
// Transactions are kept apart from the idempotent-producer state, so
// expiry and the cap (producer expiry, the producer cap) never end an open transaction.
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
//   - **Key requirement.** A compacted topic refuses a batch holding a
//     record without a key: INVALID_RECORD, and nothing of the batch is
//     appended (Kafka's LogValidator). Tombstones (null values) have
//     keys and are taken.
//   - **Cleanable range.** Only sealed ledgers are cleaned, and only
//     those before the first ledger holding an entry newer than now -
//     min.compaction.lag.ms (one seek in the time index). A partition
//     is due when its dirty bytes reach min.cleanable.dirty.ratio of
//     the cleanable bytes (dirty ones included), when its first dirty
//     entry is older than max.compaction.lag.ms, or when a tombstone's
//     delete horizon (the tombstone horizon) has passed; a pass takes
//     the partitions past max.compaction.lag.ms first, then the
//     dirtiest.
//   - **Dedupe budget.** A pass maps key -> latest offset in a fixed
//     budget: the dedupe buffer divided by the threads, 24 bytes a key
//     (a 16-byte digest and an offset, as Kafka's SkimpyOffsetMap), at
//     most 90% full. It maps the dirty ledgers in order and, when the
//     map fills, cleans up to the start of the ledger it filled in; the
//     next pass goes on from there. Every record it removes is
//     superseded by a record at a higher offset that is kept, so each
//     pass is correct alone, and a partition with more keys than fit
//     takes several. A dirty ledger with more keys than the whole map
//     is not cleaned (an error is logged), as Kafka refuses a segment
//     its map cannot hold.
//   - **Latest-record rewrite.** The rewrite keeps the latest record of
//     each key (a record whose key maps to a higher offset goes;
//     keyless records go). Offsets never change: a kept batch keeps its
//     base offset and its lastOffsetDelta, its records their offsets,
//     so offset deltas may skip and a batch may hold fewer records than
//     it spans. A batch left without records goes, leaving a gap,
//     unless it is the last batch of its producer id in the cleaned
//     range: that one is kept empty, for the producer's sequence.
//     Producer id, epoch, base sequence, partition leader epoch, codec
//     and timestamp type are kept; a changed batch is recompressed with
//     its own codec, an unchanged one is copied as it is.
//   - **Cleanup policy.** cleanup.policy=compact: the cleaner runs and
//     keyless records are refused; retention by time and size does not
//     (DeleteRecords still moves the log start). delete: retention (the
//     retention rules) only. compact,delete: both. Changing it on a
//     live topic takes effect at the next produce and pass.
//   - **Compaction roll.** A compacted topic's open ledger rolls at
//     min(segment.ms, max.compaction.lag.ms) (Kafka's
//     LogConfig.maxSegmentMs), so its records become cleanable within
//     max.compaction.lag.ms of appends.
//   - **Cleaner throttle.** The cleaner's reads and writes together are
//     throttled to log.cleaner.io.max.bytes.per.second over all
//     threads.
//   - **Tombstone horizon.** A tombstone is kept for
//     delete.retention.ms after the pass that first cleaned it: that
//     pass sets its batch's delete horizon (the attribute bit 0x40, and
//     the base timestamp holds now + delete.retention.ms, as Kafka's
//     KIP-534); a pass after the horizon removes it. Record timestamps
//     stay as produced.
//   - **Compacted generations.** A cleaned range of sealed ledgers is a
//     new generation of that part of the log: one new ledger, its
//     generation one above the highest it replaces. Its file is written
//     and synced, and its directory entry made durable, beside the old
//     ones; then one synced index commit removes the old ledgers'
//     records and entries and adds the new ones (storage
//     Rewrite.Commit). A crash leaves the old generation or the new
//     one, never a mix; the other's files are orphans that Open
//     removes. If retention or DeleteRecords changed the range
//     meanwhile, the commit changes nothing and the pass is dropped.
//   - **Generation swap.** The index names one generation per offset,
//     the highest committed, which every read planned after the commit
//     uses. A read that pinned a ledger of the old generation completes
//     from it; its file is removed when the last pin is released
//     (storage I6). A read that planned on the old generation but had
//     not pinned it yet starts again from a fresh snapshot.
//   - **Reads across gaps.** An offset inside a gap reads from the next
//     entry (R3), or nothing when no entry follows it below the end.
//     ListOffsets by timestamp walks to the next kept batch; a
//     time-index key naming a removed entry resolves to the next entry
//     (the running max only grows, so it is still the first kept entry
//     reaching the timestamp); retention and DeleteRecords trim whole
//     ledgers of any generation, and the log start never moves for a
//     gap.
//   - **LSO bound on cleaning.** A pass cleans nothing at or past the
//     last stable offset (the LSO): the cleanable ledgers end at or
//     before it (Kafka's firstUncleanableOffset), so every transaction
//     with a batch in the range has ended and the aborted-transaction
//     index (the aborted-transaction index) says how.
//   - **Aborted batches dropped.** The batches of aborted transactions
//     go whole: a transactional batch of a producer between the first
//     offset and the ABORT marker of one of its index entries. Their
//     keys are not mapped, so they supersede nothing. The producer's
//     last batch in the range is kept empty instead (the rewrite keeps
//     offsets). Committed transactional batches are cleaned as any
//     other, and their keys mapped.
//   - **Markers kept while needed.** A marker is kept while the pass
//     reads a batch of its transaction (a batch of its producer after
//     that producer's previous marker), and when it is its producer's
//     last batch in the range (its epoch fences, as Kafka keeps it). So
//     a replay of the cleaned log (transaction recovery) ends every
//     transaction it opens.
//   - **Marker removal.** The first pass that finds a marker unneeded
//     gives it a delete horizon, now + delete.retention.ms (the
//     tombstone horizon's encoding); a pass after the horizon removes
//     it. An ABORT marker's index entry is removed, from the read view
//     and durably (a synced checkpoint), before the swap that removes
//     the marker: no batch of its transaction is left in either
//     generation then, and a listed entry without its marker would make
//     a read_committed client drop its producer's later batches. An
//     entry whose records are all gone but whose marker stays may still
//     be listed; clients then drop nothing.
//
// # Compacted view
//
// Beyond Kafka, as Pulsar's topic compaction: a topic whose
// cleanup.policy is delete keeps its full history and, with
// kgateway.compacted.view.enable=true, also a compacted materialization
// of each partition, the read flow's TOPIC_COMPACTED view (view.go,
// cleaner/view.go; ledger V2).
//
//   - **Companion topic.** The view is read through a companion topic
//     named <topic>.compacted: listed by Topics beside its source, with
//     the source's partition count, Companion set, no explicit configs
//     and its own topic id, derived from the source's (stable across
//     restarts), by which TopicByID finds it too.
//   - **View log.** Each partition's view is a second storage log (the
//     source log's id with the top bit set). A view pass copies the
//     source's stable sealed range past the view's end (the cleanable
//     range's min.compaction.lag.ms, the LSO bound on cleaning's last
//     stable offset: every transaction there has ended): committed data
//     only, no marker and no batch of an aborted transaction; each
//     entry spans from the end of the one before it to its batch's end,
//     so every batch keeps its offsets and the view's end is where the
//     copy stopped. It seals what it copied, then cleans the view as a
//     compacted log (the dedupe budget, the latest-record rewrite, the
//     compaction rules): the latest record per key, keyless records
//     removed, tombstones kept for delete.retention.ms. The cleaner
//     threads and RunCleaner run view passes when no compacted
//     partition is due.
//   - **Read-only companions.** A companion is read-only: Produce,
//     DeleteRecords, transactions, DeleteTopic and config changes on it
//     are ErrInvalidTopic (INVALID_TOPIC_EXCEPTION, what Kafka answers
//     a client's append to an internal topic); the source is changed
//     instead.
//   - **No name collisions.** Names never collide: creating a topic
//     named like the companion of a topic with a view is
//     ErrTopicExists, and turning a view on while a topic holds its
//     companion's name is ErrInvalidConfig, as is a view on a topic
//     whose policy has compact (it is its own compacted view).
//   - **Reads of the view.** A read of a companion chooses the view in
//     step 3, before any entry (ledger ReadEntries' view): below the view's end
//     the view's entries, with gaps where records were superseded (an
//     offset in a gap reads from the next entry); at and past it the
//     source's log, so a consumer reaches the high watermark. The high
//     watermark and last stable offset are the source's; the log start
//     is the view's when lower. A read_committed read of the view lists
//     no aborted transaction (it holds none); of the tail, the
//     source's. A long poll on a companion waits on its source.
//   - **View removal.** Turning the view off, or deleting the source,
//     removes the view log (the reads stop using it first); Open
//     removes every view log whose source is not bound with the view on
//     (a crash between the change and the removal).
//   - **Durable view.** The view is durable as any log: a restart keeps
//     it, and a crash during a copy resumes from the view's end.
//
// # Identity and internal topics (identity.go)
//
//   - **Durable cluster id.** The cluster id is random (a UUID in
//     Kafka's 22-character base64url form), made at the first Open of a
//     data directory and stored durably before Open returns; every
//     later Open returns the same id, another data directory a
//     different one.
//   - **Reserved internal topic names.** Kafka's internal topic names
//     (__consumer_offsets, __transaction_state) are reserved: no
//     binding is ever created for them (CreateTopic answers
//     ErrTopicExists, EnsureTopic and DeleteTopic ErrInvalidTopic), as
//     what Kafka keeps in them is in the offset store here. Each has a
//     topic id kept like the cluster id, so kafka/ can describe it:
//     with one partition that is always empty
//     (kafka/internal_topics.go), which the resolver knows nothing of
//     (no ledger, no Bounds or Fetch).
//
// # Cluster mode
//
// A cluster node keeps a local copy of each partition it owns; the truth
// is elsewhere (the object store and etcd), and the store's Replicator
// acknowledges nothing it has not published. A node that acquires a
// partition rebuilds its copy with ReplacePartition (replace.go):
//
//   - **Copy of the published batches.** The copy is a new log created
//     at the published start (storage CreateLogAt), filled with the
//     published record batches as they are: each must be one whole
//     batch, magic 2, CRC32C sound, a header a stored batch may have,
//     whose base offset is where the previous one ended (the start for
//     the first); anything else is refused and fails the replacement.
//     They are written with AppendOptions.NoReplicate and are durable
//     before the partition is opened on the new log by Open's own path,
//     so the producer state and the transactions are replayed from the
//     copied batches (transaction recovery): a retry of a copied
//     idempotent batch gets its original offset (D4).
//   - **Durable replacement.** Until the new binding is durable nothing
//     changes: the old partition serves, and the new log is deleted on
//     an error. The new log's id is reserved in the same write that
//     marks it for deletion, and one write binds it, unmarks it and
//     marks the old log, so a crash at any point leaves the old binding
//     or the new one, and Open deletes the other log (as it finishes a
//     topic deletion). The copy runs without the catalog lock; the
//     rebind takes it and finds the partition as the copy found it, or
//     discards the copy (ErrNotLeader if another replacement won,
//     ErrUnknownTopic if the topic went).
//   - **Old copy's retirement.** After that write the old partition is
//     marked replaced, the new one published, then the old one closed
//     (its long polls woken) and its log deleted. A produce through the
//     old partition that has not answered by then fails with
//     ErrNotLeader and is never acknowledged; a produce that wrote
//     nothing yet, a read and a bounds lookup that find it replaced
//     resolve the partition again; nothing is served from a log after
//     its binding moved on except what a read had already read.
//   - **NOT_LEADER_OR_FOLLOWER after a refused write.** A produce whose
//     write or wait fails because the Replicator refused it (storage
//     ErrNotLeader: this node no longer owns the log) returns
//     ErrNotLeader (NOT_LEADER_OR_FOLLOWER), and so does every later
//     produce to that partition until it is replaced.
//   - **No tier or view on a cache.** With Config.Diskless,
//     remote.storage.enable=true and
//     kgateway.compacted.view.enable=true are ErrInvalidConfig at
//     create and at alter: a node's local copy is a cache and is
//     neither tiered nor compacted into a view.
//   - **Local copy as a cache.** ReplacePartitionOver makes the local
//     copy a cache of the published log: the new log may start above
//     the published start (only a tail is copied), reads below the
//     local start go to the published ranges through the read flow
//     (ledger R20, R21), and the snapshot's start is the published one.
//     The producer state, the transactions and the aborted index are
//     replayed from the published start, not the local one, through
//     that same read, before the partition serves: a retry of an
//     idempotent batch older than the local copy still gets its
//     original offset (D4, transaction recovery), and a replay that
//     cannot read a published range fails the replacement.
//   - **DeleteRecords below the local copy.** DeleteRecords of a
//     partition whose published start is below the offset moves the
//     published start first, durably (Published.Trim, under the
//     ownership), then the local one; its answer is the snapshot's new
//     start. Offsets below it are then out of range on this node and on
//     any later owner. Retention trims only the local log; the owner
//     publishes the local start when it passes the rebuild's (the
//     bounded rebuild).
//   - **Exported producer state.** ExportState writes a checkpoint
//     (incremental producer checkpoints, the aborted-transaction index,
//     transaction recovery) and returns it whole, read under the
//     checkpoint lock, with the offset it covers and without its log
//     id. ReplacePartitionOver with Cache.State installs it under the
//     new log before the partition opens, so the replay starts at that
//     offset (or the log start, if higher) instead of the published
//     start: the state is exactly that of the entries below it, the
//     same entries in every copy of the log (cluster/diskless the
//     published producer state). A malformed state is refused and fails
//     the replacement.
package resolver
