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
// request, what it holds, and whether the RPC creates or deletes what it
// names (the KEP's "creation and deletion of paths").
type Field struct {
	Name    string
	Kind    Kind
	Changed bool
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
	{Group: "filesystem", Method: "PathExists", Fields: []Field{{"Path", KindPath, false}}},
	{Group: "filesystem", Method: "Mkdir", Fields: []Field{{"Path", KindPath, true}}, Changes: true},
	{Group: "filesystem", Method: "Rmdir", Fields: []Field{{"Path", KindPath, true}}, Changes: true},
	{Group: "filesystem", Method: "RmdirContents", Fields: []Field{{"Path", KindPath, true}}, Changes: true},
	{Group: "filesystem", Method: "CreateSymlink", Fields: []Field{{"SourcePath", KindLinkSource, false}, {"TargetPath", KindLinkTarget, true}}, Changes: true},
	{Group: "filesystem", Method: "IsSymlink", Fields: []Field{{"Path", KindPath, false}}},
	{Group: "volume", Method: "MountVolume", Fields: []Field{{"VolumeId", KindVolumeID, false}, {"TargetPath", KindPath, false}}, Changes: true},
	{Group: "volume", Method: "UnmountVolume", Fields: []Field{{"VolumeId", KindVolumeID, false}, {"TargetPath", KindPath, false}}, Changes: true},
	{Group: "volume", Method: "IsVolumeFormatted", Fields: []Field{{"VolumeId", KindVolumeID, false}}},
	{Group: "volume", Method: "FormatVolume", Fields: []Field{{"VolumeId", KindVolumeID, false}}, Changes: true},
	{Group: "volume", Method: "ResizeVolume", Fields: []Field{{"VolumeId", KindVolumeID, false}}, Changes: true},
	{Group: "volume", Method: "GetVolumeStats", Fields: []Field{{"VolumeId", KindVolumeID, false}}},
	{Group: "volume", Method: "GetDiskNumberFromVolumeID", Fields: []Field{{"VolumeId", KindVolumeID, false}}},
	{Group: "volume", Method: "GetVolumeIDFromTargetPath", Fields: []Field{{"TargetPath", KindPath, false}}},
	{Group: "volume", Method: "GetClosestVolumeIDFromTargetPath", Fields: []Field{{"TargetPath", KindPath, false}}},
	{Group: "volume", Method: "WriteVolumeCache", Fields: []Field{{"VolumeId", KindVolumeID, false}}},
	{Group: "disk", Method: "PartitionDisk", Fields: []Field{{"DiskNumber", KindDisk, false}}, Changes: true},
	{Group: "disk", Method: "SetDiskState", Fields: []Field{{"DiskNumber", KindDisk, false}}, Changes: true},
	{Group: "smb", Method: "NewSmbGlobalMapping", Fields: []Field{{"RemotePath", KindSMBRemote, false}, {"LocalPath", KindPath, true}, {"Username", KindFree, false}, {"Password", KindFree, false}}, Changes: true},
	{Group: "smb", Method: "RemoveSmbGlobalMapping", Fields: []Field{{"RemotePath", KindSMBRemote, false}}, Changes: true},
	{Group: "iscsi", Method: "AddTargetPortal", Fields: []Field{{"TargetPortal", KindPortal, false}}, Changes: true},
	{Group: "iscsi", Method: "DiscoverTargetPortal", Fields: []Field{{"TargetPortal", KindPortal, false}}},
	{Group: "iscsi", Method: "RemoveTargetPortal", Fields: []Field{{"TargetPortal", KindPortal, false}}, Changes: true},
	{Group: "iscsi", Method: "ConnectTarget", Fields: []Field{{"TargetPortal", KindPortal, false}, {"Iqn", KindIQN, false}, {"ChapUsername", KindFree, false}, {"ChapSecret", KindFree, false}}, Changes: true},
	{Group: "iscsi", Method: "DisconnectTarget", Fields: []Field{{"TargetPortal", KindPortal, false}, {"Iqn", KindIQN, false}}, Changes: true},
	{Group: "iscsi", Method: "GetTargetDisks", Fields: []Field{{"TargetPortal", KindPortal, false}, {"Iqn", KindIQN, false}}},
	{Group: "iscsi", Method: "SetMutualChapSecret", Fields: []Field{{"MutualChapSecret", KindMutualCHAP, false}}, Changes: true},
	{Group: "system", Method: "GetService", Fields: []Field{{"Name", KindService, false}}},
	{Group: "system", Method: "StartService", Fields: []Field{{"Name", KindService, false}}, Changes: true},
	{Group: "system", Method: "StopService", Fields: []Field{{"Name", KindService, false}}, Changes: true},
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
