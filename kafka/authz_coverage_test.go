package kafka

import "testing"

// Every API in the dispatch table states how its authorization handles
// each kind of resource its request and response name (topic, group,
// transactional id, member, typed config/ACL resource), and nothing
// else; an API naming none states what it needs instead
// (authz_coverage.go).
func TestAuthzRulesStateEveryResource(t *testing.T) {
	for _, a := range apis {
		name := apiName(a.key)
		st, ok := authzCoverage[a.key]
		if !ok {
			t.Errorf("%s (key %d): no entry in authzCoverage", name, a.key)
			continue
		}
		named := namedResources(a.key)
		for k := range numResourceKinds {
			switch said := st.of(k) != ""; {
			case named[k] && !said:
				t.Errorf("%s (key %d) names a %v but its statement does not say how it is authorized", name, a.key, k)
			case !named[k] && said:
				t.Errorf("%s (key %d) states a %v rule but names none", name, a.key, k)
			}
		}
		if len(named) == 0 && st.Other == "" {
			t.Errorf("%s (key %d) names no resource and states no rule", name, a.key)
		}
	}
	for key := range authzCoverage {
		if _, ok := authzRules[key]; !ok {
			t.Errorf("authzCoverage states key %d, which has no rule", key)
		}
	}
}
