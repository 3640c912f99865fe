// Package auth is kgateway's security toolkit, below the Kafka front end:
// SASL mechanisms (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 per RFC 5802
// and RFC 7677), the credential store, TLS configured with Kafka's ssl.*
// names, and principals. kafka/ runs the exchanges on its connections
// (SaslHandshake, SaslAuthenticate) and serves the listeners;
// cmd/kgateway's `users` command writes the store.
//
// # Security
//
// Rules, cited as A1… in code and tests:
//
//	A1 On a SASL_PLAINTEXT or SASL_SSL listener, until the connection has
//	   authenticated, only ApiVersions, SaslHandshake and (after a
//	   handshake) SaslAuthenticate are served; any other request closes
//	   the connection without an answer, as does a frame larger than
//	   sasl.server.max.receive.size (512 KiB, Kafka's default). A
//	   SaslHandshake for a mechanism not in sasl.enabled.mechanisms gets
//	   UNSUPPORTED_SASL_MECHANISM with the enabled list, then the
//	   connection closes; SaslHandshake or SaslAuthenticate on a listener
//	   without SASL, or out of order, gets ILLEGAL_SASL_STATE.
//	A2 Credentials are kept per user and SCRAM mechanism as salt,
//	   iterations, StoredKey and ServerKey (RFC 5802 section 3), never a
//	   password. PLAIN checks a password by deriving the user's StoredKey
//	   from it. The store is one file in the data directory, replaced
//	   atomically (temporary file, fsync, rename, fsync of the directory)
//	   under an exclusive lock, so `kgateway users` and the running server
//	   (AlterUserScramCredentials) may both change it; the server re-reads
//	   it at the next authentication after it changed.
//	A3 A failed authentication (unknown user, wrong password, malformed or
//	   out-of-order message, wrong nonce, unsupported extension) is
//	   answered SASL_AUTHENTICATION_FAILED after
//	   connection.failed.authentication.delay.ms, then the connection is
//	   closed. An unknown user and a wrong password get the same answer.
//	   The failure is logged with the user, mechanism, listener and
//	   reason, never a token or password, and counted in metrics.
//	A4 With connections.max.reauth.ms > 0 a SASL session has that
//	   lifetime, returned by SaslAuthenticate v1+ (KIP-368). A request
//	   other than a re-authentication (SaslHandshake, then
//	   SaslAuthenticate) arriving after the session expired closes the
//	   connection. A re-authentication must use the same mechanism and
//	   end with the same principal, else it fails (A3).
//	A5 A TLS handshake that does not finish within the handshake timeout
//	   closes the connection. Certificates are re-read when their files
//	   change (checked at each handshake) or on SIGHUP; connections
//	   already open keep their session. A reload that fails keeps the
//	   previous certificates.
//	A6 A connection's principal is User:NAME for a SASL user; on an SSL
//	   listener with a client certificate, User: and the certificate's
//	   subject mapped by ssl.principal.mapping.rules (DEFAULT: the whole
//	   RFC 2253 subject); otherwise User:ANONYMOUS.
//	A7 Metadata, FindCoordinator and DescribeCluster describe the broker
//	   at the address of the listener the connection came in on: that
//	   listener's advertised.listeners entry, else the address the client
//	   dialed.
package auth
