// Package audit is the write-audit oracle. From refstore's audit log (every
// accepted write with its server time in unix ns) and the reference
// driver's log (every Fence/Unfence RPC with its start and return time in
// unix ns) it proves that no write from a fenced source was accepted after
// the fence was acknowledged, and reports the first violation with its full
// audit record.
//
// # The property
//
// Replaying the driver's successful RPCs in time order gives, per fenced
// prefix, a Window: it opens at the return (ack) of the Fence that added the
// prefix and closes at the start of the Unfence that removed it (a correct
// driver lifts enforcement before it acknowledges an Unfence, so writes
// accepted while the Unfence runs are legitimate). A write violates the
// property (write-after-fence) when its source lies in the prefix and its
// audit time t satisfies ack+Skew < t < unfence start. A write stamped at
// exactly the ack's nanosecond is not "after" it. Fences overlap as the
// driver stores them: Unfence removes only the exact prefix, so an
// overlapping fence keeps its own window. A driver restart (its "driver
// ready" line) closes nothing: an acknowledged fence stays a promise, and a
// restart that does not re-apply it is listed under Restarts; prefixes a
// restart re-applies that the log never fenced open a window at the ready
// time (a log that starts mid-life). IPv4-mapped IPv6 prefixes and sources
// are compared unmapped. Failed RPCs acknowledge nothing.
//
// With refstore's enforcement log, an acknowledged Fence whose first
// covering blocklist change came after the ack is a violation too
// (enforced-after-ack): it catches an early ack even when no fenced writer
// wrote in between. With writer logs two more promises are checked: every write a writer saw
// acknowledged is in the audit log (lost-ack), and no writer was refused
// while no fence covered its source (refused-unfenced): refusals are
// legitimate from the start of a Fence RPC covering the source (or of a
// failed one) until the ack of the Unfence that lifted it.
//
// # Clocks
//
// Audit times are refstore's clock, RPC times the driver's. The check
// assumes they are the same clock or within Skew of each other. On one
// host, and on every node of a kind cluster (containers sharing the host
// kernel's clock), they are the same clock and Skew is 0. The driver stamps
// t_ns after the RPC handler returned and before the answer is sent, so the
// CO sees the ack no earlier than t_ns: the check is, if anything, strict.
//
// # Why not porcupine
//
// github.com/anishathalye/porcupine (v1.0.0) checks that a concurrent
// history is linearizable against a sequential model, searching for an
// order of the operations that respects real time. The property here can be
// phrased that way: a model holding the fence set, Fence and Unfence as
// operations spanning [start, return], writes as operations returning
// accepted or refused. Two phrasings exist and neither helps. With a write
// spanning the client's [send, OK], a write sent before the ack and accepted
// after it overlaps the Fence and may be linearized before it, so a write
// accepted after the ack passes: weaker than the promise operators rely on.
// With a write as an instant at its audit time, the answer equals this
// package's window predicate, but it is reached by a search (exponential in
// the worst case, bounded here only by partitioning per source) and reported
// as "not linearizable" with a partial linearization, not as the first
// offending record, the fence it breaks and the delay after the ack. The
// property is a time-window predicate over events stamped by one clock; it
// is checked exactly in O(writes × windows). So the oracle does not use
// porcupine; the same ordering is checked at the storage side by refstore's
// own tests (no write audited after a blocklist change took effect).
package audit
