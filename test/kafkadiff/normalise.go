package kafkadiff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Flatten walks a kmsg response (any struct) by reflection and returns its
// leaves as path → normalised value, so that fields kmsg gains are compared
// without a change here. Paths read like Topics[name=t].Partitions[p=0].ErrorCode:
//
//   - an array of structs with a natural key (Topic, Name, Partition,
//     ApiKey, ...) is indexed by that key, so its order does not matter; an
//     array of scalars is sorted (replica lists, member lists); other
//     arrays keep their order;
//   - what differs between two correct brokers becomes a placeholder
//     (placeholder below); ThrottleMillis and unknown tags are dropped;
//   - error codes carry their names; record bytes are decoded into batches
//     and records.
func Flatten(v any) map[string]string {
	out := map[string]string{}
	flatten(out, "", "", reflect.ValueOf(v))
	return out
}

// dropped are fields never compared.
var dropped = map[string]bool{"ThrottleMillis": true, "UnknownTags": true}

// keyFields name the fields that key array elements, first match wins.
// Only kmsg's own types are keyed: the decoded record batches and records
// keep their order, which is part of what a fetch answers.
var keyFields = []string{"ApiKey", "Topic", "TopicName", "Name", "ResourceName", "Partition", "Key", "Principal", "TransactionalID", "Group", "GroupID"}

func flatten(out map[string]string, path, field string, v reflect.Value) {
	if dropped[field] {
		return
	}
	if field == "RecordBatches" || field == "Records" && v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
		if v.IsNil() {
			out[path] = "null"
			return
		}
		flatten(out, path, "", reflect.ValueOf(decodeBatches(v.Bytes())))
		return
	}
	if s, ok := placeholder(field, v); ok {
		out[path] = s
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			out[path] = "null"
			return
		}
		flatten(out, path, field, v.Elem())
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			flatten(out, p, f.Name, v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			out[path] = bytesValue(v.Bytes())
			return
		}
		flattenList(out, path, field, v)
	default:
		out[path] = scalar(field, v)
	}
}

// flattenList indexes the elements of an array by their natural key, or
// sorts an array of scalars, or keeps the order.
func flattenList(out map[string]string, path, field string, v reflect.Value) {
	n := v.Len()
	if n == 0 {
		return
	}
	elem := v.Type().Elem()
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if elem.Kind() != reflect.Struct {
		vals := make([]string, n)
		for i := range vals {
			sub := map[string]string{}
			flatten(sub, "", field, v.Index(i))
			vals[i] = sub[""]
		}
		sort.Strings(vals)
		for i, s := range vals {
			out[fmt.Sprintf("%s[%d]", path, i)] = s
		}
		return
	}
	key := ""
	for _, k := range keyFields {
		if !strings.HasSuffix(elem.PkgPath(), "/kmsg") || elem.Name() == "Header" {
			break
		}
		if f, ok := elem.FieldByName(k); ok && len(f.Index) == 1 && isScalar(f.Type) {
			key = k
			break
		}
	}
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		e := v.Index(i)
		for e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		label := fmt.Sprint(i)
		if key != "" {
			base := key + "=" + keyLabel(key, e.FieldByName(key))
			label = base
			if c := seen[base]; c > 0 {
				label = fmt.Sprintf("%s#%d", base, c)
			}
			seen[base]++
		}
		flatten(out, fmt.Sprintf("%s[%s]", path, label), "", e)
	}
}

func keyLabel(key string, v reflect.Value) string {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "null"
		}
		v = v.Elem()
	}
	if key == "ApiKey" {
		return fmt.Sprintf("%d %s", v.Int(), kmsg.NameForKey(int16(v.Int())))
	}
	return fmt.Sprint(v.Interface())
}

