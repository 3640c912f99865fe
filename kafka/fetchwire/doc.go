// Package fetchwire writes fetch responses (Fetch's, and ShareFetch's
// records: kafka/share wire.go) without copying their record batches: a
// handler marks where each partition's batches go (Batches.Mark)
// and the connection writer splits the encoded response at the markers
// into pieces for one writev or sendfile (Batches.Segments). The
// mechanism and its invariants are in batches.go.
//
// What it owns: the markers, the batches they stand for, the lease their
// reads are held by. What it may not touch: the connection, the request,
// the resolver's reads themselves (kafka/'s Fetch handler reads into a
// resolver.Lease and marks what it read; the share coordinator reads
// through its Log into the Batches it is handed, LeaseOf), the encoding of anything but
// the records length prefixes and the frame size.
package fetchwire
