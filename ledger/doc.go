// Package ledger is the managed ledger of one partition: a sequence of
// ledgers (segments) over one storage log, rolled by size and by age, with
// fencing and a cursorless batch read (Apache Pulsar PIP-480).
//
// # Coordinates
//
// An Offset is a Kafka record offset, and what a read names. An entry (a
// record batch) holds the offsets [Offset, End()); the entry holding an
// offset is found by a floor lookup in the entry index (O(log n)). Entries
// also carry their place in the log, (LedgerID, EntryID): ledger ids come
// from storage and increase in creation order, entry ids are 0-based
// inside a ledger. Earliest and Latest are the smallest and the largest
// offset; no entry starts at either.
//
// The last confirmed entry is the last *durable* entry of the log (D5 in
// docs/DESIGN.md): an entry that is written but not yet synced is beyond it. Entries
// below the log's soft-trim point are not available: Earliest starts at the
// first visible entry.
//
// # Read contract
//
// ReadEntries(view, from, maxOffset, maxEntries, maxBytes, lease) is the
// one read of a partition: a Kafka fetch (resolver Fetch) and the
// producer-state replay call it. It obeys R1–R11 (Apache Pulsar PIP-480's
// read contract, by offset, and R9's byte bound beyond it). Code and tests
// cite these numbers.
//
//	R1  No cursor: a read creates, consults or updates no cursor or read
//	    position, in memory or on disk. A read writes nothing.
//	R2  A start that an entry holds is inclusive: the read starts with
//	    that entry (whole, even when from is inside it).
//	R3  A start in [Start, End) that no entry holds (an empty ledger, a
//	    gap a rewrite of sealed ledgers left) moves to the next entry in
//	    offset order. A start below Start (trimmed away with its removed
//	    ledgers) reads nothing: the caller judges it against the snapshot
//	    (a Kafka fetch's OFFSET_OUT_OF_RANGE) and no entry is read for it.
//	R4  Earliest starts at the first available entry; Latest starts after
//	    the last confirmed entry (so it reads nothing now).
//	R5  A start at or after the end (the offset after the last confirmed
//	    entry) returns an empty result, not an error.
//	R6  Reads cross ledger boundaries and skip empty or removed ledgers.
//	R7  maxOffset is inclusive: the read ends with the entry holding it,
//	    even inside a ledger; a maxOffset before the start's entry returns
//	    empty. (NoLimit, which equals Latest, bounds nothing; Earliest as
//	    maxOffset means the first available entry.)
//	R8  Only entries readable when the call is made are returned (up to the
//	    last confirmed entry, fixed once by the read's snapshot); a read
//	    never waits for future writes.
//	R9  At most maxEntries entries and at most maxBytes payload bytes,
//	    except that the first entry is always returned whole: the read stops
//	    before the first entry that would take it past maxBytes. maxBytes 0
//	    therefore returns exactly one entry when one is readable.
//	R10 If a later ledger fails after some entries were collected, the read
//	    returns those (and a nil error); if none were collected, it returns
//	    the error.
//	R11 maxEntries <= 0 (or maxBytes < 0) is ErrInvalid; a fenced or closed
//	    ledger returns ErrFenced (a closed one's error is also ErrClosed).
//
// The read returns the Snapshot it read under (the log's Start and End)
// with the entries: the caller judges its offset against it (a Kafka
// fetch below Start is out of range).
// One storage snapshot fixes Start and End and, under it, the entries
// from the one holding from (storage stops them at that End, so no layer
// above enforces it again); their payloads come from their target.
// Storage pins each ledger file while the read reads from it, so a
// concurrent hard trim cannot remove a file under it (an entry served from
// the tail cache needs no pin). If a trim removes what the snapshot
// promised before the read reaches it, the read starts again from a fresh
// snapshot, under which the start may then lie below Start (R3).
//
// The read's two choices have one place each: the view (V1, V2 below,
// view.go) and the target of a ledger's payloads (targetOf). A ledger's
// candidates are its local segment file while it has one, then, for a
// ledger offloaded to the object tier (storage/doc.go "Offloaded
// ledgers"), its published objects; a ReadTargetDispatcher picks the
// reader of each by kind. An object read pins the object (a lease record
// in the object metadata, tier B5) and revalidates it; a stale
// candidate makes the read try the next one, none left a fresh snapshot.
// The pin is not a cursor and changes nothing the ledger holds: R1 holds
// for the ledger and its index; the pin is the one write of an object read
// (tier doc "Reads and R1"). With a lease, the payloads of entries
// read from local segment files are the lease's and say where they lie in
// their files, for a caller that sends them with sendfile.
//
// In cluster mode the local log is a cache of the partition's published
// log (SetPublished, published.go):
//
//	R20 A log with a Published copy starts where the published log
//	    starts: every Snapshot's Start is the lower of the two. A read
//	    of an offset below the local start reads the published ranges
//	    that hold it, up to the local start (never past it: the next read
//	    reads the local log), under the same limits as a local read (R9,
//	    R10), one entry per record batch, as the local log holds them.
//	R21 A published candidate is a range, or a piece of one, whose
//	    object, byte range and SHA-256 the index publishes (with the
//	    index version): a read fetches only the candidates its limits
//	    need, and a range listed in pieces is fetched piece by piece,
//	    never whole for one batch. Its target pins
//	    the object with a durable pin (a record under the reader's
//	    lease) or covers the read by the reader's floor, revalidates the
//	    range against the index, reads it and checks its length, SHA-256
//	    and that its batches tile its offsets; a range that changed since
//	    it was listed (ErrStale) makes the read start again from a fresh
//	    snapshot, bytes that do not check fail the read, never served.
//	    The pin (or the reader floor's record) is the read's only write
//	    (R1 holds for the ledger).
//	R22 A time lookup (SeekPublishedTime) looks below the local log
//	    first: the first published range whose max timestamp reaches
//	    the time is read as in R21 and its first batch that reaches it
//	    is the answer; with none, the local time index answers.
//
// A read chooses its view first, before any entry:
//
//	V1 Committed: every durable entry of the log, in the
//	   generation its index names.
//	V2 TopicCompacted reads the log's compacted view when it has one
//	   (SetCompactedView): a second storage log whose entries keep the
//	   offsets they had in this log, each entry spanning from the end of
//	   the one before it, so an offset the view no longer holds reads
//	   from the next entry (R3). Below the view's end the entries come
//	   from the view, under the view's snapshot; at and past it (or from
//	   a gap that runs to its end) from this log, as V1: the tail not yet
//	   in the view. The Snapshot spans the view's start to this log's
//	   End and gives the view's end (ViewEnd), so the caller knows which
//	   entries came from the view. Without a view, or once it is removed,
//	   the read is the same as in V1.
//
// # Rollover
//
// Rolling happens only on the append path, as in Kafka: before an append,
// the open ledger is sealed and a new one opened if it holds at least one
// entry and either the append would take its file past Config.SegmentBytes
// or it is older than Config.SegmentAge (by Config.Now). An entry larger
// than SegmentBytes goes alone into an otherwise empty ledger.
//
// # Ownership
//
// Entries returned by ReadEntries, and their payloads, belong to the caller
// (a leased read's payloads until it releases the lease). The managed
// ledger retains nothing of a read.
package ledger
