package coord

import (
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrUnsupported is a batch entry the mirror cannot express in etcd
// (merge, single delete, range keys...): the offsets store writes none.
var ErrUnsupported = errors.New("coord: unsupported batch entry")

// op is one etcd write of a batch's net effect: a put, a delete, or a
// range delete [key, end).
type op struct {
	key, end, value []byte
	del             bool
}

// size is what op adds to a request, roughly: key, end, value and
// framing.
func (o op) size() int { return 2*(len(o.key)+len(o.end)) + len(o.value) + 16 }

// netOps reduces a pebble batch representation to its net effect, as
// etcd can take it in one transaction: at most one op per key, and no put
// inside a range delete (etcd refuses both). Later entries win, as in
// pebble: a set after a range delete survives it, one before does not.
func netOps(repr []byte) ([]op, error) {
	points := map[string]*[]byte{} // nil: deleted
	var ranges [][2]string
	r := batchrepr.Read(repr)
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("coord: batch: %w", err)
		}
		if !ok {
			break
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			val := append([]byte(nil), v...)
			points[string(k)] = &val
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindDeleteSized:
			points[string(k)] = nil
		case pebble.InternalKeyKindRangeDelete:
			s, e := string(k), string(v)
			for pk := range points {
				if s <= pk && pk < e {
					delete(points, pk) // the range deletes it
				}
			}
			ranges = append(ranges, [2]string{s, e})
		case pebble.InternalKeyKindLogData:
		default:
			return nil, fmt.Errorf("%w: kind %v", ErrUnsupported, kind)
		}
	}
	ranges = mergeRanges(ranges)
	keys := make([]string, 0, len(points))
	for k := range points {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []op
	var puts []string
	for _, k := range keys {
		if v := points[k]; v != nil {
			out = append(out, op{key: []byte(k), value: *v})
			puts = append(puts, k)
		} else if !inRanges(ranges, k) {
			out = append(out, op{key: []byte(k), del: true})
		}
	}
	for _, rg := range ranges {
		out = append(out, around(rg, puts)...)
	}
	return out, nil
}

// mergeRanges sorts ranges and merges those that overlap or touch.
func mergeRanges(rs [][2]string) [][2]string {
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	var out [][2]string
	for _, r := range rs {
		if r[0] >= r[1] {
			continue
		}
		if n := len(out); n > 0 && r[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

func inRanges(rs [][2]string, k string) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] > k })
	return i < len(rs) && rs[i][0] <= k
}

// around is range delete rg minus the (sorted) put keys inside it: the
// pieces between them. k + "\x00" is the key right after k.
func around(rg [2]string, puts []string) []op {
	var out []op
	from := rg[0]
	i := sort.SearchStrings(puts, rg[0])
	for ; i < len(puts) && puts[i] < rg[1]; i++ {
		if from < puts[i] {
			out = append(out, op{key: []byte(from), end: []byte(puts[i]), del: true})
		}
		from = puts[i] + "\x00"
	}
	if from < rg[1] {
		out = append(out, op{key: []byte(from), end: []byte(rg[1]), del: true})
	}
	return out
}

// kvKey is the etcd key of pebble key k.
func kvKey(prefix string, k []byte) string { return prefix + "kv/" + hex.EncodeToString(k) }

// etcdOp is o as an etcd operation under prefix.
func etcdOp(prefix string, o op) clientv3.Op {
	switch {
	case o.end != nil:
		return clientv3.OpDelete(kvKey(prefix, o.key), clientv3.WithRange(kvKey(prefix, o.end)))
	case o.del:
		return clientv3.OpDelete(kvKey(prefix, o.key))
	default:
		return clientv3.OpPut(kvKey(prefix, o.key), string(o.value))
	}
}
