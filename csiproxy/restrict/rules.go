// Package restrict is the input-restriction validator of a csi-proxy
// host: every restriction the KEP (shared/seeds/003) states on paths, SMB
// remote paths, iSCSI targets, CHAP secrets and pipe names, the ones the
// Win32 path rules make necessary for them to hold (normalisation, device
// names, 8.3 aliases, case, links), and the ones a privileged proxy needs
// for the fields the KEP leaves open (volume IDs, the OS disk, service
// names), each with a stable rule ID and its source (the KEP quoted, csi-
// proxy's behaviour, fenceproof's hardening). The simulated host enforces
// requests through it, and the conformance suite draws its refusal probes
// from the same tables (Rules, RPCs, Cases) with a seeded Draw, under a
// Profile (the KEP's text alone, or everything).
//
// The path checks are lexical and accept only canonical paths: a path the
// Win32 layer would rewrite (a "." component, a trailing dot or space, a
// device name, an 8.3 alias) is refused rather than normalised, so no
// second normalisation can disagree with Windows'. What the request alone
// cannot tell (where links lead, which disk holds the OS) is judged from
// what the host reports (state rules).
//
// Every check returns nil or a *Violation naming the rule; no input panics
// (the fuzz targets hold that).
package restrict

import (
	"fmt"
	"slices"
)

// Source is where a rule comes from.
type Source string

// The sources a rule can have.
const (
	// FromKEP: the text of KEP-1122 (shared/seeds/003), quoted verbatim in
	// Rule.Quote.
	FromKEP Source = "KEP"
	// FromCSIProxy: what csi-proxy v1 does and the drivers that call it
	// rely on, where the KEP is silent.
	FromCSIProxy Source = "csi-proxy"
	// FromHardening: fenceproof's hardening, what a privileged proxy needs
	// that the KEP leaves open (Windows' path rewriting, fields it does not
	// restrict).
	FromHardening Source = "fenceproof"
)

// Scope is which request fields the KEP's text of a rule covers; under the
// profile kep a rule is probed there only (under hardened, in every field
// of its kind).
type Scope string

// Scopes of the KEP's restrictions.
const (
	// ScopeNone: the rule is not the KEP's.
	ScopeNone Scope = ""
	// ScopeLinkPath: LinkPath's source_path and target_path (CreateSymlink
	// in csi-proxy v1), whose comments list the path restrictions.
	ScopeLinkPath Scope = "LinkPath fields"
	// ScopeChangedPaths: the path fields of RPCs that create or delete what
	// they name ("creation and deletion of paths").
	ScopeChangedPaths Scope = "paths created or deleted"
	// ScopeSMBRemote: NewSmbGlobalMapping's and RemoveSmbGlobalMapping's
	// remote_path.
	ScopeSMBRemote Scope = "SMB remote paths"
	// ScopeMutualCHAP: SetMutualChapSecret's secret.
	ScopeMutualCHAP Scope = "the mutual CHAP secret"
	// ScopePipes: the named pipes.
	ScopePipes Scope = "pipe names"
)

// Rule is one restriction.
type Rule struct {
	// ID is stable, e.g. PATH-004.
	ID string
	// Title says what is refused.
	Title string
	// Source is where the rule comes from.
	Source Source
	// Quote is, for a KEP rule, the KEP's text, verbatim up to the line
	// breaks and comment markers of its proto listings; several excerpts
	// are joined by " ... " (TestQuotesAreTheKEPs).
	Quote string
	// Basis says what a rule of another source rests on, and for a KEP
	// rule how the suite reads the quote where it needs reading.
	Basis string
	// Scope is the fields the KEP's text covers (KEP rules only).
	Scope Scope
	// State marks rules that depend on the host's state (existence, where
	// links lead, which disk holds the OS) rather than on the request
	// alone; a host refuses them with FAILED_PRECONDITION, the others with
	// INVALID_ARGUMENT.
	State bool
}

// Spec is the rule's text for a report: the KEP's quote, or the basis of
// a rule of another source.
func (r Rule) Spec() string {
	if r.Source == FromKEP {
		if r.Basis != "" {
			return r.Quote + " (" + r.Basis + ")"
		}
		return r.Quote
	}
	return r.Basis
}

