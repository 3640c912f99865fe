package connection

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/bufpool"
	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/kafka/wire"
	"go.uber.org/zap"
)

// ErrFrame marks a frame that cannot be a Kafka request (the frame size
// limit, the decoded-request bound): the connection closes.
var ErrFrame = errors.New("kafka: malformed frame")

// Handler is the server's side of one connection: what its frames mean.
// The reader calls Handshake, FrameSizes and Parse; the handler
// goroutines (the reader for a prompt request) run what Parse returns;
// the goroutine holding the connection's write turn calls Encode,
// Written and Free, one at a time.
type Handler interface {
	// Handshake runs on the reader goroutine before the first frame is
	// read (a TLS handshake); an error, which it logs, closes the
	// connection.
	Handshake(ctx context.Context) error
	// FrameSizes is the smallest and largest frame size the connection
	// may send now (the frame size limit, the pre-authentication gate).
	FrameSizes() (lo, hi int32)
	// Parse decodes a frame whose body holds charge bytes of the budget.
	// It returns the frame's slot and, unless the slot is already
	// complete, the request (made by Conn.NewRequest) and the function
	// that handles it. On error the connection closes; whatever the
	// returned request holds, or else the frame's charge, goes back to
	// the budget.
	Parse(body []byte, charge int64) (*Slot, *Request, func(), error)
	// Encode frames sl's response after dst: the frame, and when the
	// response has file-backed pieces, the pieces to write in its place
	// (kafka/sendfile); n is the bytes written either way. ok false
	// closes the connection without writing anything.
	Encode(dst []byte, sl *Slot) (frame []byte, pieces []sendfile.Piece, n int, ok bool)
	// Written is told of each response written: n bytes.
	Written(sl *Slot, n int)
	// Free frees what a written or dropped response still holds, once
	// its handler is done.
	Free(sl *Slot)
}

// Options are what a connection shares with its server.
type Options struct {
	// Budget is queued.max.request.bytes (the request memory budget).
	Budget *wire.Budget
	// Closing is closed when the server starts shutting down: the
	// reader stops and waits for the budget or a mute end.
	Closing <-chan struct{}
	// Idle is connections.max.idle.ms (the idle connection timeout).
	Idle time.Duration
	// Window is how many requests may be in flight (being handled or
	// waiting to be written): the reader stops reading while it is full.
	Window int
	// Goroutines counts the reader, the writer and every running
	// handler (not a parked worker: Workers).
	Goroutines *sync.WaitGroup
	// Sendfile is fetch.sendfile.enable.
	Sendfile bool
	// Workers runs the handlers; nil: the process-wide pool.
	Workers *Workers
	Log     *zap.Logger
}

// Conn is one client connection. The reader goroutine reads frames and
// runs a handler per request on a Workers goroutine, or itself for a
// prompt request whose turn has come (Request.Prompt); each handler
// waits for its turn (the previous request has taken effect: requests in
// effect one at a time), and whoever answers a request writes the
// answered responses at the head of the connection's response order, in
// request order (responses in request order; write.go).
type Conn struct {
	nc  net.Conn
	h   Handler
	opt Options
	log *zap.Logger

	// ctx is cancelled when the connection dies; handlers that wait
	// (long-poll fetch) stop waiting.
	ctx    context.Context
	cancel context.CancelFunc

	// out is the response order: the slots queued by the reader, written
	// in request order by whoever holds the write turn (write.go).
	out responses
	// window holds a token per slot in flight: the reader stops reading
	// while it is full (Options.Window).
	window chan struct{}
	// wake tells the writer goroutine to look at the response order
	// (capacity one: a wake-up is never lost and never waits).
	wake chan struct{}

	// br reads the socket. Reader goroutine only (the one reading: a
	// request's HandOff passes the reading on).
	br *bufio.Reader

	// last is the connection's latest request with a handler: the next
	// one starts when it has taken effect (requests in effect one at a
	// time). Reader goroutine only.
	last *Request

	// inFlight counts slots queued and not yet finished by the writer; a
	// connection with requests in flight is never idle (the idle
	// connection timeout).
	inFlight atomic.Int64
	// active is when a byte was last read or written (unix nanoseconds).
	active atomic.Int64
	// frameStart is when the body of the frame being read started to be
	// read (zero between frames); a frame must complete within
	// connections.max.idle.ms of it (the idle connection timeout).
	// Reader goroutine only.
	frameStart time.Time

	// muted is when a throttled connection may be read again (KIP-219):
	// set by the writer and the handlers, waited for by the reader.
	muted wire.Mute
	// quotaLimited is set once a quota applies to the connection's
	// client: from then on, as in Kafka, a frame is read only once the
	// request before it is answered, so that its throttle (and mute) is
	// known before the next request is taken (readAhead).
	quotaLimited atomic.Bool

	closeOnce sync.Once
	// set is the Set the connection is counted in (nil: none); the
	// writer's end counts it out.
	set *Set
}

