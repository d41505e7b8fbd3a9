//go:build linux

package nftables

import (
	"encoding/binary"
	"net/netip"
	"slices"

	nft "github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// Names of the protected-set objects (the fenced sets are Set4Name, Set6Name).
const (
	Protect4Name = "protect4"
	Protect6Name = "protect6"
	Hosts4Name   = "hosts4"
	Hosts6Name   = "hosts6"
)

// ownerPrefix starts the user data of the first rule of each chain: it names
// the instance that owns the table (see WithOwner).
const ownerPrefix = "fenceproof-owner="

func (b *Backend) tableRef() *nft.Table {
	return &nft.Table{Family: nft.TableFamilyINet, Name: b.table}
}

func (b *Backend) sets() (f4, f6 *nft.Set) {
	t := b.tableRef()
	return &nft.Set{Table: t, Name: Set4Name, KeyType: nft.TypeIPAddr, Interval: true},
		&nft.Set{Table: t, Name: Set6Name, KeyType: nft.TypeIP6Addr, Interval: true}
}

func (b *Backend) hostSets() (h4, h6 *nft.Set) {
	t := b.tableRef()
	return &nft.Set{Table: t, Name: Hosts4Name, KeyType: nft.TypeIPAddr},
		&nft.Set{Table: t, Name: Hosts6Name, KeyType: nft.TypeIP6Addr}
}

// hostElements encodes addresses as plain set elements.
func hostElements(as []netip.Addr) []nft.SetElement {
	out := make([]nft.SetElement, len(as))
	for i, a := range as {
		out[i] = nft.SetElement{Key: a.AsSlice()}
	}
	return out
}

// split divides ranges by family.
func split(ranges []cidr.Range) (v4, v6 []cidr.Range) {
	for _, r := range ranges {
		if r.From.Is4() {
			v4 = append(v4, r)
		} else {
			v6 = append(v6, r)
		}
	}
	return v4, v6
}

// build queues the whole table on the connection: it is added, deleted and
// added again, so the batch replaces whatever was there. Rule order per
// chain: conntrack (and the owner tag), the protected accepts (loopback
// interface, protected sets, TCP control ports on input), then the drops.
func (b *Backend) build(m *model) error {
	c := b.conn
	t := b.tableRef()
	c.AddTable(t)
	c.DelTable(t)
	c.AddTable(t)
	s4, s6 := b.sets()
	p4 := &nft.Set{Table: t, Name: Protect4Name, KeyType: nft.TypeIPAddr, Interval: true}
	p6 := &nft.Set{Table: t, Name: Protect6Name, KeyType: nft.TypeIP6Addr, Interval: true}
	v4, v6 := split(m.wide.Ranges())
	pv4, pv6 := split(cidr.Union(b.protect))
	h4, h6 := b.hostSets()
	for _, h := range []struct {
		set   *nft.Set
		hosts []netip.Addr
	}{{h4, m.hostsOf(false)}, {h6, m.hostsOf(true)}} {
		if err := c.AddSet(h.set, nil); err != nil {
			return err
		}
		for chunk := range slices.Chunk(hostElements(h.hosts), elemChunk) {
			if err := c.SetAddElements(h.set, chunk); err != nil {
				return err
			}
		}
	}
	for _, s := range []struct {
		set    *nft.Set
		ranges []cidr.Range
	}{{s4, v4}, {s6, v6}, {p4, pv4}, {p6, pv6}} {
		if err := c.AddSet(s.set, nil); err != nil {
			return err
		}
		for chunk := range slices.Chunk(elements(s.ranges), elemChunk) {
			if err := c.SetAddElements(s.set, chunk); err != nil {
				return err
			}
		}
	}
	for _, hook := range []struct {
		name  string
		hook  *nft.ChainHook
		input bool
	}{{"input", nft.ChainHookInput, true}, {"forward", nft.ChainHookForward, false}} {
		ch := c.AddChain(&nft.Chain{
			Name: hook.name, Table: t, Type: nft.ChainTypeFilter,
			Hooknum: hook.hook, Priority: nft.ChainPriorityRef(Priority),
		})
		c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: ctEstablished(), UserData: []byte(ownerPrefix + b.owner)})
		if hook.input {
			c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: acceptLoopback()})
		}
		c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: saddrIn(unix.NFPROTO_IPV4, 12, 4, p4, expr.VerdictAccept)})
		c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: saddrIn(unix.NFPROTO_IPV6, 8, 16, p6, expr.VerdictAccept)})
		if hook.input {
			for _, port := range b.controlPorts {
				c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: acceptTCPPort(port)})
			}
		}
		c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: saddrIn(unix.NFPROTO_IPV4, 12, 4, h4, expr.VerdictDrop)})
		c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: saddrIn(unix.NFPROTO_IPV6, 8, 16, h6, expr.VerdictDrop)})
		c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: saddrIn(unix.NFPROTO_IPV4, 12, 4, s4, expr.VerdictDrop)})
		c.AddRule(&nft.Rule{Table: t, Chain: ch, Exprs: saddrIn(unix.NFPROTO_IPV6, 8, 16, s6, expr.VerdictDrop)})
	}
	return nil
}

// elements encodes ranges as interval set elements: a start key and an
// interval-end key one past the last address (omitted at the top of the
// address space).
func elements(rs []cidr.Range) []nft.SetElement {
	out := make([]nft.SetElement, 0, 2*len(rs))
	for _, r := range rs {
		out = append(out, nft.SetElement{Key: r.From.AsSlice()})
		if end := r.To.Next(); end.IsValid() {
			out = append(out, nft.SetElement{Key: end.AsSlice(), IntervalEnd: true})
		}
	}
	return out
}

// saddrIn is "meta nfproto P <family> saddr @set counter <verdict>".
func saddrIn(proto byte, off, n uint32, s *nft.Set, v expr.VerdictKind) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: n},
		&expr.Lookup{SourceRegister: 1, SetName: s.Name, SetID: s.ID},
		&expr.Counter{},
		&expr.Verdict{Kind: v},
	}
}

// acceptLoopback is "meta iiftype loopback accept": traffic of this host to
// itself is never fenced, whatever its source address.
func acceptLoopback() []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFTYPE, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint16(unix.ARPHRD_LOOPBACK)},
		&expr.Verdict{Kind: expr.VerdictAccept},
	}
}

// acceptTCPPort is "meta l4proto tcp tcp dport PORT counter accept": the
// driver's own TCP endpoint stays reachable from every source.
func acceptTCPPort(port uint16) []expr.Any {
	be := make([]byte, 2)
	binary.BigEndian.PutUint16(be, port)
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: be},
		&expr.Counter{},
		&expr.Verdict{Kind: expr.VerdictAccept},
	}
}

// ctEstablished is "ct state established counter": it changes no verdict,
// but a ct expression makes the kernel track connections in this netns,
// which Peers relies on.
func ctEstablished() []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: make([]byte, 4)},
		&expr.Counter{},
	}
}
