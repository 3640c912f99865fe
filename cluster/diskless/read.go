package diskless

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// logState is a partition's records as read at one revision.
type logState struct {
	start, end int64
	startRev   int64   // the start key's mod revision; 0: none
	ranges     []Range // in offset order, including any wholly below start
	revs       []int64 // each range record's mod revision
	state      *stateRecord
	stateRev   int64 // the state record's mod revision; 0: none
	rev        int64 // the store's revision the records were read at
}

// readLog reads pkey's records in one get (one revision).
func (c *Committer) readLog(ctx context.Context, pkey string) (logState, error) {
	lp := c.logPrefix(pkey)
	resp, err := c.cli.Get(ctx, lp, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return logState{}, fmt.Errorf("diskless: %s: read: %w", pkey, err)
	}
	st := logState{rev: resp.Header.Revision}
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		switch rest := strings.TrimPrefix(k, lp); {
		case rest == "start", rest == "end":
			v, err := strconv.ParseInt(string(kv.Value), 10, 64)
			if err != nil {
				return logState{}, fmt.Errorf("diskless: %s: %q: %w", pkey, k, err)
			}
			if rest == "start" {
				st.start, st.startRev = v, kv.ModRevision
			} else {
				st.end = v
			}
		case rest == "state":
			st.state, st.stateRev = new(stateRecord), kv.ModRevision
			if err := json.Unmarshal(kv.Value, st.state); err != nil {
				return logState{}, fmt.Errorf("diskless: %s: state record: %w", pkey, err)
			}
		case strings.HasPrefix(rest, "r/"):
			r, err := decodeRange(pkey, k, kv.Value)
			if err != nil {
				return logState{}, err
			}
			r.Rev = kv.ModRevision
			st.ranges = append(st.ranges, r)
			st.revs = append(st.revs, kv.ModRevision)
		}
	}
	return st, nil
}

// Log returns pkey's published state: its start and end, and the ranges
// that hold offsets in [start, end), in offset order, tiling from the
// first range's Base (<= start) to end (ranges tiling the log). A partition never published
// has start = end = 0 and no range.
func (c *Committer) Log(ctx context.Context, pkey string) (start, end int64, ranges []Range, err error) {
	st, err := c.readLog(ctx, pkey)
	if err != nil {
		return 0, 0, nil, err
	}
	for _, r := range st.ranges {
		if r.End > st.start {
			ranges = append(ranges, r)
		}
	}
	return st.start, st.end, ranges, nil
}

// ReadRange returns r's bytes: record batches that cover [r.Base, r.End)
// exactly, checked against r's SHA-256 (checked range reads). Bytes that do not match give
// an error wrapping ErrCorrupt.
func (c *Committer) ReadRange(ctx context.Context, r Range) ([]byte, error) {
	rd, err := c.bucket.NewRangeReader(ctx, r.Object, r.Pos, r.Len, nil)
	if err != nil {
		return nil, fmt.Errorf("diskless: %s [%d, %d): open %s: %w", r.PKey, r.Base, r.End, r.Object, err)
	}
	defer rd.Close()
	var buf bytes.Buffer
	buf.Grow(int(r.Len))
	_, err = io.Copy(&buf, rd)
	c.counts.objectBytesRead.Add(int64(buf.Len()))
	if err != nil {
		return nil, fmt.Errorf("diskless: %s [%d, %d): read %s: %w", r.PKey, r.Base, r.End, r.Object, err)
	}
	data := buf.Bytes()
	if int64(len(data)) != r.Len || sha256.Sum256(data) != r.SHA256 {
		return nil, fmt.Errorf("%w: %s [%d, %d): %d bytes of %s at %d differ from the %d published",
			ErrCorrupt, r.PKey, r.Base, r.End, len(data), r.Object, r.Pos, r.Len)
	}
	if err := tile(data, r.Base, r.End); err != nil {
		return nil, fmt.Errorf("%w: %s [%d, %d) in %s: %v", ErrCorrupt, r.PKey, r.Base, r.End, r.Object, err)
	}
	return data, nil
}
