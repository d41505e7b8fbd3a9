package sanity

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/csi-addons/spec/lib/go/identity"
	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/sanity/relations"
)

func describeClients(s *State) {
	Context("GetFenceClients", func() {
		s.it("CLIENT-001", func(ctx context.Context) {
			s.needClients()
			cl, err := s.clients(ctx)
			expectOK(err, "GetFenceClients")
			if len(cl) == 0 {
				note("the driver reported no clients, so there was nothing to check")
			}
			for i, c := range cl {
				check(c.GetId() != "", "client %d has an empty id", i)
				check(len(c.GetAddresses()) > 0, "client %s has no addresses", show(c.GetId()))
				for _, a := range c.GetAddresses() {
					_, perr := netip.ParsePrefix(a.GetCidr())
					check(perr == nil, "client %s: address %s is not a CIDR block", show(c.GetId()), show(a.GetCidr()))
				}
			}
		})

		s.it("CLIENT-002", func(ctx context.Context) {
			s.needClients()
			var first map[string][]string
			for call := range 3 {
				cl, err := s.clients(ctx)
				expectOK(err, "GetFenceClients")
				got := map[string][]string{}
				for _, c := range cl {
					_, twice := got[c.GetId()]
					check(!twice, "call %d: client id %s appears twice", call+1, show(c.GetId()))
					got[c.GetId()] = strList(c.GetAddresses())
				}
				if first == nil {
					first = got
					continue
				}
				for id, addrs := range first {
					now, ok := got[id]
					check(ok, "call %d: client %s of call 1 is gone (ids: %s)", call+1, show(id), showFew(slices.Sorted(maps.Keys(got))))
					check(slices.Equal(now, addrs), "call %d: client %s reports %s, call 1 reported %s", call+1, show(id), showAll(now), showAll(addrs))
				}
				check(len(got) == len(first), "call %d returned %d clients, call 1 returned %d", call+1, len(got), len(first))
			}
		})

		s.it("CLIENT-003", func(ctx context.Context) {
			s.needClients()
			s.needState()
			b := s.v4(1, 32)
			expectOK(s.fence(ctx, b), "FenceClusterNetwork of "+b[0])
			before := s.readFences(ctx, "before GetFenceClients")
			_, err := s.clients(ctx)
			expectOK(err, "GetFenceClients")
			after := s.readFences(ctx, "after GetFenceClients")
			gone, added := setDiff(before.raw, after.raw, s.lateBlocks())
			check(len(gone)+len(added) == 0, "the fences changed across a GetFenceClients call: %d gone (%s), %d added (%s)", len(gone), showFew(gone), len(added), showFew(added))
		})

		s.it("CLIENT-004", func(ctx context.Context) {
			s.needClients()
			cl, err := s.clients(ctx)
			expectOK(err, "GetFenceClients")
			for _, c := range cl {
				note("client %s: %s", show(c.GetId()), showAll(strList(c.GetAddresses())))
			}
		})

		s.it("CLIENT-006", func(ctx context.Context) {
			s.checkClientSpellings(ctx)
		})

		s.it("CLIENT-005", func(ctx context.Context) {
			s.needClients()
			cl, err := s.clients(ctx)
			expectOK(err, "GetFenceClients")
			var wide []string
			checked := 0
			for _, c := range cl {
				for _, a := range strList(c.GetAddresses()) {
					p, perr := netip.ParsePrefix(a)
					if perr != nil {
						continue // not a CIDR block: CLIENT-001's
					}
					checked++
					if why := notAHost(p); why != "" {
						wide = append(wide, fmt.Sprintf("client %s reports %s, %s", show(c.GetId()), show(a), why))
					}
				}
			}
			if checked == 0 {
				note("the driver reported no address to check")
			}
			check(len(wide) == 0, "%d client addresses are not the address of one host, so fencing the client would fence others too: %s", len(wide), strings.Join(wide, "; "))
		})
	})
}

