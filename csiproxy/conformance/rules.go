// Package conformance is the csi-proxy conformance suite (Ginkgo): every
// field a host must check (a path, a volume ID, a disk, an SMB share, an
// iSCSI target, a service name) is sent every refusal case of
// csiproxy/restrict on every served version of every RPC that takes it,
// deletion included; every valid call has csi-proxy v1's documented effect,
// read back through the API; no request field reaches a command line as
// code; versions are discoverable and kept as the graduation policy says.
// It runs against the simulated host and csi-proxy's own server code (the
// reference lane) on Linux, or a real csi-proxy on Windows.
//
// The suite runs on package rulebook, the engine it shares with the fence
// suite (package sanity): its rules are one table (book, below: the API
// rules, and one refusal rule per RPC of restrict.RPCs), the spec files
// register each rule's body by ID, and the verdicts, strict mode and the
// JSON, Markdown and HTML reports are the engine's. The restrictions
// themselves (PATH-009, SMB-005, ...) are the validator's table: a refusal
// rule's report names the restriction each accepted case violates.
package conformance

import (
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// Where the rules' texts come from. A rule's Source names it, its labels
// say which (kep, csi-proxy, fenceproof: --label-filter selects by them),
// and a KEP rule's Spec quotes the KEP verbatim (TestAPIRuleQuotes).
const (
	srcKEP      = "KEP-1122 (shared/seeds/003), "
	srcCSIProxy = "csi-proxy v1's behaviour (pkg/os, pkg/server), which drivers rely on"
	srcFP       = "fenceproof's hardening (the KEP does not say)"
)

// apiRule is an API rule and where it comes from.
type apiRule struct {
	rulebook.Rule
	From restrict.Source
}

// apiRules are the suite's rules beyond the per-RPC refusals.
var apiRules = []apiRule{
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "VER-001", Level: rulebook.Must, Area: "version", Source: srcKEP + "CSI Proxy GRPC API Graduation and Deprecation Policy",
		Title: "every API group is served; disk, filesystem, smb and volume in their stable v1",
		Spec:  "12 months or 3 releases (whichever is longer) if the API member is part of a Stable/vN version."}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "VER-002", Level: rulebook.Must, Area: "version", Source: srcKEP + "CSI Proxy Named Pipes",
		Title: "every discovered endpoint answers gRPC",
		Spec:  "csi-proxy.exe will expose an API (through GRPC over a named pipe)"}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "VER-003", Level: rulebook.Info, Area: "version", Source: srcKEP + "CSI Proxy Named Pipes",
		Title: "served versions",
		Spec:  "any release of csi-proxy.exe binary will strive to maintain backward compatibility across as many prior stable versions of an API group as possible."}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "PIPE-001", Level: rulebook.Must, Area: "version", Source: srcKEP + "CSI Proxy Named Pipes",
		Title: `every endpoint is named \\.\pipe\csi-proxy-<group>-<version> with a known group`,
		Spec:  "A CSI Node Plugin will interact with csi-proxy.exe using named pipes of the form: `\\\\.\\pipe\\csi-proxy-[api-group]-[version]`."}},
	{From: restrict.FromCSIProxy, Rule: rulebook.Rule{ID: "FS-001", Level: rulebook.Must, Area: "filesystem", Source: srcCSIProxy,
		Title: "CreateSymlink (LinkPath) makes the link at target_path to source_path; IsSymlink sees it; Rmdir removes the link only",
		Spec:  "os.Symlink(source_path, target_path); drivers link the pod's publish path (target) to the staging directory (source). The KEP's LinkPath text says the link is made at source_path."}},
	{From: restrict.FromCSIProxy, Rule: rulebook.Rule{ID: "FS-002", Level: rulebook.Must, Area: "filesystem", Source: srcCSIProxy,
		Title: "Mkdir makes parents and accepts an existing directory; Rmdir refuses a non-empty directory unless forced, and forced accepts a missing one",
		Spec:  "Mkdir creates a directory at the requested path (os.MkdirAll); Rmdir removes the directory at the requested path (os.Remove, or os.RemoveAll with force)."}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "FS-003", Level: rulebook.Must, Area: "filesystem", Source: srcKEP + "LinkPathRequest",
		Title: "every valid path drawn is accepted (names with spaces, non-ASCII, ' $ ; and through a link that stays inside)",
		Spec:  "All special characters allowed by Windows in path names will be allowed except for restrictions noted below."}},
	{From: restrict.FromHardening, Rule: rulebook.Rule{ID: "NOEFF-001", Level: rulebook.Must, Area: "restriction", Source: srcFP,
		Title: "a refused request changes nothing (no link, no SMB mapping left behind)",
		Spec:  "A request refused by a restriction must not leave a partial effect on the host."}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "DISK-001", Level: rulebook.Must, Area: "disk", Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "disk locations, IDs and stats agree",
		Spec:  "ListDiskLocations returns locations <Adapter, Bus, Target, LUN ID> of all disk devices enumerated by the host ... ListDiskIDs returns a map of DiskID objects where the key is the disk number"}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "DISK-002", Level: rulebook.Must, Area: "disk", Labels: []string{"destructive"}, Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "a scratch disk goes offline and online, and is partitioned once",
		Spec:  "PartitionDisk initializes and partitions a disk device (if the disk has not been partitioned already) ... SetDiskState sets the offline/online state of a disk"}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "DISK-003", Level: rulebook.Must, Area: "disk", Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "Rescan refreshes the host's storage cache on every served version",
		Spec:  "Rescan refreshes the host's storage cache"}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "VOL-001", Level: rulebook.Must, Area: "volume", Labels: []string{"destructive"}, Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "a volume is formatted, mounted, found by path, resized, flushed and unmounted",
		Spec:  "MountVolume mounts the volume at the requested global staging path ... FormatVolume formats a volume with NTFS ... UnmountVolume gracefully dismounts a volume"}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "SMBAPI-001", Level: rulebook.Must, Area: "smb", Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "a mapping is created with its local link and removed once",
		Spec:  "NewSmbGlobalMapping creates an SMB mapping on the SMB client to an SMB share. ... RemoveSmbGlobalMapping removes the SMB mapping to an SMB share."}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "ISCSIAPI-001", Level: rulebook.Must, Area: "iscsi", Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "a portal is registered, discovered, connected (a disk appears) and removed",
		Spec:  "AddTargetPortal registers an iSCSI target network address for later discovery. ... ConnectTarget connects to an iSCSI Target ... GetTargetDisks returns the disk addresses that correspond to an iSCSI target"}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "ISCSIAPI-002", Level: rulebook.Must, Area: "iscsi", Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "a portal given port 0 is registered with port 3260",
		Spec:  "iSCSI Target port (default iSCSI port is 3260)"}},
	{From: restrict.FromKEP, Rule: rulebook.Rule{ID: "SYS-001", Level: rulebook.Must, Area: "system", Source: srcKEP + "CSI Proxy GRPC API Groups",
		Title: "the BIOS serial number is reported",
		Spec:  "GetBIOSSerialNumber returns the device's serial number"}},
	{From: restrict.FromCSIProxy, Rule: rulebook.Rule{ID: "SYS-002", Level: rulebook.Must, Area: "system", Source: srcCSIProxy,
		Title: "GetService and StartService answer for a service of the allow-list",
		Spec:  "csi-proxy system v1alpha1: GetService, StartService, StopService (the KEP's System group has none)"}},
	{From: restrict.FromCSIProxy, Rule: rulebook.Rule{ID: "INJ-001", Level: rulebook.Must, Area: "injection", Source: srcCSIProxy + " since v1.1.3 (CVE-2023-3893)",
		Title: "no request field runs as PowerShell or shell code (payloads in every string field of every served version; canaries must not appear)",
		Spec:  "csi-proxy v1.1.3 passes request fields to PowerShell as environment variables; before, it formatted them into command lines (CVE-2023-3893)."}},
	{From: restrict.FromHardening, Rule: rulebook.Rule{ID: "CODE-001", Level: rulebook.Should, Area: "codes", Source: srcFP,
		Title: "refusals carry INVALID_ARGUMENT (request) or FAILED_PRECONDITION (host state)",
		Spec:  "gRPC status codes: a bad argument is INVALID_ARGUMENT, a wrong host state FAILED_PRECONDITION"}},
}

