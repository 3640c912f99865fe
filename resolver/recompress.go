package resolver

import "github.com/kgateway/kgateway/recordbatch"

// Topic-level compression.type (Kafka's LogValidator): "producer" keeps
// each batch as the producer compressed it; any other value (uncompressed,
// gzip, snappy, lz4, zstd) is the codec every appended batch is stored
// with, a batch of another codec being recompressed on the produce path
// (its records, offsets, timestamps, producer fields and attributes other
// than the codec unchanged, a new CRC).

// recompressBatches returns batches re-encoded with codec c
// at Kafka's compression level (recordbatch.Recompress) as one buffer,
// or changed false (and nothing) when every batch already has it. limit
// bounds each decompression (the decompression bound).
func recompressBatches(batches [][]byte, c Codec, level int, limit int64) (out []byte, changed bool, err error) {
	for _, b := range batches {
		if Codec(decodeHeader(b).Attributes&recordbatch.CodecMask) != c {
			changed = true
			break
		}
	}
	if !changed {
		return nil, false, nil
	}
	for _, b := range batches {
		nb, err := recordbatch.Recompress(b, c, level, limit)
		if err != nil {
			return nil, false, err
		}
		out = append(out, nb...)
	}
	return out, true, nil
}
