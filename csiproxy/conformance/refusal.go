package conformance

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/hostrecord"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// refusal is one refused request, for CODE-001.
type refusal struct {
	what string
	code codes.Code
}

// refusalSpecs registers one rule per RPC of restrict.RPCs: every case of
// every checked field's kind is sent in that field, the others valid, on
// every served version that has the RPC, and each must be refused. The
// RPCs whose accepted cases may remove the escape link other rules' cases
// lead through run last, each rule's cases through the link first, and
// once such an RPC accepted a case that may name an existing entry no
// later case through the link is sent: a host that accepts them fails
// only their rules.
func refusalSpecs(s *state) {
	rpcs := slices.Clone(restrict.RPCs)
	slices.SortStableFunc(rpcs, func(a, b restrict.RPC) int {
		return cmp.Compare(removes(a), removes(b))
	})
	for _, r := range rpcs {
		r := r
		s.it(r.Rule(), func(ctx context.Context) { s.refuseAll(ctx, r) })
	}
}

// removes ranks the RPCs whose accepted cases may remove the escape link
// (0: none), in the order their rules run last: Rmdir deletes it only
// when a drawn 8.3 alias names it, RmdirContents whenever it empties the
// pod directory.
func removes(r restrict.RPC) int {
	switch r.Method {
	case "Rmdir":
		return 1
	case "RmdirContents":
		return 2
	}
	return 0
}

// fresh reports whether a case's path ends in a name the suite drew, so
// that it names nothing on the host; the others may name an existing
// entry (a kubelet directory, an alias, the parent).
func fresh(c restrict.Case) bool {
	return strings.Contains(c.Value, "{s}") || strings.Contains(c.Value, "{u}")
}

