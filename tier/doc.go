// Package tier keeps sealed ledgers of a storage.Store in an object store
// (Kafka's tiered storage, KIP-405): it uploads them, reads them back for
// fetches through durable reader pins, and deletes them when retention or
// deletion takes their ledgers. The object store is any gocloud blob
// bucket (tier.BlobBucket); the metadata goes through the Meta interface,
// kept today in the store's pebble (PebbleMeta).
//
// # Object format
//
// One object per upload attempt of one ledger, named
// <prefix><log>/<ledger>-<publication id>.kgo: the ledger's frames byte
// for byte as in its segment file (storage "File format"), then an
// object-level index (per entry: offset, records, max timestamp, frame
// position, payload size; 32 bytes), then a 44-byte footer (magic,
// format version 1, entries, frames and index lengths, first offset,
// CRC32C). The record keeps the SHA-256 of the frames and of the index.
// Because positions are the segment file's, the ledger's own entry index
// (which storage keeps for an offloaded ledger) addresses the object too.
//
// # Rules
//
//	B1 No step relies on being the only process. Every change of an
//	   object record is a compare-and-swap on its Version (Meta.Put,
//	   Meta.Delete); a loser re-reads and decides again. Upload attempts
//	   carry an owner and a lease; pins an owner and an expiry; deletion
//	   and orphan collection decide only from records and expiries, never
//	   from "I am the one that wrote it". PebbleMeta's mutex is its
//	   compare-and-swap, not a lock callers rely on; a shared Meta (etcd)
//	   implements Put and Delete as transactions comparing the key's
//	   revision, and pins as lease-bound keys.
//	B2 Lifecycle: Uploading -> Published -> Deleting -> gone. An attempt
//	   is recorded (Uploading, a fresh publication id and object name)
//	   before any byte is written, so every object the tier writes is
//	   named by a record or was abandoned by one.
//	B3 Only a whole, verified object is Published, and an object name is
//	   never written twice: an attempt writes its own name, and a
//	   published object is never overwritten.
//	B4 Publication follows a read-back: the stored object's size, footer,
//	   index, every frame and both SHA-256s are checked against what was
//	   written. A ledger's local file is removed (storage Offload) only
//	   after its object is Published, so local data is kept until the
//	   upload is verified; local removal goes oldest first, so the local
//	   part of a log is a suffix of it.
//	B5 A read of an object target pins it first (a durable record with an
//	   expiry, Meta.AddPin; none when every byte it needs is cached, "Reads
//	   and R1"), then revalidates its candidate: the record of
//	   (log, ledger) still at the listed Version, Published, the same
//	   object name and publication id, the same SHA-256s, and a range that
//	   holds the read. On any difference it releases the pin and returns
//	   ErrStale, and the reader tries its next candidate.
//	B6 An object is deleted only from Deleting, and only when no live pin
//	   names it. Deletion stores Deleting first and reads pins after; a
//	   reader pins first and revalidates after: so either the reader sees
//	   Deleting and reads nothing, or the deleter sees its pin and waits.
//	   An expired pin protects nothing (its reader is gone or past its
//	   time) and is reaped.
//	B7 Every byte served from an object is checked: the stored size and
//	   the footer (an unknown format version, a bad CRC, trailing or
//	   missing bytes fail), the index against its SHA-256 and its shape,
//	   each read's index header against the object's index entry, each
//	   frame's bounds, length, CRC32C, offset and record count. A failure
//	   is storage.ErrCorrupt (KAFKA_STORAGE_ERROR to a client), is counted
//	   (Stats.Corrupt), and drops everything cached of the object: a
//	   corrupt object is never served.
//	B8 What a crash leaves is found again: an Uploading record whose
//	   lease expired, or one of this node's that no upload of this
//	   process owns (the node is the data directory, NodeID, which one
//	   process holds at a time: its predecessor died), names an orphan
//	   object, deleted with its record by Reap; an object under the prefix that no record names, older than
//	   OrphanGrace, is deleted too. Objects of ledgers the log no longer
//	   has (retention, DeleteRecords, DeleteTopics: storage is the truth
//	   of what a log holds, and ledger ids are never reused) go Deleting
//	   and then (B6) away.
//
// # Reads and R1
//
// A fetch reads an offloaded ledger through the ledger's read flow (ledger
// "targetOf"): its candidates are the local file while it exists, then the
// published objects. A read of an object target writes one thing, its pin:
// a lease record in the object metadata, written before and removed after
// the read. It is not a cursor: it names the object, not a position or a
// reader's progress; it never changes what the ledger or the index holds;
// only deletion consults it. So ledger R1 ("a read writes nothing") holds
// for the log, and the pin is the one write an object read makes, to the
// object metadata. A read of an object target served wholly from the
// chunk cache (its index and every chunk its frames lie in are cached)
// takes no pin and writes nothing: the pin keeps the object's bytes from
// deletion while they are read (B6), and such a read reads none of them;
// it still revalidates its candidate (B5, a metadata read) and checks
// every frame (B7). A read of a local target, and a long poll at the tail
// (always the open, local ledger), writes nothing and never touches the
// object store.
//
// Object reads fetch byte ranges in chunks (Options.ChunkBytes) kept in a
// byte-bounded LRU cache; a reader whose read continues where its previous
// one ended gets the next chunk prefetched. Every object-store call is
// bounded by Options.OpTimeout and retried with exponential backoff on
// errors, timeouts and throttling (503 SlowDown), except missing objects
// and corruption. A stream (an upload, the read-back of a whole object)
// grows with its object, so it is bounded per call instead: opening it,
// each Write or Read, and Close must each return within OpTimeout, or the
// stream is cancelled and tried again. A store that accepts connections
// and never answers fails an upload; it never holds it, and the tier pass
// behind it, forever. A Read, the read of one fetch, ends within
// Options.ReadTimeout, retries included, with the entries it has or an
// error: a fetch of object data always answers before the client gives
// up on it, whatever the store does.
//
// # Tests
//
// tiertest.Faulty wraps a bucket to fail (SlowDown), delay, and lie (a
// flipped byte, a truncated read). The end-to-end tests (test/) run the
// tier over file:// and over a real S3 server (test/s3server). The
// benchmarks and how to run them: BENCHMARKS.md "Storage and object tier
// micro-benchmarks".
package tier
