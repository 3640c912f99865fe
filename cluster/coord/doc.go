// Package coord makes the group coordinator's state survive a change of
// coordinator node in cluster mode. One node at a time coordinates groups:
// the owner of the pkey "coordinator" (cluster/owner). Its offsets store
// (package offsets, pebble) mirrors every synced batch into etcd
// (offsets.Options.Mirror = NewMirror), and a node that becomes
// coordinator builds a fresh store from etcd (Restore) before it serves.
// Producer ids come from an etcd counter in blocks (ProducerIDs).
//
// # Keyspace
//
// Under the cluster prefix P:
//
//	P kv/<hex of pebble key>    the store's keys and values, one etcd key each
//	P kvlast                    the id of the last committed batch (unknown outcomes resolved first)
//	P kvpending                 "<id> <chunks>": a large batch committed
//	                            but not yet folded into kv/ (whole mirrored batches)
//	P kvbatch/<id>/<chunk>      that batch's pebble representation, in
//	                            chunks
//	P pid                       the next free producer id block (producer id blocks)
//
// Hex keeps etcd's key order equal to pebble's (a byte string's hex
// encoding compares as the bytes do), so a pebble range delete [a, b) is
// the etcd range delete [kv/hex(a), kv/hex(b)).
//
// # Taking over
//
// A node that becomes coordinator: acquires the ownership, calls Restore
// into an empty directory, opens the store there with
// Mirror = NewMirror(..., ownership, ...), and swaps it into the front
// end (kafka.Server.SwapOffsets). etcd is then the store's one durable
// copy: the directory is never opened again (the next acquisition
// restores anew), so the store applies its writes locally without a
// sync (offsets.Options.MirrorDurable). The store's first write (offsets.Open's
// own, or the first request's) folds anything a previous coordinator left
// half done (whole mirrored batches, no history in etcd).
//
// # Rules
//
//   - **Fenced store mirror.** Every synced batch of the coordinator's
//     store is written to etcd (puts and deletes of P kv/ keys, range
//     deletes as etcd range deletes) in transactions guarded by the
//     coordinator ownership (the fenced transaction) before the store
//     applies it (offsets O8); the store hands over the writes that
//     queued behind one another as one batch, which its bounds keep to
//     one transaction. A mirror that fails, fenced or
//     otherwise, fails the write; fenced is permanent (no
//     acknowledgement without a fenced commit: never retried under the
//     same ownership).
//   - **Whole mirrored batches.** A batch is visible in etcd whole or
//     not at all, crash or not. One that fits a transaction
//     (Options.MaxTxnOps, MaxTxnBytes: etcd's max-txn-ops and request
//     size) is one transaction. A larger one is first written as chunks
//     under P kvbatch/<id>/, which nothing reads until one guarded
//     transaction names the batch in P kvpending: that is its commit
//     point. It is then folded into P kv/ and the record deleted. Until
//     the record is gone, Restore applies the batch over kv/ (which a
//     fold in progress makes no less correct: the batch is the last
//     write of every key it names), and a mirror folds it before
//     writing anything else.
//   - **No history in etcd.** etcd holds the store, not its history:
//     kv/ keys are overwritten and deleted in place, a folded batch's
//     chunks go with its pending record, and chunks of a batch cut
//     before its commit point are deleted by the next mirror's first
//     write. Nothing grows with the number of writes (etcd's own
//     revisions are its compaction's job).
//   - **Unknown outcomes resolved first.** A write whose etcd outcome
//     is unknown (a timeout, etcd down) is resolved before the mirror
//     writes anything else. Every commit also writes P kvlast = its id,
//     conditional on kvlast's revision after the previous commit;
//     resolving is one guarded conditional write of kvlast that either
//     voids the unknown commit (it can never apply afterwards) or finds
//     it applied. Found applied after the store was told it failed,
//     etcd holds a write the local store lacks: the mirror refuses
//     every later write (ErrDiverged) and the node must restore.
//   - **Restore at one revision.** Restore reads one etcd revision and
//     builds a fresh pebble store holding exactly the mirrored keys
//     (kv/, then a pending batch over them), in a side directory
//     renamed into place once complete. Called after the ownership was
//     acquired, it sees every write the previous coordinator's mirror
//     ever made: that mirror is fenced from the acquisition on (the
//     rising fencing epoch, the fenced transaction).
//   - **Producer id blocks.** Producer ids are taken from P pid in
//     blocks by compare-and-swap on its revision: no id is handed out
//     twice, across nodes and restarts of nodes or of etcd. A block
//     whose swap had an unknown outcome is abandoned, never reused.
package coord
