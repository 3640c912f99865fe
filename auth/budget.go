package auth

// The failed-login budget of PLAIN (auth/doc.go "Security", failed PLAIN
// logins): checking a PLAIN password derives the user's StoredKey with
// PBKDF2 (the SCRAM credential store), about 2.5 ms of CPU at 4,096 iterations, and a wrong
// password costs as much as a right one. The failure delay (the failed-authentication delay) holds
// each connection back, not the CPU: fifty parallel connections guessing
// took a whole core. A SCRAM failure derives nothing on the server (the
// client does the PBKDF2), so only PLAIN draws on the budget.

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the budget, in failed derivations per minute; a minute's
// worth may be spent at once.
const (
	// DefaultFailuresPerAddress allows one source address a failed
	// PLAIN check a second on average: 0.25% of a core.
	DefaultFailuresPerAddress = 60
	// DefaultFailuresPerUser is five times one address's, so that one
	// address alone can never spend a user's budget (and lock it out).
	DefaultFailuresPerUser = 300
)

// Bounds on what the budget remembers, whatever the clients claim.
const (
	// maxBudgetEntries bounds each of the address and user tables; past
	// it, new keys share one overflow bucket. Entries exist only while
	// in debt, which a failed derivation each bought.
	maxBudgetEntries = 1 << 16
	// maxTrusted bounds the (address, user) pairs remembered as having
	// logged in.
	maxTrusted = 10000
	// overflowKey is the bucket of keys beyond maxBudgetEntries.
	overflowKey = "\x00overflow"
)

// DeriveBudget bounds the PBKDF2 derivations failed PLAIN logins may cost,
// with a token bucket per source address and one per claimed user name.
//
// Mechanism: before deriving, a check reserves one failure from both
// buckets; when either is empty the check fails at once without
// deriving, and the caller answers exactly as for a wrong password (same
// error, same delay: no oracle). A check that succeeds gives its
// reservation back, so correct logins never spend the budget. Reserving
// before deriving (not charging after) keeps concurrent checks from
// overshooting the budget.
//
// Lockout: one address's rate is below one user's, so a single address
// cannot empty a user's bucket. Many addresses can; then an address that
// has logged in as that user before (a remembered pair) still checks
// against its own address bucket only, so the user's established
// clients keep connecting while it is under attack; only new addresses
// wait for the user's bucket to refill.
//
// Memory: a bucket is kept only while it is below full (each entry was
// bought by one failed derivation), both tables are bounded by
// maxBudgetEntries and the remembered pairs by maxTrusted. Safe for
// concurrent use.
type DeriveBudget struct {
	addr, user rate
	now        func() time.Time

	mu struct {
		sync.Mutex
		addrs, users map[string]*bucket
		trusted      map[trustKey]time.Time
		sweepAt      int
	}
	derivations atomic.Int64
	refused     atomic.Int64
}

// rate is a bucket's size and refill per second.
type rate struct{ burst, perSec float64 }

func perMinute(n int) rate { return rate{burst: float64(n), perSec: float64(n) / 60} }

// bucket is what a key owes: full when debt is 0.
type bucket struct {
	debt float64
	at   time.Time
}

type trustKey struct{ addr, user string }

// NewDeriveBudget returns a budget of perAddress failed derivations a
// minute per source address and perUser per user (0: the default).
func NewDeriveBudget(perAddress, perUser int) *DeriveBudget {
	if perAddress <= 0 {
		perAddress = DefaultFailuresPerAddress
	}
	if perUser <= 0 {
		perUser = DefaultFailuresPerUser
	}
	b := &DeriveBudget{addr: perMinute(perAddress), user: perMinute(perUser), now: time.Now}
	b.mu.addrs = map[string]*bucket{}
	b.mu.users = map[string]*bucket{}
	b.mu.trusted = map[trustKey]time.Time{}
	b.mu.sweepAt = 1024
	return b
}

// Reservation is one PLAIN check's claim on the budget.
type Reservation struct {
	b          *DeriveBudget
	addr, user string
	chargeUser bool
}

