package driver

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"strings"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/fault"
)

// request is what every fence request carries.
type request interface {
	GetSecrets() map[string]string
	GetParameters() map[string]string
}

// fail builds an error status. Its message never holds a secret value
// (unless a fault at the message hook puts one there).
func (d *Driver) fail(r request, c codes.Code, format string, args ...any) error {
	return status.Error(c, d.faults.Message(c, fmt.Sprintf(format, args...), r.GetSecrets(), d.o.Secrets))
}

// checkRequest runs the checks shared by every fence RPC, in spec order:
// secrets, then required parameters.
func (d *Driver) checkRequest(rpc string, r request) error {
	if err := d.authenticate(rpc, r); err != nil {
		return err
	}
	p := d.faults.Params(rpc)
	if !p.Check {
		return nil
	}
	for _, k := range d.o.RequiredParameters {
		if err := d.checkParam(r, k, p); err != nil {
			return err
		}
	}
	return nil
}

// checkParam checks one required parameter: "key" must be present and
// non-empty; "key=value" must also carry exactly that value (when values
// are checked), as a clusterID names one cluster.
func (d *Driver) checkParam(r request, spec string, p fault.Params) error {
	key, want, hasValue := strings.Cut(spec, "=")
	got, _ := fault.Lookup(p.Find, r.GetParameters(), key, want)
	if got == "" {
		return d.fail(r, codes.InvalidArgument, "missing required parameter %q", key)
	}
	equal := p.Equal == nil && got == want || p.Equal != nil && p.Equal(got, want)
	if hasValue && !equal && p.Values {
		return d.fail(r, codes.InvalidArgument, "parameter %q names nothing this driver serves", key)
	}
	return nil
}

// authenticate checks that the request carries every configured secret with
// the configured value. Messages name the key, never a value.
func (d *Driver) authenticate(rpc string, r request) error {
	a := d.faults.Auth(rpc)
	if !a.Check {
		return nil
	}
	got := r.GetSecrets()
	for _, k := range sortedKeys(d.o.Secrets) {
		v, ok := fault.Lookup(a.Find, got, k, d.o.Secrets[k])
		if !ok {
			return d.fail(r, a.Code, "missing secret %q", k)
		}
		if !secretEqual(a, v, d.o.Secrets[k]) {
			return d.fail(r, a.Code, "secret %q does not match", k)
		}
	}
	return nil
}

