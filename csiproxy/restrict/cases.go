package restrict

import (
	"strings"
)

// Kind says which request a Case is sent as.
type Kind string

// Kinds of case.
const (
	KindLink   Kind = "link"   // LinkPath / CreateSymlink: A source, B target
	KindDir    Kind = "dir"    // Mkdir: A path
	KindSMB    Kind = "smb"    // NewSmbGlobalMapping: A remote path
	KindIQN    Kind = "iqn"    // ConnectTarget: A iqn
	KindPortal Kind = "portal" // AddTargetPortal: A address, Port
	KindCHAP   Kind = "chap"   // SetMutualChapSecret: A secret
)

// Case is one input that violates exactly one rule: the faithful validator
// refuses it with that rule, and a validator skipping that rule accepts it
// (the table test holds both). The conformance suite sends every case.
//
// Paths hold placeholders that Expand fills: {plugins} and {pods} are the
// kubelet paths, {pluginsrel} and {podsrel} the same without "C:\", {s} a
// fresh name for a link source, {t} the name of a fresh empty directory the
// suite made below {pods} for a link target.
type Case struct {
	Rule string
	Name string
	Kind Kind
	A, B string
	Port uint32
	// Prepare is the empty directory the suite makes for a link case's
	// target before sending it; LinkTarget when empty.
	Prepare string
}

// LinkTarget and LinkSource are the default fields of link cases.
const (
	LinkSource = `{plugins}\{s}`
	LinkTarget = `{pods}\{t}`
)

