package restrict

import (
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
	// One trailing separator names the same share or directory
	// (\\server\share\); csi-proxy accepts it.
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(p, `\\`), `\`), `\`)
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

// validSMBServer reports a server that is an address (any form
// ServerAddress reads) or a host name.
func validSMBServer(s string) bool {
	if _, ok := ServerAddress(s); ok {
		return true
	}
	return ValidHostName(lookupKey(s))
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
