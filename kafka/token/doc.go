// Package token serves delegation tokens (KIP-48): CreateDelegationToken,
// RenewDelegationToken, ExpireDelegationToken and DescribeDelegationToken
// (keys 38-41), and the SCRAM credentials a client authenticates a token
// with (auth.TokenSource).
//
// A token is an id (a random Kafka Uuid, base64), an owner, the principal
// that requested it, renewers, and three times: issued, expiry (renewable
// up to) max. Its secret is the HMAC-SHA512 of the id keyed with
// delegation.token.secret.key, as Kafka computes it; the HMAC is never
// stored: it is computed again from the secret (so a new secret voids
// every token, as in Kafka). A client authenticates with SCRAM, the
// extension tokenauth=true, the token id as user and the HMAC in base64 as
// password; its principal is the owner, and with connections.max.reauth.ms
// its session ends no later than the token (kafka/connauth).
//
// Kafka's rules, in Kafka's order (KafkaApis, then its controller's
// DelegationTokenControlManager):
//
//   - A connection authenticated by a token, or not authenticated at all
//     (a PLAINTEXT listener, TLS without a client certificate), may use
//     none of the four APIs: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.
//   - Create: the owner is the requester unless the request names
//     another, which needs CREATE_TOKENS on that USER resource (KIP-373;
//     else DELEGATION_TOKEN_AUTHORIZATION_FAILED); renewers must be User
//     principals (INVALID_PRINCIPAL_TYPE); without a secret the answer is
//     DELEGATION_TOKEN_AUTH_DISABLED. The max timestamp is now plus
//     max_lifetime_ms bounded by delegation.token.max.lifetime.ms, the
//     expiry now plus delegation.token.expiry.time.ms bounded by max.
//   - Renew and expire name the token by its HMAC (DELEGATION_TOKEN_NOT_FOUND);
//     only its owner or a renewer may (DELEGATION_TOKEN_OWNER_MISMATCH).
//     Renew of an expired token: DELEGATION_TOKEN_EXPIRED; the new expiry
//     is now plus the period asked (at most the expiry time), bounded by
//     max. Expire with a negative period removes the token at once;
//     otherwise it moves the expiry to now plus the period, bounded by
//     max (an expired token: DELEGATION_TOKEN_EXPIRED).
//   - Describe lists the tokens whose owner, requester or renewers are
//     among the owners asked (null: all, empty: none) and that the caller
//     may see: its own (owner, requester or renewer), or with DESCRIBE on
//     the DELEGATION_TOKEN or DESCRIBE_TOKENS on the owner's USER.
//
// A token past its expiry or max timestamp is gone: it no longer
// authenticates, is not described or found, and is removed from the
// store at its next change. kgateway adds what Kafka lacks, a bound:
// delegation.tokens.max.per.principal tokens per requester and
// delegation.tokens.max in all (beyond: POLICY_VIOLATION).
//
// Tokens are durable: one JSON document, a file of the data directory
// replaced atomically on a single node, one etcd key in a cluster (like
// the SCRAM credentials), so they survive restarts and every node of a
// cluster authenticates them.
package token
