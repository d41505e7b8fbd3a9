package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/fencing/clock"
	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/fencing/judge"
	"github.com/fenceproof/fenceproof/fencing/report"
	"github.com/fenceproof/fenceproof/fencing/run"
)

func init() {
	register("fencing", "fence a node of your cluster through your csi-addons driver and judge from the writers' data whether it could still write (fencing/README.md); fencing judge|cleanup|agent", runFencing)
}

const fencingUsage = `usage: fenceproof fencing --kubeconfig K --node N --namespace NS (--class C | --driver D --secret NS/NAME [--param k=v]) --storage path|librados|refstore [flags]
       fenceproof fencing judge DIR          decide again from a run's reports directory (its evidence/input.json)
       fenceproof fencing cleanup --run ID   remove what a killed run left (its fences lifted first)
       fenceproof fencing agent              the run's agent on a node (started by fenceproof fencing)
exit status: 0 PASS, 1 FAIL, 2 bad flags, 3 INCOMPLETE (undecidable, setup failed, interrupted), 4 the API server did not answer`

func runFencing(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "judge":
			return runFencingJudge(args[1:])
		case "cleanup":
			return runFencingCleanup(args[1:])
		case "agent":
			return runFencingAgent(args[1:])
		}
	}
	cfg := run.Defaults()
	fs := flag.NewFlagSet("fencing", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(os.Stderr, fencingUsage); fs.PrintDefaults() }
	fencingClusterFlags(fs, &cfg)
	fs.StringVar(&cfg.Driver, "driver", "", "the csi-addons driver name (its NetworkFenceClass's provisioner)")
	fs.StringVar(&cfg.Class, "class", "", "the NetworkFenceClass to fence through (it names the secret and parameters)")
	fs.StringVar(&cfg.Secret, "secret", "", "without --class: the driver's secret, namespace/name")
	fs.Var(&kvFlag{m: &cfg.Params}, "param", "without --class: a parameter for the driver, key=value (repeatable)")
	fs.StringVar(&cfg.PeerNode, "peer-node", "", "the node of the unfenced writer and the reader (default: another schedulable worker)")
	fs.StringVar(&cfg.Namespace, "namespace", "", "the namespace of the writers (created, and then deleted, if missing)")
	fs.StringVar(&cfg.Storage, "storage", cfg.Storage, "the storage kind of the default writer: path, librados or refstore")
	fs.StringVar(&cfg.PodTemplate, "pod-template", "", "a YAML Pod, PodTemplate or StatefulSet whose writer container follows the writer contract (default: the storage kind's)")
	fs.StringVar(&cfg.Image, "image", cfg.Image, "the image with the fenceproof binary (writers, agent)")
	fs.StringVar(&cfg.LibradosImage, "librados-image", cfg.LibradosImage, "the image with fenceproof built with librados (--storage librados)")
	fs.StringVar(&cfg.StorageClass, "storage-class", "", "path: the volumes' StorageClass (default: the cluster's default)")
	fs.StringVar(&cfg.VolumeSize, "volume-size", cfg.VolumeSize, "path: the volumes' size")
	fs.StringVar(&cfg.CephMonHost, "ceph-mon-host", "", "librados: the mon addresses")
	fs.StringVar(&cfg.CephConfigMap, "ceph-configmap", "", "librados: a ConfigMap namespace/name with key mon_host (instead of --ceph-mon-host)")
	fs.StringVar(&cfg.CephSecret, "ceph-secret", "", "librados: a Secret namespace/name holding the writer's keyring")
	fs.StringVar(&cfg.CephUser, "ceph-user", cfg.CephUser, `librados: the Ceph user, without "client."`)
	fs.StringVar(&cfg.CephPool, "ceph-pool", cfg.CephPool, "librados: the pool to write to")
	fs.StringVar(&cfg.Refstore, "refstore", "", "refstore: host:port, or a Service namespace/name[:port]")
	fs.StringVar(&cfg.CIDRsFrom, "cidrs-from", cfg.CIDRsFrom, "what to fence: node (its pod CIDRs and InternalIPs) or clients (what GetFenceClients reports on it; needs --class)")
	fs.BoolVar(&cfg.Rehearsal, "rehearsal", false, "the DR rehearsal: cut the node, fence it, taint it out of service, the workload moves, restore, unfence")
	fs.StringVar(&cfg.CutCommand, "cut-command", "", `the rehearsal: cut the node off (sh -c, node name in $1 and $NODE; default on kind: docker exec "$1" systemctl stop kubelet)`)
	fs.StringVar(&cfg.RestoreCommand, "restore-command", "", "the rehearsal: undo --cut-command")
	fs.DurationVar(&cfg.Observe, "observe", cfg.Observe, "how long the writers keep writing after the fence's acknowledgement")
	fs.DurationVar(&cfg.Interval, "interval", cfg.Interval, "the pause between two writes of a writer")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "the run's budget (cleanup excluded)")
	fs.StringVar(&cfg.Reports, "reports", cfg.Reports, "reports go to DIR/<run>")
	fs.StringVar(&cfg.Name, "name", "", "the run's id (default: generated)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof fencing: %v\n", err)
		return run.StatusUsage.ExitCode()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			if ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "fenceproof fencing: %v: cleaning up, the node restored and unfenced first\n", s)
				cancel(fmt.Errorf("signal %v", s))
			} else {
				fmt.Fprintf(os.Stderr, "fenceproof fencing: %v ignored: cleanup in progress (a node must not stay fenced)\n", s)
			}
		}
	}()
	o := run.Run(ctx, cfg)
	fmt.Print(report.Summary(&o.Run))
	for _, p := range o.Reports {
		fmt.Println("report:", p)
	}
	return run.Status(o.Status).ExitCode()
}