// Where rule texts come from when the KEP is silent.
const (
	win32Paths = `Win32 path rules ("File path formats on Windows systems"): `
	proxyNeeds = "a privileged proxy must not "
	// underThisPath is the KEP's rule for every path csi-proxy creates or
	// deletes, and its rule for LinkPath.
	underThisPath = "All requests for creation and deletion of paths through the CSIProxyService RPCs (detailed below) will need to be under this path." +
		" ... Parameters to `LinkPath` (detailed below) will need to be under this path."
	kepChars = `Characters: .. / : | ? * in the path are not allowed.`
	kepLocal = `UNC specifications to local paths or prefix: \\?\ is not allowed.`
)

// Rules is the table of restrictions, declared once; the validator, the
// simulated host's faults and the conformance suite read it.
var Rules = []Rule{
	{ID: "PATH-001", Title: "only absolute drive-letter paths", Source: FromKEP, Scope: ScopeLinkPath,
		Quote: `Only absolute path (indicated by a drive letter prefix: e.g. "C:\") is accepted.`},
	{ID: "PATH-002", Title: "backslash separators only", Source: FromKEP, Scope: ScopeLinkPath,
		Quote: `All directory separators need to be backslash character: "\".`},
	{ID: "PATH-003", Title: `no UNC or device paths (\\server\share, \\localhost\C$, \\?\, \\.\, \??\)`, Source: FromKEP, Scope: ScopeLinkPath,
		Quote: `UNC paths of the form "\\server\share\path\file" are not allowed.`,
		Basis: `a \\?\ or \\.\ device path, or \??\ (the NT namespace Win32 passes through), is read as one of them`},
	{ID: "PATH-004", Title: "no '..'", Source: FromKEP, Scope: ScopeLinkPath, Quote: kepChars},
	{ID: "PATH-005", Title: "no ':' past the drive letter (alternate data streams)", Source: FromKEP, Scope: ScopeLinkPath, Quote: kepChars},
	{ID: "PATH-006", Title: "no | ? *", Source: FromKEP, Scope: ScopeLinkPath, Quote: kepChars},
	{ID: "PATH-007", Title: "at most 260 characters (UTF-16 code units)", Source: FromKEP, Scope: ScopeLinkPath,
		Quote: `Maximum path length will be capped to 260 characters.`},
	{ID: "PATH-008", Title: "no NUL or control character (U+0000-U+001F)", Source: FromHardening,
		Basis: `Windows refuses names with the characters 1-31 ("Naming Files"), Go a path with NUL; a host refuses them before any call. The KEP allows "All special characters allowed by Windows in path names".`},
	{ID: "PATH-009", Title: `no "." or empty components (pods\., pods\.\.\, a\\b)`, Source: FromHardening,
		Basis: win32Paths + `"." segments are removed and runs of separators collapse, so pods\.\ names the pod directory itself.`},
	{ID: "PATH-010", Title: `no component ending in a dot or a space (pods\ , pods\. , x.)`, Source: FromHardening,
		Basis: win32Paths + `trailing periods and spaces of the final segment are removed, a single trailing period of any segment.`},
	{ID: "PATH-011", Title: "no reserved device names (CON, NUL, AUX, PRN, COM1-9, LPT1-9, CONIN$, CONOUT$, COM1.txt)", Source: FromHardening,
		Basis: win32Paths + `a final segment naming a legacy device (with any extension) is the device \\.\NAME.`},
	{ID: "PATH-012", Title: "no 8.3 short-name components (KUBERN~1.IO)", Source: FromHardening,
		Basis: win32Paths + `NTFS resolves a component by its 8.3 alias too, so a prefix test on the text cannot tell where it leads.`},
	{ID: "PATH-013", Title: `no < > "`, Source: FromHardening,
		Basis: `Windows refuses these in names ("Naming Files"; the Win32 layer reads them as wildcards); a host refuses them before any call.`},
	{ID: "LINK-001", Title: "link source_path below kubelet-csi-plugins-path", Source: FromKEP, Scope: ScopeLinkPath,
		Quote: `The path prefix needs needs to match the paths specified as kubelet-csi-plugins-path parameter of csi-proxy.`},
	{ID: "LINK-002", Title: "link target_path below kubelet-pod-path", Source: FromKEP, Scope: ScopeLinkPath,
		Quote: `The path prefix needs to match the paths specified as kubelet-pod-path parameter of csi-proxy.`},
	{ID: "LINK-003", Title: "the link to create (target_path) must not exist", Source: FromKEP, Scope: ScopeLinkPath, State: true,
		Quote: `The path where the symlink is created in the host's filesystem. ... source_path cannot already exist in the host filesystem.`,
		Basis: "the KEP's source_path is where the link is made; csi-proxy v1 makes it at target_path, os.Symlink(source_path, target_path)"},
	{ID: "LINK-004", Title: "the directory linked to (source_path) must exist as a directory", Source: FromKEP, Scope: ScopeLinkPath, State: true,
		Quote: `target_path needs to exist as a directory in the host that is empty.`,
		Basis: "the KEP's target_path is what the link points to, csi-proxy v1's source_path; it is not required empty: v1 links to the staging directory, which holds the volume's data"},
	{ID: "LINK-005", Title: "the directory linked to must not lead outside the kubelet directories", Source: FromHardening, State: true,
		Basis: `the KEP says "target_path cannot be a symbolic link"; csi-proxy v1 links to an SMB staging directory, itself a link to its share, so only a link leading outside the kubelet directories is refused`},
	{ID: "DIR-001", Title: "paths strictly below a kubelet directory", Source: FromKEP, Scope: ScopeChangedPaths, Quote: underThisPath,
		Basis: "this path is kubelet-csi-plugins-path, and kubelet-pod-path for LinkPath; csi-proxy v1 has no LinkPath context, so a path may be below either (drivers make publish paths below the pod path); below means strictly below where Windows takes the path, names compared by NTFS's upper-case table; the hardened profile holds every path field to it"},
	{ID: "DIR-002", Title: "no path through a link that leads outside the kubelet directories", Source: FromKEP, Scope: ScopeChangedPaths, State: true,
		Quote: underThisPath,
		Basis: "an entry created or deleted through a link is where the link leads, every link followed as Windows does, whether or not the rest of the path exists"},
	{ID: "VOLID-001", Title: `volume IDs are \\?\Volume{GUID}\ or \\.\Volume{GUID}\`, Source: FromHardening,
		Basis: `the KEP says ListVolumesOnDisk returns volume IDs "in \\.\Volume{GUID} format", csi-proxy returns \\?\Volume{GUID}\: a volume field takes those, nothing else (no drive, device path or command text)`},
	{ID: "SYSDISK-001", Title: "the disk and volume the OS runs from are not partitioned, set offline, formatted, resized, mounted or unmounted", Source: FromHardening, State: true,
		Basis: proxyNeeds + "change the disk or volume it and the node run from (the KEP scopes the API to CSI volumes)."},
	{ID: "SMB-001", Title: `SMB remote path is \\server\share[\path]`, Source: FromKEP, Scope: ScopeSMBRemote,
		Quote: `SMB remote path specified in the format: \\server-name\sharename, \\server.fqdn\sharename or \\a.b.c.d\sharename`,
		Basis: "a trailing separator and a path below the share are accepted, as csi-proxy accepts them"},
	{ID: "SMB-002", Title: "SMB server is a DNS name or an IP address", Source: FromKEP, Scope: ScopeSMBRemote,
		Quote: `If not an IP address, share name has to be a valid DNS name.`,
		Basis: "read as the server's name: a share is never an IP address"},
	{ID: "SMB-003", Title: `no + [ ] " / : ; | < > , ? * = $ in SMB remote paths`, Source: FromKEP, Scope: ScopeSMBRemote,
		Quote: `Characters: + [ ] " / : ; | < > , ? * = $ are not allowed.`},
	{ID: "SMB-004", Title: `no \\?\ or \\.\ prefix in SMB remote paths`, Source: FromKEP, Scope: ScopeSMBRemote, Quote: kepLocal,
		Basis: `\\.\ is the same device namespace as \\?\`},
	{ID: "SMB-005", Title: "SMB server is not this machine (localhost, 127.0.0.0/8, ::1, its names and addresses, in any spelling)", Source: FromKEP, Scope: ScopeSMBRemote,
		Quote: kepLocal,
		Basis: "a UNC specification to a local path: this machine by any name or address Windows resolves to it (case, full-width letters, a trailing dot, 127.0.0.0/8 in dotted, decimal, octal and hex forms, ::1 as an ipv6-literal.net name)"},
	{ID: "ISCSI-001", Title: "target name is iqn., eui. or naa. (RFC 3720, RFC 3980)", Source: FromHardening,
		Basis: `RFC 3720 3.2.6.3 and RFC 3980: iqn.yyyy-mm.naming-authority[:unique], eui. and 16 hex digits, naa. and 16 or 32; the KEP's "follows IQN format" describes DiscoverTargetPortal's answer, not a request`},
	{ID: "ISCSI-002", Title: "portal address is a host name or IP; port 0 means 3260", Source: FromHardening,
		Basis: "a portal names a host and a TCP port; the KEP: iSCSI Target port (default iSCSI port is 3260)"},
	{ID: "CHAP-001", Title: "mutual CHAP secret length 12-16 bytes (1-16 with IPsec)", Source: FromKEP, Scope: ScopeMutualCHAP,
		Quote: `Must be at least 12 byte long for non-Ipsec connections, at least one byte long for Ipsec connections, and at most 16 bytes long.`},
	{ID: "SVC-001", Title: "service RPCs name a service of the allow-list", Source: FromHardening,
		Basis: proxyNeeds + "start or stop arbitrary services (the KEP's Non-Goals: a scoped-down set of operations; its API has no service RPCs)."},
	{ID: "PIPE-001", Title: `pipe name is \\.\pipe\csi-proxy-<group>-<version>`, Source: FromKEP, Scope: ScopePipes,
		Quote: "A CSI Node Plugin will interact with csi-proxy.exe using named pipes of the form: `\\\\.\\pipe\\csi-proxy-[api-group]-[version]`."},
}

// RuleByID returns the rule with the ID.
func RuleByID(id string) (Rule, bool) {
	i := slices.IndexFunc(Rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	return Rules[i], true
}

// Violation is a refused input: which rule, which field, why.
type Violation struct {
	Rule   string
	Field  string
	Reason string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("%s: %s: %s", v.Rule, v.Field, v.Reason)
}

// IsState reports whether the violated rule depends on host state.
func (v *Violation) IsState() bool {
	r, _ := RuleByID(v.Rule)
	return r.State
}

// Validator checks requests against the rules, except those in Skip (a
// fault-injection hook: the faithful validator skips nothing).
type Validator struct {
	// PluginsPath is kubelet-csi-plugins-path.
	PluginsPath string
	// PodPath is kubelet-pod-path.
	PodPath string
	// LocalNames are this machine's names, short and fully qualified, and
	// LocalAddresses its IP addresses (SMB-005).
	LocalNames, LocalAddresses []string
	// Services is the allow-list of SVC-001.
	Services []string
	// Skip holds rule IDs that are not enforced.
	Skip map[string]bool
}

// Defaults of csi-proxy's parameters (the KEP's names) and the service
// allow-list: the iSCSI initiator and the SMB client, the services the
// iSCSI and SMB groups depend on.
const (
	DefaultPluginsPath = `C:\var\lib\kubelet\plugins\kubernetes.io\csi`
	DefaultPodPath     = `C:\var\lib\kubelet\pods`
)

// DefaultServices is the default SVC-001 allow-list.
var DefaultServices = []string{"MSiSCSI", "LanmanWorkstation"}

// New returns a faithful validator with csi-proxy's default paths.
func New() *Validator {
	return &Validator{PluginsPath: DefaultPluginsPath, PodPath: DefaultPodPath, Services: DefaultServices}
}

// fail returns a violation unless the rule is skipped.
func (v *Validator) fail(rule, field, format string, args ...any) *Violation {
	if v != nil && v.Skip[rule] {
		return nil
	}
	return &Violation{Rule: rule, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// first returns the first non-nil violation.
func first(vs ...*Violation) error {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}
