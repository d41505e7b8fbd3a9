package restrict

import (
	"net/netip"
	"strings"
	"unicode"
)

// SMBRemote is a parsed SMB remote path.
type SMBRemote struct {
	Server, Share string
	// Rest is the path below the share, without leading separator.
	Rest string
}

// Key is the mapping's identity as Windows keys global mappings: the
// lower-cased \\server\share.
func (r SMBRemote) Key() string {
	return strings.ToLower(`\\` + r.Server + `\` + r.Share)
}

// SMBRemotePath checks an SMB remote path (SMB-001..004) and parses it.
// An IPv6 server must be given in the UNC literal form
// 2001-db8--1.ipv6-literal.net, because ':' is one of the forbidden
// characters.
func (v *Validator) SMBRemotePath(field, p string) (SMBRemote, error) {
	device := strings.HasPrefix(p, `\\?\`) || strings.HasPrefix(p, `\\.\`)
	if device {
		if f := v.fail("SMB-004", field, `local device prefix \\?\ or \\.\ is not allowed`); f != nil {
			return SMBRemote{}, f
		}
	}
	if i := strings.IndexAny(p, `+[]"/:;|<>,?*=$`); i >= 0 && !(device && i == 2) {
		if f := v.fail("SMB-003", field, "character %q is not allowed", p[i]); f != nil {
			return SMBRemote{}, f
		}
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			if f := v.fail("SMB-003", field, "control character %U is not allowed", r); f != nil {
				return SMBRemote{}, f
			}
		}
	}
	parts := strings.Split(strings.TrimPrefix(p, `\\`), `\`)
	if !strings.HasPrefix(p, `\\`) || len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		if f := v.fail("SMB-001", field, `not of the form \\server\share`); f != nil {
			return SMBRemote{}, f
		}
		if len(parts) < 2 {
			parts = append(parts, "", "")
		}
	}
	for _, c := range parts[2:] {
		if c == "" {
			if f := v.fail("SMB-001", field, "empty path component"); f != nil {
				return SMBRemote{}, f
			}
		}
	}
	server := parts[0]
	if !device && !validSMBServer(server) {
		if f := v.fail("SMB-002", field, "server %q is neither a DNS name nor an IP address", server); f != nil {
			return SMBRemote{}, f
		}
	}
	if !device && v.localServer(server) {
		if f := v.fail("SMB-005", field, "server %q is this machine", server); f != nil {
			return SMBRemote{}, f
		}
	}
	return SMBRemote{Server: server, Share: parts[1], Rest: strings.Join(parts[2:], `\`)}, nil
}

// localServer reports this machine: localhost, its names, a loopback or
// unspecified address, also in the UNC IPv6 literal form.
func (v *Validator) localServer(s string) bool {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	if s == "localhost" || strings.HasSuffix(s, ".localhost") {
		return true
	}
	for _, n := range v.LocalNames {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	if lit, ok := strings.CutSuffix(s, ".ipv6-literal.net"); ok {
		addr, _, _ := strings.Cut(lit, "s")
		s = strings.ReplaceAll(addr, "-", ":")
	}
	a, err := netip.ParseAddr(s)
	return err == nil && (a.Unmap().IsLoopback() || a.IsUnspecified())
}

func validSMBServer(s string) bool {
	if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
		return true
	}
	if lit, ok := strings.CutSuffix(strings.ToLower(s), ".ipv6-literal.net"); ok {
		// 2001-db8--1 or fe80--1s4 (zone after 's').
		addr, _, _ := strings.Cut(lit, "s")
		a, err := netip.ParseAddr(strings.ReplaceAll(addr, "-", ":"))
		return err == nil && a.Is6()
	}
	return ValidHostName(s)
}

// ValidHostName reports an RFC 1123 host name: dot-separated labels of 1-63
// letters (any script), digits and hyphens, not starting or ending with a
// hyphen, at most 253 characters, not all-numeric in the last label.
func ValidHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.IndexFunc(last, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0
}
