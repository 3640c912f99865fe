// Package txn is kgateway's transaction coordinator (KIP-98, KIP-447): the
// transactional side of InitProducerId, AddPartitionsToTxn,
// AddOffsetsToTxn, EndTxn, TxnOffsetCommit, DescribeTransactions and
// ListTransactions. This node coordinates every transactional id. The
// partition side (transactional batches, markers, the last stable offset,
// aborted-transaction indexes) is the resolver's (resolver/doc.go
// "Transactions"); the durable state is the offsets store's (offsets
// O4–O7). How a transaction commits end to end: docs/DESIGN.md
// "Transactions".
//
// A transactional id moves through Kafka's states, at transaction version
// 1 (KIP-98) or 2 (KIP-890 part 2):
//
//	Empty ---AddPartitions/AddOffsets---> Ongoing ---EndTxn---> PrepareCommit | PrepareAbort
//	  ^                                      |                          |
//	  |                                      +--timeout / InitProducerId (fence)--> PrepareAbort
//	  +---InitProducerId--- CompleteCommit | CompleteAbort <---markers, offsets--+
//
// Invariants, cited by their names in code and tests:
//
//   - **Durable transitions.** Every transition is written to the
//     offsets store (synced) before it takes effect in memory or is
//     answered; after a crash the state is the last one written.
//   - **Kafka's transaction errors.** Errors are Kafka's, in Kafka's
//     order of checks: an unknown id or another producer id is
//     INVALID_PRODUCER_ID_MAPPING, another epoch is PRODUCER_FENCED
//     (INVALID_PRODUCER_EPOCH for request versions before KIP-588:
//     InitProducerId v4, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn
//     v2; TxnOffsetCommit always INVALID_PRODUCER_EPOCH), a transaction
//     being completed is CONCURRENT_TRANSACTIONS, and an EndTxn
//     contradicting a decided transaction, or with none running, is
//     INVALID_TXN_STATE. transaction.timeout.ms must be in (0,
//     transaction.max.timeout.ms] (INVALID_TRANSACTION_TIMEOUT).
//   - **InitProducerId bump.** InitProducerId bumps the epoch (a new
//     id: a fresh producer id at epoch 0; an exhausted epoch: a fresh
//     producer id), so the previous incarnation is fenced. An Ongoing
//     transaction is first aborted with a bumped epoch that is never
//     handed out, and the client gets CONCURRENT_TRANSACTIONS, retries,
//     and gets the next epoch. KIP-360: a client naming its producer id
//     and epoch gets the bump only when they are current, or the same
//     answer again when it retries the last bump. A client naming the
//     current id and epoch of an Ongoing transaction (recovering after
//     a request lost while the coordinator moved) gets the abort too,
//     but its retry continues at the abort's epoch, not PRODUCER_FENCED
//     (selfFence): only other incarnations are fenced.
//   - **Durable partition adds.** A partition is added to the
//     transaction durably before it is registered with the resolver, so
//     no transactional batch is accepted on a partition the transaction
//     could fail to mark. A registration that fails is answered
//     COORDINATOR_NOT_AVAILABLE (retriable), and an add of partitions
//     already in the transaction registers them again. Adds of one id
//     that queue while its write is in flight are written together in
//     one store write (addqueue.go): each is checked on its own, answered
//     only after the write holding its partitions returned, and a failed
//     write fails every add in it. An add waiting for a completion of
//     its id's previous transaction can be told so (waiting for a
//     completion, addqueue.go), so a caller that holds a bounded
//     resource (the cluster relay's answer slots) gives it up for the
//     wait, or has the add answered CONCURRENT_TRANSACTIONS at once. EndTxn writes
//     the decision (PrepareCommit or PrepareAbort) first, then a marker
//     on every partition, then completes the transaction's offsets
//     together with the Complete state in one batch (O6): every
//     partition and every offset of a transaction commits, or every one
//     aborts.
//   - **Answer once decided.** EndTxn answers once the decision
//     (PrepareCommit or PrepareAbort) is durable, as Kafka answers once
//     it is in the transaction log; the markers and then the Complete
//     state are written after the answer (complete.go), under the
//     transactional id's lock held until they are durable, so the id's
//     next request (InitProducerId, an add of its next transaction,
//     implicit ones included, another EndTxn) waits for them and finds
//     the transaction complete, or CONCURRENT_TRANSACTIONS while a
//     failed marker or Complete write leaves the Prepare state (finished
//     by the timeout loop or at open). No partition registers the id's
//     next transaction before the previous marker is durable there. A
//     transaction with offsets is answered the same way, its offsets
//     moved (or dropped) with the Complete state after the answer (O6):
//     until then they are pending, so an OffsetFetch with require_stable
//     answers UNSTABLE_OFFSET_COMMIT for them and one without reads the
//     offset committed before, as from Kafka until its marker on
//     __consumer_offsets is written. Before it answers, EndTxn tells the
//     partitions of the decision (Decider, a single node's resolver): a
//     partition registered in the transaction but without a batch of it
//     then refuses a batch that would start it (a decided registration
//     takes no first batch), so a version-1 client producing there
//     without AddPartitionsToTxn after the decision gets retriable
//     NOT_ENOUGH_REPLICAS, then, once the marker is written, the
//     partition is in no transaction, as Kafka's verification answers.
//     In a cluster the leaders are not told (the relay has no Decider):
//     such a batch joins the decided transaction there until the
//     marker.
//   - **Completion at open.** Recovery: NewCoordinator, before anything
//     is served, completes every transaction found in PrepareCommit or
//     PrepareAbort (markers are idempotent, resolver contract) and
//     registers every partition of every Ongoing transaction again
//     (registrations are in memory only). Hence a prompt Close: Close
//     does not wait for markers in flight; a completion stops waiting
//     for them when the coordinator closes and writes nothing more, its
//     durable Prepare state left for the next open (end.go
//     writeMarkers).
//   - **Pending TxnOffsetCommit offsets.** TxnOffsetCommit offsets are
//     stored pending, under the transaction's lock, only while the
//     transaction is Ongoing with the group added by AddOffsetsToTxn
//     (else INVALID_TXN_STATE); they become visible only when it
//     commits and are dropped when it aborts.
//   - **Transaction timeout.** An Ongoing transaction older than its
//     timeout is aborted with a bumped epoch, fencing its producer, by
//     the loop run every
//     transaction.abort.timed.out.transaction.cleanup.interval.ms,
//     which also finishes transactions whose markers failed. An id idle
//     (not running a transaction) for transactional.id.expiration.ms is
//     removed.
//   - **Transaction bounds.** What a client can grow is bounded:
//     transactional ids kept (MaxTransactionalIDs), partitions and
//     groups per transaction (MaxPartitionsPerTxn, MaxGroupsPerTxn) and
//     of all transactions together (MaxHeldEntries), each answered
//     POLICY_VIOLATION beyond its bound; ids and group names to Kafka's
//     string length; markers written at once per transaction. Ids and
//     held entries are also bounded per principal, below the global
//     bounds (owners.go).
//   - **KIP-890 implicit adds.** Transaction version 2 (ApiVersions
//     finalizes transaction.version at 2): a transactional batch of
//     Produce v12+ adds its partition to the producer's transaction
//     (starting one) through the coordinator, durably and registered
//     with the resolver as durable partition adds, before the batch is
//     appended; TxnOffsetCommit v5+ adds its group the same way. Both
//     check the producer as AddPartitionsToTxn does (Kafka's
//     transaction errors); the produce answers a fenced producer
//     INVALID_PRODUCER_EPOCH and a busy coordinator NOT_ENOUGH_REPLICAS
//     (retriable). A registration is durable even if the append then
//     fails: the transaction's end marks the partition anyway (markers
//     are idempotent). In a cluster the partition's leader asks for the
//     add through etcd (cluster/txnmark, implicit adds across nodes).
//   - **Transaction's version.** A transaction keeps the version it
//     started with (the first add: implicit is 2, AddPartitionsToTxn or
//     AddOffsetsToTxn is 1); adds of the other kind join it without
//     changing it, as Kafka's. A version-2 transaction is ended by
//     EndTxn v5+ only (below v5: INVALID_TXN_STATE), so its epoch is
//     always bumped. The EndTxn's version, not the transaction's, picks
//     the end rules (epoch bump at EndTxn, EndTxn retries across the
//     bump), as Kafka 4.4's endTransaction does: a version-1
//     transaction ended by EndTxn v5 is ended at version 2 (its epoch
//     bumped). Clients using older request versions are served exactly
//     as before.
//   - **Epoch bump at EndTxn.** EndTxn v5+ bumps the epoch with the decision (written durably in
//     PrepareCommit/PrepareAbort, LastEpoch the epoch before), writes
//     the markers with the bumped epoch, so the partitions fence
//     batches of the previous epoch, and answers the new producer id
//     and epoch. When the bumped epoch is exhausted a fresh producer id
//     is allocated at the decision and kept in the Prepare state
//     (NextProducerID); completing the transaction moves to it at epoch
//     0 (LastProducerID the old one). An abort with nothing running
//     (Empty, CompleteCommit, CompleteAbort) bumps the epoch too and
//     writes no marker; a commit with nothing running is
//     INVALID_TXN_STATE.
//   - **EndTxn retries across the bump.** An EndTxn v5+ naming the
//     producer before its bump (the same id one epoch back, or the
//     rotated-from id at its last epoch) is a retry: the same decision
//     is answered NONE with the current producer id and epoch once
//     complete, CONCURRENT_TRANSACTIONS while the markers are written;
//     the other decision is INVALID_TXN_STATE. Any other older epoch is
//     PRODUCER_FENCED.
//
// Lock order: Coordinator.mu is never held while waiting for a txn's lock,
// and a txn's lock is held across its store writes and markers, so the
// requests of one transactional id, the timeout loop and expiration are
// serialized per id. A txn's add queue (addQueue) has its own lock, a
// leaf, never held while waiting for the txn's (an add's waiting
// callback, which must not block, runs under it).
package txn
