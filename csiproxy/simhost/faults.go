package simhost

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// Faults are the deliberately broken behaviours of the simulated host, for
// proving that the conformance suite catches each. The zero value is the
// faithful host.
type Faults struct {
	// Skip holds restriction rule IDs the host does not enforce.
	Skip map[string]bool
	// NoValidate holds RPCs ("group.Method") that act without any check.
	NoValidate map[string]bool
	// Drop holds "group/version" pairs the host does not serve.
	Drop map[string]bool
	// Interpolate holds environment variables winos splices into its
	// command lines instead of passing them.
	Interpolate map[string]bool
	// NoEffect: valid Mkdir, CreateSymlink and NewSmbGlobalMapping return
	// OK and do nothing.
	NoEffect bool
	// EffectBeforeCheck: CreateSymlink makes the link before checking the
	// directory it links to, and keeps it when it then refuses.
	EffectBeforeCheck bool
	// UnknownCode: refusals carry UNKNOWN instead of INVALID_ARGUMENT /
	// FAILED_PRECONDITION (what csi-proxy v1.1.3 does).
	UnknownCode bool
	// NoDefaultPort: a portal with port 0 is used with port 0.
	NoDefaultPort bool
	// LinkAtSource: CreateSymlink makes the link at source_path pointing
	// to target_path (one reading of the KEP's LinkPath text), not at
	// target_path as csi-proxy v1 does.
	LinkAtSource bool
	// Break holds the names of single broken behaviours (breaks).
	Break map[string]bool
}

// breaks are single broken behaviours, each failing one API rule.
var breaks = []struct{ name, doc, fails string }{
	{"dead-endpoint", "serve one more csi-proxy pipe that does not speak gRPC", "VER-002"},
	{"mkdir-not-idempotent", "Mkdir of an existing directory fails (csi-proxy v1's os.MkdirAll accepts it)", "FS-002"},
	{"rmdir-follows-link", "Rmdir of a link removes what it points to as well", "FS-001"},
	{"ascii-only", "paths with characters outside ASCII are refused", "FS-003"},
	{"disk-ids-missing", "ListDiskIDs leaves out the last disk", "DISK-001"},
	{"state-not-kept", "SetDiskState answers OK and changes nothing", "DISK-002"},
	{"rescan-fails", "Rescan fails", "DISK-003"},
	{"unmount-keeps-mount", "UnmountVolume answers OK and leaves the volume mounted", "VOL-001"},
	{"smb-no-link", "NewSmbGlobalMapping makes no link at local_path", "SMBAPI-001"},
	{"map-before-local-check", "NewSmbGlobalMapping maps before finding its local_path taken, and keeps the mapping", "NOEFF-001"},
	{"disconnect-keeps-target", "DisconnectTarget answers OK and stays connected", "ISCSIAPI-001"},
	{"no-serial", "GetBIOSSerialNumber answers an empty serial number", "SYS-001"},
	{"service-status-unknown", "GetService reports every service's status as UNKNOWN", "SYS-002"},
}

// broken reports whether a break is injected.
func (s *Sim) broken(name string) bool { return s.cfg.Faults.Break[name] }

// Fault is one kind of fault, declared once: its spec name, what its
// argument is, the arguments it takes (nil: none), how it breaks the host,
// and the conformance rules a correct suite fails against it (for an
// argument).
type Fault struct {
	Name, Arg, Doc string
	Args           func() []string
	apply          func(f *Faults, arg string)
	// Fails is the exact set of rules a run against the host fails.
	Fails func(arg string) []string
}

// Rules an RPC refusal fault fails: the rule of every RPC one of whose
// fields gets a case of the restriction.
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
	"PATH-011": {"*": "a device name leads to the device: DIR-002 refuses a path, LINK-004 a link source (not a directory)"},
	"DIR-001":  {"RPC-SMB-NEWSMBGLOBALMAPPING": "a local path at a kubelet directory exists (LINK-003); one outside leads outside (DIR-002)"},
}

// stable are the groups' stable versions VER-001 requires.
var stable = []string{"disk/v1", "filesystem/v1", "smb/v1", "volume/v1"}

// groupVersions is every served group version.
func groupVersions() []string {
	var out []string
	for _, gv := range api.Versions {
		out = append(out, gv.Group+"/"+gv.Version)
	}
	return out
}

// injectable are the environment variables of csi-proxy's command lines
// whose request fields carry a payload past a correct host's checks
// (credentials, and paths, whose valid characters include ' ; $ ( )).
var injectable = []string{"smbuser", "smbpassword", "iscsi_chap_user", "iscsi_chap_secret", "mountpath"}

func none(string) []string { return nil }