// New makes a connection over nc, not yet started: its context is
// parent's child, cancelled when the connection dies.
func New(parent context.Context, nc net.Conn, h Handler, o Options) *Conn {
	ctx, cancel := context.WithCancel(parent)
	c := &Conn{nc: nc, h: h, opt: o, log: o.Log, ctx: ctx, cancel: cancel,
		window: make(chan struct{}, o.Window+1), wake: make(chan struct{}, 1)}
	c.touch()
	return c
}

// Start starts the reader and the writer, counted in Options.Goroutines.
func (c *Conn) Start() {
	c.opt.Goroutines.Add(2)
	go c.readLoop()
	go c.writeLoop()
}

// Context is done when the connection dies.
func (c *Conn) Context() context.Context { return c.ctx }

// Mute stops reading the connection for d (KIP-219).
func (c *Conn) Mute(d time.Duration) { c.muted.For(d) }

// LimitedByQuota marks the connection's client as under a quota: from
// now on a frame is read only once the request before it is answered.
func (c *Conn) LimitedByQuota() {
	if !c.quotaLimited.Load() {
		c.quotaLimited.Store(true)
	}
}

// Sendfile reports whether fetch responses send file-backed batches with
// sendfile: fetch.sendfile.enable, on a connection that can (plaintext
// TCP on Linux).
func (c *Conn) Sendfile() bool { return c.opt.Sendfile && sendfile.Supported(c.nc) }

// touch records activity for the idle check (the idle connection timeout).
func (c *Conn) touch() { c.active.Store(time.Now().UnixNano()) }

func (c *Conn) lastActive() time.Time { return time.Unix(0, c.active.Load()) }

func (c *Conn) isClosing() bool {
	select {
	case <-c.opt.Closing:
		return true
	default:
		return false
	}
}

// idleConn is a connection as its wire.IdleReader sees it (the idle
// connection timeout).
type idleConn struct{ c *Conn }

func (i idleConn) Read(p []byte) (int, error)        { return i.c.nc.Read(p) }
func (i idleConn) SetReadDeadline(t time.Time) error { return i.c.nc.SetReadDeadline(t) }
func (i idleConn) FrameStart() time.Time             { return i.c.frameStart }
func (i idleConn) Touch()                            { i.c.touch() }
func (i idleConn) LastActive() time.Time             { return i.c.lastActive() }
func (i idleConn) Busy() bool                        { return i.c.inFlight.Load() > 0 }
func (i idleConn) Closing() bool                     { return i.c.isClosing() }

// StopReading makes the reader stop taking requests (graceful shutdown);
// the writer still writes every queued response.
func (c *Conn) StopReading() { c.nc.SetReadDeadline(time.Now()) }

// Kill closes the connection at once.
func (c *Conn) Kill() {
	c.closeOnce.Do(func() {
		c.cancel()
		c.nc.Close()
	})
}

func (c *Conn) readLoop() {
	if err := c.h.Handshake(c.ctx); err != nil { // TLS handshake timeouts and certificate reloads
		c.Kill()
		c.endRead()
		return
	}
	c.br = bufio.NewReaderSize(&wire.IdleReader{C: idleConn{c}, Idle: c.opt.Idle}, 32<<10)
	c.read()
}

