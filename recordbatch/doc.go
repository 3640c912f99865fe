// Package recordbatch is the Kafka record batch format (magic 2) at the
// byte level, for the layers below the wire protocol, which never import
// kmsg (docs/DESIGN.md "Layers"): reading and checking a batch header
// (batch.go), decompressing a records section within a bound
// (compression.go, the resolver's record validation), walking the records without
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
package recordbatch
