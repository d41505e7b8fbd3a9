// Package restrict is the input-restriction validator of the Windows CSI
// proxy design (shared/seeds/003): every restriction the design states on
// paths, SMB remote paths, iSCSI targets, CHAP secrets and pipe names, each
// with a stable rule ID. The simulated host enforces requests through it and
// the conformance suite derives its refusal cases from the same table.
//
// Every check returns nil or a *Violation naming the rule; no input panics
// (the fuzz targets hold that).
package restrict

import (
	"fmt"
	"slices"
)

// Rule is one restriction of the design.
type Rule struct {
	// ID is stable, e.g. PATH-004.
	ID string
	// Title says what is refused.
	Title string
	// Spec quotes the design text the rule enforces.
	Spec string
	// State marks rules that depend on the host's state (existence,
	// emptiness, symlinks) rather than on the request alone; a host refuses
	// them with FAILED_PRECONDITION, the others with INVALID_ARGUMENT.
	State bool
}

// Rules is the table of restrictions, declared once; the validator, the
// simulated host's faults and the conformance suite read it.
var Rules = []Rule{
	{ID: "PATH-001", Title: "only absolute drive-letter paths", Spec: `Only absolute path (indicated by a drive letter prefix: e.g. "C:\") is accepted.`},
	{ID: "PATH-002", Title: "backslash separators only", Spec: `All directory separators need to be backslash character: "\".`},
	{ID: "PATH-003", Title: "no UNC or device paths", Spec: `UNC paths of the form "\\server\share\path\file" are not allowed.`},
	{ID: "PATH-004", Title: "no '..'", Spec: `Characters: .. / : | ? * in the path are not allowed.`},
	{ID: "PATH-005", Title: "no ':' past the drive letter (alternate data streams)", Spec: `Characters: .. / : | ? * in the path are not allowed.`},
	{ID: "PATH-006", Title: "no '|', '?', '*'", Spec: `Characters: .. / : | ? * in the path are not allowed.`},
	{ID: "PATH-007", Title: "at most 260 characters", Spec: `Maximum path length will be capped to 260 characters.`},
	{ID: "PATH-008", Title: "no NUL or control characters", Spec: `All special characters allowed by Windows in path names will be allowed (Windows forbids characters 0-31).`},
	{ID: "LINK-001", Title: "link source under kubelet-csi-plugins-path", Spec: `The path prefix needs to match the paths specified as kubelet-csi-plugins-path parameter of csi-proxy.`},
	{ID: "LINK-002", Title: "link target under kubelet-pod-path", Spec: `The path prefix needs to match the paths specified as kubelet-pod-path parameter of csi-proxy.`},
	{ID: "LINK-003", Title: "link source must not exist", Spec: `source_path cannot already exist in the host filesystem.`, State: true},
	{ID: "LINK-004", Title: "link target must be an existing directory", Spec: `target_path needs to exist as a directory in the host that is empty.`, State: true},
	{ID: "LINK-005", Title: "link target must be empty", Spec: `target_path needs to exist as a directory in the host that is empty.`, State: true},
	{ID: "LINK-006", Title: "link target must not be a symbolic link", Spec: `target_path cannot be a symbolic link.`, State: true},
	{ID: "DIR-001", Title: "directory operations under a kubelet path", Spec: `Depending on the context parameter of this function, the path prefix needs to match the paths specified either as kubelet-csi-plugins-path or as kubelet-pod-path parameters of csi-proxy.`},
	{ID: "SMB-001", Title: `SMB remote path is \\server\share`, Spec: `SMB remote path specified in the format: \\server-name\sharename, \\server.fqdn\sharename or \\a.b.c.d\sharename`},
	{ID: "SMB-002", Title: "SMB server is a DNS name or an IP address", Spec: `If not an IP address, share name has to be a valid DNS name.`},
	{ID: "SMB-003", Title: `no + [ ] " / : ; | < > , ? * = $ in SMB remote paths`, Spec: `Characters: + [ ] " / : ; | < > , ? * = $ are not allowed.`},
	{ID: "SMB-004", Title: `no \\?\ or \\.\ prefix in SMB remote paths`, Spec: `UNC specifications to local paths or prefix: \\?\ is not allowed.`},
	{ID: "ISCSI-001", Title: "IQN is iqn.yyyy-mm.naming-authority:unique-name", Spec: `follows IQN format: iqn.yyyy-mm.naming-authority:unique-name`},
	{ID: "ISCSI-002", Title: "portal address is a host name or IP; port 0 means 3260", Spec: `iSCSI Target port (default iSCSI port is 3260)`},
	{ID: "CHAP-001", Title: "mutual CHAP secret length 12-16 bytes (1-16 with IPsec)", Spec: `Must be at least 12 byte long for non-Ipsec connections, at least one byte long for Ipsec connections, and at most 16 bytes long.`},
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
	// Skip holds rule IDs that are not enforced.
	Skip map[string]bool
}

// Defaults of csi-proxy's two parameters.
const (
	DefaultPluginsPath = `C:\var\lib\kubelet\plugins\kubernetes.io\csi`
	DefaultPodPath     = `C:\var\lib\kubelet\pods`
)

// New returns a faithful validator with csi-proxy's default paths.
func New() *Validator {
	return &Validator{PluginsPath: DefaultPluginsPath, PodPath: DefaultPodPath}
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
