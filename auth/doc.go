// Package auth is kgateway's security toolkit, below the Kafka front end:
// SASL mechanisms (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 per RFC 5802
// and RFC 7677), the credential store, TLS configured with Kafka's ssl.*
// names, principals, and ACLs with their authorizer. kafka/ runs the
// exchanges on its connections (SaslHandshake, SaslAuthenticate), serves
// the listeners and enforces the ACLs; cmd/kgateway's `users` command
// writes the credential store.
//
// # Security
//
// Rules, cited by their names in code and tests:
//
//   - **Pre-authentication gate.** On a SASL_PLAINTEXT or SASL_SSL
//     listener, until the connection has authenticated, only
//     ApiVersions, SaslHandshake and (after a handshake)
//     SaslAuthenticate are served; any other request closes the
//     connection without an answer, as does a frame larger than
//     sasl.server.max.receive.size (512 KiB, Kafka's default). A
//     SaslHandshake for a mechanism not in sasl.enabled.mechanisms gets
//     UNSUPPORTED_SASL_MECHANISM with the enabled list, then the
//     connection closes; SaslHandshake or SaslAuthenticate on a
//     listener without SASL, or out of order, gets ILLEGAL_SASL_STATE.
//   - **SCRAM credential store.** Credentials are kept per user and
//     SCRAM mechanism as salt, iterations, StoredKey and ServerKey (RFC
//     5802 section 3), never a password. PLAIN checks a password by
//     deriving the user's StoredKey from it. The store is one file in
//     the data directory, replaced atomically (temporary file, fsync,
//     rename, fsync of the directory) under an exclusive lock, so
//     `kgateway users` and the running server
//     (AlterUserScramCredentials) may both change it; the server
//     re-reads it at the next authentication after it changed. (A
//     cluster keeps its credentials in etcd instead: credentials and
//     ACLs shared in etcd.)
//   - **Failed-authentication delay.** A failed authentication (unknown
//     user, wrong password, malformed or out-of-order message, wrong
//     nonce, unsupported extension) is answered
//     SASL_AUTHENTICATION_FAILED after
//     connection.failed.authentication.delay.ms, then the connection is
//     closed. An unknown user and a wrong password get the same answer.
//     The failure is logged with the user, mechanism, listener and
//     reason, never a token or password, and counted in metrics. The
//     delay counts from the failing step's start. A PLAIN check, which
//     derives the password (PBKDF2) right or wrong, first draws on the
//     failed-login budget of its source address and claimed user
//     (DeriveBudget, sasl.plain.failed.logins.per.*.per.minute): beyond
//     it, the check fails without deriving, answered exactly as a wrong
//     password; a correct password gives its draw back.
//   - **KIP-368 re-authentication.** With connections.max.reauth.ms > 0
//     a SASL session has that lifetime, returned by SaslAuthenticate
//     v1+ (KIP-368). A request other than a re-authentication
//     (SaslHandshake, then SaslAuthenticate) arriving after the session
//     expired closes the connection. A re-authentication must use the
//     same mechanism and end with the same principal, else it fails
//     (the failed-authentication delay).
//   - **TLS handshake timeouts and certificate reloads.** A TLS
//     handshake that does not finish within the handshake timeout
//     closes the connection. Certificates are re-read when their files
//     change (checked at each handshake) or on SIGHUP; connections
//     already open keep their session. A reload that fails keeps the
//     previous certificates.
//   - **Principal mapping.** A connection's principal is User:NAME for
//     a SASL user; on an SSL listener with a client certificate, User:
//     and the certificate's subject mapped by
//     ssl.principal.mapping.rules (DEFAULT: the whole RFC 2253
//     subject); otherwise User:ANONYMOUS.
//   - **Per-listener advertised address.** Metadata, FindCoordinator
//     and DescribeCluster describe the broker at the address of the
//     listener the connection came in on: that listener's
//     advertised.listeners entry, else the address the client dialed.
//
// # Authorization
//
//   - **Kafka's ACL model.** An ACL binds a resource pattern (resource
//     type TOPIC, GROUP, CLUSTER or TRANSACTIONAL_ID; a name; pattern
//     type LITERAL, where the name "*" matches every resource of the
//     type, or PREFIXED) to a principal (TYPE:NAME, User:* for all), a
//     host (an IP address, * for all), an operation and ALLOW or DENY,
//     with Kafka's codes. An ACL names an operation its resource type
//     supports, or ALL; the cluster is named kafka-cluster. Filters
//     (DescribeAcls, DeleteAcls) may use ANY for each field, and
//     pattern type MATCH, which selects every pattern applying to the
//     named resource.
//   - **Authorizer's decisions.** Authorization is on when
//     authorizer.class.name names Kafka's StandardAuthorizer or
//     AclAuthorizer (any other name is a configuration error). A
//     request's principal is the connection's (the principal mapping),
//     its host the client's IP address. A super.users principal is
//     allowed everything. Otherwise an ACL applies when its pattern
//     covers the resource and it names the principal (or User:*) and
//     the host (or *): a DENY for the operation or ALL refuses, and
//     wins over any ALLOW; else an ALLOW for the operation, ALL, or an
//     operation implying it grants: READ, WRITE, DELETE and ALTER imply
//     DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS. A resource no
//     ACL covers at all is allowed only with
//     allow.everyone.if.no.acl.found (default false).
//   - **Durable ACL store.** The ACLs are one file in the data
//     directory (acls.json), replaced atomically like the credential
//     store (the SCRAM credential store); CreateAcls and DeleteAcls
//     answer only once the change is durable, so a crash leaves the set
//     before or after a request, and a restart serves the same set. The
//     store holds at most 10000 ACLs (a creation beyond is
//     POLICY_VIOLATION) and an ACL's resource name, principal and host
//     at most 1024 bytes each (INVALID_REQUEST). (A cluster keeps its
//     ACLs in etcd instead: credentials and ACLs shared in etcd.)
//   - **Per-API authorization.** Every API has a rule
//     (kafka/authz), checked after the request is decoded and
//     before its handler runs, with Kafka's mapping of APIs to
//     operations. A refused resource gets its *_AUTHORIZATION_FAILED
//     error where the response has a place for it and the handler never
//     sees it; a refused group, transactional id or cluster answers the
//     whole request. Metadata leaves a topic the principal may not
//     DESCRIBE out of an all-topics answer, and answers a named one
//     TOPIC_AUTHORIZATION_FAILED; it auto-creates only with CREATE on
//     the cluster or the topic. authorized_operations (Metadata,
//     DescribeGroups, DescribeCluster) are filled when asked.
//
// # Cluster mode
//
//   - **Credentials and ACLs shared in etcd.** In cluster mode the
//     credentials and the ACLs are not in the data directory (a cache,
//     emptied at start, that no other node reads) but one document each
//     in etcd, "<prefix>auth/scram" and "<prefix>auth/acls", in the
//     files' format (Shared, cluster/authstore). Every change
//     (AlterUserScramCredentials, CreateAcls, DeleteAcls, `kgateway
//     users` given the cluster's settings) is a compare-and-swap on the
//     key's mod revision, its computation run again on the newer
//     document after a conflict, so concurrent changes through
//     different nodes all land; it answers once etcd accepted it, and
//     the node that made it serves it at once. Every node follows both
//     keys with a watch (a full reload when the watch ends) and
//     authenticates and authorizes against its latest copy, so a change
//     made through one node is enforced by the others as soon as their
//     watch brings it, and a node that starts loads both before it
//     serves. A document larger than 1 MiB (etcd refuses requests over
//     1.5 MiB) is refused: an ACL creation with POLICY_VIOLATION, a
//     credential change with an error that says so. A node that cannot
//     read the ACL document at start does not start.
package auth
