package winos

import (
	"fmt"

	"github.com/kubernetes-csi/csi-proxy/pkg/os/iscsi"
	"github.com/kubernetes-csi/csi-proxy/pkg/os/system"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
)

func portalOf(p *iscsi.TargetPortal) hostmodel.Portal {
	return hostmodel.Portal{Address: p.Address, Port: p.Port}
}

func portalEnv(p *iscsi.TargetPortal) []string {
	return []string{p.Address, fmt.Sprint(p.Port)}
}

// AddTargetPortal is New-IscsiTargetPortal.
func (o *OS) AddTargetPortal(portal *iscsi.TargetPortal) error {
	o.run("AddTargetPortal", portalEnv(portal))
	return fail(o.H.AddPortal(portalOf(portal)), "error adding target portal")
}

// DiscoverTargetPortal lists the IQNs a registered portal offers.
func (o *OS) DiscoverTargetPortal(portal *iscsi.TargetPortal) ([]string, error) {
	o.run("DiscoverTargetPortal", portalEnv(portal))
	iqns, err := o.H.Discover(portalOf(portal))
	return iqns, fail(err, "error discovering target portal")
}

// ListTargetPortals lists the registered portals.
func (o *OS) ListTargetPortals() ([]iscsi.TargetPortal, error) {
	o.run("ListTargetPortals", nil)
	var out []iscsi.TargetPortal
	for _, p := range o.H.Portals() {
		out = append(out, iscsi.TargetPortal{Address: p.Address, Port: p.Port})
	}
	return out, nil
}

// RemoveTargetPortal is Remove-IscsiTargetPortal.
func (o *OS) RemoveTargetPortal(portal *iscsi.TargetPortal) error {
	o.run("RemoveTargetPortal", portalEnv(portal))
	return fail(o.H.RemovePortal(portalOf(portal)), "error removing target portal")
}

// ConnectTarget is Connect-IscsiTarget, with -ChapUsername and -ChapSecret
// when given.
func (o *OS) ConnectTarget(portal *iscsi.TargetPortal, iqn, authType, chapUser, chapSecret string) error {
	s := Scripts["ConnectTarget"]
	text := s.Text
	if chapUser != "" {
		text += Scripts["ConnectTargetChapUser"].Text
	}
	if chapSecret != "" {
		text += Scripts["ConnectTargetChapSecret"].Text
	}
	o.runText(text, s.Env, append(portalEnv(portal), iqn, authType, chapUser, chapSecret))
	return fail(o.H.Connect(portalOf(portal), iqn, authType), "error connecting to target portal")
}

// DisconnectTarget is Disconnect-IscsiTarget.
func (o *OS) DisconnectTarget(portal *iscsi.TargetPortal, iqn string) error {
	o.run("DisconnectTarget", append(portalEnv(portal), iqn))
	return fail(o.H.Disconnect(portalOf(portal), iqn), "error disconnecting from target portal")
}

// GetTargetDisks lists the disk numbers of a connected target.
func (o *OS) GetTargetDisks(portal *iscsi.TargetPortal, iqn string) ([]string, error) {
	o.run("GetTargetDisks", append(portalEnv(portal), iqn))
	ids, err := o.H.TargetDisks(portalOf(portal), iqn)
	return ids, fail(err, "error getting target disks")
}

// SetMutualChapSecret is Set-IscsiChapSecret.
func (o *OS) SetMutualChapSecret(mutualChapSecret string) error {
	o.run("SetMutualChapSecret", []string{mutualChapSecret})
	o.H.SetMutualCHAP(mutualChapSecret)
	return nil
}

// GetBIOSSerialNumber is wmic bios get serialnumber (no request field
// reaches that command line).
func (o *OS) GetBIOSSerialNumber() (string, error) {
	o.H.Call("wmic", "bios", "get", "serialnumber")
	return o.H.Serial(), nil
}

// Windows' service status and start-type numbers.
const (
	serviceStopped = 1
	serviceRunning = 4
	startAutomatic = 2
)

// GetService is Get-Service.
func (o *OS) GetService(name string) (*system.ServiceInfo, error) {
	o.run("GetService", []string{name})
	s, err := o.H.Service(name)
	if err != nil {
		return nil, fail(err, "error querying service name=%s", name)
	}
	st := uint32(serviceStopped)
	if s.Running {
		st = serviceRunning
	}
	return &system.ServiceInfo{DisplayName: s.DisplayName, StartType: startAutomatic, Status: st}, nil
}

// StartService is Start-Service.
func (o *OS) StartService(name string) error {
	o.run("StartService", []string{name})
	return fail(o.H.SetServiceRunning(name, true), "error starting service name=%s", name)
}

// StopService is Stop-Service.
func (o *OS) StopService(name string, force bool) error {
	o.run("StopService", []string{name, fmt.Sprint(force)})
	return fail(o.H.SetServiceRunning(name, false), "error stopping service name=%s", name)
}
