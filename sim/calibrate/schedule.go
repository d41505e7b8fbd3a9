package calibrate

import (
	"fmt"
	"math"
	"strconv"
)

// scheduleHorizon bounds a scheduled run (s): every script's conditions
// come well before it on the shipped model.
const scheduleHorizon = 900.0

// Schedule plays an experiment's script on the shipped model instead of a
// real cluster: the mon's tick phase placed as the real runner places it
// (the down-out deadline mid-way between two ticks), and each step's time
// as its condition falls in the simulated run (WhenClean and WhenMoved
// read the simulated cluster). The result holds actions only. It is a
// schedule to run the shipped and the perturbed models on with no real
// run at all: the calibration's power without Ceph's noise.
func Schedule(e *Experiment) (*Timeline, error) {
	t := &Timeline{Experiment: e.Name, Source: "the script on the shipped model", Samples: []Sample{{At: scheduleHorizon}}}
	cfg := e.CephConfig()
	last, displacedMB := 0.0, 0.0
	for i, s := range e.Script {
		at := 0.0
		switch s.When {
		case WhenTick:
			iv, err1 := strconv.ParseFloat(cfg["mon_osd_down_out_interval"], 64)
			tick, err2 := strconv.ParseFloat(cfg["mon_tick_interval"], 64)
			if err1 != nil || err2 != nil || tick <= 0 {
				return nil, fmt.Errorf("%s: the mon's tick and down-out interval", e.Name)
			}
			lead := (s.Detect[0]+s.Detect[1])/2 + iv
			t.TickPhase = math.Mod(math.Mod(lead-tick/2, tick)+tick, tick)
		case WhenAt:
			if i > 0 {
				at = s.After
			}
		case WhenAfter:
			at = last + s.After
		case WhenClean, WhenMoved:
			run, err := Simulate(e, t, nil, 1)
			if err != nil {
				return nil, err
			}
			clean, ok := run.first("clean", -1, last)
			if !ok {
				return nil, fmt.Errorf("%s: step %d (%s): the shipped model is not clean after %.1f s", e.Name, i, s.Do, last)
			}
			if s.When == WhenClean {
				at = clean + s.After
				break
			}
			// the data the previous steps displace: what the model moves
			// until it is clean again
			displacedMB = run.at(clean).MovedMB - run.at(last).MovedMB
			at, ok = run.reach(func(x Sample) float64 { return x.MovedMB - run.at(last).MovedMB }, s.Fraction*displacedMB, last)
			if !ok {
				return nil, fmt.Errorf("%s: step %d (%s): the shipped model never moves %.0f MB", e.Name, i, s.Do, s.Fraction*displacedMB)
			}
		default:
			return nil, fmt.Errorf("%s: step %d: unknown condition %d", e.Name, i, s.When)
		}
		t.Actions = append(t.Actions, Action{At: at, Do: s.Do, Hosts: s.Hosts})
		last = at
	}
	return t, nil
}
