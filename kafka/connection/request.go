package connection

import (
	"time"

	"github.com/kgateway/kgateway/bufpool"
	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Slot is one request's place in the response order. The handler sets
// its fields; the writer reads them once the slot is done.
type Slot struct {
	done    chan struct{} // closed when Resp/Err are set
	Key     int16
	Version int16
	CorrID  int32
	Resp    kmsg.Response // nil: send nothing (acks=0)
	Err     error         // non-nil: close the connection (a Go error closes the connection)
	// CloseAfter closes the connection once Resp is written (the
	// pre-authentication gate, the failed-authentication delay).
	CloseAfter bool
	// Raw: Resp is a SaslAuthenticate answer to a bare token, written as
	// a bare frame (SaslHandshake v0).
	Raw bool
	// Throttle is the client's quota throttle time: the connection is
	// muted that long once Resp is written, or, when the client does not
	// throttle itself (SelfThrottle false, before KIP-219), Resp is
	// written only after it.
	Throttle     time.Duration
	SelfThrottle bool
}

// NewSlot is the slot of a request with this header.
func NewSlot(key, version int16, corrID int32) *Slot {
	return &Slot{done: make(chan struct{}), Key: key, Version: version, CorrID: corrID}
}

// Answer completes a slot answered without a handler (Parse returns no
// request for it).
func (sl *Slot) Answer(resp kmsg.Response) {
	sl.Resp = resp
	close(sl.done)
}

// Request is a request's place in its connection's order (requests in
// effect one at a time) and what it holds of the budget (the request
// memory budget).
type Request struct {
	// turn: it starts once its predecessor has taken effect; its answer
	// is the slot's done.
	turn wire.Turn
	// charge is what the request holds of queued.max.request.bytes: its
	// frame, and for a decoded request the memory decoding and
	// answering it may take (the decoded-request bound). Returned by
	// Release.
	charge int64
	budget *wire.Budget
	// pipelined: the next frame may be read once this request has
	// started, not only once it has taken effect (a Produce, readAhead).
	pipelined bool
	run       func()
	// prompt: usually answered at once (Prompt).
	prompt bool
	// reader is the connection while the request runs on its reader
	// goroutine, nil once handed off (HandOff) or on a worker. The
	// handler's goroutine only.
	reader *Conn
	// frame is the pooled buffer the request's frame is a slice of, nil
	// when it is not pooled (Frame).
	frame *bufpool.Shared
}

// NewRequest is the request of slot sl, holding charge bytes of the
// budget (its frame's); pipelined as in readAhead.
func (c *Conn) NewRequest(sl *Slot, charge int64, pipelined bool) *Request {
	r := &Request{charge: charge, budget: c.opt.Budget, pipelined: pipelined}
	r.turn.Init(sl.done)
	return r
}

// Frame is the pooled buffer the request's frame is a slice of (bufpool
// "The last holder returns it"), held once for the request; nil when the
// frame is not pooled. Only a handler that knows when everything it
// handed the frame's bytes to is done with them releases it (Produce);
// for any other request it stays held, and the garbage collector frees
// the buffer like any other.
func (r *Request) Frame() *bufpool.Shared { return r.frame }

// Prompt marks a request that is usually answered at once, without
// waiting (a Fetch of data that is there): when its turn has come as it
// is read, the reader runs it itself, sparing the handoff to a worker,
// and, when nothing before it is left to write, writes its response
// too. Its handler calls HandOff before any long wait.
func (r *Request) Prompt() { r.prompt = true }

// HandOff is called by a handler about to wait long (a long-poll
// Fetch): if the request runs on its connection's reader, a new
// goroutine takes the reading over now, so the peer's leaving is seen
// while it waits (the connection's death ends the wait) and the
// connection's next frame is read as it would be.
func (r *Request) HandOff() {
	if c := r.reader; c != nil {
		r.reader = nil
		// On a worker: its stack, grown by the handlers it ran, stays
		// with the reader, which runs prompt requests on it.
		c.workers().Go(c.read)
	}
}

// Charge is what the request holds of the budget.
func (r *Request) Charge() int64 { return r.charge }

// Run runs the request's handler, then completes its slot; the caller
// has counted it in Options.Goroutines (the read loop does).
func (r *Request) Run() { r.run() }

// Release marks the request as having taken effect: the connection's next
// request may start (requests in effect one at a time), and the request's
// bytes go back to the budget (the request memory budget): the handler is
// done with its frame. The handler calls it in any case when it ends.
func (r *Request) Release() {
	r.turn.Release(func() { r.budget.Release(r.charge) })
}

// WaitTurn waits until the request's predecessor on the connection has
// taken effect (requests in effect one at a time) and returns how long
// it waited.
func (r *Request) WaitTurn() time.Duration { return r.turn.Wait() }
