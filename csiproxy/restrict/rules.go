// Package restrict is the input-restriction validator of a csi-proxy
// host: every restriction the KEP (shared/seeds/003) states on paths, SMB
// remote paths, iSCSI targets, CHAP secrets and pipe names, the ones the
// Win32 path rules make necessary for them to hold (normalisation, device
// names, 8.3 aliases, case, links), and the ones a privileged proxy needs
// for the fields the KEP leaves open (volume IDs, the OS disk, service
// names), each with a stable rule ID. The simulated host enforces requests
// through it, and the conformance suite derives its refusal probes from
// the same tables (Rules, RPCs, Cases).
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

// Rule is one restriction.
type Rule struct {
	// ID is stable, e.g. PATH-004.
	ID string
	// Title says what is refused.
	Title string
	// Spec quotes the text the rule enforces.
	Spec string
	// State marks rules that depend on the host's state (existence, where
	// links lead, which disk holds the OS) rather than on the request
	// alone; a host refuses them with FAILED_PRECONDITION, the others with
	// INVALID_ARGUMENT.
	State bool
}

// Where rule texts come from when the KEP is silent.
const (
	win32Paths = `Win32 path rules ("File path formats on Windows systems"): `
	proxyNeeds = "fenceproof: a privileged proxy must not "
)

