package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"google.golang.org/grpc"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/hostrecord"
	"github.com/fenceproof/fenceproof/csiproxy/reference"
	"github.com/fenceproof/fenceproof/csiproxy/winos"
)

func init() {
	register("csiproxy-reference", "serve csi-proxy v1.1.3's own server code over the simulated Windows host on unix sockets (the reference lane)", runCSIProxyReference)
}

func runCSIProxyReference(args []string) int {
	fs := flag.NewFlagSet("csiproxy-reference", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the unix sockets, one per API group and version, named like csi-proxy's pipes (required)")
	kubelet := fs.String("kubelet-path", reference.DefaultKubeletPath, "csi-proxy's --kubelet-path")
	escape := fs.String("escape-link", hostmodel.EscapeLink, "name of the node's link below both kubelet directories that leads outside them")
	inside := fs.String("inside-link", hostmodel.InsideLink, "name of the node's link below the pod path that leads to a directory below it")
	verbose := fs.Bool("v", false, "csi-proxy's klog output on standard error")
	var workDirs listFlag
	fs.Var(&workDirs, "working-dir", "csi-proxy's --working-dir (repeatable)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: fenceproof csiproxy-reference --dir DIR [flags]

Serves csi-proxy %s's own server code (its pkg/server packages) on
DIR/csi-proxy-<group>-<version>, over csi-proxy's Windows layer on the
simulated node (csiproxy/winos, csiproxy/hostmodel), every answer
reporting the Windows calls made for it (csiproxy/hostrecord), until SIGINT
or SIGTERM. The disk group is served only by a build with the
csiproxy_disk tag (make csiproxy-reference).

flags:
`, reference.Version)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "fenceproof csiproxy-reference: --dir is required")
		return 2
	}
	plugins, pods := kubeletPaths(*kubelet)
	h := hostmodel.New(hostmodel.Standard(plugins, pods, *escape, *inside))
	var log io.Writer
	if *verbose {
		log = os.Stderr
	}
	srv, err := reference.Serve(*dir, reference.Config{KubeletPath: *kubelet, WorkingDirs: workDirs, Log: log,
		ServerOptions: []grpc.ServerOption{grpc.UnaryInterceptor(hostrecord.Interceptor(h))}}, winos.New(h))
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-reference: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "csiproxy-reference: csi-proxy %s serving %d group versions on %s (disk group: %v)\n", reference.Version, len(srv.Served), *dir, reference.ServesDisk())
	serveUntilSignal(srv.Stop)
	return 0
}
