package owner

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// FencedError is ErrFenced with the partitions whose ownership was lost.
type FencedError struct{ Lost []string }

func (e *FencedError) Error() string {
	return fmt.Sprintf("%v: lost %s", ErrFenced, strings.Join(e.Lost, ", "))
}

func (e *FencedError) Unwrap() error { return ErrFenced }

// Guard is the condition that o still holds (the fenced transaction): its owner key is the
// one its acquisition created, and the epoch is its epoch. Put it in the
// If of any transaction that must not run after a handoff.
func (m *Manager) Guard(o Ownership) []clientv3.Cmp {
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(m.ownerKey(o.Partition)), "=", o.created),
		clientv3.Compare(clientv3.Value(m.epochKey(o.Partition)), "=", strconv.FormatUint(o.Epoch, 10)),
	}
}

// Fenced commits ops in one transaction conditional on every ownership of
// owns (the fenced transaction): all of them run, or none and a *FencedError naming the lost
// partitions. Any other error leaves the outcome unknown (no acknowledgement without a fenced commit).
func (m *Manager) Fenced(ctx context.Context, owns []Ownership, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	var guard []clientv3.Cmp
	var check []clientv3.Op
	for _, o := range owns {
		guard = append(guard, m.Guard(o)...)
		check = append(check, clientv3.OpGet(m.ownerKey(o.Partition)), clientv3.OpGet(m.epochKey(o.Partition)))
	}
	resp, err := m.c.Txn(ctx).If(guard...).Then(ops...).Else(check...).Commit()
	if err != nil {
		return nil, fmt.Errorf("owner: fenced transaction: %w", err)
	}
	if resp.Succeeded {
		return resp, nil
	}
	fe := &FencedError{}
	for i, o := range owns {
		owner := resp.Responses[2*i].GetResponseRange().Kvs
		epoch := resp.Responses[2*i+1].GetResponseRange().Kvs
		if len(owner) == 0 || owner[0].CreateRevision != o.created ||
			len(epoch) == 0 || string(epoch[0].Value) != strconv.FormatUint(o.Epoch, 10) {
			fe.Lost = append(fe.Lost, o.Partition)
		}
	}
	return nil, fe
}
