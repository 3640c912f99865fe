package kafka

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/kafka/connauth"
	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/kafka/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// conn is what the server knows of one client connection: its listener,
// security state and client. Its frames are read, ordered and answered by
// a kafka/connection.Conn (loop); conn is that loop's Handler: it parses
// each frame into a request and runs its handler.
type conn struct {
	s   *Server
	nc  net.Conn // a *tls.Conn on an SSL or SASL_SSL listener
	log *zap.Logger
	// lis is the listener the connection came in on (the per-listener advertised address).
	lis *Listener
	// auth is the connection's TLS principal and SASL state (sasl.go).
	auth connauth.State
	// loop reads, orders and writes the connection's frames.
	loop *connection.Conn
	// ctx is loop's: cancelled when the connection dies; handlers that
	// wait (long-poll fetch) stop waiting.
	ctx context.Context

	// host and port are what this connection's client is told to dial.
	host string
	port int32

	// software is the client software name and version of the
	// connection's ApiVersions v3+ (KIP-511; nil: not sent), for the
	// client telemetry selectors (KIP-714).
	software atomic.Pointer[[2]string]
}

// reqCtx is what a handler knows about its request.
type reqCtx struct {
	ctx      context.Context // done when the connection dies
	conn     *conn
	version  int16
	clientID *string
	key      int16
	// req is its place in the connection's order and its budget charge
	// (kafka/connection).
	req   *connection.Request
	stats reqStats // observe.go
	// closeAfter is set by a handler whose answer ends the connection.
	closeAfter bool
}

// appended is release for a produce handler: it calls it as soon as its
// batches are written, before waiting for them to be durable, so that the
// connection's next request starts now and a next produce's writes join
// the same group commit (requests in effect one at a time).
func (rc *reqCtx) appended() { rc.release() }

// release marks the request as having taken effect (connection.Request).
func (rc *reqCtx) release() { rc.req.Release() }

// waitTurn waits until the request's predecessor on the connection has
// taken effect (requests in effect one at a time); the wait counts as
// waiting, not handling.
func (rc *reqCtx) waitTurn() { rc.stats.waited += rc.req.WaitTurn() }

func newConn(s *Server, nc net.Conn, l *Listener) *conn {
	c := &conn{s: s, nc: nc, lis: l, log: s.log.With(zap.Stringer("remote", nc.RemoteAddr()))}
	c.host, c.port = wire.AdvertisedFor(nc, l.Advertised)
	if l.Protocol.UsesTLS() {
		// The handshake runs on the reader goroutine (Handshake).
		c.nc = tls.Server(nc, l.TLS)
	}
	c.startLoop(context.Background())
	return c
}

// startLoop makes the connection's loop (not yet started), its context
// parent's child.
func (c *conn) startLoop(parent context.Context) {
	s := c.s
	c.loop = connection.New(parent, c.nc, c, connection.Options{
		Budget: s.budget, Closing: s.closing, Idle: s.cfg.ConnectionsMaxIdle,
		Window: s.cfg.MaxInFlightPerConn, Goroutines: &s.conns, Sendfile: s.cfg.FetchSendfile, Log: c.log,
	})
	c.ctx = c.loop.Context()
}

// Handshake runs a TLS listener's handshake (handshakeTLS).
func (c *conn) Handshake(ctx context.Context) error {
	err := c.handshakeTLS(ctx)
	if err != nil {
		c.log.Info("connection-tls-failed", zap.String("listener", c.lis.Name), zap.Error(err))
	}
	return err
}

// FrameSizes bounds the next frame (the frame size limit, the
// pre-authentication gate).
func (c *conn) FrameSizes() (lo, hi int32) {
	lo, hi = int32(wire.MinRequest), c.maxFrame()
	if c.rawToken() {
		lo = 0 // a bare SASL token (SaslHandshake v0)
	}
	return lo, hi
}

