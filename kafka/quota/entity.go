package quota

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
)

// Entity types and quota keys, by Kafka's names.
const (
	TypeUser     = "user"
	TypeClientID = "client-id"
	TypeIP       = "ip"

	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
	ConnectionCreationRate = "connection_creation_rate"
)

// valueKind is a quota key's config type: integral ones refuse fractions.
type valueKind int

const (
	kindDouble valueKind = iota
	kindInt
	kindLong
)

// clientKeys are the keys of user and client-id entities, ipKeys those of
// ip entities (Kafka's QuotaConfig).
var (
	clientKeys = map[string]valueKind{ProducerByteRate: kindLong, ConsumerByteRate: kindLong,
		RequestPercentage: kindDouble, ControllerMutationRate: kindDouble}
	ipKeys = map[string]valueKind{ConnectionCreationRate: kindInt}
)

// Part is one entity type's name in an entity: absent, the default
// (Kafka's null name, `<default>` in kafka-configs) or a name.
type Part struct {
	Present bool
	Default bool
	Name    string
}

// Named and DefaultPart build parts.
func Named(name string) Part { return Part{Present: true, Name: name} }

// DefaultPart is the default entity of a type.
func DefaultPart() Part { return Part{Present: true, Default: true} }

// ptr is the part's wire name: nil for the default.
func (p Part) ptr() *string {
	if p.Default {
		return nil
	}
	n := p.Name
	return &n
}

// Entity is a quota entity: a user, a client id, both, or an ip. It is
// comparable, the store's key.
type Entity struct {
	User, ClientID, IP Part
}

// Component is one (type, name) of an entity on the wire; Name nil is the
// default.
type Component struct {
	Type string
	Name *string
}

// Components lists e's parts in the order Kafka answers them (its hash
// map's: client-id, user, ip).
func (e Entity) Components() []Component {
	var out []Component
	for _, c := range []struct {
		t string
		p Part
	}{{TypeClientID, e.ClientID}, {TypeUser, e.User}, {TypeIP, e.IP}} {
		if c.p.Present {
			out = append(out, Component{Type: c.t, Name: c.p.ptr()})
		}
	}
	return out
}

// String is e as Kafka names it in messages.
func (e Entity) String() string {
	var parts []string
	for _, c := range e.Components() {
		n := "null"
		if c.Name != nil {
			n = *c.Name
		}
		parts = append(parts, c.Type+"="+n)
	}
	return "ClientQuotaEntity(entries={" + strings.Join(parts, ", ") + "})"
}

func (e Entity) part(t string) *Part {
	switch t {
	case TypeUser:
		return &e.User
	case TypeClientID:
		return &e.ClientID
	case TypeIP:
		return &e.IP
	}
	return nil
}

// Error is a refused request or entry: Code is the Kafka error code.
type Error struct {
	Code int16
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Kafka error codes used here.
const (
	codeInvalidRequest     int16 = 42
	codeUnsupportedVersion int16 = 35
)

func invalid(format string, a ...any) *Error {
	return &Error{Code: codeInvalidRequest, Msg: fmt.Sprintf(format, a...)}
}

// ParseEntity builds an entity from the wire's components: a later
// component of a type replaces an earlier one, as Kafka's map does.
// Unknown types, no component, and empty names are refused.
func ParseEntity(cs []Component) (Entity, *Error) {
	var e Entity
	if len(cs) == 0 {
		return e, invalid("Invalid empty client quota entity")
	}
	for _, c := range cs {
		p := e.partPtr(c.Type)
		if p == nil {
			return e, invalid("Unhandled client quota entity type: %s", c.Type)
		}
		if c.Name == nil {
			*p = DefaultPart()
		} else {
			*p = Named(*c.Name)
		}
	}
	for _, c := range e.Components() {
		if c.Name != nil && *c.Name == "" {
			return e, invalid("Empty %s not supported", c.Type)
		}
	}
	return e, nil
}

func (e *Entity) partPtr(t string) *Part {
	switch t {
	case TypeUser:
		return &e.User
	case TypeClientID:
		return &e.ClientID
	case TypeIP:
		return &e.IP
	}
	return nil
}

// keysFor is the quota keys an entity may carry, or why it may carry none.
func keysFor(e Entity) (map[string]valueKind, *Error) {
	if e.IP.Present {
		if e.User.Present || e.ClientID.Present {
			return nil, invalid("Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId")
		}
		if !e.IP.Default && !validHost(e.IP.Name) {
			return nil, invalid("%s is not a valid IP or resolvable host.", e.IP.Name)
		}
		return ipKeys, nil
	}
	if e.User.Present || e.ClientID.Present {
		return clientKeys, nil
	}
	return nil, invalid("Invalid empty client quota entity")
}

// validHost is an IP literal or a name that resolves (Kafka's
// InetAddress.getByName).
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	addrs, err := net.LookupHost(h)
	return err == nil && len(addrs) > 0
}

