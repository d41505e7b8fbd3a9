//go:build ceph && linux

package main

import "github.com/fenceproof/fenceproof/sim/calibrate/cephrun"

func init() { realRunner = cephrun.Run }
