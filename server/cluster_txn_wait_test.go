package server

import (
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"github.com/twmb/franz-go/pkg/kerr"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestClusterTxnV2WaitingAddsLeaveOthersAnswered: implicit adds across
// nodes waiting for their transactional id's completion (its marker
// paused), more of them than the relay's answer slots, leave another
// id's implicit add answered: a waiting add holds no slot.
func TestClusterTxnV2WaitingAddsLeaveOthersAnswered(t *testing.T) {
	f := newTV2Fixture(t, "waitslot")
	const id, other = "waitslot-tx", "waitslot-other"
	pid, e := f.init(t, id)
	if code := f.produce(t, id, pid, e, 0, 0, "a0"); code != 0 {
		t.Fatalf("produce a0: %v", kerr.ErrorForCode(code))
	}
	opid, oe := f.init(t, other)
	p := f.armAll("marker")
	end := f.endAsync(id, pid, e, true)
	f.entered(t, p, "the marker")
	e1 := await(t, end) // answered, its marker paused: the id's completion holds it
	const n = 24        // more than the relay's 16 answer slots
	busy := make([]<-chan int16, 0, n)
	for i := range n {
		cl := f.c.client(produceByName()) // its own connections
		part := int32(i % 3)
		ch := make(chan int16, 1)
		go func() { ch <- f.produceVia(t, cl, id, pid, e1, part, int32(i/3), "b") }()
		busy = append(busy, ch)
	}
	f.waitAddsAsked(t, n)
	if code := f.produce(t, other, opid, oe, 1, 0, "o1"); code != 0 {
		t.Fatalf("another id's produce with %d adds waiting: %v", n, kerr.ErrorForCode(code))
	}
	close(p.proceed)
	for _, ch := range busy {
		<-ch // answered once the completion is done (any answer: their sequences race)
	}
}

// waitAddsAsked waits until n leaders' implicit-add requests are in etcd.
func (f *tv2Fixture) waitAddsAsked(t *testing.T, n int64) {
	t.Helper()
	etcd := f.c.etcd.Client(t)
	for {
		resp, err := etcd.Get(f.ctx, node.DefaultPrefix+"txnadd/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count >= n {
			return
		}
		if f.ctx.Err() != nil {
			t.Fatalf("fewer than %d implicit adds asked: %v %v", n, resp, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
