package calibrate

import "github.com/fenceproof/fenceproof/sim"

// Perturbation is a deliberately wrong model: the calibration must reject
// each (some experiment fails) while it passes the shipped model.
type Perturbation struct {
	Name   string
	Adjust func(*sim.Params)
}

// Perturbations are the wrong models the calibration must reject.
var Perturbations = []Perturbation{
	{"recovery 2x faster", func(p *sim.Params) { p.OSDRecoveryMBps *= 2; p.RecoveryMBps *= 2 }},
	{"recovery 2x slower", func(p *sim.Params) { p.OSDRecoveryMBps /= 2; p.RecoveryMBps /= 2 }},
	{"recovery infinitely fast", func(p *sim.Params) { p.OSDRecoveryMBps *= 1e6; p.RecoveryMBps *= 1e6 }},
	{"OSD boot 5 s longer", func(p *sim.Params) { p.OSDBootTime += 5 * sim.Second }},
	{"mon tick 10 s", func(p *sim.Params) { p.MonTickInterval = 10 * sim.Second }},
	{"mon tick 1 s", func(p *sim.Params) { p.MonTickInterval = sim.Second }},
	{"down-out interval 5 s longer", func(p *sim.Params) { p.MonOSDDownOutInterval += 5 * sim.Second }},
}
