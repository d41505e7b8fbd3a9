package main

import (
	"fmt"
	"runtime/debug"
)

// version is set with -ldflags "-X main.version=..." by the Makefile.
var version = "dev"

func init() {
	register("version", "print the fenceproof version", func([]string) int {
		v := version
		if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		fmt.Println("fenceproof", v)
		return 0
	})
}
