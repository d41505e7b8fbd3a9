// Package conformance is the csi-proxy conformance suite (Ginkgo): every
// restriction of csiproxy/restrict is refused on every served
// version that takes the field, every valid call has its documented effect
// read back through the API, and versions are discoverable and kept as the
// graduation policy says. It runs against the simulated host on Linux or a
// real csi-proxy on Windows.
package conformance

import (
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// Level weighs a rule in the verdict (RFC 2119); only MUST failures fail a
// run.
type Level string

// Levels.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	Info   Level = "INFO"
)

// Rule is one conformance rule.
type Rule struct {
	ID    string `json:"id"`
	Level Level  `json:"level"`
	Title string `json:"title"`
	Spec  string `json:"spec"`
}

// APIRules are the suite's rules beyond the restrictions.
var APIRules = []Rule{
	{"VER-001", Must, "every API group is served; disk, filesystem, smb and volume in their stable v1", "Members of CSI Proxy API Group ... must be supported 12 months or 3 releases if part of a Stable/vN version."},
	{"VER-002", Must, "every discovered endpoint answers its API", `named pipes of the form: \\.\pipe\csi-proxy-[api-group]-[version]`},
	{"VER-003", Info, "served versions", "csi-proxy.exe will strive to maintain backward compatibility across as many prior stable versions of an API group as possible."},
	{"FS-001", Must, "a valid link is created at the source and removed by Rmdir, leaving the target", "LinkPath creates a local directory symbolic link between a source path and target path"},
	{"FS-002", Must, "Mkdir creates (parents too), PathExists sees it, Rmdir refuses a non-empty directory unless forced", "Mkdir creates a directory at the requested path; Rmdir removes the directory at the requested path."},
	{"FS-003", Must, "every valid input of the table is accepted", "All special characters allowed by Windows in path names will be allowed except for restrictions noted."},
	{"NOEFF-001", Must, "a refused request changes nothing", "A request refused by a restriction must not leave a partial effect on the host."},
	{"DISK-001", Must, "disk locations, IDs and stats agree", "ListDiskLocations, ListDiskIDs, GetDiskStats"},
	{"DISK-002", Must, "a scratch disk goes offline and online, and is partitioned once", "SetDiskState/GetDiskState; PartitionDisk partitions a disk device (if the disk has not been partitioned already)"},
	{"VOL-001", Must, "a volume is formatted, mounted, found by path, resized, flushed and unmounted", "FormatVolume, MountVolume, GetVolumeIDFromTargetPath, ResizeVolume, GetVolumeStats, WriteVolumeCache, UnmountVolume"},
	{"SMBAPI-001", Must, "a mapping is created with its local link and removed once", "NewSmbGlobalMapping creates an SMB mapping; RemoveSmbGlobalMapping removes the SMB mapping"},
	{"ISCSIAPI-001", Must, "a portal is registered, discovered, connected (a disk appears) and removed", "AddTargetPortal, DiscoverTargetPortal, ConnectTarget, GetTargetDisks, DisconnectTarget, RemoveTargetPortal"},
	{"SYS-001", Must, "the BIOS serial number is reported", "GetBIOSSerialNumber returns the device's serial number"},
	{"CODE-001", Should, "refusals carry INVALID_ARGUMENT (request) or FAILED_PRECONDITION (host state)", "gRPC status codes: a bad argument is INVALID_ARGUMENT, a wrong host state FAILED_PRECONDITION"},
}

// AllRules is every rule of the suite in report order: the restrictions
// (all MUST), then the API rules.
func AllRules() []Rule {
	var out []Rule
	for _, r := range restrict.Rules {
		out = append(out, Rule{ID: r.ID, Level: Must, Title: r.Title, Spec: r.Spec})
	}
	return append(out, APIRules...)
}

// RuleByID finds a rule.
func RuleByID(id string) (Rule, bool) {
	for _, r := range AllRules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
