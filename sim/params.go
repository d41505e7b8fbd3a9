package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Time is a point on the virtual clock, in milliseconds since the start of a run.
type Time int64

// Common durations on the virtual clock.
const (
	Millisecond Time = 1
	Second           = 1000 * Millisecond
	Minute           = 60 * Second
	Hour             = 60 * Minute
	Day              = 24 * Hour
)

// String formats t as [Dd]HH:MM:SS.mmm.
func (t Time) String() string {
	neg := ""
	if t < 0 {
		neg, t = "-", -t
	}
	d := t / Day
	t -= d * Day
	h, m, s, ms := t/Hour, (t%Hour)/Minute, (t%Minute)/Second, t%Second
	if d > 0 {
		return fmt.Sprintf("%s%dd%02d:%02d:%02d.%03d", neg, d, h, m, s, ms)
	}
	return fmt.Sprintf("%s%02d:%02d:%02d.%03d", neg, h, m, s, ms)
}

// Dur formats t as a Go-style duration ("5m0s").
func (t Time) Dur() string { return (time.Duration(t) * time.Millisecond).String() }

// ParseDuration parses a Go duration ("90s", "5m", "1h30m") or a number of days ("30d").
func ParseDuration(s string) (Time, error) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "d") {
		n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return Time(n * float64(Day)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (want e.g. 20s, 10m, 4h, 30d)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return Time(d / time.Millisecond), nil
}

// Params holds every constant of the model. Defaults come from Ceph and
// Kubernetes documentation where a default exists (named in each comment);
// the rest are assumptions about the platform, chosen to be typical.
type Params struct {
	// OSDHeartbeatGrace is Ceph's osd_heartbeat_grace (20 s): peers report an
	// OSD down after missing its heartbeats for this long.
	OSDHeartbeatGrace Time
	// OSDHeartbeatInterval is osd_heartbeat_interval (6 s): how often
	// peers ping; a daemon that died on a live host is reported within it.
	OSDHeartbeatInterval Time
	// OSDFastFailOnConnectionRefused is osd_fast_fail_on_connection_refused
	// (true): a refused heartbeat is reported at once, without the grace.
	OSDFastFailOnConnectionRefused bool
	// MonOSDMinDownReporters is mon_osd_min_down_reporters (2): reports from
	// this many distinct hosts (mon_osd_reporter_subtree_level=host) are needed.
	MonOSDMinDownReporters int
	// MonOSDReportTimeout is mon_osd_report_timeout (900 s): the mon marks an
	// OSD down on its own when it has sent no beacon for this long.
	MonOSDReportTimeout Time
	// MonOSDDownOutInterval is mon_osd_down_out_interval (600 s): a down OSD
	// is marked out after this long.
	MonOSDDownOutInterval Time
	// MonOSDMinInRatio is mon_osd_min_in_ratio (0.75): the mon does not mark
	// OSDs out automatically below this fraction of OSDs in.
	MonOSDMinInRatio float64
	// MonTickInterval is mon_tick_interval (5 s): how often the mon retries a
	// refused down→out.
	MonTickInterval Time
	// MonPGStuckThreshold is mon_pg_stuck_threshold (60 s): an inactive PG is
	// reported stuck after this long.
	MonPGStuckThreshold Time
	// OSDBootTime is the time from an OSD daemon start to "up" in the OSD map.
	OSDBootTime Time
	// PeeringTime is how long a PG peers after its acting set changes.
	PeeringTime Time
	// PeeringSpread spreads each PG's peering uniformly over PeeringTime
	// x (1 ± PeeringSpread): Ceph's PGs finish peering one by one and
	// request their recovery reservations in that order, which decides
	// which PGs of equal priority recover first. 0: every PG peers for
	// PeeringTime exactly, in PG order.
	PeeringSpread float64
	// ReportSpread delays the peers' failure reports of an OSD that
	// stopped answering by a time drawn uniformly over [0, ReportSpread]
	// past the grace: the heartbeat thread's randomized pace (0.5 to 1.5
	// osd_heartbeat_interval) decides when a peer sent its first
	// unanswered ping and when it finds it late, and the OSD's tick when
	// it sends the report. 0: every failure is reported after the grace
	// and one interval and a second exactly.
	ReportSpread Time
	// PoolSize is the pool's size (3, Ceph's osd_pool_default_size).
	PoolSize int
	// PoolMinSize is the pool's min_size (2, osd_pool_default_min_size).
	PoolMinSize int
	// PGDataMB is the data held by one PG replica.
	PGDataMB float64
	// PGWriteMBps is the object data clients dirty per second in one active
	// PG; a replica that misses writes for t needs t x PGWriteMBps (at most
	// a whole replica) recovered or backfilled (remap.go).
	PGWriteMBps float64
	// PGWriteOps is the PG log entries (writes) per second into one PG.
	PGWriteOps float64
	// OSDMinPGLogEntries is osd_min_pg_log_entries (250): the entries a
	// clean PG's log keeps; a returning OSD that missed more is backfilled
	// (with the changed objects only) instead of recovered from the log.
	OSDMinPGLogEntries int
	// RecoveryMBps is the recovery/backfill bandwidth given to one PG when
	// OSDMaxBackfills is 0.
	RecoveryMBps float64
	// PoolUsedGB, when > 0, is the pool's stored data; one PG replica then
	// holds PoolUsedGB/PGs instead of PGDataMB.
	PoolUsedGB float64
	// OSDMaxBackfills is Ceph's osd_max_backfills (1): recoveries and
	// backfills an OSD takes part in at once, as a primary and as a target
	// (recovery.go). 0 turns reservations off (every PG recovers at
	// RecoveryMBps, in parallel: the first-generation model).
	OSDMaxBackfills int
	// OSDRecoveryMBps is one OSD's recovery bandwidth, shared by its
	// OSDMaxBackfills slots; with RecoverySleepShare, one PG's pace.
	OSDRecoveryMBps float64
	// RecoverySleepShare, when > 0, says that osd_recovery_sleep paces
	// recovery, not the bandwidth: the share of one recovery op's cycle
	// that is the sleep. The sleep is the OSD's (OSD::do_recovery defers
	// each op to the OSD's next recovery_schedule_time, one sleep after the
	// last), so n PGs recovering with one primary share one op per sleep:
	// each moves at OSDRecoveryMBps * min(1, 1/(n*RecoverySleepShare)).
	// 0: OSDRecoveryMBps / OSDMaxBackfills per PG.
	RecoverySleepShare float64
	// MonOSDDownOutSubtreeLimit is mon_osd_down_out_subtree_limit (rack):
	// the OSDs of a whole down CRUSH subtree of this type or larger are not
	// marked out automatically (domains.go).
	MonOSDDownOutSubtreeLimit CrushType
	// OSDMaxMarkdownCount is osd_max_markdown_count (5): an OSD marked down
	// more often than this within OSDMaxMarkdownPeriod while its daemon
	// runs stops itself (flags.go; 0 turns the "wrongly marked me down"
	// reassertion off). At most 15.
	OSDMaxMarkdownCount int
	// OSDMaxMarkdownPeriod is osd_max_markdown_period (600 s).
	OSDMaxMarkdownPeriod Time
	// MonOSDAdjustHeartbeatGrace is mon_osd_adjust_heartbeat_grace (true):
	// the mon lengthens a laggy OSD's grace (flags.go).
	MonOSDAdjustHeartbeatGrace bool
	// MonOSDLaggyHalflife is mon_osd_laggy_halflife (3600 s).
	MonOSDLaggyHalflife Time
	// MonOSDLaggyWeight is mon_osd_laggy_weight (0.3).
	MonOSDLaggyWeight float64
	// MonOSDLaggyMaxInterval is mon_osd_laggy_max_interval (300 s).
	MonOSDLaggyMaxInterval Time
	// OSDRestartBackoff is how long a self-stopped OSD daemon stays down
	// before its container restarts (the kubelet's CrashLoopBackOff cap, 5 min).
	OSDRestartBackoff Time

	// NodeMonitorGracePeriod is kube-controller-manager's
	// --node-monitor-grace-period (40 s; raised to 50 s in recent releases):
	// a node is NotReady after its kubelet has not posted status this long.
	NodeMonitorGracePeriod Time
	// PodEvictionTimeout is the default tolerationSeconds (300 s) for the
	// not-ready/unreachable taints: pods on a NotReady node are deleted then.
	PodEvictionTimeout Time
	// NodeBootTime is power-on to kubelet posting Ready.
	NodeBootTime Time
	// MHCUnhealthyTimeout is the MachineHealthCheck unhealthyConditions
	// timeout (300 s), measured from the Ready condition's lastTransitionTime.
	MHCUnhealthyTimeout Time
	// MHCNodeStartupTimeout is MachineHealthCheck nodeStartupTimeout (10 min,
	// cluster-api's default): a new machine without a Ready node is remediated.
	MHCNodeStartupTimeout Time
	// MHCMaxUnhealthyPct is MachineHealthCheck maxUnhealthy in percent (100):
	// remediation stops while more targets than this are unhealthy.
	MHCMaxUnhealthyPct int
	// MHCRetryInterval is how soon the MHC retries a remediation that the
	// MachineDisruptionBudget refused (0: the MDB variant's, 1 min for
	// machine-api-operator, 30 s for machine-remediation).
	MHCRetryInterval Time
	// MHCLag is the MHC controller's reconcile lag.
	MHCLag Time
	// ProviderDeleteTime is from Machine deletion to the instance being gone.
	ProviderDeleteTime Time
	// MachineProvisionTime is the MachineSet's time to create a replacement
	// instance (cloud), before it boots.
	MachineProvisionTime Time
	// BareMetalReprovisionTime is the time to deprovision and reprovision a
	// bare-metal host (delete fence), before it boots.
	BareMetalReprovisionTime Time
	// RebootTime is how long a reboot remediation keeps the host off: on
	// bare metal from the BMC's confirmed power-off (and the Node's
	// deletion) to the power-on; on cloud the provider's stop/start.
	RebootTime Time
	// BMCPowerOffTime is how long the BMC (BareMetalHost, Ironic) takes to
	// power a host off and report it off, before the Metal3 remediation
	// deletes the Node.
	BMCPowerOffTime Time
	// RebootRemediationTimeout is the Metal3 remediation's timeout
	// (strategy.timeout, 5 min in OpenShift's example): a Node not back
	// this long after an attempt began gets another power cycle.
	RebootRemediationTimeout Time

	// RebootRetryLimit is how often a host that stays NotReady after a
	// reboot remediation is rebooted again (a Metal3 remediation's
	// retryLimit); then OpenShift's remediation deletes the Machine and
	// marks the host unhealthy (on cloud the stop/start stops, for a
	// person to look at).
	RebootRetryLimit int
	// MonSyncTime is how long a mon recreated with an empty store takes to
	// sync the store from the quorum and rejoin it.
	MonSyncTime Time

	// OperatorLag is the reconcile lag of the storage operator's controllers
	// (labels, MDB, the safe policy): a decision observed at t is written at t+lag.
	OperatorLag Time
	// OperatorStartTime is from the operator pod's eviction to its replacement
	// reconciling.
	OperatorStartTime Time
	// OperatorFailoverTime is how long a standby operator replica waits
	// before taking the leader lease from a leader that lost the API or Ceph
	// (controller-runtime leader election: 15 s lease, 10 s renew deadline,
	// 2 s retry; about 30 s). Only policies with an HA operator use it.
	OperatorFailoverTime Time
	// CephStatusInterval is how often the operator polls `ceph status`.
	CephStatusInterval Time
	// RookMDBRequeue is Rook's MDB controller requeue interval (60 s): the
	// rook policy re-evaluates the MDB this often.
	RookMDBRequeue Time
	// PowerReportLag is how long after a real power loss the provider's API
	// reports the instance powered off (0: at once).
	PowerReportLag Time
	// Jitter is the relative random spread applied to lags and boot times.
	Jitter float64

	// WorkloadStartTime is from a pod's force deletion to its replacement's
	// RBD client holding the volume's lock on another node (schedule, attach,
	// map, start).
	WorkloadStartTime Time
	// MaxWaitForUnmount is the attach-detach controller's
	// maxWaitForUnmountDuration (6 min): it force-detaches a volume whose
	// pod is gone from a node that cannot confirm the unmount (pods.go).
	MaxWaitForUnmount Time
	// StaleKillTime is how long a kubelet back on the API takes to kill the
	// containers of pods deleted while it was away (pod sync).
	StaleKillTime Time
	// BlocklistExpire is the expiry of a blocklist entry a fencer adds
	// without its own (Ceph's mon_osd_blocklist_default_expire, 1 h).
	BlocklistExpire Time
	// OSDClientWatchTimeout is osd_client_watch_timeout (30 s): a client
	// that stopped pinging loses its watch on the image header this long
	// after; only then may another client break its exclusive lock.
	OSDClientWatchTimeout Time
	// RBDBlocklistOnBreakLock is rbd_blocklist_on_break_lock (true): the
	// client that breaks a dead owner's lock blocklists it.
	RBDBlocklistOnBreakLock bool
	// RBDBlocklistExpire is rbd_blocklist_expire_seconds (0: the OSD
	// default, blocklistExpire).
	RBDBlocklistExpire Time
	// NetworkFenceExpire is the expiry ceph-csi gives the blocklist
	// entries of a NetworkFence (157784760 s, 5 years).
	NetworkFenceExpire Time
	// CSIAutoFenceExpire is the expiry of the blocklist entry ceph-csi's
	// ControllerUnpublishVolume adds for a node with the out-of-service
	// taint (its AutoBlocklistTime, a year).
	CSIAutoFenceExpire Time
	// CSIUnfenceCooldown is how long after that fence ceph-csi's node
	// plugin, back on a node without the taint, lifts it (5 min).
	CSIUnfenceCooldown Time
	// OOSTaintRemovalDelay is how long after a tainted node is Ready again
	// an operator removes the out-of-service taint (0: only a scripted
	// remove-oos-taint; Kubernetes never removes it by itself).
	OOSTaintRemovalDelay Time
	// ClientWriteIOPS is each workload's write rate, for the counts of
	// writes refused and writes accepted from stale clients.
	ClientWriteIOPS float64

	// HealthBlipTime: an episode of not HEALTH_OK shorter than this does
	// not move the time to recovery (two of the mgr's 5 s stats periods;
	// shorter states rarely reach `ceph status`).
	HealthBlipTime Time

	// LivenessBound is invariant 6's bound for a machine down and unfenced
	// (liveness.go).
	LivenessBound Time
	// NoQuorumBound is invariant 6's bound for the cluster without mon quorum.
	NoQuorumBound Time
	// DegradedBound is invariant 6's bound for degraded or unavailable PGs.
	DegradedBound Time
	// LivenessStable is how long a condition of invariant 6 must stay away
	// for its episode to end (shorter interruptions do not reset the clock).
	LivenessStable Time
}

// DefaultParams returns the documented defaults.
func DefaultParams() Params {
	return Params{
		OSDHeartbeatGrace:              20 * Second,
		MonOSDMinDownReporters:         2,
		OSDHeartbeatInterval:           6 * Second,
		OSDFastFailOnConnectionRefused: true,
		MonOSDReportTimeout:            900 * Second,
		MonOSDDownOutInterval:          600 * Second,
		MonOSDMinInRatio:               0.75,
		MonTickInterval:                5 * Second,
		MonPGStuckThreshold:            60 * Second,
		OSDBootTime:                    10 * Second,
		PeeringTime:                    2 * Second,
		PoolSize:                       3,
		PoolMinSize:                    2,
		PGDataMB:                       10240,
		PGWriteMBps:                    0.05,
		PGWriteOps:                     1,
		OSDMinPGLogEntries:             250,
		OSDMaxBackfills:                1,
		RecoveryMBps:                   50,
		OSDRecoveryMBps:                100,
		MonOSDDownOutSubtreeLimit:      CrushRack,
		OSDMaxMarkdownCount:            5,
		OSDMaxMarkdownPeriod:           600 * Second,
		OSDRestartBackoff:              5 * Minute,
		MonOSDAdjustHeartbeatGrace:     true,
		MonOSDLaggyHalflife:            Hour,
		MonOSDLaggyWeight:              0.3,
		MonOSDLaggyMaxInterval:         300 * Second,
		NodeMonitorGracePeriod:         40 * Second,
		PodEvictionTimeout:             300 * Second,
		NodeBootTime:                   60 * Second,
		MHCUnhealthyTimeout:            300 * Second,
		MHCNodeStartupTimeout:          10 * Minute,
		MHCMaxUnhealthyPct:             100,
		MHCRetryInterval:               0,
		MHCLag:                         1 * Second,
		ProviderDeleteTime:             30 * Second,
		MachineProvisionTime:           4 * Minute,
		BareMetalReprovisionTime:       20 * Minute,
		RebootTime:                     3 * Minute,
		BMCPowerOffTime:                30 * Second,
		RebootRemediationTimeout:       5 * Minute,
		MonSyncTime:                    Minute,
		RebootRetryLimit:               1,
		OperatorLag:                    5 * Second,
		OperatorStartTime:              30 * Second,
		OperatorFailoverTime:           30 * Second,
		CephStatusInterval:             15 * Second,
		RookMDBRequeue:                 60 * Second,
		Jitter:                         0.1,
		LivenessBound:                  30 * Minute,
		NoQuorumBound:                  30 * Minute,
		DegradedBound:                  3 * Hour,
		LivenessStable:                 10 * Minute,
		HealthBlipTime:                 10 * Second,
		WorkloadStartTime:              20 * Second,
		StaleKillTime:                  10 * Second,
		MaxWaitForUnmount:              6 * Minute,
		BlocklistExpire:                Hour,
		ClientWriteIOPS:                100,
		OSDClientWatchTimeout:          30 * Second,
		RBDBlocklistOnBreakLock:        true,
		NetworkFenceExpire:             157784760 * Second,
		CSIAutoFenceExpire:             365 * Day,
		CSIUnfenceCooldown:             5 * Minute,
	}
}
