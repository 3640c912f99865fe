package main

// kgateway users: the SCRAM credential store of a data directory (the SCRAM credential store),
// on a stopped or a running server (which sees a change at its next
// authentication). The password is read from a file or stdin, never from
// the command line, where other users of the machine could see it.
//
//	kgateway users add NAME [--mechanism M]... [--iterations N] [--password-file FILE|-] --data-dir DIR
//	kgateway users delete NAME [--mechanism M] --data-dir DIR
//	kgateway users list --data-dir DIR
//
// With cluster.etcd.endpoints set (the cluster's own settings, e.g. its
// --config), the store is the cluster's, in etcd (credentials and ACLs shared in etcd), not a data
// directory's: the command changes it as a node's AlterUserScramCredentials
// does, a compare-and-swap, and every node sees the change at once.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/cluster/authstore"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// usersFlags are the users command's own flags (the configuration flags,
// --data-dir among them, are parsed as for every command).
var usersFlags = []string{"--mechanism", "--password-file", "--iterations"}

// usersOpts are the users command's words and own flags.
type usersOpts struct {
	action, name string
	mechanisms   []string
	passwordFile string // "" or "-": stdin
	iterations   int
}

// splitUsersArgs takes the action, the name and the command's own flags
// out of args; the rest are configuration flags.
func splitUsersArgs(args []string) (rest []string, o usersOpts, err error) {
	o.iterations = auth.DefaultIterations
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		if !slices.Contains(usersFlags, name) {
			if !strings.HasPrefix(a, "-") && (i == 0 || !needsValue(args[i-1])) {
				words = append(words, a)
				continue
			}
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, o, fmt.Errorf("%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch name {
		case "--mechanism":
			o.mechanisms = append(o.mechanisms, splitList(val)...)
		case "--password-file":
			o.passwordFile = val
		case "--iterations":
			if o.iterations, err = strconv.Atoi(val); err != nil {
				return nil, o, fmt.Errorf("--iterations: %q is not an integer", val)
			}
		}
	}
	if len(words) > 0 {
		o.action = words[0]
	}
	if len(words) > 1 {
		o.name = words[1]
	}
	if len(words) > 2 {
		return nil, o, fmt.Errorf("unexpected arguments %v", words[2:])
	}
	return rest, o, nil
}

// needsValue reports whether a configuration flag takes the next
// argument as its value (every configuration flag but a boolean written
// without =).
func needsValue(a string) bool {
	if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
		return false
	}
	name := strings.TrimLeft(a, "-")
	if name == "config" {
		return true
	}
	for _, f := range fields {
		if f.flag == name {
			return f.kind.String() != "bool"
		}
	}
	return false
}

const usersUsage = "usage: kgateway users add NAME [--mechanism SCRAM-SHA-256|SCRAM-SHA-512]... [--iterations N] [--password-file FILE|-] --data-dir DIR\n" +
	"       kgateway users delete NAME [--mechanism M] --data-dir DIR\n" +
	"       kgateway users list --data-dir DIR\n" +
	"       (a cluster's users, in etcd: the cluster's settings, e.g. --config FILE, instead of --data-dir)"

func usersCmd(l loaded, stdout, _ io.Writer) error {
	o := l.users
	store, closeStore, err := openUsers(l.cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	switch {
	case o.action == "list" && o.name == "":
		return listUsers(store, stdout)
	case o.action == "add" && o.name != "":
		return addUser(store, o, l.stdin, stdout)
	case o.action == "delete" && o.name != "":
		if len(o.mechanisms) > 1 {
			return usageError{errors.New("delete takes at most one --mechanism")}
		}
		mech := ""
		if len(o.mechanisms) == 1 {
			mech = o.mechanisms[0]
		}
		if err := store.DeleteCredential(o.name, mech); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "deleted %s %s\n", o.name, mech)
		return nil
	}
	return usageError{errors.New(usersUsage)}
}

// openUsers opens the credential store: the data directory's, or with
// cluster.etcd.endpoints the cluster's in etcd (credentials and ACLs shared in etcd).
func openUsers(c Config) (*auth.Store, func(), error) {
	nc := c.clusterConfig(zap.NewNop())
	if nc == nil {
		return auth.OpenStore(c.DataDir), func() {}, nil
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: nc.Endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, fmt.Errorf("etcd: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	doc, err := authstore.Open(ctx, cli, authstore.ScramKey(nc.Prefix), authstore.Options{Timeout: 10 * time.Second})
	if err != nil {
		cli.Close()
		return nil, nil, fmt.Errorf("the cluster's credentials (%s): %w", c.ClusterEtcdEndpoints, err)
	}
	return auth.NewSharedStore(doc), func() { doc.Close(); cli.Close() }, nil
}

func addUser(store *auth.Store, o usersOpts, stdin io.Reader, stdout io.Writer) error {
	mechs := o.mechanisms
	if len(mechs) == 0 {
		mechs = []string{auth.ScramSHA256, auth.ScramSHA512}
	}
	for _, m := range mechs {
		if !auth.IsScram(m) {
			return usageError{fmt.Errorf("--mechanism %q: credentials are stored for SCRAM-SHA-256 and SCRAM-SHA-512 (PLAIN checks passwords against them)", m)}
		}
	}
	if err := auth.CheckIterations(o.iterations); err != nil {
		return usageError{fmt.Errorf("--iterations: %w", err)}
	}
	password, err := readPassword(o.passwordFile, stdin)
	if err != nil {
		return err
	}
	for _, m := range mechs {
		c, err := auth.NewCredential(m, password, o.iterations)
		if err != nil {
			return err
		}
		if err := store.SetCredential(o.name, m, c); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added %s %s (%d iterations)\n", o.name, m, o.iterations)
	}
	return nil
}

// readPassword reads the password from path, or stdin for "" or "-",
// without its final line break.
func readPassword(path string, stdin io.Reader) ([]byte, error) {
	var b []byte
	var err error
	if path == "" || path == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 1<<16))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("password: %w", err)
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) == 0 {
		return nil, usageError{errors.New("password: empty")}
	}
	return b, nil
}

func listUsers(store *auth.Store, stdout io.Writer) error {
	users, err := store.Users()
	if err != nil {
		return err
	}
	names, _ := store.UserNames()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, n := range names {
		var mechs []string
		for _, m := range []string{auth.ScramSHA256, auth.ScramSHA512} {
			if c, ok := users[n][m]; ok {
				mechs = append(mechs, fmt.Sprintf("%s (%d iterations)", m, c.Iterations))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\n", n, strings.Join(mechs, ", "))
	}
	return tw.Flush()
}
