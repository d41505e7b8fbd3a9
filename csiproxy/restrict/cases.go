package restrict

import (
	"strings"
)

// Make is what a probe needs on the host before it is sent.
type Make string

// What a probe needs.
const (
	MakeNothing Make = ""
	// MakeDir: a directory at the value (LINK-003: the link's path exists).
	MakeDir Make = "dir"
)

// Case is one refusal probe of a field kind: a value that violates exactly
// one rule. The faithful validator refuses it with that rule and a
// validator skipping that rule accepts it (TestEveryCaseViolatesExactlyItsRule;
// state cases are judged from host state, TestStateCases). The conformance
// suite sends every case of a kind in every field of that kind, on every
// served version.
//
// Values hold placeholders Expand fills: {dir} is the kubelet directory
// the field belongs below ({plugins} for a link source, {pods} otherwise),
// {other} the other one, {dirrel} {dir} without its drive and first
// separator, {dirnodrive} without its drive, {s} a fresh name, {pad}
// characters up to 261, {escape} a symbolic link below the pod path that
// leads outside the kubelet directories (below {dir}, named Place.Escape),
// {osdisk} and {osvolume} the disk
// and volume the OS runs from, {smbserver} and {smbshare} the configured
// reachable share, {portal} the configured reachable portal address.
type Case struct {
	Rule  string
	Name  string
	Kind  Kind
	Value string
	// Port is a portal case's port; the address is Value.
	Port uint32
	Make Make
	// ByWindows: Windows refuses the case itself, atomically, with no
	// effect (os.Symlink onto an existing path), so a refusal by the
	// Windows call counts; a check before it could only race it.
	ByWindows bool
}

// pathKinds are the field kinds that hold paths.
var pathKinds = []Kind{KindPath, KindLinkSource, KindLinkTarget}