// refusalRule is the rule of one RPC's refusals: the KEP's restrictions
// of its fields, which the profile kep probes, and the others the hardened
// profile adds.
func refusalRule(r restrict.RPC) apiRule {
	var kep, quotes, other []string
	for _, f := range r.Fields {
		for _, c := range restrict.CasesOf(f.Kind) {
			if id, ok := restrict.KEP.RuleOf(c, r, f); ok && !slices.Contains(kep, id) {
				kep = append(kep, id)
				rule, _ := restrict.RuleByID(id)
				if !slices.Contains(quotes, rule.Quote) {
					quotes = append(quotes, rule.Quote)
				}
			}
		}
	}
	for _, f := range r.Fields {
		for _, c := range restrict.CasesOf(f.Kind) {
			if !slices.Contains(kep, c.Rule) && !slices.Contains(other, c.Rule) && (c.Rule != "SYSDISK-001" || r.Changes) {
				other = append(other, c.Rule)
			}
		}
	}
	slices.Sort(kep)
	slices.Sort(other)
	rule := rulebook.Rule{ID: r.Rule(), Level: rulebook.Must, Area: "refusal", Title: r.Title(), Labels: []string{r.Group}, RPCs: []string{r.Method}}
	from := restrict.FromHardening
	if len(kep) > 0 {
		from = restrict.FromKEP
		rule.Source = srcKEP + strings.Join(kep, " ") + "; the hardened profile adds " + strings.Join(other, " ")
		rule.Spec = strings.Join(quotes, " ... ")
	} else {
		rule.Source = srcFP + ": " + strings.Join(other, " ")
		rule.Spec = "the KEP restricts no field of " + r.Method + "; the hardened profile holds each to the restrictions of its kind (csiproxy/restrict.Rules)"
	}
	return apiRule{Rule: rule, From: from}
}

// book is the suite's rule table in report order: the refusal rules (one
// per RPC of restrict.RPCs), then the API rules.
var book, sources = func() (*rulebook.Book, map[string]restrict.Source) {
	var all []apiRule
	for _, r := range restrict.RPCs {
		all = append(all, refusalRule(r))
	}
	all = append(all, apiRules...)
	var rules []rulebook.Rule
	from := map[string]restrict.Source{}
	for _, r := range all {
		r.Labels = append(slices.Clone(r.Labels), "source:"+strings.ToLower(string(r.From)))
		rules = append(rules, r.Rule)
		from[r.ID] = r.From
	}
	return rulebook.New("fenceproof csiproxy-sanity", rules...), from
}()

// sourceOf is where a rule comes from; a refusal rule is the KEP's when
// the KEP restricts one of its fields (its hardened cases are filtered
// per case).
func sourceOf(id string) restrict.Source {
	if strings.HasPrefix(id, "RPC-") {
		return restrict.FromKEP
	}
	return sources[id]
}

// Rules returns every rule of the suite, in report order.
func Rules() []rulebook.Rule { return book.Rules() }

// SelectRules returns the rules a Ginkgo label filter selects, in report
// order (no spec runs).
func SelectRules(labelFilter string) ([]rulebook.Rule, error) { return book.Select(labelFilter) }