// checkClientSpellings is CLIENT-006: an orchestrator fences a client with
// the address GetFenceClients gave, as given; the driver's own Fence must
// accept that spelling. Each host address is checked by fencing a fresh
// documentation address written in the same form (never the client).
func (s *State) checkClientSpellings(ctx context.Context) {
	GinkgoHelper()
	s.needClients()
	cl, err := s.clients(ctx)
	expectOK(err, "GetFenceClients")
	var refused []string
	checked := 0
	for _, c := range cl {
		for _, a := range strList(c.GetAddresses()) {
			p, perr := netip.ParsePrefix(a)
			if perr != nil || notAHost(p) != "" {
				continue // CLIENT-001's or CLIENT-005's
			}
			doc := s.take(p.Addr().Is6() && !p.Addr().Is4In6(), map[bool]int{true: 128, false: 32}[p.Addr().Is6() && !p.Addr().Is4In6()])
			twin := sameForm(a, doc.Addr())
			checked++
			err := s.fence(ctx, []string{twin})
			settleCut(err)
			if err != nil {
				refused = append(refused, fmt.Sprintf("client %s reports %s; Fence of %s, a documentation address in the same form, answered %s: %s", show(c.GetId()), show(a), show(twin), codeSpec(err), errText(err)))
				continue
			}
			if s.unfence(ctx, []string{twin}) == nil {
				s.tracker.forget(twin)
			}
		}
	}
	check(len(refused) == 0, "%d client addresses are spelled in a form the driver's own Fence refuses, so an orchestrator cannot fence the client it was told about: %s", len(refused), strings.Join(refused, "; "))
	if checked == 0 {
		note("the driver reported no host address to check")
	} else {
		note("%d client addresses: the driver fences each one's form", checked)
	}
}

// sameForm writes doc the way a is written: IPv4 dotted, IPv4-mapped IPv6
// with a dotted or a hexadecimal tail, IPv6 compressed, uncompressed or
// expanded, in the case a uses, with a's prefix length. doc is an IPv4
// address for an IPv4 or IPv4-mapped a, an IPv6 address otherwise.
func sameForm(a string, doc netip.Addr) string {
	addr, length, _ := strings.Cut(a, "/")
	upper := strings.ToUpper(addr) == addr && strings.ContainsAny(addr, "ABCDEF")
	var out string
	switch {
	case doc.Is4() && !strings.Contains(addr, ":"):
		out = doc.String()
	case doc.Is4() && strings.Contains(addr, "."):
		out = addr[:strings.LastIndex(addr, ":")+1] + doc.String()
	case doc.Is4():
		b := doc.As4()
		head := addr[:strings.LastIndex(addr[:strings.LastIndex(addr, ":")], ":")+1]
		out = fmt.Sprintf("%s%x:%x", head, uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]))
	case strings.Contains(addr, "::"):
		out = doc.String()
	default:
		expanded := true
		for _, g := range strings.Split(addr, ":") {
			expanded = expanded && len(g) == 4
		}
		out = relations.Spell(netip.PrefixFrom(doc, 128), map[bool]relations.Spelling{true: relations.Expanded, false: relations.Uncompressed}[expanded])
		out = strings.TrimSuffix(out, "/128")
	}
	if upper {
		out = strings.ToUpper(out)
	}
	return out + "/" + length
}

// notAHost says why a client address is not one host's address, or "".
func notAHost(p netip.Prefix) string {
	a := p.Addr().Unmap()
	bits := p.Bits()
	if p.Addr().Is4In6() {
		bits -= 96
	}
	switch {
	case bits != a.BitLen() && p.Masked() != p:
		return fmt.Sprintf("an interface address with its subnet length: fencing it fences all of %s", p.Masked())
	case bits != a.BitLen():
		return fmt.Sprintf("a whole /%d network, not a host (/%d)", bits, a.BitLen())
	case a.IsUnspecified():
		return "the unspecified address, which no client sends from"
	case a.IsMulticast():
		return "a multicast address, which no client sends from"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address, which no client sends from"
	}
	return ""
}

func (s *State) needClients() {
	GinkgoHelper()
	s.needCaps()
	if !s.hasCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE) {
		notSupported("the driver does not advertise GET_CLIENTS_TO_FENCE")
	}
}

// lateBlocks are the blocks of requests the suite gave up on: late work on
// them may change the fences at any time, so comparisons leave them out.
func (s *State) lateBlocks() map[string]bool {
	out := map[string]bool{}
	s.mu.Lock()
	for _, l := range s.late {
		for _, c := range l.cidrs {
			out[blockKey(c)] = true
		}
	}
	s.mu.Unlock()
	for _, p := range s.probes {
		for _, b := range p.blocks {
			out[blockKey(b)] = true
		}
	}
	return out
}

// setDiff compares two readings of the fences as sets of blocks, leaving
// out the ignored ones: the entries of a not in b, and of b not in a, each
// sorted and once.
func setDiff(a, b []string, ignore map[string]bool) (onlyA, onlyB []string) {
	inA, inB := map[string]string{}, map[string]string{}
	for _, x := range a {
		inA[blockKey(x)] = x
	}
	for _, x := range b {
		inB[blockKey(x)] = x
	}
	for k, x := range inA {
		if _, ok := inB[k]; !ok && !ignore[k] {
			onlyA = append(onlyA, x)
		}
	}
	for k, x := range inB {
		if _, ok := inA[k]; !ok && !ignore[k] {
			onlyB = append(onlyB, x)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	return onlyA, onlyB
}
