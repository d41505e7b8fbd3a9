//go:build linux

package writeprobe

import (
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"
)

// TestEveryAddressWritesAtOnce: with nothing fenced, writes from many
// addresses of both families at once, each added and removed around its
// write, are all acknowledged (a SYN lost while addresses come and go was
// read as a refused write), and an address outside the routed ranges
// is refused.
func TestEveryAddressWritesAtOnce(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces and a veth pair")
	}
	top, err := New([]netip.Prefix{netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("198.51.100.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	defer top.Close()
	var addrs []netip.Addr
	for _, base := range []string{"2001:db8:fe00::", "198.51.100.0"} {
		a := netip.MustParseAddr(base)
		for range 24 {
			addrs = append(addrs, a)
			a = a.Next()
		}
	}
	for round := range 3 {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for _, a := range addrs {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if ok, err := Probe(top.ClientPath(), top.Targets, a, time.Second); !ok || err != nil {
					t.Errorf("round %d: a write from %s was not acknowledged (%v)", round, a, err)
				}
			}()
		}
		wg.Wait()
	}
	if ok, err := Probe(top.ClientPath(), top.Targets, netip.MustParseAddr("203.0.113.9"), 500*time.Millisecond); ok || err != nil {
		t.Errorf("a write from an unrouted address: acknowledged %v, %v; want refused", ok, err)
	}
}