// read is the reader: it reads frames and starts their requests until
// the connection ends, or until a request it runs itself hands the
// reading on to another goroutine (Request.HandOff).
func (c *Conn) read() {
	for {
		sl, r, ok := c.next()
		if !ok || !c.queue(sl, r) {
			c.endRead()
			return
		}
		switch {
		case r == nil:
			c.wakeWriter() // answered by Parse: the writer goroutine writes it
		case c.runsOnReader(r):
			c.opt.Goroutines.Add(1)
			r.reader = c
			r.Run()
			if r.reader == nil {
				return // handed off: another goroutine reads now
			}
			r.reader = nil
		default:
			// Started after it is queued, never waiting for a worker.
			c.opt.Goroutines.Add(1)
			c.workers().Go(r.Run)
		}
	}
}

// endRead ends the reader (the connection's one reading goroutine).
func (c *Conn) endRead() {
	c.readDone()
	c.opt.Goroutines.Done()
}

// next reads the next frame once it may (readAhead, a mute) and
// dispatches it; false when the connection is done reading.
func (c *Conn) next() (*Slot, *Request, bool) {
	// Wait for the next frame to begin (or the peer to leave: a handler
	// waiting for this connection's death must learn of it), then for
	// its turn to be read.
	_, err := c.br.Peek(1)
	if err == nil && (!c.readAhead() || !c.muted.Wait(c.ctx.Done(), c.opt.Closing)) {
		return nil, nil, false
	}
	var body []byte
	var frame *bufpool.Shared
	var charge int64
	if err == nil {
		body, frame, charge, err = c.readFrame(c.br)
	}
	if err != nil {
		if !c.isClosing() {
			// Peer gone, idle or bad frame: nobody will read responses.
			c.logReadErr(err)
			c.Kill()
		}
		return nil, nil, false
	}
	sl, r, err := c.Dispatch(body, charge)
	if err != nil {
		c.log.Info("request-rejected", zap.Error(err))
		c.Kill()
		return nil, nil, false
	}
	c.inFlight.Add(1)
	if r != nil {
		r.frame = frame
	}
	return sl, r, true
}

// runsOnReader: r is prompt (Request.Prompt), its turn has come, and no
// quota throttle may hold its response (readAhead's quota rule): the
// reader runs it itself, and writes its response if nothing before it
// is left to write, with no goroutine handing it on.
func (c *Conn) runsOnReader(r *Request) bool {
	return r.prompt && r.turn.Started() && !c.quotaLimited.Load()
}

// workers is the pool the connection's handlers run on.
func (c *Conn) workers() *Workers {
	if c.opt.Workers != nil {
		return c.opt.Workers
	}
	return handlerWorkers
}

// readAhead waits until the reader may read the next frame, false if the
// connection died first (wire.ReadAfter). A frame is read only once the
// latest request has taken effect, so that nothing a client pipelines
// behind a long wait (a long-poll Fetch, a JoinGroup) holds
// queued.max.request.bytes meanwhile (the request memory budget). One
// exception keeps pipelined produce fast: behind a Produce that has
// started, the next frame is read (and waits its turn decoded), so it
// appends the moment the Produce before it has written its batches
// (requests in effect one at a time). A connection thus holds at most
// two frames.
func (c *Conn) readAhead() bool {
	if c.last == nil {
		return true
	}
	return wire.ReadAfter(&c.last.turn, c.ctx.Done(), c.quotaLimited.Load(), c.last.pipelined)
}

func (c *Conn) logReadErr(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	if errors.Is(err, wire.ErrIdle) {
		c.log.Debug("connection-idle-closed")
		return
	}
	c.log.Info("connection-read-failed", zap.Error(err))
}

// Dispatch parses a frame (Handler.Parse) and returns its slot and its
// request, nil when the slot is already complete; the caller counts the
// request in Options.Goroutines and runs it. charge is what the frame
// holds of the budget: on success the request owns it, on error it is
// returned. It is the read loop's step after ReadFrame.
func (c *Conn) Dispatch(body []byte, charge int64) (*Slot, *Request, error) {
	sl, r, run, err := c.h.Parse(body, charge)
	if err != nil || r == nil || run == nil {
		if r != nil {
			charge = r.charge
		}
		c.opt.Budget.Release(charge)
		if err != nil {
			return nil, nil, err
		}
		return sl, nil, nil
	}
	if c.last != nil {
		r.turn.Follow(&c.last.turn)
	}
	c.last = r
	r.run = func() {
		defer c.opt.Goroutines.Done()
		defer c.answered(sl)
		run()
	}
	return sl, r, nil
}
