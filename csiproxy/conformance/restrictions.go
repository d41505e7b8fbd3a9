package conformance

import (
	"context"
	"fmt"

	iscsiv1alpha2 "github.com/kubernetes-csi/csi-proxy/client/api/iscsi/v1alpha2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// refusal is one refused request, for CODE-001.
type refusal struct {
	what string
	code codes.Code
}

var refusals []refusal

func refused(what string, err error) {
	refusals = append(refusals, refusal{what: what, code: status.Code(err)})
}

// docPortal is the portal the refusal cases name when no real portal is
// configured (a documentation address: nothing is contacted).
const docPortal = "192.0.2.10"

func (s *state) iscsi() iscsiv1alpha2.IscsiClient {
	if c := s.conn("iscsi", "v1alpha2"); c != nil {
		return iscsiv1alpha2.NewIscsiClient(c)
	}
	return nil
}

// restrictionSpecs registers one spec per request-only restriction: every
// case of restrict.Cases for that rule is sent on every served version that
// takes the field, and each must be refused.
func restrictionSpecs(s *state) {
	for _, r := range restrict.Rules {
		if r.State || r.ID == "PIPE-001" {
			continue
		}
		id := r.ID
		s.it(id, func(ctx context.Context) {
			var f failures
			ran := 0
			for _, c := range restrict.Cases {
				if c.Rule == id {
					ran += s.sendRefusal(ctx, c, &f)
				}
			}
			if ran == 0 && !s.servesRule(id) {
				rulebook.NotSupported("no served version takes this rule's fields")
			}
			if ran == 0 {
				rulebook.Skip("its resource is not configured (--iscsi-portal)")
			}
			f.check()
		})
	}
}

// servesRule reports whether a served version takes the fields of some
// case of the rule.
func (s *state) servesRule(id string) bool {
	for _, c := range restrict.Cases {
		if c.Rule != id {
			continue
		}
		switch c.Kind {
		case restrict.KindLink, restrict.KindDir:
			if len(s.fs) > 0 {
				return true
			}
		case restrict.KindSMB:
			if len(s.smb) > 0 {
				return true
			}
		case restrict.KindIQN, restrict.KindPortal, restrict.KindCHAP:
			if s.iscsi() != nil {
				return true
			}
		}
	}
	return false
}

// sendRefusal sends one case on every version that takes it, records a
// failure for each acceptance, and returns how many requests it sent.
func (s *state) sendRefusal(ctx context.Context, c restrict.Case, f *failures) int {
	sent := 0
	switch c.Kind {
	case restrict.KindLink:
		for _, fs := range s.fs {
			src, tgt := s.name(), s.name()
			prep := c.Prepare
			if prep == "" {
				prep = restrict.LinkTarget
			}
			tdir := s.expand(prep, src, tgt)
			cctx, cancel := s.call(ctx)
			if err := fs.Mkdir(cctx, tdir); err != nil {
				f.add("filesystem %s %s: setup Mkdir %q: %v", fs.Version(), c.Name, tdir, err)
				cancel()
				continue
			}
			a, b := s.expand(c.A, src, tgt), s.expand(c.B, src, tgt)
			err := fs.Link(cctx, a, b)
			sent++
			if err == nil {
				f.add("filesystem %s %s: link %q -> %q accepted", fs.Version(), c.Name, a, b)
			} else {
				refused(c.Rule+" "+c.Name, err)
			}
			_ = fs.Rmdir(cctx, s.expand(restrict.LinkSource, src, tgt), false)
			_ = fs.Rmdir(cctx, tdir, true)
			cancel()
		}
	case restrict.KindDir:
		for _, fs := range s.fs {
			a := s.expand(c.A, s.name(), "")
			cctx, cancel := s.call(ctx)
			err := fs.Mkdir(cctx, a)
			sent++
			if err == nil {
				f.add("filesystem %s %s: Mkdir %q accepted", fs.Version(), c.Name, a)
				_ = fs.Rmdir(cctx, a, true)
			} else {
				refused(c.Rule+" "+c.Name, err)
			}
			cancel()
		}
	case restrict.KindSMB:
		for _, m := range s.smb {
			cctx, cancel := s.call(ctx)
			err := m.Map(cctx, c.A, "", "fenceproof", "not-a-real-password")
			sent++
			if err == nil {
				f.add("smb %s %s: mapping %q accepted", m.Version(), c.Name, c.A)
				_ = m.Unmap(cctx, c.A)
			} else {
				refused(c.Rule+" "+c.Name, err)
			}
			cancel()
		}
	case restrict.KindIQN:
		cl := s.iscsi()
		if cl == nil || s.cfg.ISCSIPortal == "" {
			return 0
		}
		cctx, cancel := s.call(ctx)
		defer cancel()
		p := &iscsiv1alpha2.TargetPortal{TargetAddress: s.cfg.ISCSIPortal, TargetPort: 3260}
		if _, err := cl.AddTargetPortal(cctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p}); err != nil {
			f.add("iscsi %s: setup AddTargetPortal: %v", c.Name, err)
			return 1
		}
		_, err := cl.ConnectTarget(cctx, &iscsiv1alpha2.ConnectTargetRequest{TargetPortal: p, Iqn: c.A})
		sent++
		if err == nil {
			f.add("iscsi %s: ConnectTarget %q accepted", c.Name, c.A)
			_, _ = cl.DisconnectTarget(cctx, &iscsiv1alpha2.DisconnectTargetRequest{TargetPortal: p, Iqn: c.A})
		} else {
			refused(c.Rule+" "+c.Name, err)
		}
		_, _ = cl.RemoveTargetPortal(cctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p})
	case restrict.KindPortal:
		cl := s.iscsi()
		if cl == nil {
			return 0
		}
		cctx, cancel := s.call(ctx)
		defer cancel()
		p := &iscsiv1alpha2.TargetPortal{TargetAddress: c.A, TargetPort: c.Port}
		_, err := cl.AddTargetPortal(cctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p})
		sent++
		if err == nil {
			f.add("iscsi %s: AddTargetPortal %s:%d accepted", c.Name, c.A, c.Port)
			_, _ = cl.RemoveTargetPortal(cctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p})
		} else {
			refused(c.Rule+" "+c.Name, err)
		}
		if c.Rule == "ISCSI-002" && c.Port > 65535 && s.cfg.ISCSIPortal != "" {
			s.defaultPort(cctx, cl, f)
		}
	case restrict.KindCHAP:
		cl := s.iscsi()
		if cl == nil {
			return 0
		}
		cctx, cancel := s.call(ctx)
		defer cancel()
		_, err := cl.SetMutualChapSecret(cctx, &iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: c.A})
		sent++
		if err == nil {
			f.add("iscsi %s: SetMutualChapSecret of %d bytes accepted", c.Name, len(c.A))
		} else {
			refused(c.Rule+" "+c.Name, err)
		}
	}
	return sent
}