// Parse decodes a frame: its slot, and its request and handler (nil when
// the slot is already complete).
func (c *conn) Parse(body []byte, charge int64) (*connection.Slot, *connection.Request, func(), error) {
	if c.rawToken() {
		return c.parseRawToken(body, charge)
	}
	h := wire.ParseRequestHeader(body)
	key, version := h.Key, h.Version
	if err := c.admit(key); err != nil { // The pre-authentication gate, KIP-368 re-authentication
		return nil, nil, nil, err
	}
	sl := connection.NewSlot(key, version, h.CorrID)
	a, ok := c.s.lookupAPI(key) // No share groups without States: what this server advertises
	if !ok {
		return nil, nil, nil, fmt.Errorf("%w: api key %d not supported", connection.ErrFrame, key)
	}
	if version < a.min || version > a.max {
		if key == apiKeyApiVersions && version > a.max {
			// The client learns our versions from a v0 answer and retries.
			sl.Version = 0
			sl.Answer(apiVersionsUnsupported())
			return sl, nil, nil, nil
		}
		return nil, nil, nil, fmt.Errorf("%w: api key %d version %d outside [%d, %d]", connection.ErrFrame, key, version, a.min, a.max)
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	rc := c.newReqCtx(sl, key, version, body, charge)
	rest, clientID, err := wire.ParseHeaderRest(body[8:], req.IsFlexible())
	if err != nil {
		return nil, rc.req, nil, fmt.Errorf("%w: request header: %v", connection.ErrFrame, err)
	}
	rc.clientID = clientID
	if key != apiKeyProduce { // The decoded-request bound: charged before it is decoded
		if err := c.loop.ChargeDecode(rc.req, len(body)); err != nil {
			return nil, rc.req, nil, err
		}
	}
	if err := req.ReadFrom(rest); err != nil {
		return nil, rc.req, nil, fmt.Errorf("%w: api key %d v%d: %v", connection.ErrFrame, key, version, err)
	}
	if r, ok := req.(*kmsg.ProduceRequest); ok {
		if err := c.loop.ChargeProduce(rc.req, r, len(body)); err != nil {
			return nil, rc.req, nil, err
		}
	}
	return sl, rc.req, func() { c.handle(sl, a, rc, req) }, nil
}

// newReqCtx is the context of a request of slot sl whose frame body
// holds charge bytes of the budget.
func (c *conn) newReqCtx(sl *connection.Slot, key, version int16, body []byte, charge int64) *reqCtx {
	rc := &reqCtx{ctx: c.ctx, conn: c, version: version, key: key,
		req: c.loop.NewRequest(sl, charge, key == apiKeyProduce)}
	if key == 1 { // a Fetch is mostly answered at once; a long poll hands off (waitAny)
		rc.req.Prompt()
	}
	rc.stats.size, rc.stats.arrived = len(body), time.Now()
	return rc
}

// parseRawToken makes a bare SASL token (after SaslHandshake v0) a
// SaslAuthenticate request whose answer is written bare.
func (c *conn) parseRawToken(body []byte, charge int64) (*connection.Slot, *connection.Request, func(), error) {
	a, _ := lookupAPI(apiKeySaslAuthenticate)
	sl := connection.NewSlot(apiKeySaslAuthenticate, 0, 0)
	sl.Raw = true
	rc := c.newReqCtx(sl, apiKeySaslAuthenticate, 0, body, charge)
	req := rawAuthenticate(body)
	return sl, rc.req, func() { c.handle(sl, a, rc, req) }, nil
}

// handle runs one handler once its turn has come (requests in effect one
// at a time). A panic is turned into a connection-closing error rather
// than taking the process down.
func (c *conn) handle(sl *connection.Slot, a api, rc *reqCtx, req kmsg.Request) {
	defer c.s.observe(sl, rc, req) // after the handler and recover, before done
	// Requests in effect one at a time: never leave the next request waiting, whatever happens.
	defer rc.release()
	rc.waitTurn()
	c.s.handling.Add(1)
	defer c.s.handling.Add(-1)
	defer func() {
		if p := recover(); p != nil {
			sl.Resp, sl.Err = nil, fmt.Errorf("kafka: handler panic: %v", p)
			c.log.Error("handler-panic", zap.Int16("api-key", sl.Key),
				zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		}
	}()
	c.s.beforeQuotas(rc, req)
	sl.Resp, sl.Err = c.s.authorizedHandle(a, rc, req) // Per-API authorization
	sl.CloseAfter = rc.closeAfter
	if sl.Err == nil {
		sl.Throttle, sl.SelfThrottle = c.s.applyQuotas(rc, req, sl.Resp)
		if sl.Throttle > 0 && sl.SelfThrottle {
			// Muted now, before the write too: the client may answer the
			// response before the writer runs again (which mutes again
			// from the end of the write, KIP-219).
			c.loop.Mute(sl.Throttle)
		}
	}
}

// Encode frames a response (kafka/wire); a fetch's and a share fetch's
// record batches by reference (kafka/fetchwire), a bare SASL answer bare.
func (c *conn) Encode(dst []byte, sl *connection.Slot) ([]byte, []sendfile.Piece, int, bool) {
	if br, ok := sl.Resp.(*batchResponse); ok {
		enc, pieces, n := br.appendSegments(dst, sl)
		return enc, pieces, n, true
	}
	if sr, ok := sl.Resp.(*shareResponse); ok {
		enc := appendResponse(dst, sl)
		pieces, n := sr.wire.Segments(enc, true)
		return enc, pieces, n, true
	}
	if sl.Raw {
		r := sl.Resp.(*kmsg.SASLAuthenticateResponse)
		if r.ErrorCode != 0 {
			return dst, nil, 0, false // a bare exchange has no way to say why (the failed-authentication delay)
		}
		dst = wire.AppendRaw(dst, r.SASLAuthBytes)
		return dst, nil, len(dst), true
	}
	dst = appendResponse(dst, sl)
	return dst, nil, len(dst), true
}

// Written counts a response's bytes for the observer.
func (c *conn) Written(sl *connection.Slot, n int) { c.s.observeResponse(sl.Key, n) }

// Free frees what a written (or dropped) response still holds: a fetch's
// or share fetch's leased reads (kafka/fetchwire). Only once its handler is done.
func (c *conn) Free(sl *connection.Slot) {
	switch r := sl.Resp.(type) {
	case *batchResponse:
		r.wire.Release()
	case *shareResponse:
		r.wire.Release()
	}
}

// sendfile reports whether fetch responses send file-backed batches with
// sendfile (connection.Conn.Sendfile); false without a loop (tests).
func (c *conn) sendfile() bool { return c.loop != nil && c.loop.Sendfile() }

// appendResponse frames one response (kafka/wire); ApiVersions' response
// header is always v0.
func appendResponse(dst []byte, sl *connection.Slot) []byte {
	return wire.AppendResponse(dst, sl.CorrID, sl.Version, sl.Resp, sl.Key == apiKeyApiVersions)
}
