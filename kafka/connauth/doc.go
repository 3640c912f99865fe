// Package connauth is a connection's security state: its principal (the principal mapping,
// from a TLS client certificate or a SASL login) and its SASL exchange
// (the security rules): which requests it may send now (Admit), how large a frame
// (MaxFrame), whether the next frame is a bare token (RawToken), and the
// steps of an exchange (Handshake, Authenticate) over auth's mechanisms,
// a client certificate's principal (CertPrincipal) and a failed
// exchange's message (FailedMessage).
// The rules are in auth/doc.go ("Security").
//
// What it may not touch: the socket, the server, logs or metrics.
// kafka/'s connection runs the TLS handshake, reads frames, answers
// SaslHandshake and SaslAuthenticate from what State returns, and logs
// and counts the outcomes (sasl.go). Requests in effect one at a time orders the steps: the reader
// reads the next frame only once the previous request has taken effect,
// so it always sees the state the previous step left.
package connauth