// escapeStands asks the host whether the escape link is still a link
// below both kubelet directories; a host that cannot say (none of its
// filesystem versions answers IsSymlink) counts it gone.
func (s *state) escapeStands(ctx context.Context) bool {
	for _, dir := range []string{s.cfg.PodPath, s.cfg.PluginsPath} {
		stands := false
		for _, gv := range s.of("filesystem", "IsSymlink") {
			if ok, err := isLink(ctx, s.client(gv).(api.FilesystemClient), dir+`\`+s.cfg.EscapeLink); err == nil {
				stands = ok
				break
			}
		}
		if !stands {
			return false
		}
	}
	return true
}

// escapeFirst orders a kind's cases with those through the escape link
// first, so that a rule's own accepted removals cannot take their premise
// away.
func escapeFirst(cases []restrict.Case) []restrict.Case {
	out := slices.Clone(cases)
	slices.SortStableFunc(out, func(a, b restrict.Case) int {
		return cmp.Compare(throughEscape(b), throughEscape(a))
	})
	return out
}

func throughEscape(c restrict.Case) int {
	if strings.Contains(c.Value, "{escape}") {
		return 1
	}
	return 0
}

func (s *state) refuseAll(ctx context.Context, r restrict.RPC) {
	vs := s.of(r.Group, r.Method)
	if len(vs) == 0 {
		rulebook.NotSupported("no served version has %s %s", r.Group, r.Method)
	}
	if !s.probed(r) {
		rulebook.Skip("profile %s: the KEP restricts no field of %s", s.cfg.Profile, r.Method)
	}
	if why := s.needs(r); why != "" {
		rulebook.Skip("%s", why)
	}
	var f failures
	skipped := map[string]int{}
	classes := map[string]int{} // each field and case's next class, over the versions
	sent := 0
	v := s.variationOf(r, vs)
	for _, gv := range vs {
		loaded, stopLoad := gv.Version == v.loaded, func() {}
		if loaded {
			stopLoad = s.underLoad(ctx)
		}
		send := func(fl restrict.Field, rule string, p restrict.Probe, pair *pairedField) {
			if why := s.unsendable(r, p.Case, p); why != "" {
				skipped[why]++
				return
			}
			sent++
			how := sendAs{loaded: loaded, pair: pair}
			how.pause, v.pause = v.pause, 0
			s.probe(ctx, gv, r, fl, rule, p, how, &f)
		}
		for _, fl := range r.Fields {
			for _, c := range escapeFirst(restrict.CasesOf(fl.Kind)) {
				rule, ok := s.cfg.Profile.RuleOf(c, r, fl)
				if !ok || c.Rule == "SYSDISK-001" && !r.Changes {
					continue
				}
				// each class of the case's stratified spellings at least
				// once over the versions, from a drawn first class
				key := fl.Name + "\x00" + c.Rule + "\x00" + c.Name
				if _, ok := classes[key]; !ok {
					classes[key] = s.draw.Start()
				}
				for range max(1, c.Draws, ceilDiv(s.draw.Classes(c), len(vs))) {
					p := s.draw.ProbeAt(c, fl.Kind, classes[key])
					classes[key]++
					send(fl, rule, p, nil)
				}
			}
		}
		if fl, rule, p, pair, ok := s.pairProbe(r); ok {
			send(fl, rule, p, pair)
		}
		stopLoad()
	}
	var notes []string
	for why, n := range skipped {
		notes = append(notes, fmt.Sprintf("%d not sent: %s", n, why))
	}
	sort.Strings(notes)
	rulebook.Note("%d cases sent on %s (profile %s)%s", sent, versionList(vs), s.cfg.Profile, strings.Join(append([]string{""}, notes...), "; "))
	f.check()
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// probed reports whether the profile probes some field of the RPC.
func (s *state) probed(r restrict.RPC) bool {
	for _, fl := range r.Fields {
		for _, c := range restrict.CasesOf(fl.Kind) {
			if _, ok := s.cfg.Profile.RuleOf(c, r, fl); ok {
				return true
			}
		}
	}
	return false
}

func versionList(vs []api.GroupVersion) string {
	var out []string
	for _, gv := range vs {
		out = append(out, gv.Version)
	}
	return strings.Join(out, " ")
}

// needs says what an RPC's cases need that is not configured.
func (s *state) needs(r restrict.RPC) string {
	switch {
	case r.Group == "smb" && s.cfg.SMBShare == "":
		return "no --smb-share: an SMB refusal to an unreachable server cannot be told from a network failure"
	case r.Group == "iscsi" && s.cfg.ISCSIPortal == "":
		return "no --iscsi-portal: an iSCSI refusal to an unreachable portal cannot be told from a network failure"
	case r.Group == "filesystem" || r.Group == "volume":
		if s.fs() == nil {
			return "no filesystem version is served to prepare the cases"
		}
	}
	return ""
}

// unsendable says why a case is not sent, "" when it is.
func (s *state) unsendable(r restrict.RPC, c restrict.Case, p restrict.Probe) string {
	switch {
	case strings.Contains(c.Value, "{escape}") && s.cfg.EscapeLink == "":
		return "no --escape-link (a link leading outside the kubelet directories)"
	case strings.Contains(c.Value, "{escape}") && s.escapeLost != "":
		return "the escape link may be gone: accepted earlier: " + s.escapeLost
	case strings.Contains(c.Value, "{osdisk}") && s.osDisk == "", strings.Contains(c.Value, "{osvolume}") && s.osVolume == "":
		return "the OS disk is unknown (no volume v2alpha1 to ask)"
	case !s.recorded && !s.cfg.Disruptive && disruptive(r, c):
		return "disruptive on a real node if accepted (--disruptive-probes sends it)"
	}
	if c.Kind.IsPath() {
		for _, w := range s.cfg.WorkingDirs {
			if restrict.AtOrUnder(w, p.Value) {
				return "lands below a --working-dir, which the host accepts"
			}
		}
	}
	return ""
}

// disruptive: a case a real node would feel if its host accepted it.
func disruptive(r restrict.RPC, c restrict.Case) bool {
	switch {
	case r.Method == "RmdirContents" && !fresh(c):
		return true // would empty a kubelet directory
	case c.Rule == "SYSDISK-001" && (r.Method == "FormatVolume" || r.Method == "MountVolume"):
		return true
	case (r.Method == "StopService" || r.Method == "StartService") && c.Value == "{service}":
		return true // would stop or start a real service
	}
	return false
}

// probe sends one drawn case and records a failure unless the host
// refused it before making any Windows call (when its record says, and the
// profile is hardened: the KEP does not say when a refusal comes). rule is
// what the case is probed as under the profile.
func (s *state) probe(ctx context.Context, gv api.GroupVersion, r restrict.RPC, fl restrict.Field, rule string, p restrict.Probe, how sendAs, f *failures) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	c, value := p.Case, p.Value
	b := s.base(cctx, gv, r, c, fl.Name, p.Fresh)
	defer b.done(cctx)
	what := fmt.Sprintf("%s %s %s %s=%q (%s, %s)", gv.Group, gv.Version, r.Method, fl.Name, value, rule, c.Name)
	if c.Make == restrict.MakeDir {
		if err := s.mkdir(cctx, value); err != nil {
			f.add("%s: setup Mkdir: %v", what, err)
			return
		}
		defer s.rmdir(cctx, value)
	}
	if err := setField(b.req, fl.Name, value, p.Port); err != nil {
		f.add("%s: %v", what, err)
		return
	}
	if how.pair != nil {
		what += fmt.Sprintf(" and %s=%q (%s)", how.pair.field.Name, how.pair.probe.Value, how.pair.probe.Case.Name)
		if err := setField(b.req, how.pair.field.Name, how.pair.probe.Value, how.pair.probe.Port); err != nil {
			f.add("%s: %v", what, err)
			return
		}
	}
	if how.pause > 0 {
		what += fmt.Sprintf(" after %s of quiet", how.pause.Round(time.Millisecond))
		time.Sleep(how.pause)
	}
	if how.loaded {
		what += " under load"
	}
	wctx, calls := hostrecord.Watch(cctx)
	err := invoke(wctx, s.client(gv), r.Method, b.req)
	switch {
	case err == nil:
		f.add("%s: accepted", what)
		b.undo(cctx, b.req)
		if removes(r) > 0 && !fresh(c) && s.cfg.EscapeLink != "" && s.escapeLost == "" && !s.escapeStands(cctx) {
			s.escapeLost = what
		}
	case s.recorded && s.cfg.Profile == restrict.Hardened && len(calls.Names) > 0 && !c.ByWindows && how.pair == nil:
		// (with two bad fields, the one let through may be the other's)
		f.add("%s: let through to Windows (%s), which failed: %v", what, strings.Join(calls.Names, ", "), status.Convert(err).Message())
	case status.Code(err) == codes.Unavailable || status.Code(err) == codes.DeadlineExceeded:
		f.add("%s: failed on the network (%s), not refused", what, status.Code(err))
	default:
		s.refusals = append(s.refusals, refusal{what: what, code: status.Code(err)})
	}
}