// pathCases are the syntax cases every path kind gets.
var pathCases = []struct{ rule, name, value string }{
	{"PATH-001", "relative", `{dirrel}\{s}`},
	{"PATH-001", "drive-relative", `C:{s}`},
	{"PATH-001", "rooted, no drive", `{dirnodrive}\{s}`},
	{"PATH-002", "slash separator", `{dir}/{s}`},
	{"PATH-003", `\\?\ prefix`, `\\?\{dir}\{s}`},
	{"PATH-003", `\\.\ prefix`, `\\.\{dir}\{s}`},
	{"PATH-003", `UNC to localhost C$`, `\\localhost\C${dirnodrive}\{s}`},
	{"PATH-003", `UNC to 127.0.0.1 c$`, `\\127.0.0.1\c${dirnodrive}\{s}`},
	{"PATH-003", "UNC to a file server", `\\{smbserver}\{smbshare}\{s}`},
	{"PATH-004", "escapes to C:\\Windows", `{dir}\..\..\..\..\..\..\Windows\Temp\{s}`},
	{"PATH-004", "'..' back into itself", `{dir}\{s}\..\{s}`},
	{"PATH-005", "alternate data stream", `{dir}\{s}:fp`},
	{"PATH-005", "::$INDEX_ALLOCATION", `{dir}\{s}::$INDEX_ALLOCATION`},
	{"PATH-005", "::$DATA", `{dir}\{s}::$DATA`},
	{"PATH-006", "wildcard", `{dir}\{s}*`},
	{"PATH-006", "pipe character", `{dir}\{s}|x`},
	{"PATH-006", "question mark", `{dir}\{s}?`},
	{"PATH-006", "angle bracket", `{dir}\{s}<x`},
	{"PATH-006", "double quote", `{dir}\{s}"`},
	{"PATH-007", "261 characters", `{dir}\{s}{pad}`},
	{"PATH-008", "tab", "{dir}\\{s}\tx"},
	{"PATH-008", "NUL", "{dir}\\{s}\x00x"},
	{"PATH-009", `"." component`, `{dir}\{s}\.`},
	{"PATH-009", `"." components and a trailing separator`, `{dir}\{s}\.\.\`},
	{"PATH-009", "empty component", `{dir}\\{s}`},
	{"PATH-010", "space component", `{dir}\{s}\ `},
	{"PATH-010", "dot-space component", `{dir}\{s}\. `},
	{"PATH-010", "trailing dot", `{dir}\{s}.`},
	{"PATH-010", "trailing space", `{dir}\{s} `},
	{"PATH-011", "CON", `{dir}\CON`},
	{"PATH-011", "nul", `{dir}\nul`},
	{"PATH-011", "COM1.txt", `{dir}\COM1.txt`},
	{"PATH-011", "CONIN$", `{dir}\CONIN$`},
	{"PATH-011", "conout$.log", `{dir}\conout$.log`},
	{"PATH-011", "LPT¹", `{dir}\LPT¹`},
	{"PATH-011", "AUX below a fresh name", `{dir}\{s}\AUX`},
	{"PATH-012", "8.3 alias of a fresh name", `{dir}\{s}~1`},
	{"PATH-012", "8.3 alias with extension", `{dir}\FENCEP~1.TXT`},
}

// Cases is the refusal table, declared once.
var Cases = func() []Case {
	var out []Case
	for _, k := range pathKinds {
		for _, c := range pathCases {
			out = append(out, Case{Rule: c.rule, Name: c.name, Kind: k, Value: c.value})
		}
	}
	return append(out, []Case{
		{Rule: "DIR-001", Name: "in C:\\Windows\\Temp", Kind: KindPath, Value: `C:\Windows\Temp\{s}`},
		{Rule: "DIR-001", Name: "beside the pod path (prefix without a separator)", Kind: KindPath, Value: `{dir}-{s}`},
		{Rule: "DIR-001", Name: "the pod path itself", Kind: KindPath, Value: `{dir}`},
		{Rule: "DIR-001", Name: "the pod path with a trailing separator", Kind: KindPath, Value: `{dir}\`},
		{Rule: "DIR-001", Name: "the kubelet directory", Kind: KindPath, Value: `C:\var\lib\kubelet\{s}`},
		{Rule: "DIR-001", Name: "Kelvin sign for K (NTFS does not fold it)", Kind: KindPath, Value: "C:\\var\\lib\\\u212aubelet\\pods\\{s}"},
		{Rule: "LINK-001", Name: "source in C:\\Windows\\Temp", Kind: KindLinkSource, Value: `C:\Windows\Temp\{s}`},
		{Rule: "LINK-001", Name: "source beside the plugins path", Kind: KindLinkSource, Value: `{dir}-{s}`},
		{Rule: "LINK-001", Name: "source in the pod path", Kind: KindLinkSource, Value: `{other}\{s}`},
		{Rule: "LINK-001", Name: "source is the plugins path itself", Kind: KindLinkSource, Value: `{dir}`},
		{Rule: "LINK-002", Name: "target in the plugins path", Kind: KindLinkTarget, Value: `{other}\{s}`},
		{Rule: "LINK-002", Name: "target in C:\\Windows\\Temp", Kind: KindLinkTarget, Value: `C:\Windows\Temp\{s}`},
		{Rule: "LINK-002", Name: "target is the pod path itself", Kind: KindLinkTarget, Value: `{dir}`},
		{Rule: "LINK-003", Name: "target exists", Kind: KindLinkTarget, Value: `{dir}\{s}`, Make: MakeDir, ByWindows: true},
		{Rule: "LINK-004", Name: "source does not exist", Kind: KindLinkSource, Value: `{dir}\{s}`},
		{Rule: "LINK-005", Name: "source is a link leading outside", Kind: KindLinkSource, Value: `{escape}`},
		{Rule: "DIR-002", Name: "through a link leading outside", Kind: KindPath, Value: `{escape}\{s}`},
		{Rule: "DIR-002", Name: "link target through a link leading outside", Kind: KindLinkTarget, Value: `{escape}\{s}`},
		{Rule: "VOLID-001", Name: "a drive", Kind: KindVolumeID, Value: `C:\`},
		{Rule: "VOLID-001", Name: "without the \\\\?\\ prefix", Kind: KindVolumeID, Value: `Volume{f3e9c0de-0000-4000-8000-000000000001}\`},
		{Rule: "VOLID-001", Name: "a device path", Kind: KindVolumeID, Value: `\\?\GLOBALROOT\Device\HarddiskVolume1`},
		{Rule: "VOLID-001", Name: "a GUID that is not one", Kind: KindVolumeID, Value: `\\?\Volume{fenceproof}\`},
		{Rule: "VOLID-001", Name: "empty", Kind: KindVolumeID, Value: ``},
		{Rule: "SYSDISK-001", Name: "the OS volume", Kind: KindVolumeID, Value: `{osvolume}`},
		{Rule: "SYSDISK-001", Name: "the OS disk", Kind: KindDisk, Value: `{osdisk}`},
		{Rule: "SMB-001", Name: "no leading separators", Kind: KindSMBRemote, Value: `{smbserver}\{smbshare}`},
		{Rule: "SMB-001", Name: "empty component below the share", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\\{s}`},
		{Rule: "SMB-001", Name: "server only", Kind: KindSMBRemote, Value: `\\{smbserver}`},
		{Rule: "SMB-002", Name: "bad host name", Kind: KindSMBRemote, Value: `\\bad_host!\{smbshare}`},
		{Rule: "SMB-002", Name: "label ends in hyphen", Kind: KindSMBRemote, Value: `\\fileserver-.example.com\{smbshare}`},
		{Rule: "SMB-003", Name: "comma below the share", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\a,b`},
		{Rule: "SMB-003", Name: "semicolon below the share", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\a;b`},
		{Rule: "SMB-003", Name: "administrative share C$", Kind: KindSMBRemote, Value: `\\{smbserver}\C$`},
		{Rule: "SMB-004", Name: `\\.\ device (the proxy's own pipe)`, Kind: KindSMBRemote, Value: `\\.\pipe\csi-proxy-disk-v1`},
		{Rule: "SMB-004", Name: `\\?\UNC prefix`, Kind: KindSMBRemote, Value: `\\?\UNC\{smbserver}\{smbshare}`},
		{Rule: "SMB-005", Name: "localhost", Kind: KindSMBRemote, Value: `\\localhost\{smbshare}`},
		{Rule: "SMB-005", Name: "127.0.0.1", Kind: KindSMBRemote, Value: `\\127.0.0.1\{smbshare}`},
		{Rule: "SMB-005", Name: "::1", Kind: KindSMBRemote, Value: `\\0--1.ipv6-literal.net\{smbshare}`},
		{Rule: "ISCSI-001", Name: "no iqn. prefix", Kind: KindIQN, Value: "2001-04.com.example:storage"},
		{Rule: "ISCSI-001", Name: "month 13", Kind: KindIQN, Value: "iqn.2001-13.com.example:storage"},
		{Rule: "ISCSI-001", Name: "space in unique name", Kind: KindIQN, Value: "iqn.2001-04.com.example:disk one"},
		{Rule: "ISCSI-002", Name: "port above 65535", Kind: KindPortal, Value: "{portal}", Port: 70000},
		{Rule: "ISCSI-002", Name: "address not a host", Kind: KindPortal, Value: "bad host!", Port: 3260},
		{Rule: "CHAP-001", Name: "11 bytes", Kind: KindMutualCHAP, Value: "elevenbytes"},
		{Rule: "CHAP-001", Name: "17 bytes", Kind: KindMutualCHAP, Value: "seventeen-bytes!!"},
		{Rule: "CHAP-001", Name: "empty", Kind: KindMutualCHAP, Value: ""},
		{Rule: "SVC-001", Name: "a running service outside the allow-list", Kind: KindService, Value: "EventLog"},
		{Rule: "SVC-001", Name: "a service that does not exist", Kind: KindService, Value: "fp-{s}"},
	}...)
}()

