package topicadmin

import (
	"errors"
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kerr"
)

// partitions.max.per.principal: a principal's creations count against it,
// and partitions added to its topic count against it whoever adds them;
// partitions.max bounds everyone's together.
func TestBoundedCountsAgainstCreator(t *testing.T) {
	res := resolvertest.Open(t, resolver.Config{NumPartitions: 1})
	a := Bounded{Catalog: res, Topics: res, Max: 6, PerPrincipal: 3, Principal: "User:a"}
	b := a
	b.Principal = "User:b"
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, kerr.PolicyViolation) {
			t.Fatalf("%s: %v, want POLICY_VIOLATION", what, err)
		}
	}
	if _, err := a.CreateTopic("a1", 2, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	_, err := a.CreateTopic("a2", 2, 1, nil, false)
	refused("a's 2 more beside its 2", err)
	if err := b.CreatePartitions("a1", 3, false); err != nil {
		t.Fatalf("b adds a's third partition: %v", err)
	}
	refused("b adds a's fourth partition", b.CreatePartitions("a1", 4, false))
	if _, err := b.CreateTopic("b1", 3, 1, nil, false); err != nil {
		t.Fatalf("b's own 3: %v", err)
	}
	c := a
	c.Principal = "User:c"
	_, err = c.CreateTopic("c1", 1, 1, nil, false)
	refused("a seventh partition of all", err)
	if tp, ok := res.Topic("a1"); !ok || tp.Creator != "User:a" || tp.Partitions != 3 {
		t.Fatalf("a1: %+v", tp)
	}
}
