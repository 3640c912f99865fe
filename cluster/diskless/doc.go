// Package diskless is the durable part of cluster mode's write path: a
// node's group commits become objects in an object store, and their index
// lives in etcd, published under the partitions' ownership (cluster/owner,
// the ownership rules). The node's local log is only a cache of what is published
// here.
//
// A cluster node's storage.Replicator (cluster/node) commits through it.
//
// # Objects
//
// Commit writes ONE object per group commit, "commits/<node>/<unique>",
// holding every partition's batches of the commit: each partition's
// batches back to back, in one contiguous byte range. Merge writes
// "merged/<pkey>/<unique>", one partition's adjacent ranges in one. Names
// are never reused. An object is never modified; it is deleted only by
// Collect.
//
// # Keyspace
//
// Under a prefix chosen by the caller (one per cluster):
//
//	<prefix>log/<pkey>/start           the partition's first offset (decimal); none: 0
//	<prefix>log/<pkey>/end             the offset after its last published batch; none: 0
//	<prefix>log/<pkey>/r/<base>        a range (JSON): [base, end) is bytes [pos, pos+len)
//	                                   of an object, with their SHA-256; base is 20 digits,
//	                                   so key order is offset order
//	<prefix>log/<pkey>/state           the partition's exported state (JSON): object, offset
//	                                   covered, length, SHA-256 (the published producer state)
//	<prefix>obj/<object>               how many range records name the object (JSON), or a
//	                                   tombstone: an orphan being collected
//	<prefix>pin/<object>NUL<id>        a reader's pin of the object, under its lease
//	<prefix>floor/<node>/<lease>       a node's reader floor (a revision, 20 digits), under
//	                                   its session lease
//
// A partition has two keys and one per range, whatever its batch count:
// Merge keeps the ranges few. etcd's --max-txn-ops (Options.MaxTxnOps)
// bounds every transaction; a commit of many partitions is split over
// several transactions, each partition whole in one.
//
// # Rules
//
//   - **Acknowledgement after PUT and commit.** A batch is acknowledged
//     only after its object's PUT returned and the fenced transaction
//     publishing its range and the partition's new end committed:
//     Commit's nil for the partition. Any other outcome is an error,
//     and an error is never acknowledged, even when the transaction may
//     have committed (no acknowledgement without a fenced commit): the
//     caller re-reads Log. So the latency of an acknowledgement is one
//     PUT plus one etcd transaction (one per 41 partitions at the
//     default MaxTxnOps).
//   - **Ranges tiling the log.** A partition's ranges tile [first base,
//     end) with no hole and no overlap. A range is published only by a
//     transaction that requires the partition's end to be its base (no
//     end key: 0) and sets the end to its end; so two writers, a retry
//     or a stale base can never publish a hole or an overlap
//     (ErrEndMismatch, nothing written). A range's bytes are record
//     batches covering exactly [base, end): each batch starts where the
//     previous ended (checked at Commit and at every read).
//   - **Fenced writers publish nothing.** A fenced writer publishes
//     nothing. Every transaction that publishes, merges or trims a
//     partition compares the writer's ownership of it
//     (owner.Manager.Guard, the fenced transaction). A partition whose
//     ownership is lost gets an error wrapping owner.ErrFenced and
//     nothing of it is written; a commit's other partitions are
//     published without it, in a new transaction.
//   - **Merges keep the bytes.** Merge never changes which bytes an
//     offset reads. The merged object is the replaced ranges' bytes,
//     each read back and checked (checked range reads), in offset
//     order; its one range record replaces theirs in one fenced
//     transaction that requires every replaced record unchanged since
//     it was read (not trimmed, not merged by another), so it covers
//     exactly their offsets.
//   - **Reference-counted collection.** Collection never deletes a
//     referenced object. Every transaction that adds or removes range
//     records updates, in the same transaction, the reference count of
//     each object they name, requiring the count's record unchanged
//     since read. An object goes only after its record: deleted in a
//     transaction requiring a count of 0 unchanged (a count never rises
//     from 0: only an object's own first publication creates its
//     record, with references). An object with no record (its writer
//     died between PUT and transaction) is deleted once older than
//     Options.OrphanAge: first a tombstone record is created, in a
//     transaction requiring no record, and the first publication of an
//     object requires no record, so the object can never be published
//     afterwards; and a writer gives up publishing an object it wrote
//     OrphanAge ago or more. Tombstones go after another OrphanAge.
//   - **Checked range reads.** Reads are checked. ReadRange returns a
//     range's bytes only if they are its published length and SHA-256
//     and their batches tile its offsets (ranges tiling the log);
//     otherwise ErrCorrupt, never wrong bytes.
//   - **Pinned objects kept.** Collection never deletes a pinned
//     object. A reader pins an object with a record
//     <prefix>pin/<object>NUL<id> attached to a lease of its own (a
//     node's session lease: a node that dies leaves no pin beyond the
//     lease's TTL); the transaction that deletes an object's record
//     requires, besides its count of 0 unchanged, that no pin record of
//     the object exists. The object goes only after its record
//     (reference-counted collection), so it outlives every pin taken
//     before that transaction.
//   - **Pin revalidation.** A pinned range is revalidated before it is
//     read: Pin writes the pins in a transaction that requires every
//     range record Log listed unchanged (same mod revision); otherwise
//     ErrStale, nothing written, and the reader lists again. So a
//     reader reads only an object a range named at the revision its pin
//     was written: its count was above 0 then and never rises from 0
//     (reference-counted collection), so no Collect deleted it before
//     the pin and none deletes it while the pin holds (pinned objects
//     kept).
//   - **Floored reads.** A reader need not write a pin per read. A node
//     keeps one record <prefix>floor/<node>/<lease> under its session
//     lease, holding a store revision V (20 digits): every floored read of the
//     node in flight revalidated its ranges (a read-only transaction:
//     each range record Log listed unchanged, else ErrStale) at a
//     revision L >= V, after the record was created. Collect reads the
//     floors after the object records and deletes an object whose count
//     fell to 0 at revision Z only if every floor is at least Z. An
//     object a floored read reads was referenced at L, so its count fell
//     at Z > L >= V: a floor that existed when Collect read the floors
//     holds the object; one created later has L > Z, impossible. A floor
//     only grows (AdvanceFloor: to the lowest revision of the reads in
//     flight, or the current one), and a read registers only at a
//     revision at least the record's creation and any value written, so
//     what Collect read still holds when it deletes. It costs one write
//     per floor move (a node moves it every few seconds) instead of two
//     per read, and holds back the collection of every object
//     unreferenced since V, not only of those read; a read the floor
//     cannot cover falls back to pins.
//   - **Published producer state.** A partition's exported state
//     (producers and transactions as of an offset it covers, resolver
//     ExportState) is an object "state/<pkey>/<unique>" and one record
//     log/<pkey>/state naming it, its length and SHA-256 and the offset
//     covered. PutState publishes it only in a fenced transaction of
//     the owner (fenced writers publish nothing) that requires the
//     record unchanged since read, after checking that the offset
//     covered is at most the published end (which only grows under one
//     owner): the state never names an offset the published log does
//     not hold. The record holds one reference to its object, moved in
//     the same transaction from the object it named before and dropped
//     with the partition (reference-counted collection); State returns
//     the bytes only if they are the record's length and SHA-256.
//   - **In-order publication.** Group commits are pipelined and
//     publish in order. Begin lays a commit out and starts its PUT at
//     once, while the commits begun before it are still being written
//     or published; its publication (acknowledgement after PUT and commit) starts only once the
//     publication of the commit begun just before it is over, and
//     leaves out, refused with ErrPredecessor (wrapping that commit's
//     error for the partition: a partition found fenced there is refused
//     as fenced here too), every partition that commit carried and did
//     not publish, if it was still in flight when this one began (after it, ranges tiling the log's end comparison still refuses
//     a batch that follows an unpublished one, and the caller
//     acknowledges nothing after a failure, storage I14). So a
//     partition's ranges are published in the order their batches were
//     begun, never a later batch after an earlier one that failed (its
//     offsets stay dense, ranges tiling the log, without relying on the end comparison),
//     and a commit's result (Wait) is known only after every earlier
//     commit's: nothing is acknowledged before its own publication nor
//     before that of an earlier batch.
//   - **Coalesced publication.** A commit whose PUT returned while the
//     commit begun just before it has not started publishing yet is
//     published in that commit's transactions, when both fit in one:
//     each of its partitions that commit carries too gets its range
//     after that commit's range of it (one end comparison, both
//     ranges, the later end), its other partitions their own entries,
//     and both objects their records. So it waits for one etcd
//     transaction, not for that commit's and then its own. Its results
//     are set by that publication: nil for a partition only once the
//     transaction publishing its range committed; a partition that
//     commit refused (or that the transaction refuses) is refused as in
//     in-order publication (ErrPredecessor, wrapping that error). The
//     order, the fencing and the end comparisons are those of two
//     transactions in a row, in one.
//   - **Merged ranges in pieces.** A merged range is cut into pieces at
//     batch boundaries (runs of the ranges it replaced, or of their
//     pieces, each at most Options.PieceBytes unless one alone is
//     larger), listed in its record with their offsets, byte
//     positions, SHA-256s and max timestamps; the pieces tile the range
//     (checked when the record is read). A reader may fetch and check a
//     piece alone (Range.Parts, ReadRange: its length, its SHA-256, its
//     batches tiling its offsets, checked range reads), under a pin that revalidates the
//     whole range's record (Range.Record, pin revalidation): a read below the cache
//     fetches the pieces it needs, not up to MergeMax bytes.
//   - **Commit ranges in pieces.** A partition's range in a commit longer
//     than Options.PieceBytes is cut the same way, at its batches'
//     boundaries (runs of whole batches, each at most PieceBytes unless
//     one batch alone is larger), each piece with its offsets, byte
//     position, SHA-256 and max timestamp in the range record published
//     by the commit's transaction, beside the whole range's SHA-256. The
//     pieces' SHA-256s are computed while the object's PUT runs, and
//     the record is published only after both: no piece is ever
//     published without its checksum. A read of a piece is checked as
//     one of a merged range (checked range reads); a range record
//     without pieces (shorter than a piece, or written before pieces)
//     is read and checked whole. A piece costs its record at most about
//     150 bytes: a merged range's record (at most maxRun = 61 pieces
//     at the default MaxTxnOps, up to MergeMax, 64 MiB) stays under
//     10 KB, an 8 MiB commit's (storage MaxGroupBytes) about 1.2 KB.
//
// # Readers of collected objects
//
// A Range handed out by Log may name an object that a later Merge
// replaced and Collect deleted: ReadRange then fails (not found), and the
// reader reads Log again. The bytes an offset reads never change (merges keep the bytes).
// ReadPinned (Pin, then ReadRange) and ReadFloored do not race: the
// object is pinned, or the read covered by the node's floor, and the
// range revalidated before the read (pinned objects kept, pin
// revalidation, floored reads).
package diskless