// Rules is the table of restrictions, declared once; the validator, the
// simulated host's faults and the conformance suite read it.
var Rules = []Rule{
	{ID: "PATH-001", Title: "only absolute drive-letter paths", Spec: `Only absolute path (indicated by a drive letter prefix: e.g. "C:\") is accepted.`},
	{ID: "PATH-002", Title: "backslash separators only", Spec: `All directory separators need to be backslash character: "\".`},
	{ID: "PATH-003", Title: `no UNC or device paths (\\server\share, \\localhost\C$, \\?\, \\.\)`, Spec: `UNC paths of the form "\\server\share\path\file" are not allowed.`},
	{ID: "PATH-004", Title: "no '..'", Spec: `Characters: .. / : | ? * in the path are not allowed.`},
	{ID: "PATH-005", Title: "no ':' past the drive letter (alternate data streams)", Spec: `Characters: .. / : | ? * in the path are not allowed.`},
	{ID: "PATH-006", Title: `no | ? * < > "`, Spec: `Characters: .. / : | ? * in the path are not allowed.`},
	{ID: "PATH-007", Title: "at most 260 characters", Spec: `Maximum path length will be capped to 260 characters.`},
	{ID: "PATH-008", Title: "no NUL or control characters", Spec: `All special characters allowed by Windows in path names will be allowed (Windows forbids characters 0-31).`},
	{ID: "PATH-009", Title: `no "." or empty components (pods\., pods\.\.\, a\\b)`, Spec: win32Paths + `"." segments are removed and runs of separators collapse, so pods\. names the pod directory itself.`},
	{ID: "PATH-010", Title: `no component ending in a dot or a space (pods\ , pods\. , x.)`, Spec: win32Paths + `trailing periods and spaces of the final segment are removed, a single trailing period of any segment.`},
	{ID: "PATH-011", Title: "no reserved device names (CON, NUL, AUX, PRN, COM1-9, LPT1-9, CONIN$, CONOUT$, COM1.txt)", Spec: win32Paths + `a final segment naming a legacy device (with any extension) is the device \\.\NAME.`},
	{ID: "PATH-012", Title: "no 8.3 short-name components (KUBERN~1.IO)", Spec: win32Paths + `NTFS resolves a component by its 8.3 alias too, so a prefix test on the text cannot tell where it leads.`},
	{ID: "LINK-001", Title: "link source_path below kubelet-csi-plugins-path", Spec: `The path prefix needs to match the paths specified as kubelet-csi-plugins-path parameter of csi-proxy.`},
	{ID: "LINK-002", Title: "link target_path below kubelet-pod-path", Spec: `The path prefix needs to match the paths specified as kubelet-pod-path parameter of csi-proxy.`},
	{ID: "LINK-003", Title: "the link to create (target_path) must not exist", Spec: `source_path cannot already exist in the host filesystem. (KEP LinkPath; csi-proxy v1 creates the link at target_path: os.Symlink(source_path, target_path))`, State: true},
	{ID: "LINK-004", Title: "the directory linked to (source_path) must exist as a directory", Spec: `target_path needs to exist as a directory in the host. (KEP LinkPath; in csi-proxy v1 the directory linked to is source_path)`, State: true},
	{ID: "LINK-005", Title: "the directory linked to must not lead outside the kubelet directories", Spec: `target_path cannot be a symbolic link. (KEP LinkPath; in csi-proxy v1 source_path is linked to, and an SMB staging directory is itself a link to its share)`, State: true},
	{ID: "DIR-001", Title: "directory operations strictly below a kubelet directory", Spec: `All requests for creation and deletion of paths through the CSIProxyService RPCs (detailed below) will need to be under this path.`},
	{ID: "DIR-002", Title: "no operation through a link that leads outside the kubelet directories", Spec: `All requests for creation and deletion of paths ... will need to be under this path. (where the path leads, every link followed, as Windows does)`, State: true},
	{ID: "VOLID-001", Title: `volume IDs are \\?\Volume{GUID}\`, Spec: `ListVolumesOnDisk returns the volume IDs (in \\.\Volume{GUID} format) for all volumes on a Disk device`},
	{ID: "SYSDISK-001", Title: "the disk and volume the OS runs from are not partitioned, set offline, formatted, resized, mounted or unmounted", Spec: proxyNeeds + "change the disk or volume it and the node run from (the KEP scopes the API to CSI volumes).", State: true},
	{ID: "SMB-001", Title: `SMB remote path is \\server\share`, Spec: `SMB remote path specified in the format: \\server-name\sharename, \\server.fqdn\sharename or \\a.b.c.d\sharename`},
	{ID: "SMB-002", Title: "SMB server is a DNS name or an IP address", Spec: `If not an IP address, share name has to be a valid DNS name.`},
	{ID: "SMB-003", Title: `no + [ ] " / : ; | < > , ? * = $ in SMB remote paths`, Spec: `Characters: + [ ] " / : ; | < > , ? * = $ are not allowed.`},
	{ID: "SMB-004", Title: `no \\?\ or \\.\ prefix in SMB remote paths`, Spec: `UNC specifications to local paths or prefix: \\?\ is not allowed.`},
	{ID: "SMB-005", Title: "SMB server is not this machine (localhost, 127.0.0.0/8, ::1, its name)", Spec: `UNC specifications to local paths or prefix: \\?\ is not allowed.`},
	{ID: "ISCSI-001", Title: "IQN is iqn.yyyy-mm.naming-authority:unique-name", Spec: `follows IQN format: iqn.yyyy-mm.naming-authority:unique-name`},
	{ID: "ISCSI-002", Title: "portal address is a host name or IP; port 0 means 3260", Spec: `iSCSI Target port (default iSCSI port is 3260)`},
	{ID: "CHAP-001", Title: "mutual CHAP secret length 12-16 bytes (1-16 with IPsec)", Spec: `Must be at least 12 byte long for non-Ipsec connections, at least one byte long for Ipsec connections, and at most 16 bytes long.`},
	{ID: "SVC-001", Title: "service RPCs name a service of the allow-list", Spec: proxyNeeds + "start or stop arbitrary services (the KEP's Non-Goals: a scoped-down set of operations; its API has no service RPCs)."},
	{ID: "PIPE-001", Title: `pipe name is \\.\pipe\csi-proxy-<group>-<version>`, Spec: `named pipes of the form: \\.\pipe\csi-proxy-[api-group]-[version]`},
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
	// LocalNames are this machine's names (SMB-005).
	LocalNames []string
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
