package restrict

import "strings"

// Kind is what a request field holds, and so which refusal cases it gets.
type Kind string

// Kinds of field.
const (
	KindPath       Kind = "path"        // a path strictly below a kubelet directory
	KindLinkSource Kind = "link-source" // CreateSymlink's source_path, below the plugins path
	KindLinkTarget Kind = "link-target" // CreateSymlink's target_path, below the pod path
	KindVolumeID   Kind = "volume-id"   // \\?\Volume{GUID}\
	KindDisk       Kind = "disk"        // a disk number
	KindSMBRemote  Kind = "smb-remote"  // \\server\share[\path]
	KindPortal     Kind = "portal"      // an iSCSI target portal (address and port)
	KindIQN        Kind = "iqn"         // an iSCSI qualified name
	KindMutualCHAP Kind = "mutual-chap" // the initiator's mutual CHAP secret
	KindService    Kind = "service"     // a Windows service name
	KindFree       Kind = "free"        // free text no rule restricts (credentials, disk names)
)

// Field is one request field: its name in csiproxy/api's version-neutral
// request and what it holds.
type Field struct {
	Name string
	Kind Kind
}

// RPC is one method that takes a path, a volume ID, a disk number or a
// name, by its version-neutral name (csiproxy/api), with the fields a host
// must check before acting; every served version of it gets the refusal
// cases of every field (Cases), and its conformance rule is Rule.
type RPC struct {
	Group, Method string
	Fields        []Field
	// Changes: the RPC changes the host (creates, deletes, mounts,
	// formats, starts, stops), so SYSDISK-001 applies to its disk and
	// volume fields.
	Changes bool
}

// Rule is the conformance rule of the RPC's refusals, e.g. RPC-FS-RMDIR.
func (r RPC) Rule() string {
	g := map[string]string{"filesystem": "FS", "volume": "VOL", "disk": "DISK", "smb": "SMB", "iscsi": "ISCSI", "system": "SYS"}[r.Group]
	return "RPC-" + g + "-" + strings.ToUpper(r.Method)
}

// Title says what the RPC's rule holds.
func (r RPC) Title() string {
	var names []string
	for _, f := range r.Fields {
		if f.Kind != KindFree {
			names = append(names, f.Name)
		}
	}
	return r.Group + " " + r.Method + " refuses every bad " + strings.Join(names, ", ") + " on every served version"
}

// RPCs is every method whose fields a host must check, declared once.
var RPCs = []RPC{
	{Group: "filesystem", Method: "PathExists", Fields: []Field{{"Path", KindPath}}},
	{Group: "filesystem", Method: "Mkdir", Fields: []Field{{"Path", KindPath}}, Changes: true},
	{Group: "filesystem", Method: "Rmdir", Fields: []Field{{"Path", KindPath}}, Changes: true},
	{Group: "filesystem", Method: "RmdirContents", Fields: []Field{{"Path", KindPath}}, Changes: true},
	{Group: "filesystem", Method: "CreateSymlink", Fields: []Field{{"SourcePath", KindLinkSource}, {"TargetPath", KindLinkTarget}}, Changes: true},
	{Group: "filesystem", Method: "IsSymlink", Fields: []Field{{"Path", KindPath}}},
	{Group: "volume", Method: "MountVolume", Fields: []Field{{"VolumeId", KindVolumeID}, {"TargetPath", KindPath}}, Changes: true},
	{Group: "volume", Method: "UnmountVolume", Fields: []Field{{"VolumeId", KindVolumeID}, {"TargetPath", KindPath}}, Changes: true},
	{Group: "volume", Method: "IsVolumeFormatted", Fields: []Field{{"VolumeId", KindVolumeID}}},
	{Group: "volume", Method: "FormatVolume", Fields: []Field{{"VolumeId", KindVolumeID}}, Changes: true},
	{Group: "volume", Method: "ResizeVolume", Fields: []Field{{"VolumeId", KindVolumeID}}, Changes: true},
	{Group: "volume", Method: "GetVolumeStats", Fields: []Field{{"VolumeId", KindVolumeID}}},
	{Group: "volume", Method: "GetDiskNumberFromVolumeID", Fields: []Field{{"VolumeId", KindVolumeID}}},
	{Group: "volume", Method: "GetVolumeIDFromTargetPath", Fields: []Field{{"TargetPath", KindPath}}},
	{Group: "volume", Method: "GetClosestVolumeIDFromTargetPath", Fields: []Field{{"TargetPath", KindPath}}},
	{Group: "volume", Method: "WriteVolumeCache", Fields: []Field{{"VolumeId", KindVolumeID}}},
	{Group: "disk", Method: "PartitionDisk", Fields: []Field{{"DiskNumber", KindDisk}}, Changes: true},
	{Group: "disk", Method: "SetDiskState", Fields: []Field{{"DiskNumber", KindDisk}}, Changes: true},
	{Group: "smb", Method: "NewSmbGlobalMapping", Fields: []Field{{"RemotePath", KindSMBRemote}, {"LocalPath", KindPath}, {"Username", KindFree}, {"Password", KindFree}}, Changes: true},
	{Group: "smb", Method: "RemoveSmbGlobalMapping", Fields: []Field{{"RemotePath", KindSMBRemote}}, Changes: true},
	{Group: "iscsi", Method: "AddTargetPortal", Fields: []Field{{"TargetPortal", KindPortal}}, Changes: true},
	{Group: "iscsi", Method: "DiscoverTargetPortal", Fields: []Field{{"TargetPortal", KindPortal}}},
	{Group: "iscsi", Method: "RemoveTargetPortal", Fields: []Field{{"TargetPortal", KindPortal}}, Changes: true},
	{Group: "iscsi", Method: "ConnectTarget", Fields: []Field{{"TargetPortal", KindPortal}, {"Iqn", KindIQN}, {"ChapUsername", KindFree}, {"ChapSecret", KindFree}}, Changes: true},
	{Group: "iscsi", Method: "DisconnectTarget", Fields: []Field{{"TargetPortal", KindPortal}, {"Iqn", KindIQN}}, Changes: true},
	{Group: "iscsi", Method: "GetTargetDisks", Fields: []Field{{"TargetPortal", KindPortal}, {"Iqn", KindIQN}}},
	{Group: "iscsi", Method: "SetMutualChapSecret", Fields: []Field{{"MutualChapSecret", KindMutualCHAP}}, Changes: true},
	{Group: "system", Method: "GetService", Fields: []Field{{"Name", KindService}}},
	{Group: "system", Method: "StartService", Fields: []Field{{"Name", KindService}}, Changes: true},
	{Group: "system", Method: "StopService", Fields: []Field{{"Name", KindService}}, Changes: true},
}

// RPCByMethod finds an RPC by group and version-neutral method.
func RPCByMethod(group, method string) (RPC, bool) {
	for _, r := range RPCs {
		if r.Group == group && r.Method == method {
			return r, true
		}
	}
	return RPC{}, false
}

// RPCByRule finds an RPC by its rule ID.
func RPCByRule(id string) (RPC, bool) {
	for _, r := range RPCs {
		if r.Rule() == id {
			return r, true
		}
	}
	return RPC{}, false
}