func isScalar(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

// placeholder replaces values that two correct brokers give differently:
// who they are (cluster and node ids, hosts, ports), what they draw at
// random (topic ids, producer ids, member ids, fetch sessions) and their
// clocks. A placeholder keeps the value's kind where it matters: a null,
// -1 or zero id stays itself, so "no id" against "an id" still differs.
func placeholder(field string, v reflect.Value) (string, bool) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", false
		}
		v = v.Elem()
	}
	switch field {
	case "ClusterID":
		if v.Kind() == reflect.String {
			return "<cluster-id>", true
		}
	case "NodeID", "LeaderID", "ControllerID", "CoordinatorID", "Leader", "Replicas", "ISR",
		"OfflineReplicas", "BrokerID", "EligibleLeaderReplicas", "LastKnownELR", "Coordinator":
		if isInt(v) && v.Int() >= 0 {
			return "<node>", true
		}
	case "Host":
		if v.Kind() == reflect.String {
			return "<host>", true
		}
	case "Port":
		if isInt(v) {
			return "<port>", true
		}
	case "TopicID":
		if v.Kind() == reflect.Array && v.Len() == 16 {
			if v.IsZero() {
				return "<zero-uuid>", true
			}
			return "<uuid>", true
		}
	case "ClientInstanceID":
		if v.Kind() == reflect.Array && v.Len() == 16 {
			if v.IsZero() {
				return "<zero-uuid>", true
			}
			return "<client-instance-id>", true
		}
	case "SubscriptionID":
		// A hash of the subscription and the random instance id.
		if isInt(v) && v.Int() != 0 {
			return "<subscription-id>", true
		}
	case "ProducerID":
		if isInt(v) && v.Int() >= 0 {
			return "<pid>", true
		}
	case "MemberID", "ProtocolMemberID":
		if v.Kind() == reflect.String && v.String() != "" {
			return "<member>", true
		}
	case "SessionID":
		if isInt(v) && v.Int() != 0 {
			return "<session>", true
		}
	case "FinalizedFeaturesEpoch":
		if isInt(v) && v.Int() >= 0 {
			return "<epoch>", true
		}
	case "ErrorMessage":
		if v.Kind() == reflect.String {
			return "<message>", true
		}
	case "Documentation":
		// Each side describes a config in its own words: only whether
		// there is a description is compared.
		if v.Kind() == reflect.String && v.String() != "" {
			return "<documentation>", true
		}
	}
	if field == "LeaderID" && v.Kind() == reflect.String && v.String() != "" {
		return "<member>", true // JoinGroup's leader is a member id
	}
	if isInt(v) && v.Int() > 1_500_000_000_000 && (strings.Contains(field, "Time") || strings.HasSuffix(field, "Ms") ||
		strings.HasSuffix(field, "Millis")) {
		if d := v.Int() - BaseTimestamp; d > -RecordWindow && d < RecordWindow {
			return fmt.Sprintf("base%+d", d), true // a record timestamp the corpus set
		}
		return "<now>", true
	}
	return "", false
}

func isInt(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

func scalar(field string, v reflect.Value) string {
	if field == "ErrorCode" && isInt(v) {
		c := int16(v.Int())
		if c == 0 {
			return "0"
		}
		if e := kerr.ErrorForCode(c); e != nil {
			if ke, ok := e.(*kerr.Error); ok {
				return fmt.Sprintf("%d %s", c, ke.Message)
			}
		}
		return fmt.Sprint(c)
	}
	return fmt.Sprint(v.Interface())
}

func bytesValue(b []byte) string {
	if b == nil {
		return "null"
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("0x%x", b)
		}
	}
	return fmt.Sprintf("%q", b)
}

// Difference is one field that differs between the two brokers' answers
// to one step of one case. A side's value is "(absent)" where the path is
// missing from its answer.
type Difference struct {
	Case, Path string // Path starts with the step name: "step/Field.Sub"
	KG, AK     string // kgateway's and Apache Kafka's value
}

// Absent marks a path one side's answer lacks.
const Absent = "(absent)"

func (d Difference) String() string {
	return fmt.Sprintf("%s | %s | kgateway=%s kafka=%s", d.Case, d.Path, d.KG, d.AK)
}

// Compare diffs two flattened answers of step; the differences come in
// path order. A keyed element or field one side lacks altogether is one
// difference at its root (value "(N fields)"), not one per leaf.
func Compare(caseName, step string, kg, ak map[string]string) []Difference {
	kgRoots, akRoots := prefixes(kg), prefixes(ak)
	seen := map[string]bool{}
	var out []Difference
	add := func(p, a, b string) {
		if seen[p] {
			return
		}
		seen[p] = true
		full := step
		if p != "" {
			full += "/" + p
		}
		out = append(out, Difference{Case: caseName, Path: full, KG: a, AK: b})
	}
	for p, a := range kg {
		b, ok := ak[p]
		switch {
		case !ok:
			root := absentRoot(p, akRoots)
			add(root, count(kg, root), Absent)
		case a != b:
			add(p, a, b)
		}
	}
	for p := range ak {
		if _, ok := kg[p]; !ok {
			root := absentRoot(p, kgRoots)
			add(root, Absent, count(ak, root))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// prefixes are the element and field roots of a flattened answer's paths.
func prefixes(flat map[string]string) map[string]bool {
	out := map[string]bool{}
	for p := range flat {
		for _, r := range roots(p) {
			out[r] = true
		}
	}
	return out
}

// roots lists p's ancestors, shortest first, ending with p itself: a
// prefix ends before a '.' or after a ']'.
func roots(p string) []string {
	var out []string
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '[':
			if depth == 0 && i > 0 {
				out = append(out, p[:i])
			}
			depth++
		case ']':
			depth--
			if depth == 0 {
				out = append(out, p[:i+1])
			}
		case '.':
			if depth == 0 {
				out = append(out, p[:i])
			}
		}
	}
	return append(out, p)
}

// absentRoot is p's shortest ancestor the other side has no path under.
func absentRoot(p string, other map[string]bool) string {
	for _, r := range roots(p) {
		if !other[r] {
			return r
		}
	}
	return p
}

// count describes what flat holds at or under root.
func count(flat map[string]string, root string) string {
	if v, ok := flat[root]; ok {
		return v
	}
	n := 0
	for p := range flat {
		if strings.HasPrefix(p, root+".") || strings.HasPrefix(p, root+"[") {
			n++
		}
	}
	return fmt.Sprintf("(%d fields)", n)
}
