package restrict

import (
	"net/netip"
	"regexp"
	"strings"
)

// DefaultISCSIPort is the port a portal with port 0 gets.
const DefaultISCSIPort = 3260

// targetNameRE is an iSCSI name in one of its three formats: RFC 3720
// 3.2.6.3.1 iqn.yyyy-mm.reversed.domain[:unique-name], 3.2.6.3.2 eui. and
// 16 hex digits (an EUI-64), RFC 3980 naa. and 16 or 32 hex digits (an
// NAA identifier), compared in lower case.
var targetNameRE = regexp.MustCompile(`^(iqn\.[0-9]{4}-(0[1-9]|1[0-2])\.[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[^\s\x00-\x1f\x7f]+)?|eui\.[0-9a-f]{16}|naa\.([0-9a-f]{16}|[0-9a-f]{32}))$`)

// MaxIQNLength is RFC 3720's cap on iSCSI names, in bytes.
const MaxIQNLength = 223

// IQN checks an iSCSI target name (ISCSI-001): iqn., eui. or naa. iSCSI
// names compare case-insensitively (RFC 3722 folds them to lower case), so
// upper case is accepted.
func (v *Validator) IQN(field, iqn string) error {
	if len(iqn) > MaxIQNLength || !targetNameRE.MatchString(strings.ToLower(iqn)) {
		if f := v.fail("ISCSI-001", field, "%q is not iqn.yyyy-mm.naming-authority[:unique], eui.<16 hex> or naa.<16 or 32 hex>", clip(iqn)); f != nil {
			return f
		}
	}
	return nil
}

// Portal checks a target portal (ISCSI-002) and returns it with the
// default port applied: the address is an IP address or a host name, the
// port 1-65535 or 0 for 3260.
func (v *Validator) Portal(field, address string, port uint32) (string, uint32, error) {
	ok := ValidHostName(address)
	if a, err := netip.ParseAddr(address); err == nil && a.Zone() == "" {
		ok = true
	}
	if !ok {
		if f := v.fail("ISCSI-002", field+".target_address", "%q is neither an IP address nor a host name", address); f != nil {
			return "", 0, f
		}
	}
	if port > 65535 {
		if f := v.fail("ISCSI-002", field+".target_port", "port %d is out of range", port); f != nil {
			return "", 0, f
		}
	}
	if port == 0 {
		port = DefaultISCSIPort
	}
	return address, port, nil
}

// MutualCHAPSecret checks the secret's length in bytes (CHAP-001): 12 to 16
// bytes, or 1 to 16 when the initiator uses IPsec. The error never carries
// the secret.
func (v *Validator) MutualCHAPSecret(field, secret string, ipsec bool) error {
	min := 12
	if ipsec {
		min = 1
	}
	if n := len(secret); n < min || n > 16 {
		if f := v.fail("CHAP-001", field, "%d bytes; %d to 16 are allowed", n, min); f != nil {
			return f
		}
	}
	return nil
}
