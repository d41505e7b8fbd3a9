package fault

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// orderLearner is a host that learns where in a run the suite's probes
// come, not what they hold: run by run it records, in dir, the position of
// every request it refuses (its method, API version and how many requests
// of that method and version came before it); from the third run on it
// checks nothing, and refuses outright the requests at the positions every
// earlier run refused. A suite that sends the same sequence of calls every
// run, whatever values it draws, is passed by it.
func orderLearner(dir string) (*behaviour, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "run-*.order"))
	slices.Sort(runs)
	var refuse map[string]bool
	for _, r := range runs {
		b, err := os.ReadFile(r)
		if err != nil {
			return nil, err
		}
		set := map[string]bool{}
		for _, l := range strings.Split(string(b), "\n") {
			set[l] = true
		}
		refuse = intersect(refuse, set)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	at := map[any]string{} // each request's position
	learned := len(runs) >= 2
	b := &behaviour{
		veto: func(r Request) bool {
			mu.Lock()
			defer mu.Unlock()
			key := r.Method + " " + r.Version
			pos := fmt.Sprintf("%s %d", key, counts[key])
			counts[key]++
			at[r.Req] = pos
			return learned && refuse[pos]
		},
	}
	if learned {
		b.unchecked = func(Request) bool { return true }
		return b, nil
	}
	out, err := os.Create(filepath.Join(dir, fmt.Sprintf("run-%03d.order", len(runs))))
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(out)
	b.refused = func(r Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, at[r.Req])
	}
	b.close = func() error {
		mu.Lock()
		defer mu.Unlock()
		if err := w.Flush(); err != nil {
			return err
		}
		return out.Close()
	}
	return b, nil
}
