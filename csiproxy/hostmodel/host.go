package hostmodel

import (
	"sort"
	"strings"
)

// Config describes the machine New builds.
type Config struct {
	// PluginsPath and PodPath are the kubelet directories made at start.
	PluginsPath, PodPath string
	// Links are symbolic links made at start (link path: target); a
	// local target directory is made too.
	Links map[string]string
	// Node is this machine's names and addresses (UNC paths to it are
	// local).
	Node Node
	// SMBShares are the reachable file servers' shares, \\server\share.
	SMBShares []string
	// ISCSIPortals are the reachable iSCSI portal addresses.
	ISCSIPortals []string
}

// Names and places of the standard node.
const (
	// DefaultName, DefaultFQDN and DefaultAddress4/6 are the names and
	// addresses of a simulated host.
	DefaultName     = "FENCEPROOF-NODE"
	DefaultFQDN     = "fenceproof-node.cluster.example"
	DefaultAddress4 = "10.20.30.40"
	DefaultAddress6 = "fd00:20:30::40"
	// EscapeLink is the default name of a link below each kubelet
	// directory that leads outside them, to EscapeTarget.
	EscapeLink   = "fenceproof-escape"
	EscapeTarget = `C:\Windows\Temp\fenceproof`
	// InsideLink is the default name of a link below the pod path that
	// leads to a directory below the pod path, InsideTarget.
	InsideLink   = "fenceproof-inside"
	InsideTarget = "fenceproof-inside-target"
	// DefaultSMBShare and DefaultPortal are the reachable share and portal.
	DefaultSMBShare = `\\fileserver.example.com\share`
	DefaultPortal   = "192.0.2.10"
)

// DefaultNode is a simulated host's names and addresses.
var DefaultNode = Node{Names: []string{DefaultName, DefaultFQDN}, Addresses: []string{DefaultAddress4, DefaultAddress6}}

// Standard is the node both lanes run on: the kubelet directories, an
// escape link below each named escape (leading to C:\Windows\Temp\fenceproof),
// an inside link below the pod path named inside, one reachable SMB share
// and one iSCSI portal.
func Standard(pluginsPath, podPath, escape, inside string) Config {
	return Config{
		PluginsPath: pluginsPath, PodPath: podPath, Node: DefaultNode,
		Links: map[string]string{
			pluginsPath + `\` + escape: EscapeTarget,
			podPath + `\` + escape:     EscapeTarget,
			podPath + `\` + inside:     podPath + `\` + InsideTarget,
		},
		SMBShares: []string{DefaultSMBShare}, ISCSIPortals: []string{DefaultPortal},
	}
}

// New returns a host as a Windows node looks when csi-proxy starts: the
// OS disk 0 with its volume mounted at C:\, two blank data disks, the
// kubelet directories, C:\Windows with System32 and Temp, the configured
// links, administrative shares of C:, the iSCSI initiator, SMB client and a
// few other services.
func New(cfg Config) *Host {
	if len(cfg.Node.Names) == 0 {
		cfg.Node = DefaultNode
	}
	h := &Host{
		roots: map[string]*node{}, disks: map[uint32]*Disk{}, volumes: map[string]*Volume{},
		smb: map[string]*SMBMapping{}, servers: map[string][]string{}, portals: map[string]Portal{},
		arrays: map[string]bool{}, targets: map[string]*Target{}, services: map[string]*Service{},
		serial: "FENCEPROOF-SIM-0001", node: cfg.Node,
	}
	h.roots["C:"] = newDir("C:", nil)
	for _, d := range []string{`C:\Windows\System32`, `C:\Windows\Temp`, cfg.PluginsPath, cfg.PodPath} {
		if d != "" {
			_ = h.mkdirAll(d)
		}
	}
	osDisk := h.addDisk(128<<30, "0")
	osDisk.System, osDisk.Initialized, osDisk.Partitioned = true, true, true
	osVol := `\\?\Volume{f3e9c0de-0000-4000-8000-000000000000}\`
	h.volumes[volumeKey(osVol)] = &Volume{ID: osVol, Disk: 0, SizeBytes: osDisk.SizeBytes, UsedBytes: 20 << 30, Formatted: true, System: true, Mounts: []string{`C:\`}}
	osDisk.Volumes = []string{osVol}
	h.roots["C:"].mount = osVol
	h.addDisk(10<<30, "1")
	h.addDisk(20<<30, "2")
	links := make([]string, 0, len(cfg.Links))
	for l := range cfg.Links {
		links = append(links, l)
	}
	sort.Strings(links)
	for _, l := range links {
		t := cfg.Links[l]
		if !strings.HasPrefix(t, `\\`) {
			_ = h.mkdirAll(t)
		}
		_ = h.symlink(t, l)
	}
	for _, s := range cfg.SMBShares {
		server, share, _ := strings.Cut(strings.TrimPrefix(s, `\\`), `\`)
		share, _, _ = strings.Cut(share, `\`)
		h.servers[strings.ToLower(server)] = append(h.servers[strings.ToLower(server)], share)
		key := Upper(`\\` + server + `\` + share)
		if h.roots[key] == nil {
			h.roots[key] = newDir(`\\`+server+`\`+share, nil)
		}
	}
	for _, a := range cfg.ISCSIPortals {
		h.arrays[strings.ToLower(a)] = true
	}
	for _, s := range []Service{
		{"MSiSCSI", "Microsoft iSCSI Initiator Service", true}, {"LanmanWorkstation", "Workstation", true},
		{"Spooler", "Print Spooler", false}, {"EventLog", "Windows Event Log", true},
		{"WinDefend", "Microsoft Defender Antivirus Service", true}, {"kubelet", "kubelet", true},
	} {
		s := s
		h.services[strings.ToLower(s.Name)] = &s
	}
	return h
}
