package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The table of scenario `params:` keys, declared once: parsing, Validate's
// neighbours, the scenario writer (diff) and the docs test read it.

type paramKind uint8

const (
	pDur paramKind = iota
	pInt
	pFloat
	pCrush
	pBool
)

type paramDesc struct {
	name string
	kind paramKind
	dur  func(*Params) *Time
	i    func(*Params) *int
	f    func(*Params) *float64
	c    func(*Params) *CrushType
	b    func(*Params) *bool
}

// paramTable maps scenario `params:` keys to fields.
var paramTable = []paramDesc{
	{name: "osdHeartbeatGrace", dur: func(p *Params) *Time { return &p.OSDHeartbeatGrace }},
	{name: "osdHeartbeatInterval", dur: func(p *Params) *Time { return &p.OSDHeartbeatInterval }},
	{name: "osdFastFailOnConnectionRefused", kind: pBool, b: func(p *Params) *bool { return &p.OSDFastFailOnConnectionRefused }},
	{name: "monOsdMinDownReporters", kind: pInt, i: func(p *Params) *int { return &p.MonOSDMinDownReporters }},
	{name: "monOsdReportTimeout", dur: func(p *Params) *Time { return &p.MonOSDReportTimeout }},
	{name: "monOsdDownOutInterval", dur: func(p *Params) *Time { return &p.MonOSDDownOutInterval }},
	{name: "monOsdMinInRatio", kind: pFloat, f: func(p *Params) *float64 { return &p.MonOSDMinInRatio }},
	{name: "monTickInterval", dur: func(p *Params) *Time { return &p.MonTickInterval }},
	{name: "monPgStuckThreshold", dur: func(p *Params) *Time { return &p.MonPGStuckThreshold }},
	{name: "osdBootTime", dur: func(p *Params) *Time { return &p.OSDBootTime }},
	{name: "peeringTime", dur: func(p *Params) *Time { return &p.PeeringTime }},
	{name: "peeringSpread", kind: pFloat, f: func(p *Params) *float64 { return &p.PeeringSpread }},
	{name: "reportSpread", dur: func(p *Params) *Time { return &p.ReportSpread }},
	{name: "poolSize", kind: pInt, i: func(p *Params) *int { return &p.PoolSize }},
	{name: "poolMinSize", kind: pInt, i: func(p *Params) *int { return &p.PoolMinSize }},
	{name: "pgDataMB", kind: pFloat, f: func(p *Params) *float64 { return &p.PGDataMB }},
	{name: "pgWriteMBps", kind: pFloat, f: func(p *Params) *float64 { return &p.PGWriteMBps }},
	{name: "pgWriteOps", kind: pFloat, f: func(p *Params) *float64 { return &p.PGWriteOps }},
	{name: "osdMinPgLogEntries", kind: pInt, i: func(p *Params) *int { return &p.OSDMinPGLogEntries }},
	{name: "recoveryMBps", kind: pFloat, f: func(p *Params) *float64 { return &p.RecoveryMBps }},
	{name: "poolUsedGB", kind: pFloat, f: func(p *Params) *float64 { return &p.PoolUsedGB }},
	{name: "osdMaxBackfills", kind: pInt, i: func(p *Params) *int { return &p.OSDMaxBackfills }},
	{name: "osdRecoveryMBps", kind: pFloat, f: func(p *Params) *float64 { return &p.OSDRecoveryMBps }},
	{name: "recoverySleepShare", kind: pFloat, f: func(p *Params) *float64 { return &p.RecoverySleepShare }},
	{name: "monOsdDownOutSubtreeLimit", kind: pCrush, c: func(p *Params) *CrushType { return &p.MonOSDDownOutSubtreeLimit }},
	{name: "osdMaxMarkdownCount", kind: pInt, i: func(p *Params) *int { return &p.OSDMaxMarkdownCount }},
	{name: "osdMaxMarkdownPeriod", dur: func(p *Params) *Time { return &p.OSDMaxMarkdownPeriod }},
	{name: "monOsdAdjustHeartbeatGrace", kind: pBool, b: func(p *Params) *bool { return &p.MonOSDAdjustHeartbeatGrace }},
	{name: "monOsdLaggyHalflife", dur: func(p *Params) *Time { return &p.MonOSDLaggyHalflife }},
	{name: "monOsdLaggyWeight", kind: pFloat, f: func(p *Params) *float64 { return &p.MonOSDLaggyWeight }},
	{name: "monOsdLaggyMaxInterval", dur: func(p *Params) *Time { return &p.MonOSDLaggyMaxInterval }},
	{name: "osdRestartBackoff", dur: func(p *Params) *Time { return &p.OSDRestartBackoff }},
	{name: "nodeMonitorGracePeriod", dur: func(p *Params) *Time { return &p.NodeMonitorGracePeriod }},
	{name: "podEvictionTimeout", dur: func(p *Params) *Time { return &p.PodEvictionTimeout }},
	{name: "nodeBootTime", dur: func(p *Params) *Time { return &p.NodeBootTime }},
	{name: "mhcUnhealthyTimeout", dur: func(p *Params) *Time { return &p.MHCUnhealthyTimeout }},
	{name: "mhcNodeStartupTimeout", dur: func(p *Params) *Time { return &p.MHCNodeStartupTimeout }},
	{name: "mhcMaxUnhealthyPct", kind: pInt, i: func(p *Params) *int { return &p.MHCMaxUnhealthyPct }},
	{name: "mhcRetryInterval", dur: func(p *Params) *Time { return &p.MHCRetryInterval }},
	{name: "mhcLag", dur: func(p *Params) *Time { return &p.MHCLag }},
	{name: "providerDeleteTime", dur: func(p *Params) *Time { return &p.ProviderDeleteTime }},
	{name: "machineProvisionTime", dur: func(p *Params) *Time { return &p.MachineProvisionTime }},
	{name: "bareMetalReprovisionTime", dur: func(p *Params) *Time { return &p.BareMetalReprovisionTime }},
	{name: "rebootRetryLimit", kind: pInt, i: func(p *Params) *int { return &p.RebootRetryLimit }},
	{name: "monSyncTime", dur: func(p *Params) *Time { return &p.MonSyncTime }},
	{name: "rebootTime", dur: func(p *Params) *Time { return &p.RebootTime }},
	{name: "bmcPowerOffTime", dur: func(p *Params) *Time { return &p.BMCPowerOffTime }},
	{name: "rebootRemediationTimeout", dur: func(p *Params) *Time { return &p.RebootRemediationTimeout }},
	{name: "operatorLag", dur: func(p *Params) *Time { return &p.OperatorLag }},
	{name: "operatorStartTime", dur: func(p *Params) *Time { return &p.OperatorStartTime }},
	{name: "operatorFailoverTime", dur: func(p *Params) *Time { return &p.OperatorFailoverTime }},
	{name: "cephStatusInterval", dur: func(p *Params) *Time { return &p.CephStatusInterval }},
	{name: "rookMdbRequeue", dur: func(p *Params) *Time { return &p.RookMDBRequeue }},
	{name: "powerReportLag", dur: func(p *Params) *Time { return &p.PowerReportLag }},
	{name: "jitter", kind: pFloat, f: func(p *Params) *float64 { return &p.Jitter }},
	{name: "healthBlipTime", dur: func(p *Params) *Time { return &p.HealthBlipTime }},
	{name: "noQuorumBound", dur: func(p *Params) *Time { return &p.NoQuorumBound }},
	{name: "degradedBound", dur: func(p *Params) *Time { return &p.DegradedBound }},
	{name: "livenessStable", dur: func(p *Params) *Time { return &p.LivenessStable }},
	{name: "livenessBound", dur: func(p *Params) *Time { return &p.LivenessBound }},
	{name: "workloadStartTime", dur: func(p *Params) *Time { return &p.WorkloadStartTime }},
	{name: "maxWaitForUnmount", dur: func(p *Params) *Time { return &p.MaxWaitForUnmount }},
	{name: "staleKillTime", dur: func(p *Params) *Time { return &p.StaleKillTime }},
	{name: "blocklistExpire", dur: func(p *Params) *Time { return &p.BlocklistExpire }},
	{name: "osdClientWatchTimeout", dur: func(p *Params) *Time { return &p.OSDClientWatchTimeout }},
	{name: "rbdBlocklistOnBreakLock", kind: pBool, b: func(p *Params) *bool { return &p.RBDBlocklistOnBreakLock }},
	{name: "rbdBlocklistExpire", dur: func(p *Params) *Time { return &p.RBDBlocklistExpire }},
	{name: "networkFenceExpire", dur: func(p *Params) *Time { return &p.NetworkFenceExpire }},
	{name: "csiAutoFenceExpire", dur: func(p *Params) *Time { return &p.CSIAutoFenceExpire }},
	{name: "csiUnfenceCooldown", dur: func(p *Params) *Time { return &p.CSIUnfenceCooldown }},
	{name: "oosTaintRemovalDelay", dur: func(p *Params) *Time { return &p.OOSTaintRemovalDelay }},
	{name: "clientWriteIops", kind: pFloat, f: func(p *Params) *float64 { return &p.ClientWriteIOPS }},
}

