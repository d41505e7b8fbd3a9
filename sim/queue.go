package sim

// evKind names what an event does when it fires.
type evKind uint8

const (
	evFault evKind = iota
	evHeal
	evNodeNotReady
	evNodeBoot
	evOSDBoot
	evOSDMarkDown
	evOSDReportTimeout
	evOSDOut
	evPGPeered
	evPGRecovered
	evPGStuck
	evMHCCheck
	evLabelApply
	evMDBPoll
	evMDBApply
	evSafeCheck
	evSafeRevoke
	evMachineTerminated
	evMachineReplaced
	evRebootDone
	evOpEvict
	evOpStart
	evLiveness
	evLivenessEnd
	evRandomFault
	evClientStart
	evStaleKill
	evBlockExpire
	evOOSFence
	evOOSUnfence
	evPGBackfilled
	evOSDReassert
	evOSDRestart
	evMonSynced
	evPodEvict
	evEvictedDeleted
	evSafeClientFence
	evLockBreakExpire
	evCSIUnpublish
	evCSIUnfence
	evOOSRemoval
	evEnd
)

// event is a value type: the queue stores events inline, so scheduling one
// does not allocate. a, b and c are kind-specific arguments (an index, a
// generation, a value or an observation time).
type event struct {
	at   Time
	seq  uint64
	c    int64
	a    int32
	b    int32
	kind evKind
}

// queue is a binary min-heap ordered by (at, seq); seq makes ties FIFO and
// the order independent of heap internals.
type queue struct{ h []event }

func (q *queue) less(i, j int) bool {
	if q.h[i].at != q.h[j].at {
		return q.h[i].at < q.h[j].at
	}
	return q.h[i].seq < q.h[j].seq
}

func (q *queue) push(e event) {
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *queue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}
