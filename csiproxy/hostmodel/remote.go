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
	Remote   string
	user     string
	password string
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

// reach reports whether an SMB server and share answer: an unknown server
// is a network failure (UNAVAILABLE), an unknown share on a known one
// NOT_FOUND. This machine's administrative shares answer too.
func (h *Host) reach(server, share string) error {
	if h.node.IsLocalHost(server) {
		if s := Upper(share); (len(s) == 2 && s[1] == '$') || s == "ADMIN$" || s == "IPC$" {
			return nil
		}
		return errf(codes.NotFound, `\\%s\%s: the network name cannot be found`, server, share)
	}
	shares, ok := h.servers[strings.ToLower(server)]
	if !ok {
		return errf(codes.Unavailable, `\\%s: the network path was not found`, server)
	}
	for _, s := range shares {
		if strings.EqualFold(s, share) {
			return nil
		}
	}
	return errf(codes.NotFound, `\\%s\%s: the network name cannot be found`, server, share)
}

// MapSMB creates a global mapping of \\server\share (New-SmbGlobalMapping)
// with the given credentials; it must be reachable and not mapped yet.
func (h *Host) MapSMB(remote, user, password string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	server, share, _ := strings.Cut(strings.TrimPrefix(remote, `\\`), `\`)
	share, _, _ = strings.Cut(share, `\`)
	if server == "" || share == "" {
		return errf(codes.InvalidArgument, "%s: not \\\\server\\share", remote)
	}
	if err := h.reach(server, share); err != nil {
		return err
	}
	key := strings.ToLower(`\\` + server + `\` + share)
	if h.smb[key] != nil {
		return errf(codes.AlreadyExists, "%s: the local device name is already in use", remote)
	}
	h.smb[key] = &SMBMapping{Remote: key, user: user, password: password}
	if h.node.IsLocalHost(server) && h.roots[Upper(key)] == nil {
		h.roots[Upper(key)] = newDir(`\\`+server+`\`+share, nil)
	}
	return nil
}

// SMBMapped reports whether \\server\share has a global mapping with
// status OK (Get-SmbGlobalMapping).
func (h *Host) SMBMapped(remote string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.smb[strings.ToLower(strings.TrimRight(remote, `\`))] != nil
}

// UnmapSMB removes a global mapping (Remove-SmbGlobalMapping; not a local
// link to it: the plugin removes that with Rmdir).
func (h *Host) UnmapSMB(remote string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := strings.ToLower(strings.TrimRight(remote, `\`))
	if h.smb[key] == nil {
		return errf(codes.NotFound, "no global mapping of %s", remote)
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

// AddPortal registers a portal (New-IscsiTargetPortal, which contacts it:
// an address no simulated array answers at is a network failure,
// UNAVAILABLE). Registering it again is not an error.
func (h *Host) AddPortal(p Portal) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.arrays[strings.ToLower(p.Address)] {
		return errf(codes.Unavailable, "target portal %s:%d: the connection timed out", p.Address, p.Port)
	}
	h.portals[p.key()] = p
	return nil
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
	if (auth == "MUTUAL_CHAP" || auth == "MUTUALCHAP") && h.chap == "" {
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
			if len(h.volumes[volumeKey(v)].Mounts) > 0 {
				return errf(codes.FailedPrecondition, "volume %s of the target is mounted", v)
			}
			delete(h.volumes, volumeKey(v))
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
