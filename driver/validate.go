package driver

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net/netip"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/store"
)

// request is what every fence request carries.
type request interface {
	GetSecrets() map[string]string
	GetParameters() map[string]string
}

// fail builds an error status. Its message never holds a secret value unless
// the leak-secret fault asks for exactly that.
func (d *Driver) fail(r request, c codes.Code, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if d.faults.LeakSecret && (c == codes.Unauthenticated || c == codes.InvalidArgument || c == codes.PermissionDenied) {
		msg += fmt.Sprintf(" (request secrets: %v)", r.GetSecrets())
	}
	return status.Error(c, msg)
}

// checkRequest runs the checks shared by every fence RPC, in spec order:
// secrets, then required parameters.
func (d *Driver) checkRequest(r request) error {
	if err := d.authenticate(r); err != nil {
		return err
	}
	if d.faults.IgnoreParams {
		return nil
	}
	for _, k := range d.o.RequiredParameters {
		if err := d.checkParam(r, k); err != nil {
			return err
		}
	}
	return nil
}

// authenticate checks that the request carries every configured secret with
// the configured value. Messages name the key, never a value.
func (d *Driver) authenticate(r request) error {
	if d.faults.NoAuth || d.authSkipped(r) {
		return nil
	}
	code := codes.Unauthenticated
	if d.faults.WrongAuthCode {
		code = codes.PermissionDenied
	}
	got := r.GetSecrets()
	for _, k := range sortedKeys(d.o.Secrets) {
		v, ok := got[k]
		if !ok {
			return d.fail(r, code, "missing secret %q", k)
		}
		if subtle.ConstantTimeCompare([]byte(v), []byte(d.o.Secrets[k])) != 1 {
			return d.fail(r, code, "secret %q does not match", k)
		}
	}
	return nil
}

// parseCIDRs validates every element and returns the keys to store, in
// request order, deduplicated (unless no-dedupe). On the first bad element
// it returns an INVALID_ARGUMENT naming the element, and the caller applies
// nothing; under partial-apply it goes on and also returns the keys of every
// valid element, which the caller then applies.
func (d *Driver) parseCIDRs(r request, cidrs []*fence.CIDR) ([]string, error) {
	if len(cidrs) == 0 {
		return nil, d.fail(r, codes.InvalidArgument, "cidrs is required: at least one CIDR block")
	}
	hb := d.hostBits
	if d.faults.RejectHostBits {
		hb = cidr.Reject
	}
	seen := make(map[string]bool, len(cidrs))
	keys := make([]string, 0, len(cidrs))
	var first error
	for i, c := range cidrs {
		v := c.GetCidr()
		p, err := cidr.Parse(v, hb)
		if err != nil && d.faults.LenientCIDRs && cidr.IsBareOrPadded(v) {
			p, err = cidr.Parse(cidr.Loosen(v), hb)
		}
		if err == nil {
			p = d.keepMapped(v, p)
			err = d.minBits.Check(p)
		}
		if err == nil && d.faults.RejectIPv6 && p.Addr().Is6() {
			err = errors.New("IPv6 is not supported")
		}
		if err == nil {
			err = d.extraCIDRCheck(p)
		}
		key := p.String()
		switch {
		case err == nil && d.faults.NoNormalise:
			key = v
		case err == nil:
		case v != "" && d.faults.AcceptBareIP && cidr.IsBareOrPadded(v):
			key = v
		case v != "" && d.faults.AcceptMalformed && !cidr.IsBareOrPadded(v) && !errors.Is(err, cidr.ErrHostBits) && !errors.Is(err, cidr.ErrTooWide):
			key = v
		default:
			if first == nil {
				first = d.fail(r, codes.InvalidArgument, "cidrs[%d] %q: %v", i, clip(v), err)
			}
			if !d.faults.PartialApply {
				return nil, first
			}
			continue
		}
		if !d.faults.NoDedupe {
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		keys = append(keys, key)
	}
	return keys, first
}

// CheckKey is the check every stored key passes on load: a prefix in the
// canonical form the driver stores (masked, IPv4-mapped unmapped).
func CheckKey(k string) error {
	p, err := netip.ParsePrefix(k)
	if err != nil {
		return fmt.Errorf("not a CIDR block: %v", err)
	}
	q, err := cidr.Unmap(p.Masked())
	if err != nil {
		return err
	}
	if q.String() != k {
		return fmt.Errorf("not in canonical form (want %s)", q)
	}
	return nil
}

// checkKeys validates a loaded state. Faults that store keys verbatim
// (accept-malformed, accept-bare-ip, no-normalise) relax it, so a driver
// restarted with the same faults reads back what it wrote.
func (d *Driver) checkKeys(st store.State) error {
	if d.faults.AcceptMalformed || d.faults.AcceptBareIP || d.faults.NoNormalise || d.faults.LenientCIDRs || d.faults.KeepMapped {
		return nil
	}
	for k := range st {
		if err := CheckKey(k); err != nil {
			return fmt.Errorf("stored record %q: %w", clip(k), err)
		}
	}
	return nil
}

// migrateMapped rewrites IPv4-mapped keys stored by earlier versions (which
// enforced them as IPv6, failing open) as the IPv4 blocks they name, in one
// store transaction, before anything is enforced.
func (d *Driver) migrateMapped(st store.State) error {
	put, seen := store.State{}, []string{}
	for k, e := range st {
		p, err := netip.ParsePrefix(k)
		if err != nil || !p.Addr().Is4In6() || p.Bits() < 96 {
			continue
		}
		q, _ := cidr.Unmap(p.Masked())
		if _, ok := st[q.String()]; !ok {
			put[q.String()] = e
		}
		seen = append(seen, k)
	}
	if len(seen) == 0 {
		return nil
	}
	if err := d.store.Update(put, seen); err != nil {
		return fmt.Errorf("rewrite IPv4-mapped records: %w", err)
	}
	for _, k := range seen {
		delete(st, k)
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