// ParamNames lists the keys accepted under a scenario's `params:`.
func ParamNames() []string {
	n := make([]string, len(paramTable))
	for i, d := range paramTable {
		n[i] = d.name
	}
	sort.Strings(n)
	return n
}

// SetParam sets the parameter named name from its text value.
func (p *Params) SetParam(name, val string) error {
	for _, d := range paramTable {
		if d.name != name {
			continue
		}
		switch d.kind {
		case pDur:
			t, err := ParseDuration(val)
			if err != nil {
				return err
			}
			*d.dur(p) = t
		case pInt:
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fmt.Errorf("%s: want a non-negative integer, got %q", name, val)
			}
			*d.i(p) = n
		case pCrush:
			t, ok := lookupCrushType(val)
			if !ok {
				return fmt.Errorf("%s: want host, rack, zone or root, got %q", name, val)
			}
			*d.c(p) = t
		case pBool:
			v, err := strconv.ParseBool(val)
			if err != nil {
				return fmt.Errorf("%s: want true or false, got %q", name, val)
			}
			*d.b(p) = v
		case pFloat:
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f < 0 {
				return fmt.Errorf("%s: want a non-negative number, got %q", name, val)
			}
			*d.f(p) = f
		}
		return nil
	}
	return fmt.Errorf("unknown parameter %q (known: %s)", name, strings.Join(ParamNames(), ", "))
}

