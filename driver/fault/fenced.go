package fault

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// fencedFaults misreport what is fenced or who the clients are, or apply
// work nobody waits for any more: over-fencing, a block listed twice, a
// client's subnet for its address, a served RPC not advertised, late work.
var fencedFaults = []*Fault{
	{Name: "inet-aton", Help: "an IPv4 CIDR the strict parse refuses is read the way inet_aton reads an address (octal and hexadecimal octets, short forms) with a lenient prefix length (signs, leading zeros): 010.0.2.1/32 fences 8.0.2.1/32",
		Proofs: fails("CIDR-001"),
		make: fixed(behaviour{cidr: func(raw string, hb cidr.HostBits, next Parser) (cidr.Block, error) {
			b, err := next(raw, hb)
			if err == nil {
				return b, nil
			}
			if p, ok := inetAton(raw); ok {
				return cidr.Canonical(p.Masked()), nil
			}
			return b, err
		}})},
	{Name: "aggregate-24", Help: "a Fence of ten or more IPv4 /32s inside one /24 fences that /24 instead (over-fencing by aggregation)",
		Proofs: []Proof{{Fails: []string{"FENCE-009", "SCALE-001"}, Why: "every rule that fences ten /32s of a /24 in one request (the cleanup undoes the /24 too): SCALE-001 fences hundreds of /32s in requests of many blocks and reads each back, so the /32s the /24 replaced are acknowledged blocks not listed; an aggregation of ten /32s escapes SCALE-001 only if SCALE-001 stops reading back what it fenced"}},
		make: fixed(behaviour{request: func(r *Request) error {
			if r.RPC == "Fence" {
				r.Blocks = aggregate24(r.Blocks)
			}
			return nil
		}})},
	{Name: "list-dup-oldest", Help: "List names its oldest fence twice",
		Proofs: fails("LIST-003"),
		make: fixed(behaviour{list: func(l []Listed) []Listed {
			oldest := -1
			for i, e := range l {
				if oldest < 0 || e.Seq < l[oldest].Seq {
					oldest = i
				}
			}
			if oldest >= 0 {
				l[oldest].Count++
			}
			return l
		}})},
	{Name: "clients-subnet", Help: "GetFenceClients reports each client's address with its subnet length (192.0.2.200/24), as an interface shows it",
		Proofs: fails("CLIENT-005"),
		make: fixed(behaviour{clients: func(cs []Client) {
			for _, c := range cs {
				for j, a := range c.Addresses {
					if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is4() {
						c.Addresses[j] = netip.PrefixFrom(p.Addr(), 24).String()
					}
				}
			}
		}})},
	{Name: "clients-mapped", Help: "GetFenceClients reports IPv4 clients as IPv4-mapped IPv6 (::ffff:192.0.2.200/128), a spelling its own Fence refuses (as the profile lets it)",
		Proofs: fails("CLIENT-006"),
		make: fixed(behaviour{
			clients: func(cs []Client) {
				for _, c := range cs {
					for j, a := range c.Addresses {
						if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is4() && p.Bits() == 32 {
							c.Addresses[j] = fmt.Sprintf("::ffff:%s/128", p.Addr())
						}
					}
				}
			},
			cidr: at(func(raw string, b cidr.Block, err error) (cidr.Block, error) {
				if p, perr := netip.ParsePrefix(raw); perr == nil && p.Addr().Is4In6() {
					return cidr.Block{}, errors.New("IPv4-mapped IPv6 is not accepted: fence IPv4 clients with IPv4 blocks")
				}
				return b, err
			}),
		})},
	{Name: "clients-ipv6", Help: "GetFenceClients reports an IPv6 address beside each client's IPv4 one (with reject-ipv6 under --ipv6 optional: an address its own Fence refuses)",
		Proofs: []Proof{{Flags: []string{"--driver-fault", "reject-ipv6", "--ipv6", "optional"}, Fails: []string{"CLIENT-006"}, Why: "with a Fence that refuses IPv6, as profile ipv6=optional allows"}},
		make: fixed(behaviour{clients: func(cs []Client) {
			for i := range cs {
				cs[i].Addresses = append(cs[i].Addresses, fmt.Sprintf("2001:db8:ffff::%x/128", i+1))
			}
		}})},
	{Name: "clients-unadvertised", Help: "GetFenceClients is served but GET_CLIENTS_TO_FENCE is not advertised",
		Proofs: []Proof{{Flags: []string{"--strict"}, Fails: []string{"IDENT-005"}, Why: "IDENT-005 is a SHOULD: it fails with --strict (it warns otherwise)"}},
		make:   fixed(behaviour{identity: func(id *Identity) { id.GetClients = false }})},
	{Name: "late-fence", Help: "a Fence is applied in the background, " + LateAfter.String() + " on, even when its client gave up before: work lands behind the client's back",
		Proofs: fails("TIME-002"), make: fixed(behaviour{late: lateFor("Fence")})},
	ignoreCancel,
	{Name: "late-unfence", Help: "an Unfence is applied in the background, " + LateAfter.String() + " on, even when its client gave up before: the fence the client made since is lifted",
		Proofs: fails("TIME-002"), make: fixed(behaviour{late: lateFor("Unfence")})},
}