// Reserve claims one failed derivation from addr's and user's buckets
// before a password is checked; false when either is spent: the check
// must then fail without deriving. A nil budget allows everything.
func (b *DeriveBudget) Reserve(addr, user string) (Reservation, bool) {
	if b == nil {
		return Reservation{}, true
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	_, trusted := b.mu.trusted[trustKey{addr, user}]
	ab := b.bucketLocked(b.mu.addrs, addr, b.addr, now)
	if ab.debt+1 > b.addr.burst {
		b.refused.Add(1)
		return Reservation{}, false
	}
	var ub *bucket
	if !trusted {
		ub = b.bucketLocked(b.mu.users, user, b.user, now)
		if ub.debt+1 > b.user.burst {
			b.refused.Add(1)
			return Reservation{}, false
		}
		ub.debt++
	}
	ab.debt++
	return Reservation{b: b, addr: addr, user: user, chargeUser: !trusted}, true
}

// Derived counts one derivation made under the reservation.
func (r Reservation) Derived() {
	if r.b != nil {
		r.b.derivations.Add(1)
	}
}

// Succeeded gives a successful check's reservation back and remembers the
// pair as trusted.
func (r Reservation) Succeeded() {
	b := r.b
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if bk := b.mu.addrs[r.addr]; bk != nil {
		bk.debt = max(0, bk.debt-1)
	}
	if bk := b.mu.users[r.user]; r.chargeUser && bk != nil {
		bk.debt = max(0, bk.debt-1)
	}
	k := trustKey{r.addr, r.user}
	if _, ok := b.mu.trusted[k]; !ok && len(b.mu.trusted) >= maxTrusted {
		b.forgetOldestTrustedLocked()
	}
	b.mu.trusted[k] = b.now()
}

// Derivations is how many PBKDF2 derivations PLAIN checks made.
func (b *DeriveBudget) Derivations() int64 { return b.derivations.Load() }

// Refused is how many PLAIN checks failed without deriving.
func (b *DeriveBudget) Refused() int64 { return b.refused.Load() }

// bucketLocked returns key's bucket in m, refilled to now; new keys get a
// full bucket, or the overflow bucket when m is at its bound.
func (b *DeriveBudget) bucketLocked(m map[string]*bucket, key string, r rate, now time.Time) *bucket {
	if len(m) >= b.mu.sweepAt {
		b.sweepLocked(now)
	}
	bk := m[key]
	if bk == nil {
		if len(m) >= maxBudgetEntries {
			key = overflowKey
			bk = m[key]
		}
		if bk == nil {
			bk = &bucket{at: now}
			m[key] = bk
		}
	}
	bk.refill(r, now)
	return bk
}

func (bk *bucket) refill(r rate, now time.Time) {
	if d := now.Sub(bk.at); d > 0 {
		bk.debt = max(0, bk.debt-d.Seconds()*r.perSec)
		bk.at = now
	}
}

// sweepLocked drops full buckets (they are what a missing entry means)
// and sets the next sweep at twice what is left, so sweeping costs
// amortized O(1) per reservation.
func (b *DeriveBudget) sweepLocked(now time.Time) {
	left := 0
	for _, t := range []struct {
		m map[string]*bucket
		r rate
	}{{b.mu.addrs, b.addr}, {b.mu.users, b.user}} {
		for k, bk := range t.m {
			if bk.refill(t.r, now); bk.debt == 0 {
				delete(t.m, k)
			}
		}
		left = max(left, len(t.m))
	}
	b.mu.sweepAt = max(1024, 2*left)
}

func (b *DeriveBudget) forgetOldestTrustedLocked() {
	var oldest trustKey
	var at time.Time
	for k, t := range b.mu.trusted {
		if at.IsZero() || t.Before(at) {
			oldest, at = k, t
		}
	}
	delete(b.mu.trusted, oldest)
}

// SourceKey is the budget key of a client's address: its IP, or for IPv6
// its /64 (one host commonly holds a whole /64).
func SourceKey(remote net.Addr) string {
	host := remote.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