// Validate checks relations between parameters.
func (p *Params) Validate() error {
	switch {
	case p.PoolSize < 1 || p.PoolSize > maxSize:
		return fmt.Errorf("poolSize must be 1..%d", maxSize)
	case p.PoolMinSize < 1 || p.PoolMinSize > p.PoolSize:
		return fmt.Errorf("poolMinSize must be 1..poolSize")
	case p.RecoveryMBps <= 0:
		return fmt.Errorf("recoveryMBps must be > 0")
	case p.OSDMaxBackfills > 0 && p.OSDRecoveryMBps <= 0:
		return fmt.Errorf("osdRecoveryMBps must be > 0 when osdMaxBackfills is set")
	case p.RecoverySleepShare < 0 || p.RecoverySleepShare > 1:
		return fmt.Errorf("recoverySleepShare must be 0..1")
	case p.MonOSDLaggyWeight > 1 || (p.MonOSDAdjustHeartbeatGrace && p.MonOSDLaggyHalflife <= 0):
		return fmt.Errorf("monOsdLaggyWeight must be <= 1 and monOsdLaggyHalflife > 0")
	case p.MonOSDMinInRatio > 1:
		return fmt.Errorf("monOsdMinInRatio must be <= 1")
	case p.CephStatusInterval <= 0 || p.MonTickInterval <= 0 || p.RookMDBRequeue <= 0:
		return fmt.Errorf("cephStatusInterval, monTickInterval and rookMdbRequeue must be > 0")
	case p.Jitter > 0.5:
		return fmt.Errorf("jitter must be <= 0.5")
	case p.ReportSpread < 0:
		return fmt.Errorf("reportSpread must be >= 0")
	case p.PeeringSpread < 0 || p.PeeringSpread >= 1:
		return fmt.Errorf("peeringSpread must be 0..1 (exclusive)")
	case p.OSDMaxMarkdownCount > 15:
		return fmt.Errorf("osdMaxMarkdownCount must be <= 15")
	case p.OSDMaxMarkdownCount > 0 && (p.OSDMaxMarkdownPeriod <= 0 || p.OSDRestartBackoff <= 0):
		return fmt.Errorf("osdMaxMarkdownPeriod and osdRestartBackoff must be > 0")
	case p.MonOSDDownOutSubtreeLimit < CrushHost || p.MonOSDDownOutSubtreeLimit > CrushRoot:
		return fmt.Errorf("monOsdDownOutSubtreeLimit: want host, rack, zone or root")
	}
	return nil
}

// diff renders, as `key: value` items, every parameter of p that differs from d.
func (p *Params) diff(d Params) []string {
	var out []string
	for _, pd := range paramTable {
		switch pd.kind {
		case pDur:
			if v := *pd.dur(p); v != *pd.dur(&d) {
				out = append(out, pd.name+": "+v.Dur())
			}
		case pInt:
			if v := *pd.i(p); v != *pd.i(&d) {
				out = append(out, fmt.Sprintf("%s: %d", pd.name, v))
			}
		case pFloat:
			if v := *pd.f(p); v != *pd.f(&d) {
				out = append(out, fmt.Sprintf("%s: %g", pd.name, v))
			}
		case pCrush:
			if v := *pd.c(p); v != *pd.c(&d) {
				out = append(out, pd.name+": "+v.String())
			}
		case pBool:
			if v := *pd.b(p); v != *pd.b(&d) {
				out = append(out, fmt.Sprintf("%s: %v", pd.name, v))
			}
		}
	}
	return out
}
