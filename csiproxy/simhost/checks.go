package simhost

import (
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// check runs an RPC's checks in order; the first failure is the refusal.
// The fault novalidate takes the field checks off the RPC (what a host
// that does not validate that RPC's fields does): every request check and
// the OS-disk check; the checks of what exists and where links lead stay,
// as they guard the host's state other rules rely on.
func (s *Sim) check(group, method string, checks ...func() error) error {
	lax := s.cfg.Faults.NoValidate[group+"."+method]
	for _, c := range checks {
		err := c()
		var v *restrict.Violation
		if err != nil && (!lax || errors.As(err, &v) && v.IsState() && v.Rule != "SYSDISK-001") {
			return s.refuse(err)
		}
	}
	return nil
}

// path checks a path field: its syntax and prefix (Dir, a request check),
// then where it leads (DIR-002, a state check): links on the way, and the
// final component's if the call follows it.
func (s *Sim) path(field, p string, follow bool) []func() error {
	return []func() error{
		func() error {
			if err := s.ascii(field, p); err != nil {
				return err
			}
			return s.v.Dir(field, p)
		},
		func() error { return s.reached("DIR-002", field, p, follow) },
	}
}

// ascii refuses a path outside ASCII when the break ascii-only is on.
func (s *Sim) ascii(field, p string) error {
	if s.broken("ascii-only") && strings.IndexFunc(p, func(r rune) bool { return r > 0x7e }) >= 0 {
		return status.Errorf(codes.InvalidArgument, "%s: %q is not ASCII", field, p)
	}
	return nil
}

// reached checks where p leads under rule. A path the host cannot follow
// (a missing directory on the way) is left to the Windows call, which
// fails on its own.
func (s *Sim) reached(rule, field, p string, follow bool) error {
	n, err := s.Host.Resolve(p, follow)
	if err != nil {
		return nil
	}
	return s.v.Reached(rule, field, reach(n))
}

func reach(n hostmodel.Name) restrict.Reach {
	switch n.Where {
	case hostmodel.Local:
		return restrict.Reach{Local: true, Path: n.String()}
	case hostmodel.Remote:
		return restrict.Reach{Remote: true, Path: n.String()}
	}
	return restrict.Reach{Path: n.String()}
}

// systemVolumes are the volumes the OS runs from: the one holding
// C:\Windows.
func (s *Sim) systemVolumes() []string {
	id, err := s.Host.ClosestVolume(`C:\Windows`)
	if err != nil {
		return nil
	}
	return []string{id}
}

// systemDisks are the disks of the system volumes.
func (s *Sim) systemDisks() []uint32 {
	var out []uint32
	for _, id := range s.systemVolumes() {
		if v, err := s.Host.GetVolume(id); err == nil {
			out = append(out, v.Disk)
		}
	}
	return out
}

// volumeID checks a volume ID's shape (a request check) and, for a call
// that changes the volume, that it is not the OS volume (a state check).
func (s *Sim) volumeID(field, id string, changes bool) []func() error {
	checks := []func() error{func() error { return s.v.VolumeID(field, id) }}
	if changes {
		checks = append(checks, func() error { return s.v.SystemVolume(field, id, s.systemVolumes()) })
	}
	return checks
}

func (s *Sim) disk(field string, n uint32) func() error {
	return func() error { return s.v.SystemDisk(field, n, s.systemDisks()) }
}
