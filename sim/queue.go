package sim

// queue is one actor's binary min-heap of its own events, ordered by (at,
// seq). seq comes from the run's one counter (core.next), so the events of
// all actors fire in the order they were scheduled among equal times, and
// the run does not depend on how the work is split between queues. Events
// are stored inline: scheduling one does not allocate.
type queue[E any] struct{ h []queued[E] }

type queued[E any] struct {
	at  Time
	seq uint64
	ev  E
}

func (q *queue[E]) less(i, j int) bool {
	if q.h[i].at != q.h[j].at {
		return q.h[i].at < q.h[j].at
	}
	return q.h[i].seq < q.h[j].seq
}

func (q *queue[E]) push(at Time, seq uint64, ev E) {
	q.h = append(q.h, queued[E]{at: at, seq: seq, ev: ev})
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

// head returns the time and sequence number of the next event (ok false:
// none).
func (q *queue[E]) head() (at Time, seq uint64, ok bool) {
	if len(q.h) == 0 {
		return 0, 0, false
	}
	return q.h[0].at, q.h[0].seq, true
}

func (q *queue[E]) pop() queued[E] {
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
