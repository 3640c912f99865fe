package diskless

import (
	"context"
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// SetStart moves pkey's published start up to start (retention,
// DeleteRecords), in fenced transactions under o (fenced writers publish nothing), and deletes the
// range records wholly below it with their references (reference-counted collection). A start at
// or below the current one changes nothing but finishes such deletions.
// A start beyond the end is ErrOutOfRange.
func (c *Committer) SetStart(ctx context.Context, o owner.Ownership, pkey string, start int64) error {
	if o.Partition != pkey {
		return fmt.Errorf("diskless: %s: %w", pkey, ErrNotOwned)
	}
	for tries := 0; tries < maxTries; {
		st, err := c.readLog(ctx, pkey)
		if err != nil {
			return err
		}
		if start > st.end {
			return fmt.Errorf("diskless: %s: start %d beyond end %d: %w", pkey, start, st.end, ErrOutOfRange)
		}
		newStart := max(st.start, start)
		var victims int
		for victims < len(st.ranges) && victims < c.maxRun() && st.ranges[victims].End <= newStart {
			victims++
		}
		if newStart == st.start && victims == 0 {
			return nil
		}
		sk := c.startKey(pkey)
		cmps, then, err := c.removeRanges(ctx, pkey, st, victims)
		if errors.Is(err, ErrStale) {
			tries++
			continue
		}
		if err != nil {
			return err
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(sk), "=", st.startRev))
		if newStart != st.start {
			then = append(then, clientv3.OpPut(sk, decimal(newStart)))
		}
		rev, lost, _, err := c.fencedTxn(ctx, []owner.Ownership{o}, cmps, then, nil)
		switch {
		case err != nil:
			return fmt.Errorf("diskless: %s: set start, outcome unknown: %w", pkey, err)
		case len(lost) > 0:
			return fenced(pkey)
		case rev == 0:
			tries++
		}
	}
	return fmt.Errorf("diskless: %s: set start: %w", pkey, ErrConflict)
}

// removeRanges is the comparisons and operations that delete the first n
// range records of st, each unchanged since read, with one reference
// less to each of their objects.
func (c *Committer) removeRanges(ctx context.Context, pkey string, st logState, n int) ([]clientv3.Cmp, []clientv3.Op, error) {
	delta := make(map[string]int64)
	var objects []string
	var cmps []clientv3.Cmp
	var ops []clientv3.Op
	for k, r := range st.ranges[:n] {
		if _, ok := delta[r.Object]; !ok {
			objects = append(objects, r.Object)
		}
		delta[r.Object]--
		rk := c.rangeKey(pkey, r.Base)
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(rk), "=", st.revs[k]))
		ops = append(ops, clientv3.OpDelete(rk))
	}
	if c.beforeRemoveCounts != nil {
		c.beforeRemoveCounts()
	}
	ost, err := c.readObjects(ctx, objects, st.rev)
	if err != nil {
		return nil, nil, err
	}
	rc, rops, err := c.refChanges(ost, delta)
	if err != nil {
		return nil, nil, err
	}
	return append(cmps, rc...), append(ops, rops...), nil
}

// DeletePartitions deletes every record of pkeys (their topic is
// deleted), with their references. It is not fenced: the caller deletes
// a topic no one writes any more.
func (c *Committer) DeletePartitions(ctx context.Context, pkeys []string) error {
	for _, pkey := range pkeys {
		if err := c.deletePartition(ctx, pkey); err != nil {
			return err
		}
	}
	return nil
}

func (c *Committer) deletePartition(ctx context.Context, pkey string) error {
	for tries := 0; tries < maxTries; {
		st, err := c.readLog(ctx, pkey)
		if err != nil {
			return err
		}
		var cmps []clientv3.Cmp
		var then []clientv3.Op
		n := min(len(st.ranges), c.maxRun())
		if n > 0 {
			cmps, then, err = c.removeRanges(ctx, pkey, st, n)
			if errors.Is(err, ErrStale) {
				tries++
				continue
			}
			if err != nil {
				return err
			}
		} else {
			// The last transaction: no range record left, then the rest.
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(c.rangesPrefix(pkey)), "=", 0).WithPrefix(),
				clientv3.Compare(clientv3.ModRevision(c.stateKey(pkey)), "=", st.stateRev))
			then = append(then, clientv3.OpDelete(c.logPrefix(pkey), clientv3.WithPrefix()))
			if st.state != nil { // The published producer state: its state object loses its reference
				rc, ro, err := c.stateRefDrop(ctx, st.state.Object, st.rev)
				if errors.Is(err, ErrStale) {
					tries++
					continue
				}
				if err != nil {
					return err
				}
				cmps, then = append(cmps, rc...), append(then, ro...)
			}
		}
		resp, err := c.cli.Txn(ctx).If(cmps...).Then(then...).Commit()
		switch {
		case err != nil:
			return fmt.Errorf("diskless: %s: delete: %w", pkey, err)
		case !resp.Succeeded:
			tries++
		case n == 0:
			return nil
		}
	}
	return fmt.Errorf("diskless: %s: delete: %w", pkey, ErrConflict)
}
