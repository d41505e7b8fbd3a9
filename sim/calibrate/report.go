package calibrate

import (
	"fmt"
	"sort"
	"strings"
)

// Markdown renders the Ceph comparison and the fencing replay side by
// side (reports/calibration.md).
func Markdown(c *Comparison, f *FencingReplay) string {
	var b strings.Builder
	b.WriteString("# Simulator calibration\n\n")
	e := c.Exp
	fmt.Fprintf(&b, "## A real Ceph against the simulator\n\nOne OSD of %d (a single-node Ceph, Debian's daemons, `ceph/cluster`; pool size %d, min_size %d, %d PGs) is killed at 0 and restarted after %s; %d objects of %d KiB are written before, %d while it is away.\n\n",
		e.OSDs, e.PoolSize, e.MinSize, e.PGs, e.Outage, e.ObjectsBefore, e.ObjectKiB, e.ObjectsDuring)
	b.WriteString("Ceph configuration (the simulator gets the same values): ")
	var cfg []string
	for k, v := range e.cephConfig() {
		cfg = append(cfg, fmt.Sprintf("`%s = %s`", k, v))
	}
	sort.Strings(cfg)
	b.WriteString(strings.Join(cfg, ", ") + ".\n\n")
	var plat []string
	for k, v := range e.Platform {
		plat = append(plat, fmt.Sprintf("`%s: %s`", k, v))
	}
	sort.Strings(plat)
	fmt.Fprintf(&b, "Simulator platform assumptions for this machine: %s; everything else is the simulator's default.\n\n", strings.Join(plat, ", "))
	fmt.Fprintf(&b, "| event | %s (s) | %s (s) | simulated - real (s) |\n|---|---|---|---|\n", c.Real.Source, c.Sim.Source)
	for k := EventKind(0); k < numEvents; k++ {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", k, evAt(c.Real, k), evAt(c.Sim, k), evDiff(c.Real, c.Sim, k))
	}
	fmt.Fprintf(&b, "| objects recovered | %d | %d | %d |\n\n", c.Real.ObjectsRecovered, c.Sim.ObjectsRecovered, c.Sim.ObjectsRecovered-c.Real.ObjectsRecovered)
	fmt.Fprintf(&b, "Order of events: real %s; simulated %s.\n\n", names(c.Real.order()), names(c.Sim.order()))
	b.WriteString("| phase | real | simulated | tolerance | verdict | why the tolerance |\n|---|---|---|---|---|---|\n")
	for i, l := range c.phaseLines {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", l[0], l[1], l[2], l[3], l[4], phaseWhy(l[0], i))
	}
	fmt.Fprintf(&b, "\nObjects recovered may differ by %.0f %%.\n\n", 100*objectsTolerance)
	writeProblems(&b, c.Problems)
	if f != nil {
		b.WriteString(f.Markdown())
	}
	return b.String()
}

func phaseWhy(name string, _ int) string {
	for _, p := range phases {
		if p.name == name {
			return p.why
		}
	}
	return ""
}

func writeProblems(b *strings.Builder, ps []string) {
	if len(ps) == 0 {
		b.WriteString("**Verdict: the simulator reproduces this run** (same order of events, every phase within its tolerance).\n\n")
		return
	}
	b.WriteString("**Verdict: the simulator differs:**\n\n")
	for _, p := range ps {
		fmt.Fprintf(b, "- %s\n", p)
	}
	b.WriteString("\n")
}

func evAt(o *Observed, k EventKind) string {
	if !o.seen[k] {
		return "not seen"
	}
	return fmt.Sprintf("%.1f", o.Events[k].Seconds())
}

func evDiff(r, s *Observed, k EventKind) string {
	if !r.seen[k] || !s.seen[k] {
		return ""
	}
	return fmt.Sprintf("%+.1f", (s.Events[k] - r.Events[k]).Seconds())
}
