package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Summary is the one-line verdict.
func (r *Result) Summary() string {
	if r.OK() {
		return fmt.Sprintf("audit clean: %d audited writes, %d writer attempts, %d fence windows, no write from a fenced source after its ack",
			r.Audited, r.Attempts, len(r.Windows))
	}
	return fmt.Sprintf("audit FAILED: %d violations; first: %s", len(r.Violations), r.First())
}

func ms(v float64) string { return fmt.Sprintf("%.1f", v) }

func (r *Result) rel(t int64) string {
	if t == Never {
		return "never"
	}
	if t <= 0 {
		return "-"
	}
	return fmt.Sprintf("+%.3fs", float64(t-r.Start)/1e9)
}

// Markdown renders the report: verdict, first violation, fence windows
// with enforcement latency, per-source writes around each fence, per-client
// totals, restarts and warnings.
func (r *Result) Markdown(title string) string {
	var b strings.Builder
	p := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	p("# %s\n\n", title)
	if r.OK() {
		p("**PASS**: no write from a fenced source was accepted after its fence was acknowledged; every acknowledged write is in the audit log; no fence was enforced after its ack; no unfenced writer was refused.\n\n")
	} else {
		p("**FAIL**: %d violations.\n\nFirst violation:\n\n```\n%s\n```\n\n", len(r.Violations), r.First())
		counts := map[string]int{}
		for _, v := range r.Violations {
			counts[v.Kind]++
		}
		for _, k := range []string{KindWriteAfterFence, KindLostAck, KindEnforcedLate, KindRefusedUnfenced} {
			if counts[k] > 0 {
				p("- %s: %d\n", k, counts[k])
			}
		}
		p("\n")
	}
	p("Audited writes: %d. Writer attempts: %d. Times are relative to %s UTC.\n\n", r.Audited, r.Attempts, fmtNs(r.Start))
	if len(r.Episodes) > 0 {
		p("## Fences\n\n| fenced | acknowledged | enforced − ack (ms) | lifted (unfence start) | unfence ack | driver log |\n| --- | --- | --- | --- | --- | --- |\n")
		for _, e := range r.Episodes {
			enf := "unknown"
			if e.EnforceNs > 0 {
				enf = ms(e.EnforceDeltaMs)
			}
			ua := "-"
			if e.Unfence != nil {
				ua = r.rel(e.Unfence.TNs)
			}
			p("| %s | %s | %s | %s | %s | %s |\n", strings.Join(e.CIDRs, " "), r.rel(e.AckNs), enf, r.rel(e.LiftNs), ua, e.Fence.Source)
		}
		p("\nNegative enforced − ack: refstore enforced the list before the driver acknowledged, as it must.\n\n")
		for i, e := range r.Episodes {
			p("### Fence %d: %s\n\n| source | fenced | before | during | after | rate before/during/after (w/s) | first refusal − ack (ms) | gap (s) | resumed after unfence ack (ms) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
				i+1, strings.Join(e.CIDRs, " "))
			for _, s := range e.Sources {
				gap, res, ref := "-", "-", "-"
				if s.FirstRefusedNs > 0 {
					ref = ms(s.RefusalMs)
				}
				if s.FirstAfterNs > 0 {
					res = ms(s.ResumeMs)
					if s.GapS > 0 {
						gap = fmt.Sprintf("%.2f", s.GapS)
					}
				}
				p("| %s | %v | %d | %d | %d | %.1f / %.1f / %.1f | %s | %s | %s |\n", s.Source, s.Fenced, s.Before, s.During, s.After,
					s.BeforeRate, s.DuringRate, s.AfterRate, ref, gap, res)
			}
			p("\n")
		}
	}
	if len(r.Clients) > 0 {
		p("## Clients\n\n| client | addresses | audited | writer ok / refused / error | lost (acked, not audited) | failed while unfenced | ever fenced |\n| --- | --- | --- | --- | --- | --- | --- |\n")
		for _, c := range r.Clients {
			p("| %s | %s | %d | %d / %d / %d | %d | %d | %v |\n", c.Client, strings.Join(c.Addresses, " "), c.Accepted,
				c.OK, c.Refused, c.Errors, c.Lost, c.FailedUnfenced, c.Fenced)
		}
		p("\n")
	}
	if len(r.Restarts) > 0 {
		p("## Driver (re)starts\n\n| at | re-applied | acknowledged but not re-applied |\n| --- | --- | --- |\n")
		for _, s := range r.Restarts {
			p("| %s | %s | %s |\n", r.rel(s.TNs), joinOr(s.Restored, "-"), joinOr(s.Missing, "-"))
		}
		p("\n")
	}
	if len(r.Violations) > 1 {
		p("## Violations (first 20)\n\n")
		for i, v := range r.Violations[:min(20, len(r.Violations))] {
			p("%d. %s\n", i+1, v)
		}
		p("\n")
	}
	if len(r.Warnings) > 0 {
		p("## Warnings\n\n")
		for _, w := range r.Warnings {
			p("- %s\n", w)
		}
		p("\n")
	}
	return b.String()
}

