// Command probe is the tiny network endpoint of the end-to-end suites: it runs
// in every test pod, serves TCP and UDP, and makes one fresh connection on
// request so a suite can measure reachability.
//
//	probe serve --tcp 80,81 --udp 80,81 [--reply-peer]
//	probe connect --proto tcp|udp --to HOST:PORT --timeout 1s
//	probe connect-all --timeout 1s tcp:HOST:PORT udp:HOST:PORT ...
//
// serve listens on all addresses. TCP: on accept it writes "ok <hostname>\n"
// and closes. UDP: it replies "ok <hostname>\n" to each datagram. With
// --reply-peer the reply is "ok <hostname> from <client ip>\n": the source
// address the server saw, to tell whether the network translated it.
//
// connect makes one fresh connection (UDP: sends a datagram and waits for the
// reply) and prints one JSON line
//
//	{"to":"10.0.0.1:80","proto":"tcp","ok":true,"error":"","reply":"ok pod-b","ms":3}
//
// It exits 0 when the target was reached, 1 when not, 2 on a usage error.
// connect-all does the same for many targets at once (tcp:HOST:PORT or
// udp:HOST:PORT), printing one such line per target in argument order; it
// exits 0 when every target was reached, 1 when one was not.
// The suites (suites/smoke, suites/isolation) rely on this contract; its
// wire format is isolation/probeline, which keeps this binary free of
// client-go.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes of connect and of usage errors.
const (
	exitOK          = 0
	exitUnreachable = 1
	exitUsage       = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:], stderr)
	case "connect":
		return runConnect(args[1:], stdout, stderr)
	case "connect-all":
		return runConnectAll(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		usage(stdout)
		return exitOK
	default:
		fmt.Fprintf(stderr, "probe: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  probe serve --tcp 80,81 --udp 80,81 [--reply-peer]
  probe connect --proto tcp|udp --to HOST:PORT [--timeout 1s]
  probe connect-all [--timeout 1s] [--parallel 64] tcp:HOST:PORT udp:HOST:PORT ...
`)
}
