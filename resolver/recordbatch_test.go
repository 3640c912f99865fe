package resolver

import (
	"github.com/kgateway/kgateway/cleaner"
	"github.com/kgateway/kgateway/recordbatch"
)

// The tests of this package were written when the batch format lived
// here; these names keep them reading as they did.

const (
	codecMask     = recordbatch.CodecMask
	zstdMaxWindow = recordbatch.ZstdMaxWindow
)

var xerialHeader = recordbatch.XerialHeader

func compressSection(c Codec, sec []byte) ([]byte, error) { return recordbatch.CompressSection(c, sec) }
func decodeSection(b []byte, limit int64) ([]byte, error) { return recordbatch.DecodeSection(b, limit) }

// cleanRecord is a parsed record as the cleaner tests look at it.
type cleanRecord struct {
	attrs      byte
	ts         int64
	off        Offset
	key, value []byte
	headers    []byte
}

func parseRecords(h batchHeader, sec []byte) ([]cleanRecord, error) {
	rs, err := recordbatch.ParseRecords(h, sec)
	out := make([]cleanRecord, len(rs))
	for i, r := range rs {
		out[i] = cleanRecord{attrs: r.Attrs, ts: r.TS, off: r.Off, key: r.Key, value: r.Value, headers: r.Headers}
	}
	return out, err
}

// errMapTooSmall is the cleaner's, which left this package.
var errMapTooSmall = cleaner.ErrMapTooSmall