// checkValue is Kafka's validation of one key's new value.
func checkValue(keys map[string]valueKind, key string, v float64) *Error {
	kind, ok := keys[key]
	if !ok {
		return invalid("Invalid configuration key %s", key)
	}
	if !(v > 0) {
		return invalid("Quota %s must be greater than 0", key)
	}
	switch kind {
	case kindInt:
		if v > math.MaxInt32 {
			return invalid("Proposed value for %s is too large for an INT.", key)
		}
	case kindLong:
		if v > math.MaxInt64 {
			return invalid("Proposed value for %s is too large for a LONG.", key)
		}
	default:
		return nil
	}
	if math.Abs(math.Mod(v, 1)) > 1e-6 {
		return invalid("%s cannot be a fractional value.", key)
	}
	return nil
}

// Op is one alteration of a key: set to Value, or removed.
type Op struct {
	Key    string
	Value  float64
	Remove bool
}

// Alteration is one entry of AlterClientQuotas.
type Alteration struct {
	Entity []Component
	Ops    []Op
}

// Result is one entity's answer to AlterClientQuotas: its components as
// the request named them, and the error (nil: altered).
type Result struct {
	Entity []Component
	Err    *Error
}

// Values is one entity's quotas, by key.
type Values map[string]float64

// Quotas is an immutable set of configured quotas.
type Quotas map[Entity]Values

// apply checks alts against q and returns q with every accepted
// alteration applied, and one result per distinct entity, in the order
// they first appear (Kafka answers one entry per entity: a second
// alteration of an entity is refused, the first one stands).
func (q Quotas) apply(alts []Alteration) (Quotas, []Result) {
	next := make(Quotas, len(q))
	for e, v := range q {
		next[e] = v
	}
	type slot struct {
		res    Result
		parsed bool
		e      Entity
	}
	var order []*slot
	byEntity := map[Entity]*slot{}
	for _, a := range alts {
		e, perr := ParseEntity(a.Entity)
		s := &slot{res: Result{Entity: collapse(a.Entity), Err: perr}, parsed: perr == nil, e: e}
		if perr == nil {
			if prev, dup := byEntity[e]; dup {
				prev.res.Err = invalid("Ignoring duplicate entity %s", e)
				continue
			}
			byEntity[e] = s
		}
		order = append(order, s)
		if perr != nil {
			continue
		}
		vals, err := alter(next[e], e, a.Ops)
		if err != nil {
			s.res.Err = err
			continue
		}
		if len(vals) == 0 {
			delete(next, e)
		} else {
			next[e] = vals
		}
	}
	res := make([]Result, len(order))
	for i, s := range order {
		res[i] = s.res
	}
	return next, res
}

// collapse is an entity's components as Kafka answers them: one per
// type, the last one named, in its order (client-id, user, ip, then any
// other type); nil for none.
func collapse(cs []Component) []Component {
	last := map[string]Component{}
	var other []string
	for _, c := range cs {
		if _, ok := last[c.Type]; !ok && c.Type != TypeUser && c.Type != TypeClientID && c.Type != TypeIP {
			other = append(other, c.Type)
		}
		last[c.Type] = c
	}
	var out []Component
	for _, t := range append([]string{TypeClientID, TypeUser, TypeIP}, other...) {
		if c, ok := last[t]; ok {
			out = append(out, c)
		}
	}
	return out
}

