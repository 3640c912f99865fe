package diskless

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gocloud.dev/blob"
)

// A partition's exported state (the published producer state): an object "state/<pkey>/<unique>"
// holding the partition's producer and transaction state as of an
// offset it covers (resolver ExportState), and the pointer
// log/<pkey>/state to it.

const stateDir = "state/"

func (c *Committer) stateKey(pkey string) string { return c.logPrefix(pkey) + "state" }

// stateRecord is the pointer's value.
type stateRecord struct {
	Object  string `json:"obj"`
	Covered int64  `json:"covered"`
	Len     int64  `json:"len"`
	SHA256  string `json:"sha256"`
}

// ErrNoState: State of a partition no state was put for.
var ErrNoState = errors.New("diskless: no exported state")

// PutState stores data, pkey's state as of covered, as a new object and
// points the partition's state record at it, in a fenced transaction
// under o (fenced writers publish nothing, the published producer state) that moves the reference from the object it pointed
// at before (reference-counted collection). A covered past the published end is ErrOutOfRange:
// the state would name offsets the published log does not hold. A
// concurrent PutState is ErrConflict; nothing is published then.
func (c *Committer) PutState(ctx context.Context, o owner.Ownership, pkey string, covered int64, data []byte) error {
	if o.Partition != pkey {
		return fmt.Errorf("diskless: %s: %w", pkey, ErrNotOwned)
	}
	st, err := c.readLog(ctx, pkey)
	if err != nil {
		return err
	}
	// The end only grows under one owner, and the transaction below
	// requires this one: covered stays within it.
	if covered > st.end {
		return fmt.Errorf("diskless: %s: state covers %d, beyond the end %d: %w", pkey, covered, st.end, ErrOutOfRange)
	}
	sum := sha256.Sum256(data)
	name := c.uniqueName(stateDir + pkey + "/")
	putAt := c.opts.Now()
	if err := c.bucket.WriteAll(ctx, name, data, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		return fmt.Errorf("diskless: %s: write state %s: %w", pkey, name, err)
	}
	fail := func(err error) error {
		c.bucket.Delete(ctx, name)
		return err
	}
	sk, mk := c.stateKey(pkey), c.objKey(name)
	cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(sk), "=", st.stateRev), clientv3.Compare(clientv3.CreateRevision(mk), "=", 0)}
	rec := stateRecord{Object: name, Covered: covered, Len: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	val, _ := json.Marshal(rec)
	then := []clientv3.Op{clientv3.OpPut(sk, string(val)), clientv3.OpPut(mk, encodeObj(objRecord{Refs: 1}))}
	if st.state != nil {
		rc, ro, err := c.stateRefDrop(ctx, st.state.Object, st.rev)
		if err != nil {
			return fail(err)
		}
		cmps, then = append(cmps, rc...), append(then, ro...)
	}
	if c.opts.Now().Sub(putAt) >= c.opts.OrphanAge {
		return fail(fmt.Errorf("%w: %s is older than %v", ErrObjectGone, name, c.opts.OrphanAge))
	}
	rev, lost, _, err := c.fencedTxn(ctx, []owner.Ownership{o}, cmps, then, nil)
	switch {
	case err != nil: // unknown: the object may be published; Collect decides
		return fmt.Errorf("diskless: %s: put state, outcome unknown: %w", pkey, err)
	case len(lost) > 0:
		return fail(fenced(pkey))
	case rev == 0:
		return fail(fmt.Errorf("diskless: %s: put state: %w", pkey, ErrConflict))
	}
	return nil
}

// stateRefDrop is the comparisons and puts that take a reference from a
// state object, its count read at rev, the revision its state record was
// read at (readObjects).
func (c *Committer) stateRefDrop(ctx context.Context, object string, rev int64) ([]clientv3.Cmp, []clientv3.Op, error) {
	ost, err := c.readObjects(ctx, []string{object}, rev)
	if err != nil {
		return nil, nil, err
	}
	return c.refChanges(ost, map[string]int64{object: -1})
}

// State returns pkey's last state put and the offset it covers, its
// bytes checked against the record (the published producer state). ErrNoState when there is none.
// A state object replaced and collected since the record was read is an
// error: the caller may do without a state (replay everything).
func (c *Committer) State(ctx context.Context, pkey string) (covered int64, data []byte, err error) {
	resp, err := c.cli.Get(ctx, c.stateKey(pkey))
	if err != nil {
		return 0, nil, fmt.Errorf("diskless: %s: read state: %w", pkey, err)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil, fmt.Errorf("diskless: %s: %w", pkey, ErrNoState)
	}
	var rec stateRecord
	if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil {
		return 0, nil, fmt.Errorf("diskless: %s: state record: %w", pkey, err)
	}
	rd, err := c.bucket.NewReader(ctx, rec.Object, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("diskless: %s: open state %s: %w", pkey, rec.Object, err)
	}
	defer rd.Close()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, rd)
	c.counts.objectBytesRead.Add(int64(buf.Len()))
	if err != nil {
		return 0, nil, fmt.Errorf("diskless: %s: read state %s: %w", pkey, rec.Object, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	if int64(buf.Len()) != rec.Len || hex.EncodeToString(sum[:]) != rec.SHA256 {
		return 0, nil, fmt.Errorf("%w: %s: state %s differs from its record", ErrCorrupt, pkey, rec.Object)
	}
	return rec.Covered, buf.Bytes(), nil
}
