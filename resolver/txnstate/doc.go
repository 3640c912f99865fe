// Package txnstate is a partition's transaction state (X1–X7), the data
// and its durable encoding, without the partition around it:
//
//   - Set (the partition's append side, under its append lock) is what
//     produce and markers check and change: which producers may write
//     transactional batches (KIP-890 part 1, X4; fencing, X5), the first
//     offset of each open transaction, and what the next checkpoint must
//     persist. A marker ends a transaction here when it is written.
//   - View (the read side, under the partition's read lock) is what reads
//     see: the open transactions' first offsets and the aborted-transaction
//     index. A transaction's first offset enters it before its first batch
//     is written, and leaves it only once its marker is durable (X2), so
//     the last stable offset never passes data whose fate a crash could
//     change.
//
// Durable state (X6, X7). A producer-state checkpoint (resolver
// checkpoint.go) also writes, in the same atomic ApplyMeta and as of the
// same Covered offset, the ops Set.TakeDirty returns:
//
//	resolver/txn-open/<log><pid>     an open transaction: epoch i16, first offset i64
//	resolver/aborted/<log><offset>   an aborted transaction, keyed by its
//	                                 ABORT marker's offset: pid i64, first offset i64
//
// only for what changed since the previous checkpoint (as P3). Entries
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
package txnstate