// alter is cur with ops applied, or the first error: a key named twice,
// an entity that may not carry quotas, a bad key or value. Removing a key
// the entity does not have is not an error.
func alter(cur Values, e Entity, ops []Op) (Values, *Error) {
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.Key] {
			return nil, invalid("Ignoring duplicate entity %s", e)
		}
		seen[op.Key] = true
	}
	keys, err := keysFor(e)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if !op.Remove {
			if err := checkValue(keys, op.Key, op.Value); err != nil {
				return nil, err
			}
		}
	}
	next := Values{}
	for k, v := range cur {
		next[k] = v
	}
	for _, op := range ops {
		if op.Remove {
			delete(next, op.Key)
		} else {
			next[op.Key] = op.Value
		}
	}
	return next, nil
}

// Match types of DescribeClientQuotas.
const (
	MatchExact   int8 = 0
	MatchDefault int8 = 1
	MatchAny     int8 = 2
)

// FilterComponent is one component of a DescribeClientQuotas filter.
type FilterComponent struct {
	Type  string
	Match int8
	Name  *string
}

// Filter is a parsed DescribeClientQuotas filter.
type Filter struct {
	exact  map[string]Part // type -> the name (or default) it must have
	any    map[string]bool // types the entity must have
	strict bool
}

// ParseFilter checks a DescribeClientQuotas filter as Kafka does.
func ParseFilter(cs []FilterComponent, strict bool) (Filter, *Error) {
	f := Filter{exact: map[string]Part{}, any: map[string]bool{}, strict: strict}
	for _, c := range cs {
		_, ex := f.exact[c.Type]
		switch {
		case c.Type == "":
			return f, invalid("Invalid empty entity type.")
		case ex || f.any[c.Type]:
			return f, invalid("Entity type %s cannot appear more than once in the filter.", c.Type)
		case c.Type != TypeUser && c.Type != TypeClientID && c.Type != TypeIP:
			return f, &Error{Code: codeUnsupportedVersion, Msg: "Unsupported entity type " + c.Type}
		}
		switch c.Match {
		case MatchExact:
			if c.Name == nil {
				return f, invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.")
			}
			f.exact[c.Type] = Named(*c.Name)
		case MatchDefault:
			if c.Name != nil {
				return f, invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
			}
			f.exact[c.Type] = DefaultPart()
		case MatchAny:
			if c.Name != nil {
				return f, invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
			}
			f.any[c.Type] = true
		default:
			return f, invalid("Unknown match type %d", c.Match)
		}
	}
	has := func(t string) bool { _, ok := f.exact[t]; return ok || f.any[t] }
	if has(TypeIP) && (has(TypeUser) || has(TypeClientID)) {
		return f, invalid("Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.")
	}
	return f, nil
}

// matches says whether f selects e: every exact component equal, every
// any component present, and under strict no other type.
func (f Filter) matches(e Entity) bool {
	n := len(e.Components())
	if f.strict && n != len(f.exact)+len(f.any) {
		return false
	}
	if !f.strict && len(f.exact) == 0 && len(f.any) == 0 {
		return true
	}
	for t, want := range f.exact {
		if *e.part(t) != want {
			return false
		}
	}
	for t := range f.any {
		if !e.part(t).Present {
			return false
		}
	}
	return true
}

// javaOrder is where key falls in a Java HashMap of 16 buckets: Kafka
// answers an entity's quotas in that order, and kafka-configs prints them
// in the order answered (ties, which the known keys do not have, by name).
func javaOrder(key string) uint32 {
	var h int32
	for _, c := range []byte(key) {
		h = 31*h + int32(c)
	}
	u := uint32(h)
	return (u ^ u>>16) & 15
}

// Entry is one described entity and its quotas, keys in Kafka's order
// (javaOrder).
type Entry struct {
	Entity Entity
	Keys   []string
	Values []float64
}

// Describe lists the entities f selects, in a stable order (by their
// components), each with its quotas in key order.
func (q Quotas) Describe(f Filter) []Entry {
	var out []Entry
	for e, vals := range q {
		if !f.matches(e) {
			continue
		}
		en := Entry{Entity: e}
		for k := range vals {
			en.Keys = append(en.Keys, k)
		}
		sort.Slice(en.Keys, func(i, j int) bool {
			a, b := en.Keys[i], en.Keys[j]
			if oa, ob := javaOrder(a), javaOrder(b); oa != ob {
				return oa < ob
			}
			return a < b
		})
		for _, k := range en.Keys {
			en.Values = append(en.Values, vals[k])
		}
		out = append(out, en)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Entity.String() < out[j].Entity.String() })
	return out
}
