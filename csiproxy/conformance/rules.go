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
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// Where the rules' texts come from: KEP-1122 (Support for CSI Plugins on
// Windows Nodes, shared/seeds/003), csi-proxy v1's API and behaviour where
// the KEP is silent or was carried over unchanged from its LinkPath text.
const (
	srcAPIGroups  = "KEP-1122: CSI Proxy GRPC API Groups"
	srcPipes      = "KEP-1122: CSI Proxy Named Pipes"
	srcGraduation = "KEP-1122: CSI Proxy GRPC API Graduation and Deprecation Policy"
	srcConfig     = "KEP-1122: CSI Proxy Configuration"
	srcRisks      = "KEP-1122: Risks and Mitigations"
	srcV1         = "csi-proxy v1 (pkg/os, pkg/server) and the drivers that call it"
	srcCodes      = "gRPC status codes (the KEP does not name them)"
	srcNoEffect   = "fenceproof: a refusal leaves the host as it was (the KEP does not say)"
)

// apiRules are the suite's rules beyond the per-RPC refusals.
var apiRules = []rulebook.Rule{
	{ID: "VER-001", Level: rulebook.Must, Area: "version", Source: srcGraduation,
		Title: "every API group is served; disk, filesystem, smb and volume in their stable v1",
		Spec:  "Members of CSI Proxy API Group ... must be supported 12 months or 3 releases if part of a Stable/vN version."},
	{ID: "VER-002", Level: rulebook.Must, Area: "version", Source: srcPipes,
		Title: "every discovered endpoint answers gRPC",
		Spec:  `named pipes of the form: \\.\pipe\csi-proxy-[api-group]-[version]`},
	{ID: "VER-003", Level: rulebook.Info, Area: "version", Source: srcPipes,
		Title: "served versions",
		Spec:  "csi-proxy.exe will strive to maintain backward compatibility across as many prior stable versions of an API group as possible."},
	{ID: "PIPE-001", Level: rulebook.Must, Area: "version", Source: srcPipes,
		Title: `every endpoint is named \\.\pipe\csi-proxy-<group>-<version> with a known group`,
		Spec:  `named pipes of the form: \\.\pipe\csi-proxy-[api-group]-[version]`},
	{ID: "FS-001", Level: rulebook.Must, Area: "filesystem", Source: srcV1,
		Title: "CreateSymlink (LinkPath) makes the link at target_path to source_path; IsSymlink sees it; Rmdir removes the link only",
		Spec:  "csi-proxy v1: os.Symlink(source_path, target_path); drivers link the pod's publish path (target) to the staging directory (source). The KEP's LinkPath text says the link is made at source_path."},
	{ID: "FS-002", Level: rulebook.Must, Area: "filesystem", Source: srcV1,
		Title: "Mkdir makes parents and accepts an existing directory; Rmdir refuses a non-empty directory unless forced, and forced accepts a missing one",
		Spec:  "Mkdir creates a directory at the requested path (os.MkdirAll); Rmdir removes the directory at the requested path (os.Remove, or os.RemoveAll with force)."},
	{ID: "FS-003", Level: rulebook.Must, Area: "filesystem", Source: srcAPIGroups,
		Title: "every valid path of the table is accepted (names with spaces, non-ASCII, ' $ ; and through a link that stays inside)",
		Spec:  "All special characters allowed by Windows in path names will be allowed except for restrictions noted."},
	{ID: "NOEFF-001", Level: rulebook.Must, Area: "restriction", Source: srcNoEffect,
		Title: "a refused request changes nothing (no link, no SMB mapping left behind)",
		Spec:  "A request refused by a restriction must not leave a partial effect on the host."},
	{ID: "DISK-001", Level: rulebook.Must, Area: "disk", Source: srcAPIGroups,
		Title: "disk locations, IDs and stats agree",
		Spec:  "ListDiskLocations, ListDiskIDs, GetDiskStats"},
	{ID: "DISK-002", Level: rulebook.Must, Area: "disk", Labels: []string{"destructive"}, Source: srcAPIGroups,
		Title: "a scratch disk goes offline and online, and is partitioned once",
		Spec:  "SetDiskState/GetDiskState; PartitionDisk partitions a disk device (if the disk has not been partitioned already)"},
	{ID: "DISK-003", Level: rulebook.Must, Area: "disk", Source: srcAPIGroups,
		Title: "Rescan refreshes the host's storage cache on every served version",
		Spec:  "Rescan refreshes the host's storage cache"},
	{ID: "VOL-001", Level: rulebook.Must, Area: "volume", Labels: []string{"destructive"}, Source: srcAPIGroups,
		Title: "a volume is formatted, mounted, found by path, resized, flushed and unmounted",
		Spec:  "FormatVolume, MountVolume, GetVolumeIDFromTargetPath, ResizeVolume, GetVolumeStats, WriteVolumeCache, UnmountVolume"},
	{ID: "SMBAPI-001", Level: rulebook.Must, Area: "smb", Source: srcAPIGroups,
		Title: "a mapping is created with its local link and removed once",
		Spec:  "NewSmbGlobalMapping creates an SMB mapping; RemoveSmbGlobalMapping removes the SMB mapping"},
	{ID: "ISCSIAPI-001", Level: rulebook.Must, Area: "iscsi", Source: srcAPIGroups,
		Title: "a portal is registered, discovered, connected (a disk appears) and removed",
		Spec:  "AddTargetPortal, DiscoverTargetPortal, ConnectTarget, GetTargetDisks, DisconnectTarget, RemoveTargetPortal"},
	{ID: "ISCSIAPI-002", Level: rulebook.Must, Area: "iscsi", Source: srcAPIGroups,
		Title: "a portal given port 0 is registered with port 3260",
		Spec:  "iSCSI Target port (default iSCSI port is 3260)"},
	{ID: "SYS-001", Level: rulebook.Must, Area: "system", Source: srcAPIGroups,
		Title: "the BIOS serial number is reported",
		Spec:  "GetBIOSSerialNumber returns the device's serial number"},
	{ID: "SYS-002", Level: rulebook.Must, Area: "system", Source: srcV1,
		Title: "GetService and StartService answer for a service of the allow-list",
		Spec:  "csi-proxy system v1alpha1: GetService, StartService, StopService"},
	{ID: "INJ-001", Level: rulebook.Must, Area: "injection", Source: srcRisks,
		Title: "no request field runs as PowerShell or shell code (payloads in every string field of every served version; canaries must not appear)",
		Spec:  "The ability to exploit bugs or vulnerabilities ... to take control of the host (CVE-2023-3893: csi-proxy before v1.1.3 formatted request fields into PowerShell command lines)."},
	{ID: "CODE-001", Level: rulebook.Should, Area: "codes", Source: srcCodes,
		Title: "refusals carry INVALID_ARGUMENT (request) or FAILED_PRECONDITION (host state)",
		Spec:  "gRPC status codes: a bad argument is INVALID_ARGUMENT, a wrong host state FAILED_PRECONDITION"},
}

// refusalRule is the rule of one RPC's refusals.
func refusalRule(r restrict.RPC) rulebook.Rule {
	return rulebook.Rule{
		ID: r.Rule(), Level: rulebook.Must, Area: "refusal", Title: r.Title(), Source: srcConfig,
		Labels: []string{r.Group}, RPCs: []string{r.Method},
		Spec: "All requests for creation and deletion of paths through the CSIProxyService RPCs will need to be under this path; " +
			"and the restrictions of each field (csiproxy/restrict.Rules)",
	}
}

// book is the suite's rule table in report order: the refusal rules (one
// per RPC of restrict.RPCs), then the API rules.
var book = func() *rulebook.Book {
	var rules []rulebook.Rule
	for _, r := range restrict.RPCs {
		rules = append(rules, refusalRule(r))
	}
	return rulebook.New("fenceproof csiproxy-sanity", append(rules, apiRules...)...)
}()

// Rules returns every rule of the suite, in report order.
func Rules() []rulebook.Rule { return book.Rules() }

// SelectRules returns the rules a Ginkgo label filter selects, in report
// order (no spec runs).
func SelectRules(labelFilter string) ([]rulebook.Rule, error) { return book.Select(labelFilter) }
