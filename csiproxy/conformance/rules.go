// Package conformance is the csi-proxy conformance suite (Ginkgo): every
// restriction of csiproxy/restrict is refused on every served
// version that takes the field, every valid call has its documented effect
// read back through the API, and versions are discoverable and kept as the
// graduation policy says. It runs against the simulated host on Linux or a
// real csi-proxy on Windows.
//
// The suite runs on package rulebook, the engine it shares with the fence
// suite (package sanity): its rules are one table (book, below, which reads
// the restrictions from restrict.Rules), the spec files register each rule's
// body by ID, and the verdicts, strict mode and the JSON, Markdown and HTML
// reports are the engine's.
package conformance

import (
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// Where the rules' texts come from: KEP-1122 (Support for CSI Plugins on
// Windows Nodes, shared/seeds/003), or csi-proxy's API where the KEP is silent.
const (
	srcAPIGroups  = "KEP-1122: CSI Proxy GRPC API Groups"
	srcPipes      = "KEP-1122: CSI Proxy Named Pipes"
	srcGraduation = "KEP-1122: CSI Proxy GRPC API Graduation and Deprecation Policy"
	srcCodes      = "gRPC status codes (the KEP does not name them)"
	srcNoEffect   = "fenceproof: a refusal leaves the host as it was (the KEP does not say)"
)

// apiRules are the suite's rules beyond the restrictions.
var apiRules = []rulebook.Rule{
	{ID: "VER-001", Level: rulebook.Must, Area: "version", Source: srcGraduation,
		Title: "every API group is served; disk, filesystem, smb and volume in their stable v1",
		Spec:  "Members of CSI Proxy API Group ... must be supported 12 months or 3 releases if part of a Stable/vN version."},
	{ID: "VER-002", Level: rulebook.Must, Area: "version", Source: srcPipes,
		Title: "every discovered endpoint answers its API",
		Spec:  `named pipes of the form: \\.\pipe\csi-proxy-[api-group]-[version]`},
	{ID: "VER-003", Level: rulebook.Info, Area: "version", Source: srcPipes,
		Title: "served versions",
		Spec:  "csi-proxy.exe will strive to maintain backward compatibility across as many prior stable versions of an API group as possible."},
	{ID: "FS-001", Level: rulebook.Must, Area: "filesystem", Source: srcAPIGroups,
		Title: "a valid link is created at the source and removed by Rmdir, leaving the target",
		Spec:  "LinkPath creates a local directory symbolic link between a source path and target path"},
	{ID: "FS-002", Level: rulebook.Must, Area: "filesystem", Source: srcAPIGroups,
		Title: "Mkdir creates (parents too), PathExists sees it, Rmdir refuses a non-empty directory unless forced",
		Spec:  "Mkdir creates a directory at the requested path; Rmdir removes the directory at the requested path."},
	{ID: "FS-003", Level: rulebook.Must, Area: "filesystem", Source: srcAPIGroups,
		Title: "every valid input of the table is accepted",
		Spec:  "All special characters allowed by Windows in path names will be allowed except for restrictions noted."},
	{ID: "NOEFF-001", Level: rulebook.Must, Area: "restriction", Source: srcNoEffect,
		Title: "a refused request changes nothing",
		Spec:  "A request refused by a restriction must not leave a partial effect on the host."},
	{ID: "DISK-001", Level: rulebook.Must, Area: "disk", Source: srcAPIGroups,
		Title: "disk locations, IDs and stats agree",
		Spec:  "ListDiskLocations, ListDiskIDs, GetDiskStats"},
	{ID: "DISK-002", Level: rulebook.Must, Area: "disk", Labels: []string{"destructive"}, Source: srcAPIGroups,
		Title: "a scratch disk goes offline and online, and is partitioned once",
		Spec:  "SetDiskState/GetDiskState; PartitionDisk partitions a disk device (if the disk has not been partitioned already)"},
	{ID: "VOL-001", Level: rulebook.Must, Area: "volume", Labels: []string{"destructive"}, Source: srcAPIGroups,
		Title: "a volume is formatted, mounted, found by path, resized, flushed and unmounted",
		Spec:  "FormatVolume, MountVolume, GetVolumeIDFromTargetPath, ResizeVolume, GetVolumeStats, WriteVolumeCache, UnmountVolume"},
	{ID: "SMBAPI-001", Level: rulebook.Must, Area: "smb", Source: srcAPIGroups,
		Title: "a mapping is created with its local link and removed once",
		Spec:  "NewSmbGlobalMapping creates an SMB mapping; RemoveSmbGlobalMapping removes the SMB mapping"},
	{ID: "ISCSIAPI-001", Level: rulebook.Must, Area: "iscsi", Source: srcAPIGroups,
		Title: "a portal is registered, discovered, connected (a disk appears) and removed",
		Spec:  "AddTargetPortal, DiscoverTargetPortal, ConnectTarget, GetTargetDisks, DisconnectTarget, RemoveTargetPortal"},
	{ID: "SYS-001", Level: rulebook.Must, Area: "system", Source: srcAPIGroups,
		Title: "the BIOS serial number is reported",
		Spec:  "GetBIOSSerialNumber returns the device's serial number"},
	{ID: "CODE-001", Level: rulebook.Should, Area: "codes", Source: srcCodes,
		Title: "refusals carry INVALID_ARGUMENT (request) or FAILED_PRECONDITION (host state)",
		Spec:  "gRPC status codes: a bad argument is INVALID_ARGUMENT, a wrong host state FAILED_PRECONDITION"},
}

// restriction is the rule of one restriction of the validator's table: a
// MUST, in the area its ID names, labelled host-state when it depends on
// the host's state.
func restriction(r restrict.Rule) rulebook.Rule {
	area, _, _ := strings.Cut(r.ID, "-")
	rule := rulebook.Rule{ID: r.ID, Level: rulebook.Must, Area: strings.ToLower(area), Title: r.Title, Spec: r.Spec, Source: srcAPIGroups}
	if r.ID == "PIPE-001" {
		rule.Source = srcPipes
	}
	if r.State {
		rule.Labels = []string{"host-state"}
	}
	return rule
}

// book is the suite's rule table in report order: the restrictions (all
// MUST, read from restrict.Rules), then the API rules.
var book = func() *rulebook.Book {
	var rules []rulebook.Rule
	for _, r := range restrict.Rules {
		rules = append(rules, restriction(r))
	}
	return rulebook.New("fenceproof csiproxy-sanity", append(rules, apiRules...)...)
}()

// Rules returns every rule of the suite, in report order.
func Rules() []rulebook.Rule { return book.Rules() }

// SelectRules returns the rules a Ginkgo label filter selects, in report
// order (no spec runs).
func SelectRules(labelFilter string) ([]rulebook.Rule, error) { return book.Select(labelFilter) }
