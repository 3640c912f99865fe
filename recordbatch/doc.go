// Package recordbatch is the Kafka record batch format (magic 2) at the
// byte level, for the layers below the wire protocol, which never import
// kmsg (docs/DESIGN.md "Layers"): reading and checking a batch header
// (batch.go), decompressing a records section within a bound
// (compression.go, record validation below), walking the records without
// holding them (recordwalk.go), parsing and re-encoding records for the
// log cleaner (rebuild.go), and the control batch of a transaction
// marker (marker.go).
//
// It owns: the layout constants, Header, Parse/Split/Check, the codecs,
// the decompressed-size bound, the record walk and the marker encoding.
//
// It may not touch: storage, ledgers, partitions, producer state or any
// Kafka semantic beyond the batch's own consistency. It keeps no state
// but pools of codec buffers. Its errors (ErrCorruptBatch,
// ErrInvalidRecord, ErrUnsupportedMagic) are re-exported by resolver,
// which kafka/ maps to Kafka's error codes.
//
// # Record validation and compression
//
// A produce carries exactly one batch per partition (Produce v3+). Before
// anything is written, outside every lock, its records are walked
// (recordbatch/recordwalk.go), decompressed first when the batch is compressed
// (recordbatch/compression.go):
//
//	**Codec check.** The records section is what the codec says: it decodes as gzip,
//	   snappy (raw or xerial-framed), lz4 frames or zstd frames, to its
//	   end, with no bytes after the compressed data; otherwise
//	   ErrCorruptBatch (CORRUPT_MESSAGE).
//	**Record count check.** The records agree with the header: exactly recordCount well-formed
//	   records (each exactly its declared length), the i-th with offset
//	   delta i, nothing after the last; otherwise ErrInvalidRecord
//	   (INVALID_RECORD). The same holds for uncompressed batches.
//	**Decompression bound.** A section decompresses to at most 64 x max.message.bytes
//	   (decompressedLimit); past it the batch is ErrInvalidRecord. Raw
//	   snappy's declared length is checked before it is decoded.
//	**Streamed decompression.** Decompression streams through a pooled window (a raw snappy block
//	   into a pooled buffer) and keeps nothing: only the stored,
//	   compressed bytes outlive the check. At most max(4, 2 x GOMAXPROCS)
//	   batches decompress at once.
//
// A refused batch appends nothing. scanRecords is also the way to read
// records' offset and timestamp deltas (RecordMeta) elsewhere.
package recordbatch
