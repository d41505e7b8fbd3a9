package calibrate

import "github.com/fenceproof/fenceproof/sim"

// Perturbation is a deliberately wrong model: the calibration must reject
// each (some experiment fails) while it passes the shipped model.
type Perturbation struct {
	Name   string
	Adjust func(*sim.Params)
}

// Perturbations are the wrong models the calibration must reject. Not
// here: a 1-s mon tick. The runner places each fault so that the down-out
// deadline falls mid-way between two 5-s ticks; a 1-s tick moves the out
// by under half a tick, inside the commit and stamp tolerance (tolOut),
// and two outs 5 s apart stay 5 s apart - no experiment can tell it.
var Perturbations = []Perturbation{
	{"recovery 2x faster", func(p *sim.Params) { p.OSDRecoveryMBps *= 2; p.RecoveryMBps *= 2 }},
	{"recovery 2x slower", func(p *sim.Params) { p.OSDRecoveryMBps /= 2; p.RecoveryMBps /= 2 }},
	{"recovery infinitely fast", func(p *sim.Params) { p.OSDRecoveryMBps *= 1e6; p.RecoveryMBps *= 1e6 }},
	{"OSD boot 5 s longer", func(p *sim.Params) { p.OSDBootTime += 5 * sim.Second }},
	{"mon tick 10 s", func(p *sim.Params) { p.MonTickInterval = 10 * sim.Second }},
	{"down-out interval 5 s longer", func(p *sim.Params) { p.MonOSDDownOutInterval += 5 * sim.Second }},
}
