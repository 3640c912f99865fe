package authz

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every API with a rule (and kafka/'s TestEveryAPIHasAnAuthzRule gives
// every API in the dispatch table one) states how its authorization handles
// each kind of resource its request and response name (topic, group,
// transactional id, member, typed config/ACL resource), and nothing
// else; an API naming none states what it needs instead
// (coverage.go).
func TestAuthzRulesStateEveryResource(t *testing.T) {
	for key := range authzRules {
		name := kmsg.NameForKey(key)
		st, ok := authzCoverage[key]
		if !ok {
			t.Errorf("%s (key %d): no entry in authzCoverage", name, key)
			continue
		}
		named := namedResources(key)
		for k := range numResourceKinds {
			switch said := st.of(k) != ""; {
			case named[k] && !said:
				t.Errorf("%s (key %d) names a %v but its statement does not say how it is authorized", name, key, k)
			case !named[k] && said:
				t.Errorf("%s (key %d) states a %v rule but names none", name, key, k)
			}
		}
		if len(named) == 0 && st.Other == "" {
			t.Errorf("%s (key %d) names no resource and states no rule", name, key)
		}
	}
	for key := range authzCoverage {
		if _, ok := authzRules[key]; !ok {
			t.Errorf("authzCoverage states key %d, which has no rule", key)
		}
	}
}
