// Package wire holds the byte-level mechanics of a Kafka connection that
// do not depend on what a request says: reading one frame's body into a
// buffer that grows only as bytes arrive (ReadBody, SocketQueued), the
// byte budget every frame and decoded request is charged to
// (queued.max.request.bytes: Budget, the request memory budget), the idle and slow-frame
// deadlines of a connection (IdleReader, the idle connection timeout), which accept errors a
// listener survives (RetryableAccept, the connection limit), a request header's fixed
// fields and client id (ParseRequestHeader, ParseHeaderRest), a
// response's frame (AppendResponse, AppendRaw), a throttled connection's
// mute (Mute, Delay; KIP-219), the request order (Turn, ReadAfter: a
// request starts once its predecessor has taken effect, requests in
// effect one at a time, and when the reader may read the next frame, the
// request memory budget) and the addresses of a client (AdvertisedFor,
// the per-listener advertised address; HostOf). The connection rules are
// in kafka/connection/doc.go.
//
// What it may not touch: request and response types (a response is
// framed through the Response interface, which kmsg's responses
// implement), the server or its configuration. kafka/connection reads
// frames within the sizes kafka/'s conn.go allows (the SASL state),
// which decodes and dispatches them; kafka/connection hands this package
// a reader, the budget's size, and its activity through IdleConn.
package wire
