package apachekafka

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPomPin checks that test/jvm/pom.xml pins the Kafka release Version
// names.
func TestPomPin(t *testing.T) {
	pom, err := os.ReadFile("../jvm/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<kafka.version>([^<]+)</kafka.version>`).FindSubmatch(pom)
	if m == nil || string(m[1]) != Version {
		t.Fatalf("test/jvm/pom.xml pins kafka.version %q, Version is %q", m, Version)
	}
}

// TestStartProduceConsume starts the broker, produces a record to an
// auto-created topic, reads it back and stops the broker cleanly.
func TestStartProduceConsume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := Start(ctx, Options{Fsync: true, Heap: []string{"-Xmx512m"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		var got []string
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		if len(got) > 0 {
			if got[0] != "v" {
				t.Fatalf("read %q, want v", got)
			}
			return
		}
	}
}

// TestServerPropertiesPlainUsers: PlainUsers adds a SASL_PLAINTEXT
// listener (advertised too) with PLAIN and a JAAS line holding each user,
// and leaves the controller and inter-broker listeners PLAINTEXT; without
// it there is no SASL listener.
func TestServerPropertiesPlainUsers(t *testing.T) {
	opts := Options{PlainUsers: map[string]string{"bob": "b", "alice": "a"}}
	p := "\n" + serverProperties("127.0.0.1:1", "127.0.0.1:3", 2, "/d", opts)
	for _, want := range []string{
		"\nlisteners=PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2,SASL_PLAINTEXT://127.0.0.1:3\n",
		"\nadvertised.listeners=PLAINTEXT://127.0.0.1:1,SASL_PLAINTEXT://127.0.0.1:3\n",
		"\ninter.broker.listener.name=PLAINTEXT\n",
		"\nsasl.enabled.mechanisms=PLAIN\n",
		"\nlistener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"a\" user_bob=\"b\";\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("server.properties lacks %q:\n%s", want, p)
		}
	}
	if p := serverProperties("127.0.0.1:1", "", 2, "/d", Options{}); strings.Contains(p, "SASL_PLAINTEXT://") || strings.Contains(p, "jaas") {
		t.Errorf("a SASL listener without PlainUsers:\n%s", p)
	}
}
