package resolver

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Topic-level compression.type (Kafka's LogValidator): "producer" keeps
// each batch as the producer compressed it; any other value (uncompressed,
// gzip, snappy, lz4, zstd) is the codec every appended batch is stored
// with, a batch of another codec being recompressed on the produce path
// (its records, offsets, timestamps, producer fields and attributes other
// than the codec unchanged, a new CRC).

// topicCodec is the codec compression.type v asks for; ok is false for
// "producer" (keep the producer's).
func topicCodec(v string) (c Codec, ok bool) {
	switch v {
	case "uncompressed":
		return CodecNone, true
	case "gzip":
		return CodecGzip, true
	case "snappy":
		return CodecSnappy, true
	case "lz4":
		return CodecLZ4, true
	case "zstd":
		return CodecZstd, true
	}
	return 0, false
}

// recompressBatches returns batches re-encoded with codec c as one buffer,
// or changed false (and nothing) when every batch already has it. limit
// bounds each decompression (Z3).
func recompressBatches(batches [][]byte, c Codec, limit int64) (out []byte, changed bool, err error) {
	for _, b := range batches {
		if Codec(decodeHeader(b).Attributes&codecMask) != c {
			changed = true
			break
		}
	}
	if !changed {
		return nil, false, nil
	}
	for _, b := range batches {
		nb, err := recompressBatch(b, c, limit)
		if err != nil {
			return nil, false, err
		}
		out = append(out, nb...)
	}
	return out, true, nil
}

// recompressBatch is batch b with its records section in codec c.
func recompressBatch(b []byte, c Codec, limit int64) ([]byte, error) {
	h := decodeHeader(b)
	if Codec(h.Attributes&codecMask) == c {
		return b, nil
	}
	sec, err := decodeSection(b, limit)
	if err != nil {
		return nil, err
	}
	if sec, err = compressSection(c, sec); err != nil {
		return nil, fmt.Errorf("%w: recompressing to %v: %v", ErrCorruptBatch, c, err)
	}
	be := binary.BigEndian
	out := make([]byte, batchHeaderLen, batchHeaderLen+len(sec))
	copy(out, b[:batchHeaderLen])
	be.PutUint32(out[batchLengthOff:], uint32(batchHeaderLen-batchLenPrefix+len(sec)))
	be.PutUint16(out[attrsOff:], uint16(h.Attributes)&^uint16(codecMask)|uint16(c))
	out = append(out, sec...)
	be.PutUint32(out[crcOff:], crc32.Checksum(out[attrsOff:], castagnoli))
	return out, nil
}