// fencingClusterFlags are the flags a run and a cleanup share.
func fencingClusterFlags(fs *flag.FlagSet, cfg *run.Config) {
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "the cluster's kubeconfig (default $KUBECONFIG, else in-cluster)")
	fs.StringVar(&cfg.Node, "node", "", "the node to fence")
}

func runFencingJudge(args []string) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(os.Stderr, "usage: fenceproof fencing judge DIR (a run's reports directory)")
		return 2
	}
	r, err := report.ReadRun(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof fencing judge:", err)
		return 2
	}
	if r.Result == nil {
		fmt.Fprintf(os.Stderr, "fenceproof fencing judge: the run ended before the judge: %s %s\n", r.Status, r.Reason)
		return run.Status(r.Status).ExitCode()
	}
	r.Result = judge.Judge(r.Input)
	r.Status, r.Reason = string(r.Result.Verdict), ""
	if len(r.Leftovers) > 0 && r.Result.Verdict == judge.Pass {
		r.Status, r.Reason = string(run.StatusIncomplete), "cleanup left: "+strings.Join(r.Leftovers, "; ")
	}
	fmt.Print(report.Summary(r))
	for _, f := range r.Result.Findings {
		if f.Severity != judge.SevNote {
			fmt.Println(" ", f)
		}
	}
	if _, err := report.Write(args[0], r); err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof fencing judge: rewriting the reports:", err)
	}
	return run.Status(r.Status).ExitCode()
}

func runFencingCleanup(args []string) int {
	cfg := run.Defaults()
	fs := flag.NewFlagSet("fencing cleanup", flag.ContinueOnError)
	fencingClusterFlags(fs, &cfg)
	fs.StringVar(&cfg.Name, "run", "", "the run's id (the label "+run.LabelRun+")")
	fs.StringVar(&cfg.Namespace, "namespace", "", "the run's namespace")
	fs.StringVar(&cfg.RestoreCommand, "restore-command", "", "restore --node first (a rehearsal killed while the node was cut off)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if cfg.Name == "" || cfg.Namespace == "" || cfg.RestoreCommand != "" && cfg.Node == "" {
		fmt.Fprintln(os.Stderr, "fenceproof fencing cleanup: --run and --namespace are required; --restore-command needs --node")
		return 2
	}
	o := run.Cleanup(context.Background(), cfg)
	for _, l := range o.Leftovers {
		fmt.Println("LEFT:", l)
	}
	if o.Reason != "" {
		fmt.Fprintln(os.Stderr, "fenceproof fencing cleanup:", o.Reason)
	}
	return run.Status(o.Status).ExitCode()
}

func runFencingAgent(args []string) int {
	fs := flag.NewFlagSet("fencing agent", flag.ContinueOnError)
	listen := fs.String("listen", ":8479", "address to serve on")
	root := fs.String("root", "/logs", "the directory of the writers' log copies (a hostPath)")
	node := fs.String("node", os.Getenv(contract.EnvNode), "this node's name (default $"+contract.EnvNode+")")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *node == "" {
		fmt.Fprintln(os.Stderr, "fenceproof fencing agent: --node (or $"+contract.EnvNode+") is required")
		return 2
	}
	srv := &http.Server{Addr: *listen, Handler: clock.Agent{Node: *node, Root: *root}, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "fenceproof fencing agent:", err)
		return 1
	}
	return 0
}
