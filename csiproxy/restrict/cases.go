package restrict

// Make is what a probe needs on the host before it is sent.
type Make string

// What a probe needs.
const (
	MakeNothing Make = ""
	// MakeDir: a directory at the value (LINK-003: the link's path exists).
	MakeDir Make = "dir"
)

// PortAbove is a case's Port when the probe's port is drawn above 65535.
const PortAbove = ^uint32(0)

// Case is one shape of refusal probe of a field kind: a value that
// violates exactly one rule, whatever a run draws for it. The faithful
// validator refuses every draw with that rule and a validator skipping
// that rule accepts it (TestEveryCaseViolatesExactlyItsRule, over many
// seeds; state cases are judged from host state, TestStateCases). The
// conformance suite sends every case of a kind in every field of that
// kind, on every served version, drawn anew each time (Draw.Probe).
//
// Value is a template: every placeholder is drawn per probe from the run's
// seeded source (draw.go says how), so no name, letter case, separator or
// spelling recurs from run to run. {dir} is the kubelet directory the
// field belongs below ({plugins} for a link source, {pods} otherwise),
// {other} the other one, {kubelet} their parent; each in a letter case
// drawn anew.
type Case struct {
	Rule string
	Name string
	Kind Kind
	// Value is the template a probe's value is drawn from.
	Value string
	// Port is a portal case's port (PortAbove: drawn above 65535); the
	// address is Value.
	Port uint32
	Make Make
	// ByWindows: Windows refuses the case itself, atomically, with no
	// effect (os.Symlink onto an existing path), so a refusal by the
	// Windows call counts; a check before it could only race it.
	ByWindows bool
	// Draws is how many values a probe of the case draws and sends (0:
	// one), for a case drawn from many spellings a host may check some of;
	// a case with stratified placeholders (Draw.Classes) is sent at least
	// once per class over an RPC's versions.
	Draws int
	// KEP is the KEP's rule the case breaks too, where Windows takes the
	// value (DIR-001: it lands outside the kubelet directories, or at one
	// of them); under the profile kep the case is probed and reported as
	// that rule where Rule is not the KEP's (TestKEPAttribution holds it
	// against where hostmodel's Win32 takes each draw).
	KEP string
}

// pathKinds are the field kinds that hold paths.
var pathKinds = []Kind{KindPath, KindLinkSource, KindLinkTarget}

// IsPath reports a field kind that holds a path.
func (k Kind) IsPath() bool { return k == KindPath || k == KindLinkSource || k == KindLinkTarget }

// pathCases are the syntax cases every path kind gets: rule, name, value,
// the KEP rule the value also breaks as a KindPath.
var pathCases = []struct{ rule, name, value, kep string }{
	{"PATH-001", "relative", `{dirrel}\{s}`, "DIR-001"},
	{"PATH-001", "relative, a fresh name only", `{u}`, "DIR-001"},
	{"PATH-001", "drive-relative", `{drive}:{s}`, "DIR-001"},
	{"PATH-001", "the directory drive-relative (C:var\\...)", `{dirdriverel}\{s}`, "DIR-001"},
	{"PATH-001", "rooted, no drive", `{dirnodrive}\{s}`, ""},
	{"PATH-002", "slash separators", `{dirslash}/{s}`, ""},
	{"PATH-003", `a device namespace prefix (\\?\, \\.\, \??\, GLOBALROOT)`, `{devprefix}{dir}\{s}`, ""},
	{"PATH-003", `UNC to this machine's administrative share`, `\\{local}\{dirshare}{dirnodrive}\{s}`, ""},
	{"PATH-003", `\\?\UNC to this machine`, `\\?\UNC\{local}\{dirshare}{dirnodrive}\{s}`, ""},
	{"PATH-003", "UNC to a file server", `\\{smbserver}\{smbshare}\{s}`, "DIR-001"},
	{"PATH-004", "'..' out to a Windows directory", `{dir}{up}{outsiderel}\{s}`, "DIR-001"},
	{"PATH-004", "'..' back into itself", `{dir}\{s}\..\{s}`, ""},
	{"PATH-004", "'..' to the parent", `{dir}\..`, "DIR-001"},
	{"PATH-005", "alternate data stream, last or on the way", `{dir}\{s}{stream}{below}`, ""},
	{"PATH-006", "a character of | ? *, last or on the way", `{dir}\{s}{wild}{t}{below}`, ""},
	{"PATH-013", `a character of < > ", last or on the way`, `{dir}\{s}{angle}{t}{below}`, ""},
	{"PATH-007", "more than 260 UTF-16 code units (ASCII, or fewer than 261 code points)", `{dir}\{s}\{pad}`, ""},
	{"PATH-008", "a control character, last or on the way", `{dir}\{s}{ctl}{t}{below}`, ""},
	{"PATH-009", `"." component`, `{dir}\{s}\.`, ""},
	{"PATH-009", `"." component on the way`, `{dir}\.\{s}`, ""},
	{"PATH-009", `the directory itself, "." and a separator`, `{dir}\{dots}`, "DIR-001"},
	{"PATH-009", "empty component", `{dir}\\{s}`, ""},
	{"PATH-010", "the directory itself, a space component", `{dir}\{blank}`, "DIR-001"},
	{"PATH-010", "trailing dot or space", `{dir}\{s}{trail}`, ""},
	{"PATH-010", "a component ending in a dot or a space", `{dir}\{s}{trail}\{t}`, ""},
	{"PATH-011", "a device name", `{dir}\{dev}`, "DIR-001"},
	{"PATH-011", "a device name below a fresh name", `{dir}\{s}\{dev}`, "DIR-001"},
	{"PATH-011", "a device name on the way", `{dir}\{dev}\{s}`, ""},
	{"PATH-012", "an 8.3 alias", `{dir}\{short}`, ""},
	{"PATH-012", "an 8.3 alias on the way", `{dir}\{short}\{s}`, ""},
}

