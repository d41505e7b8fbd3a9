package simhost

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/csiproxy/simhost/fault"
)

// check is one check of a request: a request check (the request alone,
// and the OS disk) or a state check (what exists, where links lead), the
// field value it judges and the check.
type check struct {
	value string
	state bool
	run   func() error
}

// requestCheck and stateCheck are the two kinds of check.
func requestCheck(value string, run func() error) check { return check{value: value, run: run} }
func stateCheck(value string, run func() error) check {
	return check{value: value, state: true, run: run}
}

// check runs the checks of a request of one version in order; the first
// failure is the refusal. The faults say whether the request is refused
// outright, which checks run (novalidate takes an RPC's request
// checks off, what a host that does not validate that RPC's fields does;
// the state checks stay, as they guard the host's state other rules rely
// on) and whether a refusal stands.
func (s *Sim) check(method, version string, req any, checks ...check) error {
	r := fault.Request{Method: method, Version: version, Req: req}
	if s.faults.Vetoes(r) {
		return status.Errorf(codes.InvalidArgument, "%s refused", method)
	}
	request, state := s.faults.Checks(r)
	for _, c := range checks {
		if c.state && !state || !c.state && !request {
			continue
		}
		err := c.run()
		if err == nil {
			continue
		}
		var v *restrict.Violation
		if errors.As(err, &v) {
			if !s.faults.Stands(v, c.value, r, s.v) {
				continue
			}
			s.faults.Refused(r)
		}
		return s.refuse(err)
	}
	return nil
}

// path checks a path field: its syntax and prefix (Dir, a request check),
// then where it leads (DIR-002, a state check): links on the way, and the
// final component's if the call follows it.
func (s *Sim) path(field, p string, follow bool) []check {
	return []check{
		requestCheck(p, func() error {
			if err := s.ascii(field, p); err != nil {
				return err
			}
			return s.v.Dir(field, p)
		}),
		stateCheck(p, func() error { return s.reached("DIR-002", field, p, follow) }),
	}
}

// ascii refuses a path outside ASCII when the break ascii-only is on.
func (s *Sim) ascii(field, p string) error {
	if s.faults.Breaks(fault.ASCIIOnly) && strings.IndexFunc(p, func(r rune) bool { return r > 0x7e }) >= 0 {
		return status.Errorf(codes.InvalidArgument, "%s: %q is not ASCII", field, p)
	}
	return nil
}

// reached checks where p leads under rule: every link on the way
// followed, whether or not the rest of the path exists (a directory to be
// made below a link leading outside is outside). Only a path Windows
// cannot place at all is left to the Windows call, which fails on its
// own.
func (s *Sim) reached(rule, field, p string, follow bool) error {
	n, _ := s.Host.Resolve(p, follow)
	if n.Root == "" {
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

// volumeID checks a volume ID's shape and, for a call that changes the
// volume, that it is not the OS volume (request checks: a host that does
// not check the field does not check either).
func (s *Sim) volumeID(field, id string, changes bool) []check {
	checks := []check{requestCheck(id, func() error { return s.v.VolumeID(field, id) })}
	if changes {
		checks = append(checks, requestCheck(id, func() error { return s.v.SystemVolume(field, id, s.systemVolumes()) }))
	}
	return checks
}

func (s *Sim) disk(field string, n uint32) check {
	return requestCheck(fmt.Sprint(n), func() error { return s.v.SystemDisk(field, n, s.systemDisks()) })
}
