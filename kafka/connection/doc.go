// Package connection is one client connection's frames: the reader
// goroutine reads size-prefixed frames within the byte budget and the idle
// deadline, hands each to the server's Handler to parse, and starts its
// handler in request order (on a reused worker goroutine, or on the
// reader itself for a prompt request such as a Fetch, which hands the
// reading on before a long wait); the goroutine that answers a request
// writes the answers then ready, in request order, throttled and muted
// as quotas say (KIP-219): a prompt request answered at once is read,
// answered and written by one goroutine.
//
// It owns the socket's read and write loops, the per-connection request
// order (a wire.Turn per request), the in-flight window, the budget
// charges of frames and decoded requests, mutes and idleness, the reused
// goroutines handlers run on (Workers), and a
// server's set of open connections under the connection limit (Set,
// Accept). It knows
// nothing of what a request means: API keys, versions, authentication,
// authorization, quotas and the handlers are kafka/'s, behind Handler.
// It may import kafka/wire and kafka/sendfile, kmsg for the response it
// carries, and nothing else of the module.
//
// # Connection rules
//
// Invariants, cited by their names in code and tests:
//
//   - **Responses in request order.** Responses leave a connection in
//     request order.
//   - **Frame size limit.** A frame larger than
//     socket.request.max.bytes closes the connection before its body is
//     allocated; a malformed frame closes it too.
//   - **Go error closes the connection.** A handler's Go error closes
//     the connection. Everything a client should see is a Kafka error
//     code, per partition where the protocol has one; kafka/errors.go
//     maps internal errors to codes in one place.
//   - **Requests in effect one at a time.** Requests of one connection
//     take effect in request order, one at a time, as in Kafka: a
//     request's handler starts when the previous request has taken
//     effect. A Produce has taken effect once its batches are written,
//     before they are durable, so pipelined produce requests append in
//     order and share group commits; any other request when its handler
//     ends.
//   - **No response for acks=0.** Produce with acks=0 gets no response
//     at all.
//   - **Request memory budget.** Memory is bounded by
//     queued.max.request.bytes, one server-wide byte budget: a frame's
//     buffer is charged as its bytes arrive (a client holds what it has
//     sent, never what it declared), and the charge is returned when
//     the handler is done with the bytes (when the request has taken
//     effect). A frame is read only when the connection's previous
//     request has taken effect (behind a Produce: once it has started),
//     so requests pipelined behind a long wait stay unread in the
//     socket. While the budget is spent readers stop reading, so TCP
//     pushes back on clients; the process does not grow. When every
//     charged byte belongs to frames waiting for more, the one nearest
//     completion may exceed the budget, so that frames never deadlock
//     each other.
//   - **Idle connection timeout.** A connection with nothing in flight
//     that neither sends nor reads a byte for connections.max.idle.ms
//     is closed, and so is one whose frame body is not complete that
//     long after it started (a client that stopped, or trickles,
//     mid-frame).
//   - **Connection limit.** At most max.connections connections are
//     open; a connection beyond that is closed as soon as it is
//     accepted. Running out of file descriptors pauses accepting (with
//     backoff); it never stops serving.
//   - **Decoded-request bound.** A decoded request is bounded: every
//     byte of it other than record data is charged decodeFactor (64)
//     times to queued.max.request.bytes until its handler is done (the
//     request memory budget), and a request whose charge exceeds the
//     whole budget closes the connection (as the frame size limit).
//     Metadata answers a topic named twice once (kafka/topicview).
package connection
