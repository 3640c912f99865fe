// Package scram answers the SCRAM credential APIs
// (DescribeUserScramCredentials and AlterUserScramCredentials, keys 50
// and 51) over the credential store (the SCRAM credential store): which users have which
// mechanisms and iterations, never a salt or key; and upsertions and
// deletions checked per user and applied together, or not at all, in
// one store update, within scram.users.max.
//
// What it may not touch: who may call these APIs (kafka/authz, per-API authorization), the
// connection, logs or metrics (kafka/ logs what Describe and Alter
// return). Credentials and their derivation are auth's.
package scram