// Cases is the refusal table, declared once.
var Cases = func() []Case {
	var out []Case
	for _, k := range pathKinds {
		for _, c := range pathCases {
			kep := c.kep
			if k != KindPath {
				kep = "" // a link field's rules are the KEP's LinkPath ones
			}
			out = append(out, Case{Rule: c.rule, Name: c.name, Kind: k, Value: c.value, KEP: kep})
		}
	}
	return append(out, []Case{
		{Rule: "DIR-001", Name: "in a Windows directory", Kind: KindPath, Value: `{outside}\{s}`},
		{Rule: "DIR-001", Name: "the directory on another drive", Kind: KindPath, Value: `{dirdrive}\{s}`},
		{Rule: "DIR-001", Name: "beside the directory (its name and more)", Kind: KindPath, Value: `{dir}{beside}`},
		{Rule: "DIR-001", Name: "the directory itself", Kind: KindPath, Value: `{dir}{sep}`},
		{Rule: "DIR-001", Name: "the other kubelet directory itself", Kind: KindPath, Value: `{other}{sep}`},
		{Rule: "DIR-001", Name: "the kubelet directory itself", Kind: KindPath, Value: `{kubelet}{sep}`},
		{Rule: "DIR-001", Name: "in the kubelet directory", Kind: KindPath, Value: `{kubelet}\{s}`},
		{Rule: "DIR-001", Name: "a letter Unicode equates and NTFS does not (ı ſ K)", Kind: KindPath, Value: `{fold}\{s}`},
		{Rule: "DIR-001", Name: "a full-width letter", Kind: KindPath, Value: `{wide}\{s}`},
		{Rule: "LINK-001", Name: "source in a Windows directory", Kind: KindLinkSource, Value: `{outside}\{s}`},
		{Rule: "LINK-001", Name: "source beside the plugins path", Kind: KindLinkSource, Value: `{dir}{beside}`},
		{Rule: "LINK-001", Name: "source in the pod path", Kind: KindLinkSource, Value: `{other}\{s}`},
		{Rule: "LINK-001", Name: "source is the plugins path itself", Kind: KindLinkSource, Value: `{dir}{sep}`},
		{Rule: "LINK-001", Name: "source through a letter NTFS does not equate", Kind: KindLinkSource, Value: `{fold}\{s}`},
		{Rule: "LINK-001", Name: "source on another drive", Kind: KindLinkSource, Value: `{dirdrive}\{s}`},
		{Rule: "LINK-002", Name: "target in the plugins path", Kind: KindLinkTarget, Value: `{other}\{s}`},
		{Rule: "LINK-002", Name: "target in a Windows directory", Kind: KindLinkTarget, Value: `{outside}\{s}`},
		{Rule: "LINK-002", Name: "target is the pod path itself", Kind: KindLinkTarget, Value: `{dir}{sep}`},
		{Rule: "LINK-002", Name: "target through a letter NTFS does not equate", Kind: KindLinkTarget, Value: `{wide}\{s}`},
		{Rule: "LINK-002", Name: "target on another drive", Kind: KindLinkTarget, Value: `{dirdrive}\{s}`},
		{Rule: "LINK-003", Name: "target exists", Kind: KindLinkTarget, Value: `{dir}\{s}`, Make: MakeDir, ByWindows: true},
		{Rule: "LINK-004", Name: "source does not exist", Kind: KindLinkSource, Value: `{dir}\{s}`},
		{Rule: "LINK-005", Name: "source is a link leading outside", Kind: KindLinkSource, Value: `{escape}`},
		{Rule: "DIR-002", Name: "through a link leading outside", Kind: KindPath, Value: `{escape}\{s}`},
		{Rule: "DIR-002", Name: "two levels through a link leading outside", Kind: KindPath, Value: `{escape}\{s}\{t}`},
		{Rule: "DIR-002", Name: "link target through a link leading outside", Kind: KindLinkTarget, Value: `{escape}\{s}`},
		{Rule: "DIR-002", Name: "link target two levels through a link leading outside", Kind: KindLinkTarget, Value: `{escape}\{s}\{t}`},
		{Rule: "VOLID-001", Name: "a drive", Kind: KindVolumeID, Value: `{drive}:\`},
		{Rule: "VOLID-001", Name: `without the \\?\ prefix`, Kind: KindVolumeID, Value: `Volume{{guid}}\`},
		{Rule: "VOLID-001", Name: "a device path", Kind: KindVolumeID, Value: `\\?\GLOBALROOT\Device\HarddiskVolume{digit}`},
		{Rule: "VOLID-001", Name: "a path below a volume", Kind: KindVolumeID, Value: `\\?\Volume{{guid}}\{s}`},
		{Rule: "VOLID-001", Name: "a GUID that is not one", Kind: KindVolumeID, Value: `\\?\Volume{{s}}\`},
		{Rule: "VOLID-001", Name: "empty", Kind: KindVolumeID, Value: ``},
		{Rule: "VOLID-001", Name: "a name", Kind: KindVolumeID, Value: `{u}`},
		{Rule: "SYSDISK-001", Name: "the OS volume", Kind: KindVolumeID, Value: `{osvolume}`},
		{Rule: "SYSDISK-001", Name: "the OS disk", Kind: KindDisk, Value: `{osdisk}`},
		{Rule: "SMB-001", Name: "no leading separators", Kind: KindSMBRemote, Value: `{smbserver}\{smbshare}`},
		{Rule: "SMB-001", Name: "two names, no separators before them", Kind: KindSMBRemote, Value: `{u}\{u}`},
		{Rule: "SMB-001", Name: "empty component below the share", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\\{s}`},
		{Rule: "SMB-001", Name: "server only", Kind: KindSMBRemote, Value: `\\{smbserver}{sep}`},
		{Rule: "SMB-002", Name: "a host name with a character DNS does not allow", Kind: KindSMBRemote, Value: `\\{badhost}\{smbshare}`},
		{Rule: "SMB-002", Name: "a label ending in a hyphen", Kind: KindSMBRemote, Value: `\\{s}-.{smbserver}\{smbshare}`},
		{Rule: "SMB-003", Name: "a forbidden character below the share", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\{s}{smbchar}{t}`},
		{Rule: "SMB-003", Name: "an administrative share", Kind: KindSMBRemote, Value: `\\{smbserver}\{admin}`},
		{Rule: "SMB-004", Name: `\\.\ device (the proxy's own pipe)`, Kind: KindSMBRemote, Value: `\\.\pipe\{pipe}`},
		{Rule: "SMB-004", Name: `\\?\UNC prefix`, Kind: KindSMBRemote, Value: `\\?\UNC\{smbserver}\{smbshare}`},
		{Rule: "SMB-005", Name: "this machine, by each of its names and addresses", Kind: KindSMBRemote, Value: `\\{local}\{smbshare}`},
		{Rule: "SMB-005", Name: "this machine, by its loopback address", Kind: KindSMBRemote, Value: `\\{loopback}\{smbshare}{sep}`},
		{Rule: "ISCSI-001", Name: "no iqn., eui. or naa. prefix", Kind: KindIQN, Value: "{year}-{month}.{authority}:{s}"},
		{Rule: "ISCSI-001", Name: "a name of no format", Kind: KindIQN, Value: "{u}"},
		{Rule: "ISCSI-001", Name: "month 13", Kind: KindIQN, Value: "{iqn}{year}-13.{authority}:{s}"},
		{Rule: "ISCSI-001", Name: "a space in the unique name", Kind: KindIQN, Value: "{iqn}{year}-{month}.{authority}:{s} {t}"},
		{Rule: "ISCSI-001", Name: "eui. with 15 hex digits", Kind: KindIQN, Value: "{eui}{hex15}"},
		{Rule: "ISCSI-001", Name: "naa. with 24 hex digits", Kind: KindIQN, Value: "{naa}{hex24}"},
		{Rule: "ISCSI-002", Name: "port above 65535", Kind: KindPortal, Value: "{portal}", Port: PortAbove},
		{Rule: "ISCSI-002", Name: "address not a host", Kind: KindPortal, Value: "{badhost}", Port: 3260},
		{Rule: "CHAP-001", Name: "shorter than 12 bytes", Kind: KindMutualCHAP, Value: "{chapshort}", Draws: 3},
		{Rule: "CHAP-001", Name: "longer than 16 bytes (ASCII, or 12-16 characters of several bytes)", Kind: KindMutualCHAP, Value: "{chaplong}"},
		{Rule: "CHAP-001", Name: "empty", Kind: KindMutualCHAP, Value: ""},
		{Rule: "SVC-001", Name: "a Windows service outside the allow-list", Kind: KindService, Value: "{service}", Draws: 8},
		{Rule: "SVC-001", Name: "a service that does not exist", Kind: KindService, Value: "{u}"},
		{Rule: "SVC-001", Name: "near a service of the allow-list (its start, it and more, a service sharing its start, a letter changed)", Kind: KindService, Value: "{nearservice}"},
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

// Valid are values of each kind the faithful validator accepts, drawn like
// the cases (the suite's FS-003 sends the path ones; the fuzz targets
// start from all).
var Valid = []Case{
	{Name: "fresh name", Kind: KindPath, Value: `{dir}\{s}`},
	{Name: "nested", Kind: KindPath, Value: `{dir}\{s}\{t}`},
	{Name: "trailing separator", Kind: KindPath, Value: `{dir}\{s}\`},
	{Name: "space inside a name", Kind: KindPath, Value: `{dir}\{s}\{s} {t}`},
	{Name: "kubelet's escaped plugin name", Kind: KindPath, Value: `{dir}\{s}\volumes\kubernetes.io~csi\{t}\mount`},
	{Name: "characters Windows allows", Kind: KindPath, Value: `{dir}\{s}{allowed}`},
	{Name: "non-ASCII letters", Kind: KindPath, Value: `{dir}\{s}{letters}`},
	{Name: "letters NTFS does not fold", Kind: KindPath, Value: `{dir}\{s}{unfolded}`},
	{Name: "a name starting like a device", Kind: KindPath, Value: `{dir}\{s}\{devlike}`},
	{Name: "dot inside a name", Kind: KindPath, Value: `{dir}\{s}\{t}.{s}`},
	{Name: "staging directory", Kind: KindLinkSource, Value: `{dir}\{s}`},
	{Name: "publish path", Kind: KindLinkTarget, Value: `{dir}\{s}`},
	{Name: `\\?\ volume`, Kind: KindVolumeID, Value: `\\?\Volume{{guid}}\`},
	{Name: `\\.\ volume, as the KEP writes it`, Kind: KindVolumeID, Value: `\\.\Volume{{guid}}{sep}`},
	{Name: "share", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}`},
	{Name: "share with a trailing separator", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\`},
	{Name: "share with a subdirectory", Kind: KindSMBRemote, Value: `\\{smbserver}\{smbshare}\{s}\{t}`},
	{Name: "IPv4 server", Kind: KindSMBRemote, Value: `\\{ipv4}\{smbshare}`},
	{Name: "IPv6 literal server", Kind: KindSMBRemote, Value: `\\{ipv6lit}\{smbshare}`},
	{Name: "iqn", Kind: KindIQN, Value: "{iqn}{year}-{month}.{authority}:{s}"},
	{Name: "iqn without unique name", Kind: KindIQN, Value: "{iqn}{year}-{month}.{authority}"},
	{Name: "eui (RFC 3720)", Kind: KindIQN, Value: "{eui}{hex16}"},
	{Name: "naa, 64 bits (RFC 3980)", Kind: KindIQN, Value: "{naa}{hex16}"},
	{Name: "naa, 128 bits (RFC 3980)", Kind: KindIQN, Value: "{naa}{hex32}"},
	{Name: "portal with the default port", Kind: KindPortal, Value: "{portal}", Port: 0},
	{Name: "portal with port 3260", Kind: KindPortal, Value: "{portal}", Port: 3260},
	{Name: "chap of 12 to 16 bytes", Kind: KindMutualCHAP, Value: "{chapok}"},
	{Name: "iSCSI initiator service", Kind: KindService, Value: "{msiscsi}"},
	{Name: "SMB client service", Kind: KindService, Value: "{lanman}"},
}
