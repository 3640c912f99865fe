package auth

// The ACL model (Kafka's ACL model): Kafka's resource types, pattern types, operations
// and permissions, with Kafka's wire codes so kafka/ converts by a cast.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ResourceType is a resource's kind (Kafka's ResourceType codes).
type ResourceType int8

// The resource types. Any only appears in filters.
const (
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6 // a token, by id (KIP-48)
	ResourceUser            ResourceType = 7 // a user principal, for tokens (KIP-373)
)

// PatternType says how an ACL's resource name matches (PatternType codes).
type PatternType int8

// The pattern types. Any and Match only appear in filters.
const (
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is what an ACL allows or denies (AclOperation codes).
type Operation int8

// The operations. Any only appears in filters; All matches every one.
const (
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13 // tokens owned by a user (KIP-373)
	OpDescribeTokens  Operation = 14
)

// Permission is ALLOW or DENY (AclPermissionType codes).
type Permission int8

// The permissions. Any only appears in filters.
const (
	PermissionAny   Permission = 1
	PermissionDeny  Permission = 2
	PermissionAllow Permission = 3
)

// ClusterName is the one cluster resource's name; Wildcard is the literal
// name, principal name or host that matches every one.
const (
	ClusterName       = "kafka-cluster"
	Wildcard          = "*"
	WildcardPrincipal = "User:*"
)

// supported lists each resource type's operations, as Kafka's
// AclEntry.supportedOperations; authorized_operations is drawn from it.
var supported = map[ResourceType][]Operation{
	ResourceTopic: {OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter,
		OpDescribeConfigs, OpAlterConfigs},
	ResourceGroup: {OpRead, OpDescribe, OpDelete, OpDescribeConfigs, OpAlterConfigs}, // configs: group configs (KIP-848, KIP-932)
	ResourceCluster: {OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs,
		OpIdempotentWrite, OpAlter, OpDescribe},
	ResourceTransactionalID: {OpDescribe, OpWrite},
	ResourceDelegationToken: {OpDescribe},
	ResourceUser:            {OpCreateTokens, OpDescribeTokens},
}

// SupportedOperations is the operations ACLs may name on rt.
func SupportedOperations(rt ResourceType) []Operation { return supported[rt] }

// implies lists, per operation, the operations whose ALLOW also allows it
// (Kafka's ACL model): DESCRIBE follows READ, WRITE, DELETE and ALTER; DESCRIBE_CONFIGS
// follows ALTER_CONFIGS. A DENY implies nothing.
var implies = map[Operation][]Operation{
	OpDescribe:        {OpRead, OpWrite, OpDelete, OpAlter},
	OpDescribeConfigs: {OpAlterConfigs},
}

// ACL is one access control entry bound to a resource pattern.
type ACL struct {
	ResourceType ResourceType `json:"resource_type"`
	ResourceName string       `json:"resource_name"`
	PatternType  PatternType  `json:"pattern_type"`
	Principal    string       `json:"principal"`
	Host         string       `json:"host"`
	Operation    Operation    `json:"operation"`
	Permission   Permission   `json:"permission"`
}

// MaxACLFieldBytes bounds an ACL's resource name, principal and host (the durable ACL store).
const MaxACLFieldBytes = 1024

// ErrInvalidACL is returned for an ACL or filter Kafka would refuse
// (INVALID_REQUEST).
var ErrInvalidACL = errors.New("auth: invalid ACL")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidACL, fmt.Sprintf(format, args...))
}

// Validate checks an ACL to be created, as Kafka's controller does.
func (a ACL) Validate() error {
	_, ok := supported[a.ResourceType]
	switch {
	case !ok:
		return invalid("resource type %d", a.ResourceType)
	case a.PatternType != PatternLiteral && a.PatternType != PatternPrefixed:
		return invalid("pattern type %d (LITERAL or PREFIXED)", a.PatternType)
	case a.Permission != PermissionAllow && a.Permission != PermissionDeny:
		return invalid("permission type %d (ALLOW or DENY)", a.Permission)
	case a.ResourceName == "":
		return invalid("empty resource name")
	case a.ResourceType == ResourceCluster && a.ResourceName != ClusterName:
		return invalid("the cluster resource is named %s", ClusterName)
	case len(a.ResourceName) > MaxACLFieldBytes || len(a.Principal) > MaxACLFieldBytes || len(a.Host) > MaxACLFieldBytes:
		return invalid("a name, principal or host longer than %d bytes", MaxACLFieldBytes)
	case a.Host == "":
		return invalid("empty host (use * for every host)")
	}
	if typ, name, ok := strings.Cut(a.Principal, ":"); !ok || typ == "" || name == "" {
		return invalid("principal %q is not TYPE:NAME", a.Principal)
	}
	if a.Operation == OpAll || knownOperation(a.Operation) {
		// Any operation on any resource type, as Kafka's controller
		// stores it (an operation the type does not support is
		// never checked, so the ACL has no effect).
		return nil
	}
	return invalid("operation %d", a.Operation)
}

// knownOperation says whether some resource type supports op.
func knownOperation(op Operation) bool {
	for _, ops := range supported {
		if slices.Contains(ops, op) {
			return true
		}
	}
	return false
}

// Filter selects ACLs (DescribeAcls, DeleteAcls): Any values and nil
// strings match everything.
type Filter struct {
	ResourceType ResourceType
	ResourceName *string
	PatternType  PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// Validate refuses a filter with an unknown (0) or out-of-range field.
func (f Filter) Validate() error {
	switch {
	case f.ResourceType < ResourceAny || f.ResourceType > ResourceUser:
		return invalid("filter resource type %d", f.ResourceType)
	case f.PatternType < PatternAny || f.PatternType > PatternPrefixed:
		return invalid("filter pattern type %d", f.PatternType)
	case f.Operation < OpAny || f.Operation > OpDescribeTokens:
		return invalid("filter operation %d", f.Operation)
	case f.Permission < PermissionAny || f.Permission > PermissionAllow:
		return invalid("filter permission type %d", f.Permission)
	}
	return nil
}

// Matches says whether the filter selects a, as Kafka's AclBindingFilter:
// MATCH selects every pattern that applies to the named resource (its
// LITERAL name, the LITERAL wildcard and every PREFIXED prefix of it).
func (f Filter) Matches(a ACL) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != a.ResourceType {
		return false
	}
	if !f.matchesPattern(a) {
		return false
	}
	if f.Principal != nil && *f.Principal != a.Principal {
		return false
	}
	if f.Host != nil && *f.Host != a.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != a.Operation {
		return false
	}
	return f.Permission == PermissionAny || f.Permission == a.Permission
}

func (f Filter) matchesPattern(a ACL) bool {
	switch f.PatternType {
	case PatternAny:
		return f.ResourceName == nil || *f.ResourceName == a.ResourceName
	case PatternMatch:
		return f.ResourceName == nil || patternCovers(a, *f.ResourceName)
	}
	return f.PatternType == a.PatternType && (f.ResourceName == nil || *f.ResourceName == a.ResourceName)
}

// patternCovers says whether a's resource pattern applies to the resource
// named name.
func patternCovers(a ACL, name string) bool {
	if a.PatternType == PatternPrefixed {
		return strings.HasPrefix(name, a.ResourceName)
	}
	return a.ResourceName == name || a.ResourceName == Wildcard
}
