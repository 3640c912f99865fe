// Package txnstate is a partition's transaction state (the partition's transaction rules, "Rules"
// below), the data and its durable encoding, without the partition
// around it:
//
//   - Set (the partition's append side, under its append lock) is what
//     produce and markers check and change: which producers may write
//     transactional batches (KIP-890 part 1, KIP-890 partition verification; fencing, epoch fencing), the first
//     offset of each open transaction, and what the next checkpoint must
//     persist. A marker ends a transaction here when it is written.
//   - View (the read side, under the partition's read lock) is what reads
//     see: the open transactions' first offsets and the aborted-transaction
//     index. A transaction's first offset enters it before its first batch
//     is written, and leaves it only once its marker is durable (the LSO), so
//     the last stable offset never passes data whose fate a crash could
//     change.
//
// Durable state (the aborted-transaction index, transaction recovery). A producer-state checkpoint (resolver
// checkpoint.go) also writes, in the same atomic ApplyMeta and as of the
// same Covered offset, the ops Set.TakeDirty returns:
//
//	resolver/txn-open/<log><pid>     an open transaction: epoch i16, first offset i64
//	resolver/aborted/<log><offset>   an aborted transaction, keyed by its
//	                                 ABORT marker's offset: pid i64, first offset i64
//
// only for what changed since the previous checkpoint (as incremental producer checkpoints). Entries
// after Covered are rebuilt on open by replaying the batch headers and
// markers, so nothing depends on when a checkpoint ran. Registrations
// (AddTxnPartition) without a batch are not persisted: the coordinator
// registers again after a restart.
//
// What it owns and may not touch: it holds no lock (the resolver's
// partition holds its Set and View under its own locks), reads and writes
// only the two key prefixes above through the storage.Store it is given,
// and knows nothing of the catalog, of producers' sequence state (the
// caller passes a producer's known epoch), of logs' entries, or of the
// resolver itself, which it may not import.
//
// # Rules
//
// A partition keeps, per producer, a registration or an open transaction
// (its epoch and first offset), the last stable offset (LSO) and an index
// of aborted transactions; the resolver enforces these with the state
// above:
//
//	**read_committed bound.** read_committed: Fetch under ReadCommitted returns only whole batches
//	   ending at or below the LSO, and Aborted lists every aborted
//	   transaction whose ABORT marker is at or after the first returned
//	   batch and whose first offset is before the end of the last one, by
//	   first offset (Kafka's collectAbortedTxns). A client that drops each
//	   listed producer's batches from its first offset to its marker gets
//	   exactly the committed data. Markers are served at both levels;
//	   clients skip them.
//	**LSO.** The LSO is the first offset of the earliest open transaction, else
//	   the high watermark, never below the log start; Fetch at both levels,
//	   Bounds and ListOffsets "latest" under read_committed report it. It
//	   never moves backwards, across crashes too: a transaction's first
//	   offset enters the read side before its first batch is written (so
//	   before the high watermark can pass it) and leaves only once its
//	   marker is durable, and a restart reopens exactly the transactions
//	   whose marker is not durable (transaction recovery).
//	**Control batch format.** A marker is Kafka's control batch: magic 2, attributes
//	   transactional|control, one record whose key is version int16 0 and
//	   type int16 (0 ABORT, 1 COMMIT) and whose value is version int16 0
//	   and the coordinator epoch int32; producer id and epoch set, base
//	   sequence -1. WriteTxnMarker writes it as one entry and returns once
//	   it is durable (D1). It is idempotent: for a producer with neither a
//	   registration nor an open transaction on the partition nothing is
//	   written, and nil is returned once every earlier write is durable.
//	**KIP-890 partition verification.** KIP-890 part 1: a transactional batch is appended only when its
//	   producer is registered on the partition (AddTxnPartition) or has an
//	   open transaction there, at that epoch; otherwise ErrInvalidTxnState
//	   (INVALID_TXN_STATE) and nothing is written. A marker ends the
//	   registration. A decided registration takes no first batch: once
//	   the coordinator has decided the transaction (Decide, told before
//	   EndTxn answers), a producer registered here without a batch of it
//	   gets ErrConcurrentTransactions (retriable NOT_ENOUGH_REPLICAS) for a
//	   batch that would start it, until the marker ends the registration;
//	   a producer that wrote a batch here keeps writing until the marker,
//	   as Kafka verifies only a producer's first batch of a transaction
//	   on a partition (its coordinator answering CONCURRENT_TRANSACTIONS
//	   while the transaction completes).
//	**Epoch fencing.** Fencing: a registration or a marker with a newer epoch (an abort
//	   that fences) makes it the producer's epoch on the partition;
//	   batches, registrations and markers of older epochs get
//	   ErrInvalidProducerEpoch. The marker is in the log, so the fence
//	   survives a restart.
//	**Aborted-transaction index.** The aborted-transaction index has one entry per ABORT marker of a
//	   transaction that wrote data: producer, first offset, marker offset.
//	   The log is its record: the producer-state checkpoint covering a
//	   marker writes its entry (resolver/aborted/<log><offset>) in the same
//	   atomic ApplyMeta, and Open re-derives the later ones by replay. An
//	   entry goes, from memory at once and from disk at the next
//	   checkpoint, when the log start (retention, DeleteRecords) passes its
//	   marker; one whose transaction straddles the log start stays.
//	**Transaction recovery.** Recovery: a checkpoint holds, as of its Covered offset, the open
//	   transactions (producer, epoch, first offset) beside the producer
//	   state (incremental producer checkpoints); Open replays the batch headers after Covered:
//	   transactional batches open transactions, markers end them (an ABORT
//	   into the index) and set the producer's epoch. The rebuilt open
//	   transactions, LSO and index are those of the durable log exactly.
//	   A trim (retention, DeleteRecords) checkpoints before it moves the
//	   log start, so no marker is trimmed away before a checkpoint covers
//	   it. Registrations without a batch are not persisted: the
//	   coordinator registers its Ongoing transactions' partitions again.
//	**Control batches by WriteTxnMarker only.** Only WriteTxnMarker writes control batches: a produced control batch
//	   is ErrInvalidRecord, as is a transactional batch without a producer
//	   id.
//	**read_committed at no extra cost.** read_committed without transactions costs what read_uncommitted
//	   costs: the LSO comes from a kept first-open offset under the
//	   partition's short lock, and with no aborted transaction in the
//	   returned range nothing is allocated (Aborted is nil).
//
// Transactions are kept apart from the idempotent-producer state, so
// expiry and the cap (producer expiry, the producer cap) never end an open transaction.
package txnstate
