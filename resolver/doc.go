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
//	txnstate/     a partition's transaction state: the append side, the
//	              read side (LSO, aborted index) and their durable keys
//	producerid/   the durable producer-id counter and bumped epochs
//	              (InitProducerID), or the shared allocator in cluster mode
//	identity/     the durable cluster id and internal topics' ids
//	explain/      the read plan of one fetch over a read-only view of a
//	              data directory (`kgateway explain`), by the resolver's rules
//
// What stays here: the catalog and its metadata, each topic's configs, the
// partition (produce, fetch, producer state), the partition side of
// transactions, compacted views' bindings and ReplacePartition.
// *Resolver itself keeps the catalog and the by-name entry points; the
// rest is grouped on types that own one part each and may touch nothing
// else:
//
//	bindings    (bindings.go) the catalog in memory, Resolver.mu: the
//	            lookups by name, id and log, companions, publication. It
//	            may not open, close or write a partition or touch storage.
//	Passes      (passes.go) the background retention, tiering and
//	            cleaner passes, reached as Passes(); they see partitions
//	            only through their packages' Host and Partition interfaces.
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
// The read flow's steps are docs/DESIGN.md "Read flow": the request
// resolves its Partition once (Resolve, handle.go), the ledger's
// cursorless read returns the entries with the snapshot it read under
// (high watermark and log start, fresh for every read), and the resolver
// judges the offset against that snapshot, validates the bytes (fail
// closed, ErrStorage) and applies the limits (KIP-74's minOne;
// read_committed below the LSO with the aborted list, the read_committed bound, the LSO):
//
//   - **Log start check.** offset < trim offset -> ErrOffsetOutOfRange (trimmed).
//   - **Empty read at the end.** offset == committed end -> empty result (a long poll waits on a
//     Waiter, which the next durable append wakes).
//   - **Fresh end check.** offset > committed end -> ErrOffsetOutOfRange, but only from a
//     snapshot taken after the request arrived, never a cached one.
//   - **No cached EOF.** EOF is never cached: the next append moves the end, so every
//     call reads the end again. A caller may instead not call: one that
//     loaded a partition's Version before an empty read, and finds it
//     unchanged, would read the same (kafka/fetch's unchanged
//     partitions), since the Version moves after every change a read
//     depends on.
//
// # Write flow
//
// The write flow is docs/DESIGN.md "Write flow". ProduceAsync returns
// after the Write with a PendingProduce to Wait on (D1), so a connection
// writes its next request while this one's group commit syncs; the Kafka
// front end resolves the partition once (Resolve) and parses the
// request's records once (ParseBatches) and hands both down.
//
// Producer state is checkpointed in the metadata keyspace every few
// appends with the offset it covers and rebuilt on Open by replaying the
// batch headers after that offset (checkpoint.go). It is bounded
// (producer_set.go):
//
//	**Producer expiry.** A producer that has not appended to a partition for
//	   producer.id.expiration.ms (default 1 day) is dropped from it, at
//	   the partition's next append or checkpoint.
//	**Producer cap.** A partition keeps at most MaxProducers producers (default 1000);
//	   beyond it the least recently appended is dropped. A dropped
//	   producer is unknown: its next batch may start at any sequence,
//	   and a retry of one of its old batches is not recognized.
//	**Incremental producer checkpoints.** A checkpoint writes a fixed-size header and only the producers
//	   changed or dropped since the previous checkpoint, one metadata key
//	   each, in one atomic ApplyMeta: its cost follows the appends since
//	   the last checkpoint, not the number of producers.
//	**Shared producer ids.** With Config.ProducerIDs set (cluster mode), InitProducerID without
//	   a transactional id always answers a fresh id from it with epoch 0,
//	   whatever id and epoch the producer passed: no local counter, no
//	   local epoch bump. A fresh id is always safe for such a producer,
//	   and no node keeps state another node would need.
//
// # Record validation and compression
//
// A produce carries exactly one batch per partition (Produce v3+); its
// records are walked before anything is written, outside every lock, by
// package recordbatch, which defines record validation (recordbatch/doc.go "Record
// validation and compression"). A refused batch appends nothing.
//
// # Configs and retention
//
// Topic configs live in the binding under Kafka's names (configs.go),
// each unset one defaulting to the broker config Kafka names for it
// (broker.go: its dynamic value, package dynconfig's, over its flag),
// else to Kafka's default; package topicconfig says what each resolves
// to. When the dynamic broker configs change, every topic's settings are
// resolved again (ApplyBrokerLayers). Retention is package
// retention's pass (the retention rules, retention/doc.go "Retention"); DeleteRecords
// moves the log start the same way (SoftTrim, then HardTrim).
//
// # Transactions
//
// The partition side of Kafka transactions (txn.go, txn_state.go); the
// coordinator is kafka/txn's (docs/DESIGN.md "Transactions"). The state
// and its the partition's transaction rules are package txnstate's (resolver/txnstate/doc.go
// "Rules"); the resolver holds that state under the partition's locks,
// writes the markers (the control batch format) and refuses produced control batches (control batches by WriteTxnMarker only).
//
// # Compaction
//
// The compaction rules are package cleaner's (cleaner/doc.go "Compaction"). The
// resolver refuses keyless records on compacted topics (the key requirement), picks the
// policy (the cleanup policy) and the roll (the compaction roll), and implements the cleaner's Partition
// and Host (cleaner_host.go).
//
// # Compacted view
//
// Beyond Kafka, as Pulsar's topic compaction: a topic whose
// cleanup.policy is delete keeps its full history and, with
// kgateway.compacted.view.enable=true, also a compacted materialization
// of each partition, the read flow's TOPIC_COMPACTED view (view.go,
// cleaner/view.go; ledger V2).
//
//	**Companion topic.** The view is read through a companion topic named
//	    <topic>.compacted: listed by Topics beside its source, with the
//	    source's partition count, Companion set, no explicit configs and
//	    its own topic id, derived from the source's (stable across
//	    restarts), by which TopicByID finds it too.
//	**View log.** Each partition's view is a second storage log (the source log's
//	    id with the top bit set). A view pass copies the source's stable
//	    sealed range past the view's end (the cleanable range's min.compaction.lag.ms, the LSO bound on cleaning's
//	    last stable offset: every transaction there has ended): committed
//	    data only, no marker and no batch of an aborted transaction; each
//	    entry spans from the end of the one before it to its batch's end,
//	    so every batch keeps its offsets and the view's end is where the
//	    copy stopped. It seals what it copied, then cleans the view as a
//	    compacted log (the dedupe budget, the latest-record rewrite, the compaction rules): the latest record per key,
//	    keyless records removed, tombstones kept for delete.retention.ms.
//	    The cleaner threads and RunCleaner run view passes when no
//	    compacted partition is due.
//	**Read-only companions.** A companion is read-only: Produce, DeleteRecords, transactions,
//	    DeleteTopic and config changes on it are ErrInvalidTopic
//	    (INVALID_TOPIC_EXCEPTION, what Kafka answers a client's append to
//	    an internal topic); the source is changed instead.
//	**No name collisions.** Names never collide: creating a topic named like the companion of
//	    a topic with a view is ErrTopicExists, and turning a view on while
//	    a topic holds its companion's name is ErrInvalidConfig, as is a
//	    view on a topic whose policy has compact (it is its own compacted
//	    view).
//	**Reads of the view.** A read of a companion chooses the view in step 3, before any
//	    entry (ledger ReadEntries' view): below the view's end the view's entries,
//	    with gaps where records were superseded (an offset in a gap reads
//	    from the next entry); at and past it the source's log, so a
//	    consumer reaches the high watermark. The high watermark and last
//	    stable offset are the source's; the log start is the view's when
//	    lower. A read_committed read of the view lists no aborted
//	    transaction (it holds none); of the tail, the source's. A long
//	    poll on a companion waits on its source.
//	**View removal.** Turning the view off, or deleting the source, removes the view
//	    log (the reads stop using it first); Open removes every view log
//	    whose source is not bound with the view on (a crash between the
//	    change and the removal).
//	**Durable view.** The view is durable as any log: a restart keeps it, and a crash
//	    during a copy resumes from the view's end.
//
// # Identity and internal topics (identity.go, package identity)
//
//   - **Durable cluster id.** The cluster id is random (a UUID in Kafka's 22-character
//     base64url form), made at the first Open of a data directory and
//     stored durably before Open returns; every later Open returns the
//     same id, another data directory a different one.
//   - **Reserved internal topic names.** Kafka's internal topic names (__consumer_offsets,
//     __transaction_state) are reserved:
//     no binding is ever created for them (CreateTopic answers
//     ErrTopicExists, EnsureTopic and DeleteTopic ErrInvalidTopic), as
//     what Kafka keeps in them is in the offset store here. Each has a
//     topic id kept like the cluster id, so kafka/ can describe it: with
//     one partition that is always empty (kafka/internal_topics.go), which
//     the resolver knows nothing of (no ledger, no Bounds or Fetch).
//
// # Cluster mode
//
// A cluster node keeps a local copy of each partition it owns; the truth
// is elsewhere (the object store and etcd), and the store's Replicator
// acknowledges nothing it has not published. A node that acquires a
// partition rebuilds its copy with ReplacePartition (replace.go):
//
//	**Copy of the published batches.** The copy is a new log created at the published start (storage
//	   CreateLogAt), filled with the published record batches as they
//	   are: each must be one whole batch, magic 2, CRC32C sound, a header
//	   a stored batch may have, whose base offset is where the previous
//	   one ended (the start for the first); anything else is refused and
//	   fails the replacement. They are written with
//	   AppendOptions.NoReplicate and are durable before the partition is
//	   opened on the new log by Open's own path, so the producer state
//	   and the transactions are replayed from the copied batches (transaction recovery): a
//	   retry of a copied idempotent batch gets its original offset (D4).
//	**Durable replacement.** Until the new binding is durable nothing changes: the old
//	   partition serves, and the new log is deleted on an error. The new
//	   log's id is reserved in the same write that marks it for deletion,
//	   and one write binds it, unmarks it and marks the old log, so a
//	   crash at any point leaves the old binding or the new one, and Open
//	   deletes the other log (as it finishes a topic deletion). The copy
//	   runs without the catalog lock; the rebind takes it and finds the
//	   partition as the copy found it, or discards the copy (ErrNotLeader
//	   if another replacement won, ErrUnknownTopic if the topic went).
//	**Old copy's retirement.** After that write the old partition is marked replaced, the new one
//	   published, then the old one closed (its long polls woken) and its
//	   log deleted. A produce through the old partition that has not
//	   answered by then fails with ErrNotLeader and is never acknowledged;
//	   a produce that wrote nothing yet, a read and a bounds lookup that
//	   find it replaced resolve the partition again; nothing is served
//	   from a log after its binding moved on except what a read had
//	   already read.
//	**NOT_LEADER_OR_FOLLOWER after a refused write.** A produce whose write or wait fails because the Replicator refused
//	   it (storage ErrNotLeader: this node no longer owns the log) returns
//	   ErrNotLeader (NOT_LEADER_OR_FOLLOWER), and so does every later
//	   produce to that partition until it is replaced.
//	**No tier or view on a cache.** With Config.Diskless, remote.storage.enable=true and
//	   kgateway.compacted.view.enable=true are ErrInvalidConfig at create
//	   and at alter: a node's local copy is a cache and is neither tiered
//	   nor compacted into a view.
//	**Local copy as a cache.** ReplacePartitionOver makes the local copy a cache of the
//	   published log: the new log may start above the published start
//	   (only a tail is copied), reads below the local start go to the
//	   published ranges through the read flow (ledger R20, R21), and the
//	   snapshot's start is the published one. The producer state, the
//	   transactions and the aborted index are replayed from the
//	   published start, not the local one, through that same read, before
//	   the partition serves: a retry of an idempotent batch older than the
//	   local copy still gets its original offset (D4, transaction recovery), and a replay
//	   that cannot read a published range fails the replacement.
//	**DeleteRecords below the local copy.** DeleteRecords of a partition whose published start is below the
//	   offset moves the published start first, durably (Published.Trim,
//	   under the ownership), then the local one; its answer is the
//	   snapshot's new start. Offsets below it are then out of range on
//	   this node and on any later owner. Retention trims only the local
//	   log; the owner publishes the local start when it passes the
//	   rebuild's (the bounded rebuild).
//	**Exported producer state.** ExportState writes a checkpoint (incremental producer checkpoints, the aborted-transaction index, transaction recovery) and returns it whole,
//	   read under the checkpoint lock, with the offset it covers and
//	   without its log id. ReplacePartitionOver with Cache.State installs
//	   it under the new log before the partition opens, so the replay
//	   starts at that offset (or the log start, if higher) instead of the
//	   published start: the state is exactly that of the entries below
//	   it, the same entries in every copy of the log (cluster/diskless
//	   the published producer state). A malformed state is refused and fails the replacement.
package resolver
