package audit

import (
	"fmt"
	"net/netip"

	cephwriter "github.com/fenceproof/fenceproof/ceph/writer"
	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// CephFiles names the inputs of a check of a run on Ceph: the driver's
// logs, the Ceph writers' attempt logs and the read-back of their
// acknowledged objects (`fenceproof ceph-writer read-back`).
type CephFiles struct {
	DriverLogs []string
	WriterLogs []string
	ReadBack   []string
}

// LoadCeph reads a Ceph run's files into the oracle's Input (see FromCeph).
func LoadCeph(f CephFiles) (Input, error) {
	if len(f.DriverLogs) == 0 || len(f.WriterLogs) == 0 {
		return Input{}, inputErr("a driver log and a Ceph writer log are required")
	}
	var drv []DriverEvent
	var warns []string
	for _, p := range f.DriverLogs {
		evs, w, err := ReadDriverLog(p)
		if err != nil {
			return Input{}, err
		}
		drv, warns = append(drv, evs...), append(warns, w...)
	}
	var atts []cephwriter.Attempt
	for _, p := range f.WriterLogs {
		err := eachLine(p, func(n int, line []byte, torn bool) error {
			if len(line) == 0 || line[0] != '{' {
				return nil
			}
			var a cephwriter.Attempt
			if err := strictJSON(line, &a); err != nil || a.Client == "" || a.Object == "" || a.TNs <= 0 {
				if torn {
					warns = append(warns, fmt.Sprintf("%s:%d: torn last line skipped", p, n))
					return nil
				}
				return inputErr("%s:%d: not a Ceph writer attempt: %v", p, n, err)
			}
			atts = append(atts, a)
			return nil
		})
		if err != nil {
			return Input{}, err
		}
	}
	var rbs []cephwriter.ReadBack
	for _, p := range f.ReadBack {
		err := eachLine(p, func(n int, line []byte, torn bool) error {
			if len(line) == 0 || line[0] != '{' {
				return nil
			}
			var rb cephwriter.ReadBack
			if err := strictJSON(line, &rb); err != nil || rb.Object == "" {
				return inputErr("%s:%d: not a read-back line: %v", p, n, err)
			}
			rbs = append(rbs, rb)
			return nil
		})
		if err != nil {
			return Input{}, err
		}
	}
	in := FromCeph(drv, atts, rbs)
	in.Warnings = append(warns, in.Warnings...)
	return in, nil
}

// FromCeph turns a Ceph run into the oracle's Input. Ceph keeps no audit
// log of accepted writes, so the record of an accepted write is built
// from the writer's side:
//
//   - every acknowledged write whose object the read-back found intact is
//     an audit record at the time it was SENT: a write sent after a
//     fence's ack and acknowledged is a write-after-fence, and a write
//     sent before the ack is never blamed on the fence even if its answer
//     came later (the OSD may have applied it before the new map);
//   - an acknowledged write whose object is missing or wrong has no
//     record: the oracle reports it as a lost acknowledged write;
//   - -108 is a refusal, a timeout or any other error an error (the write
//     may or may not have been applied).
//
// Without a read-back (nil), every acknowledged write counts as recorded
// and lost writes are not judged (a warning says so).
func FromCeph(drv []DriverEvent, atts []cephwriter.Attempt, rbs []cephwriter.ReadBack) Input {
	in := Input{Driver: drv}
	intact := map[string]bool{}
	for _, rb := range rbs {
		if rb.Result == cephwriter.ReadOK {
			intact[rb.Object] = true
		}
	}
	if rbs == nil {
		in.Warnings = append(in.Warnings, "no read-back of the acknowledged objects: lost writes are not judged")
	}
	for _, a := range atts {
		local := ""
		if ad, err := netip.ParseAddr(a.Source); err == nil {
			local = netip.AddrPortFrom(ad.Unmap(), 0).String()
		}
		wa := writer.Attempt{Client: a.Client, Seq: a.Seq, Local: local, SendNs: a.SendNs, TNs: a.TNs, Reason: a.Reason}
		switch a.Result {
		case cephwriter.ResultOK:
			wa.Outcome = writer.OutcomeOK
			if rbs == nil || intact[a.Object] {
				in.Audit = append(in.Audit, refstore.AuditRecord{Client: a.Client, Seq: a.Seq, Addr: local, TNs: a.SendNs})
			}
		case cephwriter.ResultBlocklisted:
			wa.Outcome, wa.Reason = writer.OutcomeRefused, "EBLOCKLISTED (-108)"
		default:
			wa.Outcome = writer.OutcomeError
			if wa.Reason == "" {
				wa.Reason = a.Result
			}
		}
		in.Writers = append(in.Writers, wa)
	}
	return in
}
