// Package acls answers the ACL APIs (DescribeAcls, CreateAcls,
// DeleteAcls, keys 29–31) over the authorizer's ACL store: it turns the
// request's filters and creations into auth's Filter and ACL, validates
// them as Kafka's AclBindingFilter and controller do (Kafka's ACL model, the durable ACL store), calls
// the store and builds the response, grouping described ACLs by resource
// pattern.
//
// What it may not touch: who may call these APIs (kafka/ checks DESCRIBE
// or ALTER on the cluster and that an authorizer is configured, and
// hands the refusal in), the connection, logs or metrics (kafka/ logs
// what Outcome reports). The ACL rules themselves are auth's.
package acls
