package recordbatch

import (
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression levels (KIP-390): the topic configs compression.gzip.level,
// compression.lz4.level and compression.zstd.level, in Kafka's numbering,
// choose how hard a recompressed batch is compressed. Each Kafka level is
// mapped onto the Go encoder's:
//   - gzip: -1 (the codec's default, 6) and 1 to 9, as they are;
//   - lz4: Kafka's default 9 is LZ4's fast compressor, as Kafka's
//     Lz4BlockOutputStream chooses; any other level (1 to 17) is LZ4HC,
//     whose 17 levels the Go encoder's nine HC depths stand for
//     (level L is depth ceil(9L/17));
//   - zstd: zstd.EncoderLevelFromZstd (levels up to 2 the fastest, 3 to
//     5 the default, 6 to 9 better, 10 and up the best; Kafka's negative
//     levels are the fastest).
const (
	// LZ4DefaultLevel is compression.lz4.level's default.
	LZ4DefaultLevel = 9
)

var (
	gzipLevelWriters [11]sync.Pool // by level+1: -1 to 9
	lz4LevelWriters  [10]sync.Pool // by HC depth: 0 is the fast compressor
	zstdLevelEncs    [zstd.SpeedBestCompression + 1]sync.Pool
)

// CompressSectionLevel is CompressSection at a Kafka compression level
// of codec c (ignored for snappy and none). A level outside the codec's
// range (the topic config's validation refuses those) is clamped.
func CompressSectionLevel(c Codec, level int, sec []byte) ([]byte, error) {
	switch c {
	case CodecGzip:
		if level < 1 || level > 9 {
			level = gzip.DefaultCompression
		}
		p := &gzipLevelWriters[level+1]
		w, _ := p.Get().(*gzip.Writer)
		if w == nil {
			w, _ = gzip.NewWriterLevel(nil, level)
		}
		defer p.Put(w)
		return streamCompress(w, sec)
	case CodecLZ4:
		depth := lz4Depth(level)
		p := &lz4LevelWriters[depth]
		w, _ := p.Get().(*lz4.Writer)
		if w == nil {
			w = lz4.NewWriter(nil)
			if depth > 0 {
				_ = w.Apply(lz4.CompressionLevelOption(lz4.CompressionLevel(1 << (8 + depth))))
			}
		}
		defer p.Put(w)
		return streamCompress(w, sec)
	case CodecZstd:
		l := zstd.EncoderLevelFromZstd(level)
		p := &zstdLevelEncs[l]
		e, _ := p.Get().(*zstd.Encoder)
		if e == nil {
			// Windows of 1 MiB, as CompressSection's.
			e, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithEncoderLevel(l))
		}
		defer p.Put(e)
		return e.EncodeAll(sec, nil), nil
	}
	return CompressSection(c, sec)
}

// lz4Depth is the Go encoder's HC depth for Kafka's lz4 level (0: the
// fast compressor).
func lz4Depth(level int) int {
	if level == LZ4DefaultLevel || level < 1 {
		return 0
	}
	return min(9, (9*level+16)/17)
}
