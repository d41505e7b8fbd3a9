package fault

import (
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// The broken behaviours, each the fault of the same name.
const (
	DeadEndpoint          Break = "dead-endpoint"
	NoEffect              Break = "no-effect"
	EffectBeforeCheck     Break = "effect-before-check"
	UnknownCode           Break = "unknown-code"
	NoDefaultPort         Break = "no-default-port"
	LinkAtSource          Break = "link-at-source"
	MkdirNotIdempotent    Break = "mkdir-not-idempotent"
	RmdirFollowsLink      Break = "rmdir-follows-link"
	ASCIIOnly             Break = "ascii-only"
	DiskIDsMissing        Break = "disk-ids-missing"
	StateNotKept          Break = "state-not-kept"
	RescanFails           Break = "rescan-fails"
	UnmountKeepsMount     Break = "unmount-keeps-mount"
	SMBNoLink             Break = "smb-no-link"
	MapBeforeLocalCheck   Break = "map-before-local-check"
	DisconnectKeepsTarget Break = "disconnect-keeps-target"
	NoSerial              Break = "no-serial"
	ServiceStatusUnknown  Break = "service-status-unknown"
)

// breaks are the plain faults: one broken behaviour each, the rules it
// fails.
var breaks = []struct {
	brk   Break
	hook  Hook
	help  string
	fails []string
}{
	{DeadEndpoint, AtServe, "serve one more csi-proxy pipe that does not speak gRPC", []string{"VER-002"}},
	{NoEffect, AtEffect, "valid Mkdir, CreateSymlink and NewSmbGlobalMapping return OK and change nothing", []string{"FS-001", "FS-002", "FS-003", "VOL-001", "SMBAPI-001"}},
	// its refusals come after a Windows call, which the refusal rule sees too
	{EffectBeforeCheck, AtEffect, "CreateSymlink makes the link before checking what it links to and keeps it on refusal", []string{"NOEFF-001", "RPC-FS-CREATESYMLINK"}},
	{UnknownCode, AtCode, "refusals carry UNKNOWN instead of INVALID_ARGUMENT / FAILED_PRECONDITION (a SHOULD: CODE-001 warns)", nil},
	{NoDefaultPort, AtEffect, "a portal given with port 0 is kept with port 0 instead of 3260", []string{"ISCSIAPI-002"}},
	{LinkAtSource, AtEffect, "CreateSymlink makes the link at source_path pointing to target_path (the KEP's LinkPath wording), not at target_path as csi-proxy v1 does", []string{"FS-001", "FS-003"}},
	{MkdirNotIdempotent, AtEffect, "Mkdir of an existing directory fails (csi-proxy v1's os.MkdirAll accepts it)", []string{"FS-002"}},
	{RmdirFollowsLink, AtEffect, "Rmdir of a link removes what it points to as well", []string{"FS-001"}},
	{ASCIIOnly, AtChecks, "paths with characters outside ASCII are refused", []string{"FS-003"}},
	{DiskIDsMissing, AtAnswer, "ListDiskIDs leaves out the last disk", []string{"DISK-001"}},
	{StateNotKept, AtEffect, "SetDiskState answers OK and changes nothing", []string{"DISK-002"}},
	{RescanFails, AtAnswer, "Rescan fails", []string{"DISK-003"}},
	{UnmountKeepsMount, AtEffect, "UnmountVolume answers OK and leaves the volume mounted", []string{"VOL-001"}},
	{SMBNoLink, AtEffect, "NewSmbGlobalMapping makes no link at local_path", []string{"SMBAPI-001"}},
	{MapBeforeLocalCheck, AtEffect, "NewSmbGlobalMapping maps before finding its local_path taken, and keeps the mapping", []string{"NOEFF-001"}},
	{DisconnectKeepsTarget, AtEffect, "DisconnectTarget answers OK and stays connected", []string{"ISCSIAPI-001"}},
	{NoSerial, AtAnswer, "GetBIOSSerialNumber answers an empty serial number", []string{"SYS-001"}},
	{ServiceStatusUnknown, AtAnswer, "GetService reports every service's status as UNKNOWN", []string{"SYS-002"}},
}

// all is the table, declared once.
var all = append([]*Fault{
	{Name: "skip", Arg: "RULE-ID", Hook: AtRules, Help: "do not enforce one restriction (any ID of restrict.Rules)",
		Args:  ruleIDs,
		Fails: skipFails,
		make:  func(arg string) (*behaviour, error) { return &behaviour{skip: arg}, nil }},
	{Name: "novalidate", Arg: "GROUP.Method", Hook: AtChecks, Help: "one RPC acts without its request checks (any RPC of restrict.RPCs)",
		Args: rpcNames,
		Fails: func(arg string) []string {
			g, m, _ := strings.Cut(arg, ".")
			r, _ := restrict.RPCByMethod(g, m)
			return []string{r.Rule()}
		},
		make: func(arg string) (*behaviour, error) {
			_, m, _ := strings.Cut(arg, ".")
			return &behaviour{lax: func(method string) bool { return method == m }}, nil
		}},
	{Name: "drop", Arg: "GROUP/VERSION", Hook: AtServe, Help: "do not serve one group version",
		Args: groupVersions, Fails: dropFails,
		make: func(arg string) (*behaviour, error) { return &behaviour{drop: arg}, nil }},
	{Name: "interpolate", Arg: "ENV", Hook: AtCommand, Help: "splice one request field into the PowerShell command line (CVE-2023-3893's shape)",
		Args:  func() []string { return injectable },
		Fails: func(string) []string { return []string{"INJ-001"} },
		make:  func(arg string) (*behaviour, error) { return &behaviour{interpolate: arg}, nil }},
}, append(hostile, plainFaults()...)...)

// plainFaults are the breaks as faults.
func plainFaults() []*Fault {
	var out []*Fault
	for _, b := range breaks {
		b := b
		out = append(out, &Fault{Name: string(b.brk), Hook: b.hook, Help: b.help,
			Fails: func(string) []string { return b.fails },
			make:  func(string) (*behaviour, error) { return &behaviour{brk: b.brk}, nil }})
	}
	return out
}

func ruleIDs() []string {
	var out []string
	for _, r := range restrict.Rules {
		out = append(out, r.ID)
	}
	return out
}

func rpcNames() []string {
	var out []string
	for _, r := range restrict.RPCs {
		out = append(out, r.Group+"."+r.Method)
	}
	return out
}

// groupVersions is every group version the host serves.
func groupVersions() []string {
	var out []string
	for _, gv := range api.Versions {
		out = append(out, gv.Group+"/"+gv.Version)
	}
	return out
}

// stable are the groups' stable versions VER-001 requires.
var stable = []string{"disk/v1", "filesystem/v1", "smb/v1", "volume/v1"}

func dropFails(arg string) []string {
	g, _, _ := strings.Cut(arg, "/")
	only := 0
	for _, gv := range api.Versions {
		if gv.Group == g {
			only++
		}
	}
	if slices.Contains(stable, arg) || only == 1 {
		return []string{"VER-001"}
	}
	return nil
}

// injectable are the environment variables of csi-proxy's command lines
// whose request fields carry a payload past a correct host's checks
// (credentials, and paths, whose valid characters include ' ; $ ( )).
var injectable = []string{"smbuser", "smbpassword", "iscsi_chap_user", "iscsi_chap_secret", "mountpath"}

// rulesProbing are the rules of every RPC one of whose fields gets a case
// of the restriction (under the hardened profile).
func rulesProbing(restriction string) []string {
	var out []string
	for _, r := range restrict.RPCs {
		for _, f := range r.Fields {
			if slices.ContainsFunc(restrict.CasesOf(f.Kind), func(c restrict.Case) bool {
				return c.Rule == restriction && (c.Rule != "SYSDISK-001" || r.Changes)
			}) {
				out = append(out, r.Rule())
				break
			}
		}
	}
	return out
}

// backedUp are restrictions whose every case the faithful host also
// refuses by another check, on every RPC ("*") or on some: skipping one
// alone fails nothing there.
var backedUp = map[string]map[string]string{
	"LINK-003": {"*": "os.Symlink refuses an existing path itself (ByWindows)"},
	"DIR-001":  {"RPC-SMB-NEWSMBGLOBALMAPPING": "a local path at a kubelet directory exists (LINK-003); one outside leads outside (DIR-002)"},
}

// skipFails is what skipping a restriction fails.
func skipFails(arg string) []string {
	if arg == "PIPE-001" {
		return []string{"PIPE-001"}
	}
	var out []string
	for _, r := range rulesProbing(arg) {
		if _, ok := backedUp[arg][r]; !ok {
			if _, all := backedUp[arg]["*"]; !all {
				out = append(out, r)
			}
		}
	}
	if arg == "LINK-003" { // it also keeps an SMB local path free before mapping, which NOEFF-001 sees
		out = append(out, "NOEFF-001")
	}
	return out
}