// ignoreCancel is the fault TIME-002 used to judge by chance: a driver
// that applies a request's blocks one at a time, each at once, and goes on
// when its client gives up.
var ignoreCancel = &Fault{Name: "ignore-cancel", Help: "a Fence or an Unfence is applied one block at a time, at once, and goes on when its client gives up (one storage command per block, none cancelled)",
	Proofs: fails("TIME-002"),
	make:   fixed(behaviour{oneByOne: func(string) bool { return true }})}

// LateAfter is how long late-fence and late-unfence take to apply a
// mutation.
const LateAfter = 40 * time.Millisecond

func lateFor(rpc string) func(string) time.Duration {
	return func(r string) time.Duration {
		if r == rpc {
			return LateAfter
		}
		return 0
	}
}

// aggregate24 replaces ten or more IPv4 /32s inside one /24 by that /24.
func aggregate24(bs []cidr.Block) []cidr.Block {
	wide := func(b cidr.Block) (netip.Prefix, bool) {
		p := b.Prefix
		return netip.PrefixFrom(p.Addr(), 24).Masked(), b.Enforced() && p.Addr().Is4() && p.Bits() == 32
	}
	per := map[netip.Prefix]int{}
	for _, b := range bs {
		if w, ok := wide(b); ok {
			per[w]++
		}
	}
	var out []cidr.Block
	for _, b := range bs {
		w, ok := wide(b)
		switch {
		case !ok || per[w] < 10:
			out = append(out, b)
		case !slices.Contains(out, cidr.Canonical(w)):
			out = append(out, cidr.Canonical(w))
		}
	}
	return out
}

// inetAton reads "address/length" the lenient way: the address as inet_aton
// does (one to four parts, each decimal, octal with a leading 0 or
// hexadecimal with 0x, the last filling the remaining bytes), the length
// with strconv.Atoi (a sign, leading zeros).
func inetAton(raw string) (netip.Prefix, bool) {
	addr, length, ok := strings.Cut(raw, "/")
	if !ok {
		return netip.Prefix{}, false
	}
	bits, err := strconv.Atoi(length)
	if err != nil || bits < 0 || bits > 32 {
		return netip.Prefix{}, false
	}
	parts := strings.Split(addr, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Prefix{}, false
	}
	var vals []uint64
	for _, p := range parts {
		v, err := strconv.ParseUint(p, 0, 32)
		if err != nil || p == "" || p[0] == '+' {
			return netip.Prefix{}, false
		}
		vals = append(vals, v)
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Prefix{}, false
		}
		n |= v << (24 - 8*i)
	}
	last, room := vals[len(vals)-1], 32-8*(len(vals)-1)
	if last >= 1<<room {
		return netip.Prefix{}, false
	}
	n |= last
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), bits), true
}
