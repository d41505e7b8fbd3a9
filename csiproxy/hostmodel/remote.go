package hostmodel

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
)

// SMBMapping is one SMB global mapping. Credentials are kept to model the
// mapping but never returned or logged.
type SMBMapping struct {
	Remote    string
	LocalPath string
	user      string
	password  string
}

// Portal is a registered iSCSI target portal.
type Portal struct {
	Address string
	Port    uint32
}

func (p Portal) key() string { return strings.ToLower(p.Address) + fmt.Sprintf("|%d", p.Port) }

// Target is a connected iSCSI target.
type Target struct {
	Portal Portal
	IQN    string
	Auth   string
	Disk   uint32
}

// Service is a Windows service.
type Service struct {
	Name, DisplayName string
	Running           bool
}

// New returns a host as a Windows node looks when csi-proxy starts: the
// OS disk 0 with its volume mounted at C:\, two blank data disks, the two
// kubelet directories and C:\Windows, a symbolic link below the pod path
// (symlinkInPods, for the LINK-006 rule), and the iSCSI initiator and SMB
// client services.
func New(pluginsPath, podPath, symlinkInPods string) *Host {
	h := &Host{
		fs: map[string]*node{}, disks: map[uint32]*Disk{}, volumes: map[string]*Volume{},
		smb: map[string]*SMBMapping{}, portals: map[string]Portal{}, targets: map[string]*Target{},
		services: map[string]*Service{}, serial: "FENCEPROOF-SIM-0001",
	}
	for _, d := range []string{`C:\Windows\System32`, `C:\Windows\Temp`, pluginsPath, podPath} {
		_ = h.mkdirAll(d)
	}
	os := h.addDisk(128<<30, "0")
	os.System, os.Partitioned = true, true
	osVol := `\\?\Volume{f3e9c0de-0000-4000-8000-000000000000}\`
	h.volumes[osVol] = &Volume{ID: osVol, Disk: 0, SizeBytes: os.SizeBytes, UsedBytes: 20 << 30, Formatted: true, Mounts: []string{`C:\`}}
	os.Volumes = []string{osVol}
	h.fs[`c:\`].mount = osVol
	h.addDisk(10<<30, "1")
	h.addDisk(20<<30, "2")
	if symlinkInPods != "" {
		target := Canonical(podPath) + `\fenceproof-link-target`
		_ = h.mkdirAll(target)
		h.fs[key(symlinkInPods)] = &node{path: Canonical(symlinkInPods), dir: true, link: target}
	}
	for _, s := range []Service{{"MSiSCSI", "Microsoft iSCSI Initiator Service", true}, {"LanmanWorkstation", "Workstation", true}, {"Spooler", "Print Spooler", false}} {
		s := s
		h.services[strings.ToLower(s.Name)] = &s
	}
	return h
}

// MapSMB creates (or keeps) a global mapping of remote, keyed
// case-insensitively, and a link at localPath if given.
func (h *Host) MapSMB(key, remote, localPath, user, password string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.smb[key]; m != nil {
		return nil
	}
	m := &SMBMapping{Remote: remote, user: user, password: password}
	if localPath != "" {
		lp := Canonical(localPath)
		if h.fs[strings.ToLower(lp)] != nil {
			return errf(codes.AlreadyExists, "%s exists", lp)
		}
		if p := h.fs[strings.ToLower(parent(lp))]; p == nil || !p.dir {
			return errf(codes.NotFound, "parent of %s does not exist", lp)
		}
		h.fs[strings.ToLower(lp)] = &node{path: lp, dir: true, link: remote}
		m.LocalPath = lp
	}
	h.smb[key] = m
	return nil
}

// UnmapSMB removes a global mapping (not the local link: the plugin removes
// that with Rmdir).
func (h *Host) UnmapSMB(key string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.smb[key] == nil {
		return errf(codes.NotFound, "no global mapping of %s", key)
	}
	delete(h.smb, key)
	return nil
}

// SMBMappings lists the mapped remote keys, sorted.
func (h *Host) SMBMappings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k := range h.smb {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// AddPortal registers a portal (again is not an error).
func (h *Host) AddPortal(p Portal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.portals[p.key()] = p
}

// RemovePortal unregisters a portal with no connected target.
func (h *Host) RemovePortal(p Portal) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.portals[p.key()]; !ok {
		return errf(codes.NotFound, "portal %s:%d is not registered", p.Address, p.Port)
	}
	for _, t := range h.targets {
		if t.Portal.key() == p.key() {
			return errf(codes.FailedPrecondition, "target %s is connected through portal %s:%d", t.IQN, p.Address, p.Port)
		}
	}
	delete(h.portals, p.key())
	return nil
}

// Portals lists registered portals, sorted.
func (h *Host) Portals() []Portal {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Portal
	for _, p := range h.portals {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// Discover returns the IQNs a registered portal offers: the simulated
// storage array at every address serves two targets.
func (h *Host) Discover(p Portal) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.portals[p.key()]; !ok {
		return nil, errf(codes.NotFound, "portal %s:%d is not registered", p.Address, p.Port)
	}
	return []string{"iqn.2003-01.io.fenceproof.sim:target0", "iqn.2003-01.io.fenceproof.sim:target1"}, nil
}

// Connect logs in to a target through a registered portal; a new disk
// appears. The simulated array accepts any target name. Mutual CHAP needs
// the initiator's mutual secret set first.
func (h *Host) Connect(p Portal, iqn, auth string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.portals[p.key()]; !ok {
		return errf(codes.NotFound, "portal %s:%d is not registered", p.Address, p.Port)
	}
	if auth == "MUTUAL_CHAP" && h.chap == "" {
		return errf(codes.FailedPrecondition, "mutual CHAP needs SetMutualChapSecret first")
	}
	k := p.key() + "|" + strings.ToLower(iqn)
	if h.targets[k] != nil {
		return nil
	}
	d := h.addDisk(5<<30, fmt.Sprint(len(h.targets)))
	d.ISCSI = k
	h.targets[k] = &Target{Portal: p, IQN: iqn, Auth: auth, Disk: d.Number}
	return nil
}

// Disconnect logs out of a target; its disk disappears.
func (h *Host) Disconnect(p Portal, iqn string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := p.key() + "|" + strings.ToLower(iqn)
	t := h.targets[k]
	if t == nil {
		return errf(codes.NotFound, "target %s is not connected through %s:%d", iqn, p.Address, p.Port)
	}
	if d := h.disks[t.Disk]; d != nil {
		for _, v := range d.Volumes {
			if len(h.volumes[v].Mounts) > 0 {
				return errf(codes.FailedPrecondition, "volume %s of the target is mounted", v)
			}
			delete(h.volumes, v)
		}
	}
	delete(h.disks, t.Disk)
	delete(h.targets, k)
	return nil
}

// TargetDisks returns the disk numbers of a connected target.
func (h *Host) TargetDisks(p Portal, iqn string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.targets[p.key()+"|"+strings.ToLower(iqn)]
	if t == nil {
		return nil, errf(codes.NotFound, "target %s is not connected through %s:%d", iqn, p.Address, p.Port)
	}
	return []string{fmt.Sprint(t.Disk)}, nil
}

// SetMutualCHAP sets the initiator's mutual CHAP secret.
func (h *Host) SetMutualCHAP(secret string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.chap = secret
}

// MutualCHAPSet reports whether a mutual CHAP secret is set (never what).
func (h *Host) MutualCHAPSet() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.chap != ""
}

// Serial is the BIOS serial number.
func (h *Host) Serial() string { return h.serial }

// Service returns a copy of a service.
func (h *Host) Service(name string) (Service, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.services[strings.ToLower(name)]
	if s == nil {
		return Service{}, errf(codes.NotFound, "service %q does not exist", name)
	}
	return *s, nil
}

// SetServiceRunning starts or stops a service.
func (h *Host) SetServiceRunning(name string, running bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.services[strings.ToLower(name)]
	if s == nil {
		return errf(codes.NotFound, "service %q does not exist", name)
	}
	s.Running = running
	return nil
}