// defaultPort: a portal given with port 0 is registered with port 3260.
func (s *state) defaultPort(ctx context.Context, cl iscsiv1alpha2.IscsiClient, f *failures) {
	p := &iscsiv1alpha2.TargetPortal{TargetAddress: s.cfg.ISCSIPortal}
	if _, err := cl.AddTargetPortal(ctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p}); err != nil {
		f.add("AddTargetPortal %s with port 0: %v", s.cfg.ISCSIPortal, err)
		return
	}
	list, err := cl.ListTargetPortals(ctx, &iscsiv1alpha2.ListTargetPortalsRequest{})
	if err != nil {
		f.add("ListTargetPortals: %v", err)
		return
	}
	var got []string
	found := false
	for _, tp := range list.TargetPortals {
		if tp.TargetAddress == s.cfg.ISCSIPortal {
			got = append(got, fmt.Sprint(tp.TargetPort))
			found = found || tp.TargetPort == restrict.DefaultISCSIPort
		}
	}
	if !found {
		f.add("portal %s added with port 0 is listed with ports %v, want %d", s.cfg.ISCSIPortal, got, restrict.DefaultISCSIPort)
	}
	for _, port := range []uint32{0, restrict.DefaultISCSIPort} {
		_, _ = cl.RemoveTargetPortal(ctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: &iscsiv1alpha2.TargetPortal{TargetAddress: s.cfg.ISCSIPortal, TargetPort: port}})
	}
}

// codeSpecs checks the codes of every refusal the run saw.
func codeSpecs(s *state) {
	s.it("CODE-001", func(ctx context.Context) {
		if len(refusals) == 0 {
			rulebook.Skip("no refusal observed (rules filtered out)")
		}
		var f failures
		for _, r := range refusals {
			if r.code != codes.InvalidArgument && r.code != codes.FailedPrecondition {
				f.add("%s: refused with %s", r.what, r.code)
			}
		}
		rulebook.Note("%d refusals checked", len(refusals))
		f.check()
	})
}
