package fault

import (
	"net/netip"
	"slices"
	"time"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// fencedFaults misreport what is fenced or who the clients are, or apply
// work nobody waits for any more: over-fencing, a block listed twice, a
// client's subnet for its address, a served RPC not advertised, late work.
var fencedFaults = []*Fault{
	{Name: "aggregate-24", Help: "a Fence of ten or more IPv4 /32s inside one /24 fences that /24 instead (over-fencing by aggregation)",
		Proofs: fails("FENCE-009"),
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
	{Name: "clients-unadvertised", Help: "GetFenceClients is served but GET_CLIENTS_TO_FENCE is not advertised",
		Proofs: []Proof{{Flags: []string{"--strict"}, Fails: []string{"IDENT-005"}, Why: "IDENT-005 is a SHOULD: it fails with --strict (it warns otherwise)"}},
		make:   fixed(behaviour{identity: func(id *Identity) { id.GetClients = false }})},
	{Name: "late-fence", Help: "a Fence is applied in the background, " + LateAfter.String() + " on, even when its client gave up before: work lands behind the client's back",
		Proofs: fails("TIME-002"), make: fixed(behaviour{late: lateFor("Fence")})},
	{Name: "late-unfence", Help: "an Unfence is applied in the background, " + LateAfter.String() + " on, even when its client gave up before: the fence the client made since is lifted",
		Proofs: fails("TIME-002"), make: fixed(behaviour{late: lateFor("Unfence")})},
}

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