// Kinds is the table of faults.
var Kinds = []Fault{
	{Name: "skip", Arg: "RULE-ID", Doc: "do not enforce one restriction (any ID of restrict.Rules)",
		Args: func() []string {
			var out []string
			for _, r := range restrict.Rules {
				out = append(out, r.ID)
			}
			return out
		},
		apply: func(f *Faults, arg string) { f.Skip[arg] = true },
		Fails: func(arg string) []string {
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
		}},
	{Name: "novalidate", Arg: "GROUP.Method", Doc: "one RPC acts without any check (any RPC of restrict.RPCs)",
		Args: func() []string {
			var out []string
			for _, r := range restrict.RPCs {
				out = append(out, r.Group+"."+r.Method)
			}
			return out
		},
		apply: func(f *Faults, arg string) { f.NoValidate[arg] = true },
		Fails: func(arg string) []string {
			g, m, _ := strings.Cut(arg, ".")
			r, _ := restrict.RPCByMethod(g, m)
			return []string{r.Rule()}
		}},
	{Name: "drop", Arg: "GROUP/VERSION", Doc: "do not serve one group version", Args: groupVersions,
		apply: func(f *Faults, arg string) { f.Drop[arg] = true },
		Fails: func(arg string) []string {
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
		}},
	{Name: "interpolate", Arg: "ENV", Doc: "splice one request field into the PowerShell command line (CVE-2023-3893's shape)",
		Args:  func() []string { return injectable },
		apply: func(f *Faults, arg string) { f.Interpolate[arg] = true },
		Fails: func(string) []string { return []string{"INJ-001"} }},
	{Name: "no-effect", Doc: "valid Mkdir, CreateSymlink and NewSmbGlobalMapping return OK and change nothing",
		apply: func(f *Faults, _ string) { f.NoEffect = true },
		Fails: func(string) []string { return []string{"FS-001", "FS-002", "FS-003", "VOL-001", "SMBAPI-001"} }},
	{Name: "effect-before-check", Doc: "CreateSymlink makes the link before checking what it links to and keeps it on refusal",
		apply: func(f *Faults, _ string) { f.EffectBeforeCheck = true },
		// its refusals come after a Windows call, which the refusal rule sees too
		Fails: func(string) []string { return []string{"NOEFF-001", "RPC-FS-CREATESYMLINK"} }},
	{Name: "unknown-code", Doc: "refusals carry UNKNOWN instead of INVALID_ARGUMENT / FAILED_PRECONDITION (a SHOULD: CODE-001 warns)",
		apply: func(f *Faults, _ string) { f.UnknownCode = true }, Fails: none},
	{Name: "no-default-port", Doc: "a portal given with port 0 is kept with port 0 instead of 3260",
		apply: func(f *Faults, _ string) { f.NoDefaultPort = true },
		Fails: func(string) []string { return []string{"ISCSIAPI-002"} }},
	{Name: "link-at-source", Doc: "CreateSymlink makes the link at source_path pointing to target_path (the KEP's LinkPath wording), not at target_path as csi-proxy v1 does",
		apply: func(f *Faults, _ string) { f.LinkAtSource = true },
		Fails: func(string) []string { return []string{"FS-001", "FS-003"} }},
	{Name: "break", Arg: "BEHAVIOUR", Doc: "break one behaviour an API rule checks",
		Args: func() []string {
			var out []string
			for _, b := range breaks {
				out = append(out, b.name)
			}
			return out
		},
		apply: func(f *Faults, arg string) { f.Break[arg] = true },
		Fails: func(arg string) []string {
			for _, b := range breaks {
				if b.name == arg {
					return []string{b.fails}
				}
			}
			return nil
		}},
}

// KindOf finds a fault kind by name.
func KindOf(name string) (Fault, bool) {
	i := slices.IndexFunc(Kinds, func(k Fault) bool { return k.Name == name })
	if i < 0 {
		return Fault{}, false
	}
	return Kinds[i], true
}

// Specs lists every fault spec: each plain fault, and each argument of the
// others ("skip=PATH-001", "novalidate=filesystem.Rmdir", ...).
func Specs() []string {
	var out []string
	for _, k := range Kinds {
		if k.Args == nil {
			out = append(out, k.Name)
			continue
		}
		for _, a := range k.Args() {
			out = append(out, k.Name+"="+a)
		}
	}
	return out
}

// ExpectedFailures is the sorted set of rules a run against the host with
// the given fault specs fails.
func ExpectedFailures(specs ...string) ([]string, error) {
	set := map[string]bool{}
	for _, s := range specs {
		name, arg, _ := strings.Cut(s, "=")
		k, ok := KindOf(name)
		if !ok {
			return nil, fmt.Errorf("unknown fault %q", s)
		}
		for _, r := range k.Fails(arg) {
			set[r] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out, nil
}

// ParseFaults parses fault specs ("name" or "name=arg"); an unknown name or
// argument is an error naming the valid ones.
func ParseFaults(specs []string) (Faults, error) {
	f := Faults{Skip: map[string]bool{}, NoValidate: map[string]bool{}, Drop: map[string]bool{}, Interpolate: map[string]bool{}, Break: map[string]bool{}}
	for _, s := range specs {
		name, arg, hasArg := strings.Cut(s, "=")
		k, ok := KindOf(name)
		if !ok {
			var names []string
			for _, k := range Kinds {
				n := k.Name
				if k.Arg != "" {
					n += "=" + k.Arg
				}
				names = append(names, n)
			}
			return f, fmt.Errorf("unknown fault %q (known: %s)", s, strings.Join(names, ", "))
		}
		if (k.Args != nil) != hasArg || (k.Args != nil && !slices.Contains(k.Args(), arg)) {
			if k.Args == nil {
				return f, fmt.Errorf("fault %q takes no argument", name)
			}
			return f, fmt.Errorf("fault %q: %q is not one of %s", name, arg, strings.Join(k.Args(), ", "))
		}
		k.apply(&f, arg)
	}
	return f, nil
}