// CasesOf returns the cases of a field kind.
func CasesOf(k Kind) []Case {
	var out []Case
	for _, c := range Cases {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	return out
}

// Place is what Expand fills placeholders with. Escape is the name of a
// symbolic link that exists below both kubelet directories and leads
// outside them.
type Place struct {
	Plugins, Pods       string
	Escape              string
	OSDisk, OSVolume    string
	SMBServer, SMBShare string
	Portal              string
	Fresh               string
}

// Expand fills a case value's placeholders for a field kind.
func Expand(value string, k Kind, p Place) string {
	dir, other := p.Pods, p.Plugins
	if k == KindLinkSource {
		dir, other = p.Plugins, p.Pods
	}
	pad := ""
	if strings.Contains(value, "{pad}") {
		base := strings.NewReplacer("{dir}", dir, "{s}", p.Fresh, "{pad}", "").Replace(value)
		if n := MaxPathLength + 1 - len(base); n > 0 {
			pad = strings.Repeat("x", n)
		}
	}
	return strings.NewReplacer(
		"{dirrel}", dropDrive(dir), "{dirnodrive}", dropLetter(dir), "{dir}", dir, "{DIR}", strings.ToUpper(dir), "{other}", other,
		"{escape}", dir+`\`+p.Escape,
		"{plugins}", p.Plugins, "{pods}", p.Pods, "{s}", p.Fresh, "{pad}", pad,
		"{osdisk}", p.OSDisk, "{osvolume}", p.OSVolume, "{smbserver}", p.SMBServer, "{smbshare}", p.SMBShare,
		"{portal}", p.Portal,
	).Replace(value)
}

func dropDrive(p string) string {
	if isDriveAbs(p) {
		return p[3:]
	}
	return p
}

func dropLetter(p string) string {
	if isDriveAbs(p) {
		return p[2:]
	}
	return p
}

// Check runs the validator's request-only checks for one field value of a
// kind, the way the simulated host checks that field.
func (v *Validator) Check(k Kind, value string, port uint32) error {
	switch k {
	case KindPath:
		return v.Dir("path", value)
	case KindLinkSource:
		if err := v.Path("source_path", value); err != nil {
			return err
		}
		return first(v.underRule("LINK-001", "source_path", v.PluginsPath, value))
	case KindLinkTarget:
		if err := v.Path("target_path", value); err != nil {
			return err
		}
		return first(v.underRule("LINK-002", "target_path", v.PodPath, value))
	case KindVolumeID:
		return v.VolumeID("volume_id", value)
	case KindSMBRemote:
		_, err := v.SMBRemotePath("remote_path", value)
		return err
	case KindIQN:
		return v.IQN("iqn", value)
	case KindPortal:
		_, _, err := v.Portal("target_portal", value, port)
		return err
	case KindMutualCHAP:
		return v.MutualCHAPSecret("MutualChapSecret", value, false)
	case KindService:
		return v.Service("name", value)
	}
	return nil
}

// Valid are values of each kind the faithful validator accepts (the
// suite's FS-003 sends the path ones; the fuzz targets start from all).
var Valid = []Case{
	{Name: "fresh name", Kind: KindPath, Value: `{dir}\{s}`},
	{Name: "nested", Kind: KindPath, Value: `{dir}\{s}\mount`},
	{Name: "upper-case kubelet path", Kind: KindPath, Value: `{DIR}\{s}`},
	{Name: "trailing separator", Kind: KindPath, Value: `{dir}\{s}\`},
	{Name: "space inside a name", Kind: KindPath, Value: `{dir}\{s}\a b`},
	{Name: "kubelet's escaped plugin name", Kind: KindPath, Value: `{dir}\{s}\volumes\kubernetes.io~csi\pv-1\mount`},
	{Name: "characters Windows allows", Kind: KindPath, Value: `{dir}\{s}'$;,=+[]{}#@!&()`},
	{Name: "non-ASCII name", Kind: KindPath, Value: `{dir}\{s}-é世界`},
	{Name: "name starting like a device", Kind: KindPath, Value: `{dir}\{s}\CONSOLE`},
	{Name: "dot inside a name", Kind: KindPath, Value: `{dir}\{s}\a.b`},
	{Name: "staging directory", Kind: KindLinkSource, Value: `{dir}\{s}`},
	{Name: "publish path", Kind: KindLinkTarget, Value: `{dir}\{s}`},
	{Name: "volume", Kind: KindVolumeID, Value: `\\?\Volume{f3e9c0de-0000-4000-8000-000000000001}\`},
	{Name: "share", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}`},
	{Name: "share with a subdirectory", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\sub\dir`},
	{Name: "IPv4 server", Kind: KindSMBRemote, Value: `\\192.0.2.20\{smbshare}`},
	{Name: "IPv6 literal server", Kind: KindSMBRemote, Value: `\\2001-db8--20.ipv6-literal.net\{smbshare}`},
	{Name: "iqn", Kind: KindIQN, Value: "iqn.2001-04.com.example:storage.disk1"},
	{Name: "iqn without unique name", Kind: KindIQN, Value: "iqn.2001-04.com.example"},
	{Name: "portal with the default port", Kind: KindPortal, Value: "{portal}", Port: 0},
	{Name: "portal with port 3260", Kind: KindPortal, Value: "{portal}", Port: 3260},
	{Name: "chap 12 bytes", Kind: KindMutualCHAP, Value: "twelve-bytes"},
	{Name: "chap 16 bytes", Kind: KindMutualCHAP, Value: "sixteen-bytes-ok"},
	{Name: "iSCSI initiator service", Kind: KindService, Value: "MSiSCSI"},
	{Name: "SMB client service, any case", Kind: KindService, Value: "lanmanworkstation"},
}