// Cases is the refusal table, declared once.
var Cases = []Case{
	{Rule: "PATH-001", Name: "relative source", Kind: KindLink, A: `{pluginsrel}\{s}`, B: LinkTarget},
	{Rule: "PATH-001", Name: "relative target", Kind: KindLink, A: LinkSource, B: `{podsrel}\{t}`},
	{Rule: "PATH-001", Name: "drive-relative source", Kind: KindLink, A: `C:{s}`, B: LinkTarget},
	{Rule: "PATH-002", Name: "slash in source", Kind: KindLink, A: `{plugins}/{s}`, B: LinkTarget},
	{Rule: "PATH-002", Name: "slash in target", Kind: KindLink, A: LinkSource, B: `{pods}/{t}`},
	{Rule: "PATH-003", Name: `\\?\ source`, Kind: KindLink, A: `\\?\{plugins}\{s}`, B: LinkTarget},
	{Rule: "PATH-003", Name: `\\?\ target`, Kind: KindLink, A: LinkSource, B: `\\?\{pods}\{t}`},
	{Rule: "PATH-003", Name: "UNC mkdir", Kind: KindDir, A: `\\fileserver\share\{s}`},
	{Rule: "PATH-004", Name: "source escapes to C:\\Windows", Kind: KindLink, A: `{plugins}\..\..\..\..\..\..\Windows\{s}`, B: LinkTarget},
	{Rule: "PATH-004", Name: "target with ..", Kind: KindLink, A: LinkSource, B: `{pods}\{t}\..\{t}`},
	{Rule: "PATH-004", Name: "mkdir escapes", Kind: KindDir, A: `{pods}\..\..\..\..\Windows\{s}`},
	{Rule: "PATH-005", Name: "alternate data stream source", Kind: KindLink, A: `{plugins}\{s}:evil`, B: LinkTarget},
	{Rule: "PATH-005", Name: "alternate data stream target", Kind: KindLink, A: LinkSource, B: `{pods}\{t}::$INDEX_ALLOCATION`},
	{Rule: "PATH-006", Name: "wildcard source", Kind: KindLink, A: `{plugins}\{s}*`, B: LinkTarget},
	{Rule: "PATH-006", Name: "pipe character", Kind: KindLink, A: `{plugins}\{s}|x`, B: LinkTarget},
	{Rule: "PATH-006", Name: "question mark mkdir", Kind: KindDir, A: `{pods}\{s}?`},
	{Rule: "PATH-007", Name: "261 characters", Kind: KindLink, A: `{plugins}\{s}{pad}`, B: LinkTarget},
	{Rule: "PATH-008", Name: "tab in source", Kind: KindLink, A: "{plugins}\\{s}\tx", B: LinkTarget},
	{Rule: "PATH-008", Name: "NUL in mkdir", Kind: KindDir, A: "{pods}\\{s}\x00x"},
	{Rule: "LINK-001", Name: "source in C:\\Windows", Kind: KindLink, A: `C:\Windows\{s}`, B: LinkTarget},
	{Rule: "LINK-001", Name: "source beside the plugins path (prefix without a separator)", Kind: KindLink, A: `{plugins}-{s}`, B: LinkTarget},
	{Rule: "LINK-001", Name: "source in the pod path", Kind: KindLink, A: `{pods}\{s}`, B: LinkTarget},
	{Rule: "LINK-002", Name: "target in the plugins path", Kind: KindLink, A: LinkSource, B: `{plugins}\{t}`, Prepare: `{plugins}\{t}`},
	{Rule: "DIR-001", Name: "mkdir in C:\\Windows", Kind: KindDir, A: `C:\Windows\{s}`},
	{Rule: "DIR-001", Name: "mkdir beside the pod path (prefix without a separator)", Kind: KindDir, A: `{pods}-{s}`},
	{Rule: "SMB-001", Name: "server only", Kind: KindSMB, A: `\\fileserver.example.com`},
	{Rule: "SMB-001", Name: "empty share", Kind: KindSMB, A: `\\fileserver.example.com\`},
	{Rule: "SMB-001", Name: "drive path", Kind: KindSMB, A: `C\share`},
	{Rule: "SMB-002", Name: "bad host name", Kind: KindSMB, A: `\\bad_host!\share`},
	{Rule: "SMB-002", Name: "label ends in hyphen", Kind: KindSMB, A: `\\fileserver-.example.com\share`},
	{Rule: "SMB-003", Name: "administrative share C$", Kind: KindSMB, A: `\\fileserver.example.com\C$`},
	{Rule: "SMB-003", Name: "comma", Kind: KindSMB, A: `\\fileserver.example.com\a,b`},
	{Rule: "SMB-003", Name: "semicolon", Kind: KindSMB, A: `\\fileserver.example.com\a;b`},
	{Rule: "SMB-004", Name: `\\.\ device (the proxy's own pipe)`, Kind: KindSMB, A: `\\.\pipe\csi-proxy-disk-v1`},
	{Rule: "SMB-004", Name: `\\?\ local prefix`, Kind: KindSMB, A: `\\?\UNC\share`},
	{Rule: "ISCSI-001", Name: "no iqn. prefix", Kind: KindIQN, A: "2001-04.com.example:storage"},
	{Rule: "ISCSI-001", Name: "month 13", Kind: KindIQN, A: "iqn.2001-13.com.example:storage"},
	{Rule: "ISCSI-001", Name: "space in unique name", Kind: KindIQN, A: "iqn.2001-04.com.example:disk one"},
	{Rule: "ISCSI-002", Name: "port above 65535", Kind: KindPortal, A: "192.0.2.10", Port: 70000},
	{Rule: "ISCSI-002", Name: "address not a host", Kind: KindPortal, A: "bad host!", Port: 3260},
	{Rule: "CHAP-001", Name: "11 bytes", Kind: KindCHAP, A: "elevenbytes"},
	{Rule: "CHAP-001", Name: "17 bytes", Kind: KindCHAP, A: "seventeen-bytes!!"},
	{Rule: "CHAP-001", Name: "empty", Kind: KindCHAP, A: ""},
}

// ValidCases are inputs the faithful validator accepts; the suite sends
// each and expects success.
var ValidCases = []Case{
	{Name: "link", Kind: KindLink, A: LinkSource, B: LinkTarget},
	{Name: "link, upper-case kubelet path", Kind: KindLink, A: `{PLUGINS}\{s}`, B: LinkTarget},
	{Name: "mkdir below pods", Kind: KindDir, A: `{pods}\{s}\mount`},
	{Name: "mkdir below plugins", Kind: KindDir, A: `{plugins}\{s}`},
	{Name: "smb by name", Kind: KindSMB, A: `\\fileserver.example.com\share`},
	{Name: "smb by IPv4 with subdirectory", Kind: KindSMB, A: `\\192.0.2.20\share\sub`},
	{Name: "smb by IPv6 literal", Kind: KindSMB, A: `\\2001-db8--20.ipv6-literal.net\share`},
	{Name: "iqn", Kind: KindIQN, A: "iqn.2001-04.com.example:storage.disk1"},
	{Name: "iqn without unique name", Kind: KindIQN, A: "iqn.2001-04.com.example"},
	{Name: "portal IPv4 default port", Kind: KindPortal, A: "192.0.2.10", Port: 0},
	{Name: "portal IPv6", Kind: KindPortal, A: "2001:db8::10", Port: 3260},
	{Name: "portal host name", Kind: KindPortal, A: "target.example.com", Port: 3261},
	{Name: "chap 12 bytes", Kind: KindCHAP, A: "twelve-bytes"},
	{Name: "chap 16 bytes", Kind: KindCHAP, A: "sixteen-bytes-ok"},
}

// Expand fills a case's placeholders for the given kubelet paths and names.
func Expand(s, plugins, pods, src, tgt string) string {
	pad := ""
	if strings.Contains(s, "{pad}") {
		base := strings.NewReplacer("{plugins}", plugins, "{s}", src, "{pad}", "").Replace(s)
		if n := MaxPathLength + 1 - len(base); n > 0 {
			pad = strings.Repeat("x", n)
		}
	}
	return strings.NewReplacer(
		"{plugins}", plugins, "{pods}", pods,
		"{PLUGINS}", strings.ToUpper(plugins),
		"{pluginsrel}", dropDrive(plugins), "{podsrel}", dropDrive(pods),
		"{s}", src, "{t}", tgt, "{pad}", pad,
	).Replace(s)
}

func dropDrive(p string) string {
	if isDriveAbs(p) {
		return p[3:]
	}
	return p
}

// Check runs the validator's request-only checks for a case, the way the
// simulated host does for the matching request.
func (v *Validator) Check(c Case, a, b string) error {
	switch c.Kind {
	case KindLink:
		return v.LinkPaths(a, b)
	case KindDir:
		return v.Dir("path", a)
	case KindSMB:
		_, err := v.SMBRemotePath("remote_path", a)
		return err
	case KindIQN:
		return v.IQN("iqn", a)
	case KindPortal:
		_, _, err := v.Portal("target_portal", a, c.Port)
		return err
	case KindCHAP:
		return v.MutualCHAPSecret("MutualChapSecret", a, false)
	}
	return nil
}
