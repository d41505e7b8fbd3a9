package fault

import (
	"strconv"
	"sync"
	"time"
)

// Hostile hosts whose checks depend on when a request comes: only in a
// burst of requests (a suite's pace, not a driver's), only while nothing
// else is being checked (a validator that times out open), only early in
// the host's life.

// burstGap is the quiet before a request after which burstOnly takes it
// for a driver's and checks nothing.
const burstGap = 150 * time.Millisecond

// burstOnly checks a request only when the previous one came less than
// burstGap before it: a suite sends thousands of requests back to back, a
// driver a few at a time.
func burstOnly() *behaviour {
	var mu sync.Mutex
	var last time.Time
	return &behaviour{unchecked: func(Request) bool {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		quiet := !last.IsZero() && now.Sub(last) >= burstGap
		last = now
		return quiet
	}}
}

// Validation of the host that times out open: checking a request takes
// validateCost with the validator held; a request that cannot have the
// validator within validateWait is let through unchecked.
const (
	validateCost = 200 * time.Microsecond
	validateWait = 50 * time.Microsecond
)

// contentionOpen is a host whose one validator is shared by all requests
// and whose callers give up waiting for it: sequential requests are all
// checked, concurrent ones pass unchecked.
func contentionOpen() *behaviour {
	validator := make(chan struct{}, 1)
	return &behaviour{unchecked: func(Request) bool {
		select {
		case validator <- struct{}{}:
		default:
			t := time.NewTimer(validateWait)
			defer t.Stop()
			select {
			case validator <- struct{}{}:
			case <-t.C:
				return true
			}
		}
		time.Sleep(validateCost)
		<-validator
		return false
	}}
}

// startWindow checks requests only during the first seconds after its
// first request: a run of the suite that ends sooner sees a faithful host.
func startWindow(arg string) (*behaviour, error) {
	secs, err := strconv.ParseFloat(arg, 64)
	if err != nil || secs <= 0 {
		return nil, strconv.ErrSyntax
	}
	window := time.Duration(secs * float64(time.Second))
	var once sync.Once
	var start time.Time
	return &behaviour{unchecked: func(Request) bool {
		once.Do(func() { start = time.Now() })
		return time.Since(start) > window
	}}, nil
}