// TimelineText renders the timeline, one event per line with the time since
// the start of the run.
func (r *Result) TimelineText() string {
	var b strings.Builder
	for _, e := range r.Timeline {
		fmt.Fprintf(&b, "%12s  %s\n", r.rel(e.TNs), e.Event)
	}
	return b.String()
}

// Summary JSON: the machine-readable report (NAME.json).
type jsonReport struct {
	OK         bool            `json:"ok"`
	Summary    string          `json:"summary"`
	First      *jsonViolation  `json:"first_violation,omitempty"`
	Violations map[string]int  `json:"violations"`
	Fences     []jsonFence     `json:"fences"`
	Clients    []ClientFigures `json:"clients"`
	Restarts   []Restart       `json:"restarts"`
	Warnings   []string        `json:"warnings"`
	Audited    int             `json:"audited"`
	Attempts   int             `json:"attempts"`
}

type jsonViolation struct {
	Kind    string  `json:"kind"`
	Client  string  `json:"client"`
	Addr    string  `json:"addr"`
	Seq     uint64  `json:"seq"`
	TNs     int64   `json:"t_ns"`
	Record  string  `json:"record"`
	Fence   string  `json:"fence,omitempty"`
	AckNs   int64   `json:"ack_ns,omitempty"`
	DeltaMs float64 `json:"delta_ms,omitempty"`
	Text    string  `json:"text"`
}

type jsonFence struct {
	CIDRs          []string        `json:"cidrs"`
	AckNs          int64           `json:"ack_ns"`
	LiftNs         int64           `json:"lift_ns"` // math.MaxInt64: never lifted
	EnforceDeltaMs *float64        `json:"enforce_minus_ack_ms"`
	Sources        []SourceFigures `json:"sources"`
}

// JSON renders the machine-readable report.
func (r *Result) JSON() ([]byte, error) {
	j := jsonReport{OK: r.OK(), Summary: r.Summary(), Violations: map[string]int{}, Clients: r.Clients, Restarts: r.Restarts,
		Warnings: r.Warnings, Audited: r.Audited, Attempts: r.Attempts}
	for _, v := range r.Violations {
		j.Violations[v.Kind]++
	}
	if v := r.First(); v != nil {
		jv := &jsonViolation{Kind: v.Kind, Client: v.Client, Addr: v.Addr, Seq: v.Seq, TNs: v.TNs, Record: v.Record, Text: v.String()}
		if v.Window != nil {
			jv.Fence, jv.AckNs, jv.DeltaMs = v.Window.Key, v.Window.From, v.DeltaMs
		}
		j.First = jv
	}
	for _, e := range r.Episodes {
		f := jsonFence{CIDRs: e.CIDRs, AckNs: e.AckNs, LiftNs: e.LiftNs, Sources: e.Sources}
		if e.EnforceNs > 0 {
			d := e.EnforceDeltaMs
			f.EnforceDeltaMs = &d
		}
		j.Fences = append(j.Fences, f)
	}
	return json.MarshalIndent(j, "", "  ")
}

// WriteReports writes DIR/NAME.md (the Markdown report), DIR/NAME.json and
// DIR/NAME-timeline.txt.
func (r *Result) WriteReports(dir, name, title string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(r.Markdown(title)), 0o644); err != nil {
		return err
	}
	raw, err := r.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+"-timeline.txt"), []byte(r.TimelineText()), 0o644)
}