// secretEqual compares a secret value sent with the valid one: equal, in
// constant time, unless a fault at the auth hook compares otherwise.
func secretEqual(a fault.Auth, got, want string) bool {
	if a.Equal != nil {
		return a.Equal(got, want)
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// request checks a Fence or Unfence and parses its CIDRs into blocks, once:
// the request's blocks in order, each once. On an invalid CIDR it returns an
// INVALID_ARGUMENT naming it and the caller applies nothing (unless a fault
// at the request hook says otherwise: then r.Invalid is answered after the
// valid blocks are applied).
func (d *Driver) request(rpc string, req request, cidrs []*fence.CIDR) (*fault.Request, error) {
	if err := d.checkRequest(rpc, req); err != nil {
		return nil, err
	}
	r := &fault.Request{RPC: rpc, CIDRs: make([]string, len(cidrs))}
	if len(cidrs) == 0 {
		r.Invalid = d.fail(req, codes.InvalidArgument, "cidrs is required: at least one CIDR block")
	}
	for i, c := range cidrs {
		v := c.GetCidr()
		r.CIDRs[i] = v
		b, err := d.faults.CIDR(v, d.hostBits, d.parse)
		if err == nil && rpc == "Fence" {
			err = d.enforceable(b)
		}
		if err != nil {
			if r.Invalid == nil {
				r.Invalid = d.fail(req, codes.InvalidArgument, "cidrs[%d] %q: %v", i, clip(v), err)
			}
			continue
		}
		r.Blocks = append(r.Blocks, b)
	}
	if err := d.faults.Request(r); err != nil {
		r.Done()
		return nil, err
	}
	if r.Invalid != nil && !(r.Partial && len(r.Blocks) > 0) {
		r.Done()
		return nil, r.Invalid
	}
	if !r.Repeats {
		r.Blocks = once(r.Blocks)
	}
	return r, nil
}

// enforceable refuses a fence the driver would acknowledge and list but
// never enforce: a block inside loopback or a --protect block, which the
// host's enforcement (nftables, and the memory backend that stands in for
// it) accepts before any drop rule. A wider block that only overlaps one is
// enforced for the rest, and accepted. The storage backends (refstore,
// Ceph) enforce at the storage, by client address, where neither means
// anything.
func (d *Driver) enforceable(b cidr.Block) error {
	if be := backendName(d.o); !b.Enforced() || (be != "nftables" && be != "memory") {
		return nil
	}
	for _, p := range d.protect {
		if p.Bits() <= b.Prefix.Bits() && p.Contains(b.Prefix.Addr()) {
			return fmt.Errorf("inside %s, which this driver never fences (loopback and --protect blocks keep the control path open), so the fence would never be enforced", p)
		}
	}
	return nil
}

// parseBlock is the faithful parse of one CIDR: strict, under the host-bits
// policy, within the prefix-length limits.
func (d *Driver) parseBlock(raw string, hb cidr.HostBits) (cidr.Block, error) {
	p, err := cidr.Parse(raw, hb)
	if err == nil {
		err = d.minBits.Check(p)
	}
	if err != nil {
		return cidr.Block{}, err
	}
	return cidr.Canonical(p), nil
}

// once keeps the first of each repeated block, in order.
func once(bs []cidr.Block) []cidr.Block {
	seen := make(map[cidr.Block]bool, len(bs))
	out := bs[:0]
	for _, b := range bs {
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	return out
}

// CheckKey is the check every stored record key passes on load: a prefix in
// the canonical form the driver stores (masked, IPv4-mapped unmapped).
func CheckKey(k string) error {
	if _, err := netip.ParsePrefix(k); err != nil {
		return fmt.Errorf("not a CIDR block: %v", err)
	}
	return checkBlock(cidr.Spelled(k))
}

// checkBlock is CheckKey for a loaded block.
func checkBlock(b cidr.Block) error {
	if !b.Enforced() {
		return errors.New("not a CIDR block")
	}
	q, err := cidr.Unmap(b.Prefix)
	if err != nil {
		return err
	}
	if b.Spelling != "" || q != b.Prefix {
		return fmt.Errorf("not in canonical form (want %s)", q)
	}
	return nil
}

// checkBlocks validates a loaded set, unless a fault that stores blocks as
// spelled is active (a driver restarted with the same faults reads back
// what it wrote).
func (d *Driver) checkBlocks(st fenceSet, load fault.Load) error {
	if load.Spellings {
		return nil
	}
	for b := range st {
		if err := checkBlock(b); err != nil {
			return fmt.Errorf("stored record %q: %w", clip(b.String()), err)
		}
	}
	return nil
}

// migrateMapped rewrites IPv4-mapped records stored by earlier versions
// (which enforced them as IPv6, failing open) as the IPv4 blocks they name,
// in one store transaction, before anything is enforced.
func (d *Driver) migrateMapped(st fenceSet) error {
	put, seen := fenceSet{}, []cidr.Block{}
	for b, e := range st {
		if !b.Enforced() || !b.Prefix.Addr().Is4In6() || b.Prefix.Bits() < 96 {
			continue
		}
		q, _ := cidr.Unmap(b.Prefix)
		if _, ok := st[cidr.Canonical(q)]; !ok {
			put[cidr.Canonical(q)] = e
		}
		seen = append(seen, b)
	}
	if len(seen) == 0 {
		return nil
	}
	if err := d.store.Update(put.records(), blockKeys(seen)); err != nil {
		return fmt.Errorf("rewrite IPv4-mapped records: %w", err)
	}
	for _, b := range seen {
		delete(st, b)
	}
	maps.Copy(st, put)
	d.log.Warn("rewrote IPv4-mapped fences as IPv4 blocks (they were not enforced for IPv4 clients)", "count", len(seen))
	return nil
}

// maxLoggedValue bounds any client-supplied string in logs and errors.
const maxLoggedValue = 64

// clip bounds a client- or file-supplied value before it is logged or
// quoted in an error.
func clip(s string) string {
	if len(s) > maxLoggedValue {
		return s[:maxLoggedValue] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}
