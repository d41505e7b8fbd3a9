package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/fenceproof/fenceproof/driver"
)

// version is set with -ldflags "-X main.version=..." by the Makefile and by
// `make image` (git describe: the image's tag is the same string).
var version = "dev"

func init() {
	register("version", "print the fenceproof version (also --version)", func(args []string) int {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Println("usage: fenceproof version\n\nPrints \"fenceproof VERSION (GO-VERSION OS/ARCH, BUILD)\"; VERSION is git describe of the\nbuild's checkout, and the tag of the image it was built into (make image).")
			return 0
		}
		fmt.Println(versionLine())
		return 0
	})
}

// versionLine is "fenceproof VERSION (go1.x os/arch, with|without ceph)":
// the second word is the version alone, for scripts.
func versionLine() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	build := "without ceph (no librados writer or driver backend)"
	if driver.CephBuilt {
		build = "with ceph (librados)"
	}
	return fmt.Sprintf("fenceproof %s (%s %s/%s, %s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, build)
}
