package connection

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// testDeadline bounds every wait of these tests.
const testDeadline = 10 * time.Second

// echo is a Handler whose requests are a bare header: each is answered
// with its correlation id, by handle (per correlation id).
type echo struct {
	c      *Conn
	handle func(corrID int32, sl *Slot, r *Request)
	// prompt makes every request prompt (Request.Prompt).
	prompt bool
}

func (e *echo) Handshake(context.Context) error { return nil }
func (e *echo) FrameSizes() (int32, int32)      { return wire.MinRequest, 1 << 16 }
func (e *echo) Parse(body []byte, charge int64) (*Slot, *Request, func(), error) {
	h := wire.ParseRequestHeader(body)
	sl := NewSlot(h.Key, h.Version, h.CorrID)
	r := e.c.NewRequest(sl, charge, false)
	if e.prompt {
		r.Prompt()
	}
	return sl, r, func() {
		defer r.Release()
		e.handle(h.CorrID, sl, r)
		sl.Resp = kmsg.NewPtrApiVersionsResponse()
	}, nil
}
func (e *echo) Encode(dst []byte, sl *Slot) ([]byte, []sendfile.Piece, int, bool) {
	dst = binary.BigEndian.AppendUint32(dst, 4)
	dst = binary.BigEndian.AppendUint32(dst, uint32(sl.CorrID))
	return dst, nil, len(dst), true
}
func (e *echo) Written(*Slot, int) {}
func (e *echo) Free(*Slot)         {}

// serve starts a connection, counted in a Set, over one end of a pipe
// and returns the other end, the budget, the goroutine count and the set.
func serve(t *testing.T, handle func(int32, *Slot, *Request)) (net.Conn, *wire.Budget, *sync.WaitGroup, *Set) {
	return serveOn(t, nil, handle)
}

// serveOn is serve with the handlers run by w (nil: the process-wide
// pool).
func serveOn(t *testing.T, w *Workers, handle func(int32, *Slot, *Request)) (net.Conn, *wire.Budget, *sync.WaitGroup, *Set) {
	srv, cli := net.Pipe()
	t.Cleanup(func() { cli.Close(); srv.Close() })
	e := &echo{handle: handle}
	b, wg := wire.NewBudget(1<<20), new(sync.WaitGroup)
	set := NewSet(Limits{Max: 1, Log: zap.NewNop(),
		PerIP:    func(string, int) (int, bool) { return 0, false },
		Throttle: func(string) time.Duration { return 0 }})
	set.Add(srv, func(string) *Conn {
		e.c = New(context.Background(), srv, e, Options{Budget: b, Closing: make(chan struct{}),
			Idle: time.Minute, Window: 8, Goroutines: wg, Workers: w, Log: zap.NewNop()})
		return e.c
	})
	return cli, b, wg, set
}

// send writes one request frame: a header with no client id.
func send(t *testing.T, nc net.Conn, corrID int32) {
	if !sendOK(nc, corrID) {
		t.Fatal("request write failed")
	}
}

// sendOK writes one request frame, a header with no client id; false
// on error (for a goroutine other than the test's).
func sendOK(nc net.Conn, corrID int32) bool {
	b := binary.BigEndian.AppendUint32(nil, wire.MinRequest)
	b = binary.BigEndian.AppendUint16(b, 18)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(corrID))
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	nc.SetWriteDeadline(time.Now().Add(testDeadline))
	_, err := nc.Write(b)
	return err == nil
}

// recv reads one response frame's correlation id.
func recv(t *testing.T, nc net.Conn) int32 {
	var b [8]byte
	nc.SetReadDeadline(time.Now().Add(testDeadline))
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		t.Fatal(err)
	}
	return int32(binary.BigEndian.Uint32(b[4:]))
}

// Responses in request order: a request that has taken effect but not
// yet answered holds back the answer of the one after it, which its
// handler gave first.
func TestResponsesInRequestOrder(t *testing.T) {
	gate, second := make(chan struct{}), make(chan struct{})
	cli, _, _, _ := serve(t, func(corrID int32, sl *Slot, r *Request) {
		if corrID == 1 {
			r.Release() // taken effect: the next request starts
			<-gate
			return
		}
		if r.WaitTurn(); corrID == 2 {
			close(second)
		}
	})
	send(t, cli, 1)
	send(t, cli, 2)
	select {
	case <-second:
	case <-time.After(testDeadline):
		t.Fatal("the second request never ran after the first took effect")
	}
	close(gate)
	if a, b := recv(t, cli), recv(t, cli); a != 1 || b != 2 {
		t.Fatalf("responses %d, %d: want 1, 2", a, b)
	}
}

// The request memory budget: a request whose peer left returns its bytes
// once its handler ends, every goroutine of the connection ends, and the
// set counts it out.
func TestBudgetReturnedWhenPeerLeaves(t *testing.T) {
	started := make(chan struct{})
	var c *Conn
	cli, b, wg, set := serve(t, func(_ int32, _ *Slot, r *Request) {
		r.WaitTurn()
		close(started)
		<-c.Context().Done() // a long poll: ends when the connection dies
	})
	if set.Len() != 1 {
		t.Fatalf("%d connections in the set, want 1", set.Len())
	}
	c = set.Handlers()[0].(*echo).c
	send(t, cli, 1)
	select {
	case <-started:
	case <-time.After(testDeadline):
		t.Fatal("the handler never started")
	}
	if b.InUse() == 0 {
		t.Fatal("a running request holds no budget")
	}
	cli.Close()
	waitDone(t, wg, "connection goroutines still running after the peer left")
	if n := b.InUse(); n != 0 {
		t.Fatalf("%d budget bytes still held", n)
	}
	if n := set.Len(); n != 0 {
		t.Fatalf("%d connections still counted", n)
	}
}

// A prompt request runs on the reader; one that waits long hands the
// reading on first (Request.HandOff), so the peer's leaving is seen and
// ends its wait, and every goroutine of the connection ends.
func TestPromptRequestHandsOffReading(t *testing.T) {
	started := make(chan struct{})
	var c *Conn
	cli, b, wg, set := serve(t, func(_ int32, _ *Slot, r *Request) {
		r.WaitTurn()
		r.HandOff()
		close(started)
		<-c.Context().Done() // a long poll: ends when the connection dies
	})
	e := set.Handlers()[0].(*echo)
	e.prompt, c = true, e.c
	send(t, cli, 1)
	select {
	case <-started:
	case <-time.After(testDeadline):
		t.Fatal("the handler never started")
	}
	cli.Close()
	waitDone(t, wg, "a prompt request's long wait did not end when the peer left")
	if n := b.InUse(); n != 0 {
		t.Fatalf("%d budget bytes still held", n)
	}
}

// Responses in request order, with prompt requests: each is answered
// and written on the reader, and the responses of a pipelined run of
// them leave in request order.
func TestPromptResponsesInOrder(t *testing.T) {
	cli, _, _, set := serve(t, func(int32, *Slot, *Request) {})
	set.Handlers()[0].(*echo).prompt = true
	go func() { // a pipe holds nothing: read while sending
		for i := int32(1); i <= 64; i++ {
			if !sendOK(cli, i) {
				return
			}
		}
	}()
	for i := int32(1); i <= 64; i++ {
		if got := recv(t, cli); got != i {
			t.Fatalf("response %d: want %d", got, i)
		}
	}
}
